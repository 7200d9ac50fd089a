"""Outputs cost only what is written: the pydantic-ai dump file's content is assembled only when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.engine.pydantic_ai_engine import scenario_execution
from tests.runtime.engine_helpers import execute, load_yaml
from tests.runtime.test_execution import TOOL_ROUNDTRIP


def test_running_a_scenario_builds_no_pydantic_ai_dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    def counting_dump(initial: object, turns: object) -> bytes:
        built.append(1)
        return b"[]"

    monkeypatch.setattr(scenario_execution, "_native_dump", counting_dump)
    execution = execute(load_yaml(tmp_path, TOOL_ROUNDTRIP))
    assert built == []  # a run without output files never pays for the dump
    assert execution.pydantic_ai_dump == b"[]"
    assert built == [1]
