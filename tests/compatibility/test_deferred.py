"""Deferred host actions: `ExternalToolset`, approvals and `CallDeferred` end a run with `DeferredToolRequests`;
the history is persisted through agentrig's canonical JSON and the run resumes with `DeferredToolResults`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai import (
    Agent,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    ExternalToolset,
    ModelRetry,
    RunContext,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart

from agentrig.runtime.history import canonical
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai
from agentrig.runtime.runfolder import jsonio
from tests.compatibility.support import RecordedScript, flat_parts, without_run_ids

FIRST_RESPONSE = [
    ToolCallPart("search", {"query": "x"}, tool_call_id="ext_1"),  # a host (external) tool
    ToolCallPart("delete_file", {"path": "/a"}, tool_call_id="approve_1"),  # requires approval
    ToolCallPart("delete_file", {"path": "/b"}, tool_call_id="approve_2"),
    ToolCallPart("long_job", {}, tool_call_id="job_1"),  # raises CallDeferred
    ToolCallPart("add", {"a": 1, "b": 2}, tool_call_id="add_1"),  # an ordinary tool in the same step
]


def build_agent(scripted: RecordedScript, deleted: list[str]) -> Agent[None, str | DeferredToolRequests]:
    host_tools = ExternalToolset(
        [
            ToolDefinition(
                name="search", parameters_json_schema={"type": "object", "properties": {"query": {"type": "string"}}}
            )
        ]
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        scripted.model(), output_type=[str, DeferredToolRequests], toolsets=[host_tools]
    )

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    @agent.tool
    def long_job(ctx: RunContext[object]) -> str:
        raise CallDeferred(metadata={"job": 42})

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    return agent


def persist_and_reload(messages: list[ModelMessage], path: Path) -> list[ModelMessage]:
    """What a runtime does between the two runs: canonical JSON on disk, then the installed version's objects."""
    jsonio.write_atomic(path, dumps_history(to_canonical(messages)))
    return to_pydantic_ai(loads_history(path.read_bytes(), source=path), source=path)


def test_deferred_calls_resume_from_canonical_json(tmp_path: Path) -> None:
    scripted = RecordedScript(script=[FIRST_RESPONSE, [TextPart("all done")]])
    deleted: list[str] = []
    agent = build_agent(scripted, deleted)

    first = asyncio.run(agent.run("do stuff"))

    requests = first.output
    assert isinstance(requests, DeferredToolRequests)
    assert sorted(c.tool_call_id for c in requests.calls) == ["ext_1", "job_1"]
    assert [c.tool_call_id for c in requests.approvals] == ["approve_1", "approve_2"]
    assert requests.metadata == {"job_1": {"job": 42}}
    assert deleted == []
    # The stored history ends with the pending calls' response plus the ordinary tool's result.
    stored = to_canonical(first.all_messages())
    assert [m.kind for m in stored][-2:] == ["response", "request"]
    assert canonical.tool_return_ids(stored) == ["add_1"]

    history = persist_and_reload(first.all_messages(), tmp_path / "history.json")
    assert to_canonical(history) == stored

    results = DeferredToolResults(
        calls={"ext_1": "search result", "job_1": ModelRetry("job failed")},
        approvals={"approve_1": True, "approve_2": ToolDenied("not allowed")},
    )
    second = asyncio.run(agent.run(message_history=history, deferred_tool_results=results))

    assert second.output == "all done"
    assert deleted == ["/a"]  # only the approved call ran
    # The model saw one result for every call. Order within the request differs: the ordinary tool's
    # result comes first on 2.38 and last on 2.68, so compare by call id.
    answers = {
        part.tool_call_id: part
        for _, part in flat_parts(scripted.received_canonical())
        if isinstance(part, canonical.ToolReturnPart | canonical.RetryPromptPart) and part.tool_call_id is not None
    }
    assert sorted(answers) == ["add_1", "approve_1", "approve_2", "ext_1", "job_1"]
    outcomes = {
        call_id: ("retry", part.content)
        if isinstance(part, canonical.RetryPromptPart)
        else (part.outcome, part.content)
        for call_id, part in answers.items()
    }
    assert outcomes == {
        "add_1": ("success", 3),
        "ext_1": ("success", "search result"),
        "approve_1": ("success", "deleted /a"),
        "approve_2": ("denied", "not allowed"),
        "job_1": ("retry", "job failed"),
    }
    # Everything resolved in one request after the pending response: no dangling call remains.
    resumed = to_canonical(second.all_messages())
    assert sorted(canonical.tool_call_ids(resumed)) == sorted(
        canonical.tool_return_ids(resumed) + canonical.tool_retry_ids(resumed)
    )


def test_deferred_run_resumes_identically_with_or_without_the_canonical_round_trip(tmp_path: Path) -> None:
    # The canonical JSON must not change what the model sees on resume.
    seen: list[list[canonical.Message]] = []
    for reload in (False, True):
        scripted = RecordedScript(script=[FIRST_RESPONSE, [TextPart("all done")]])
        agent = build_agent(scripted, [])
        first = asyncio.run(agent.run("do stuff"))
        history = persist_and_reload(first.all_messages(), tmp_path / "h.json") if reload else first.all_messages()
        results = DeferredToolResults(
            calls={"ext_1": "r", "job_1": "finished"}, approvals={"approve_1": False, "approve_2": True}
        )
        asyncio.run(agent.run(message_history=history, deferred_tool_results=results))
        seen.append(without_run_ids(scripted.received_canonical()))
    assert seen[0] == seen[1]
