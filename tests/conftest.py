"""Test-wide settings: no banner, and no real model request can leave the machine by accident."""

from __future__ import annotations

import os

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
