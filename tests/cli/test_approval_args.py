"""An approval that edits the call's arguments (`approvals: {ID: {args: {...}}}`) which the tool then rejects is
never green: pydantic-ai answers the call with a retry prompt and the scripted model goes on as if it had run.
The scenario fails unless its `tool_calls.status` names the call (the retry was the point)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.runfolder.jsonio import read_json_file
from tests.cli.cli_helpers import run_main
from tests.cli.test_none_and_deferred_outputs import AGENTS

_EDITED_APPROVAL = """\
name: edited-approval
agent: output_agents:guarded
turns:
  - user: Delete /tmp/x
    model:
      - tool_calls: [{{id: d1, name: delete_file, args: {{path: /tmp/x}}}}]
  - approvals: {{d1: {{args: {{path: {path}}}}}}}
    model:
      - text: Deleted.
{expect}"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *, path: str, expect: str) -> tuple[int, list[object]]:
    (tmp_path / "output_agents.py").write_text(AGENTS, encoding="utf-8")
    scenario = tmp_path / "edited.yaml"
    scenario.write_text(_EDITED_APPROVAL.format(path=path, expect=expect), encoding="utf-8")
    out = tmp_path / "out"
    code, _, _ = run_main(capsys, "run", str(scenario), "--out", str(out))
    checks = read_json_file(out / "report.json")["scenarios"][0]["checks"]
    assert isinstance(checks, list)
    return code, [check for check in checks if isinstance(check, dict) and not check["passed"]]


def test_edited_args_the_tool_rejects_fail_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, failed = _run(tmp_path, capsys, path="[1, 2]", expect="")
    assert code == 1
    assert failed == [
        {
            "name": "turn 2: approval of d1: the tool accepts the edited args",
            "passed": False,
            "expected": {"path": [1, 2]},
            "actual": "retried",
            "detail": "delete_file rejected the approval's args and the model was asked to retry: "
            '[{"type":"string_type","loc":["path"],"msg":"Input should be a valid string","input":[1,2]}] '
            "(expect the retry with tool_calls: {status: {d1: failed}})",
            "skipped_reason": None,
        }
    ]


@pytest.mark.parametrize(
    ("path", "expect"),
    [
        ("/tmp/y", ""),  # accepted: the real tool runs with the edited args
        ("[1, 2]", "    expect:\n      tool_calls: {status: {d1: failed}}\n"),  # the retry is what is tested
    ],
)
def test_accepted_or_expected_edits_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, expect: str
) -> None:
    code, failed = _run(tmp_path, capsys, path=path, expect=expect)
    assert failed == []
    assert code == 0
