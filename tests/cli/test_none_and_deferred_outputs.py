"""Outputs that are not "no output": an `X | None` agent's None, and the `DeferredToolRequests` a turn that
pauses for approval returns. Both are assertable with `type` and `json_equals` (real pydantic-ai runs)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai import Agent, UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo

from agentrig.runtime.runfolder.jsonio import read_json_file
from tests.cli.cli_helpers import run_main

AGENTS = """\
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests


class Answer(BaseModel):
    value: int


maybe = Agent(output_type=Answer | None)

guarded = Agent(output_type=[str, DeferredToolRequests])


@guarded.tool_plain(requires_approval=True)
def delete_file(path: str) -> str:
    return f"deleted {path}"
"""

_NONE_OUTPUT = """\
name: none-output
agent: output_agents:maybe
turns:
  - user: anything?
    model:
      - tool_calls: [{{id: o1, name: {none_tool}, args: {{response: null}}}}]
    expect:
      output: {{type: NoneType, json_equals: null}}
  - user: and now?
    model:
      - tool_calls: [{{id: o2, name: final_result_Answer, args: {{value: 3}}}}]
    expect:
      output: {{type: Answer, json_equals: {{value: 3}}}}
"""

_APPROVAL = """\
name: paused-for-approval
agent: output_agents:guarded
turns:
  - user: Delete /tmp/x
    model:
      - tool_calls: [{id: d1, name: delete_file, args: {path: /tmp/x}}]
    expect:
      output:
        type: DeferredToolRequests
        json_equals: {calls: [], approvals: [{tool_call_id: d1, tool_name: delete_file, args: {path: /tmp/x}}]}
  - approvals: {d1: true}
    model:
      - text: Deleted.
    expect:
      output: {equals: Deleted., type: str}
"""


def _none_output_tool() -> str:
    """The name pydantic-ai gives the output tool of the union's None member (`final_result_NoneType` in 2.38,
    `final_result_None` in 2.68), asked of the installed version."""
    from pydantic import BaseModel
    from pydantic_ai.models.function import FunctionModel

    class Answer(BaseModel):
        value: int

    names: list[str] = []

    def record(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        names.extend(tool.name for tool in info.output_tools)
        return ModelResponse(parts=[TextPart("no")])

    with pytest.raises(UnexpectedModelBehavior):
        asyncio.run(Agent(FunctionModel(record), output_type=Answer | None, retries=0).run("x"))
    (name,) = [name for name in names if "None" in name]
    return name


@pytest.mark.parametrize(
    ("name", "text"),
    [("none-output", _NONE_OUTPUT.format(none_tool=_none_output_tool())), ("paused-for-approval", _APPROVAL)],
)
def test_the_output_is_assertable(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> None:
    (tmp_path / "output_agents.py").write_text(AGENTS, encoding="utf-8")
    scenario = tmp_path / f"{name}.yaml"
    scenario.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "run", str(scenario), "--out", str(out))
    failed = [check for check in read_json_file(out / "report.json")["scenarios"][0]["checks"] if not check["passed"]]
    assert failed == []
    assert code == 0, stdout
