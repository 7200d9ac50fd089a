"""A file with a field the canonical form does not know: `convert`, `check` and `scaffold` each say so, one warning
line per field, and go on (the field is not carried; nothing else changes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_helpers import run_main

DUMP = Path(__file__).parents[1] / "runtime" / "convert_data" / "tools-and-retries-2.68.0.json"


def with_new_fields(tmp_path: Path, *, new_kind: bool = True) -> Path:
    """A real 2.68 dump with a field a future release might add, on every tool return, and a new part kind."""
    messages = json.loads(DUMP.read_bytes())
    for message in messages:
        for part in message["parts"]:
            if part["part_kind"] == "tool-return":
                part["priority"] = "high"
    if new_kind:
        messages[-1]["parts"].append({"part_kind": "hologram", "content": "x"})
    path = tmp_path / "future.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("agentrig: warning: ")]


@pytest.mark.parametrize("command", [["convert"], ["check"]])
def test_the_command_names_each_unknown_field_once_and_goes_on(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = with_new_fields(tmp_path)
    code, _, err = run_main(capsys, *command, str(source))
    assert code == 0, err
    messages = json.loads(source.read_bytes())
    returns = sum(1 for m in messages for p in m["parts"] if p["part_kind"] == "tool-return")
    where = f"[{len(messages) - 1}].parts[{len(messages[-1]['parts']) - 1}]"
    assert warnings_of(err) == [
        f"agentrig: warning: {source}: part kind 'hologram' ({where}) is unknown to agentrig: it is kept verbatim",
        f"agentrig: warning: {source}: field tool-return.priority ([2].parts[0], {returns} times) is unknown to "
        "agentrig's canonical form: it is not carried (docs/canonical-format.md)",
    ]


def test_converting_back_warns_and_names_the_file_a_part_kind_cannot_go_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = with_new_fields(tmp_path, new_kind=False)
    code, _, err = run_main(capsys, "convert", str(plain), "--to", "pydantic-ai")
    assert code == 0, err
    assert len(warnings_of(err)) == 1
    # A part kind the installed pydantic-ai has no class for cannot be written back: exit 2, naming the file.
    future = with_new_fields(tmp_path)
    code, _, err = run_main(capsys, "convert", str(future), "--to", "pydantic-ai")
    assert code == 2
    assert err.splitlines()[-1].startswith(f"agentrig: error: {future}: pydantic-ai ")


def test_a_file_agentrig_knows_whole_gives_no_warning(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "convert", str(DUMP))
    assert code == 0, err
    assert warnings_of(err) == []


def test_scaffold_names_what_its_scenario_will_not_carry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = json.loads(DUMP.read_bytes())
    messages[0]["parts"][0]["tone"] = "warm"
    source = tmp_path / "session.json"
    source.write_text(json.dumps(messages), encoding="utf-8")
    code, _, err = run_main(capsys, "scaffold", str(source), "-o", str(tmp_path / "out" / "case.yaml"))
    assert warnings_of(err) == [
        f"agentrig: warning: {source}: field {messages[0]['parts'][0]['part_kind']}.tone ([0].parts[0]) is unknown "
        "to agentrig's canonical form: it is not carried (docs/canonical-format.md)"
    ], err
    assert code in (0, 2), err  # the warning is given whether the source replays or is refused for another reason
