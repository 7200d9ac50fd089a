"""One headless Chromium per test process for the report pages' browser tests (tests/reports/browsing.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reports.browsing import start_browser
from tests.reports.chromium import Chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[Chromium]:
    with start_browser() as started:
        yield started
