"""The scenario text round-trips: any string (multi-line, trailing blanks, control characters, any script) and
any JSON value written by `dump_yaml` is read back unchanged by agentrig's scenario loader."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.runtime.scaffold.document import dump_yaml
from agentrig.scenarios.loader import load_scenario_file
from tests.runtime.history_strategies import json_objects, json_values

# Every code point a JSON string can hold (lone surrogates cannot be written to a UTF-8 file).
_strings = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
_lines = st.lists(_strings, min_size=2, max_size=4).map("\n".join)  # multi-line: written as literal blocks


@settings(max_examples=150)
@given(user=_strings | _lines, text=_strings | _lines, args=json_objects, result=json_values)
def test_strings_and_values_come_back_unchanged(user: str, text: str, args: dict[str, Any], result: Any) -> None:
    document = {
        "name": "round-trip",
        "description": text,
        "tools": {"probe": {"results": [{"when": args, "return": result}]}},
        "turns": [
            {"user": user, "model": [{"text": text, "tool_calls": [{"id": "c1", "name": "probe", "args": args}]}]}
        ],
    }
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s.yaml"
        path.write_text(dump_yaml(document, "header\nline two"), encoding="utf-8")
        (loaded,) = load_scenario_file(path)
    scenario = loaded.scenario
    assert scenario.description == text
    assert scenario.turns[0].user == user
    step = scenario.turns[0].model[0]
    assert step.text == text
    assert step.tool_calls[0].args == args
    (rule,) = scenario.tools["probe"].results
    assert (rule.when, rule.return_) == (args, result)


def test_multi_line_text_is_a_literal_block() -> None:
    text = dump_yaml({"name": "x", "description": "first line\nsecond line"}, "h")
    assert "description: |-\n  first line\n  second line\n" in text
