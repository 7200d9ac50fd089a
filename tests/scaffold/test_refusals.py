"""What a scenario cannot replay is refused, naming the message and why, and nothing is written: one case per
entry of docs/scaffold.md's refusal table (each entry names its case here)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentrig.runtime.history.canonical import (
    Message,
    OpaqueContent,
    OpaquePart,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UrlContent,
    UserContentPart,
)
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.scaffold import Unreplayable
from tests.scaffold.replay import scaffold_to
from tests.scaffold.test_fixtures import REFUSED

_AGENT = "tests.scaffold.faithful_agents:approval_agent"
_ASK = Message.request(TextPart(content="Delete /tmp/a"))
_CALL = Message.response(ToolCallPart(tool_call_id="a1", tool_name="delete_file", args={"path": "/tmp/a"}))
_DONE = Message.response(TextPart(content="Done."))


def _result(outcome: str = "success", content: object = "deleted /tmp/a") -> Message:
    return Message.request(ToolReturnPart(tool_call_id="a1", tool_name="delete_file", content=content, outcome=outcome))  # pyright: ignore[reportArgumentType]


def _output_call(call_id: str, name: str, args: object) -> Message:
    return Message.response(ToolCallPart(tool_call_id=call_id, tool_name=name, args=args))  # pyright: ignore[reportArgumentType]


def _output_done(call_id: str, name: str) -> Message:
    return Message.request(ToolReturnPart(tool_call_id=call_id, tool_name=name, content="Final result processed."))


CASES: dict[str, tuple[list[Message], str | None, str]] = {
    "opaque-user-content": (
        [
            Message.request(
                UserContentPart(content=("What is this?", OpaqueContent(kind="cache-point", data={"ttl": "5m"})))
            ),
            _DONE,
        ],
        None,
        "messages[0]: part 0, item 1 is a 'cache-point' item (not a file or a URL)",
    ),
    "url-without-media-type": (
        [
            Message.request(UserContentPart(content=("Look", UrlContent(url="https://x/photo", kind="image-url")))),
            _DONE,
        ],
        None,
        "messages[0]: part 0, item 1: the URL 'https://x/photo' has no media type",
    ),
    "opaque-part": (
        [Message.request(TextPart(content="What?"), OpaquePart(part_kind="file", data={"id": "f"})), _DONE],
        None,
        "messages[0]: part 1 is a 'file' part, which a scenario's user message cannot hold",
    ),
    "interrupted-then-went-on": (
        [_ASK, _CALL, _result("interrupted", "interrupted"), _DONE],
        None,
        "messages[2]: call 'a1' (delete_file) ended 'interrupted' and the conversation went on without",
    ),
    "interrupted-response": (
        [_ASK, Message(kind="response", parts=(TextPart(content="Partial"),), state="interrupted")],
        None,
        "messages[1]: the message is 'interrupted'",
    ),
    "no-result-with-agent": (
        [_ASK, _CALL, Message.request(TextPart(content="Never mind")), _DONE],
        "tests.scaffold.faithful_agents:terse_agent",
        "messages[1]: tool call(s) 'a1' have no recorded result (a tool raised, and the source does not record",
    ),
    "output-schema-not-inferred": (
        [
            _ASK,
            _output_call("o1", "final_result", {"site": "x"}),
            Message.request(
                RetryPromptPart(
                    tool_call_id="o1",
                    tool_name="final_result",
                    content=[{"type": "url_parsing", "loc": ["site"], "msg": "Input should be a valid URL"}],
                )
            ),
            _output_call("o2", "final_result", {"site": "https://x"}),
            _output_done("o2", "final_result"),
        ],
        None,
        "the output tool final_result rejected an output with validation errors that a schema inferred",
    ),
    "tool-schema-not-inferred": (
        [
            _ASK,
            _CALL,
            Message.request(
                RetryPromptPart(
                    tool_call_id="a1",
                    tool_name="delete_file",
                    content=[{"type": "url_parsing", "loc": ["path"], "msg": "Input should be a valid URL"}],
                )
            ),
            _DONE,
        ],
        None,
        "tool 'delete_file' rejected arguments with validation errors that a schema inferred from its calls",
    ),
    "text-output-rejected-by-schema": (
        [
            _ASK,
            Message.response(TextPart(content='{"n": "x"}')),
            Message.request(RetryPromptPart(content=[{"type": "int_parsing", "loc": ["n"], "msg": "Input should"}])),
            _DONE,
        ],
        None,
        "a text answer that is no JSON object ended a turn whose other text answers were judged by the output's",
    ),
    "approval-ended-otherwise": (
        [
            _ASK,
            _CALL,
            Message.request(RetryPromptPart(tool_call_id="a1", tool_name="delete_file", content="again")),
            _DONE,
        ],
        _AGENT,
        "messages[2]: call 'a1' (delete_file) asked for approval and ended 'retried'",
    ),
    "failure-renumbered-by-last-turns": (  # scripted with --last-turns 1: the first call is not replayed
        [
            _ASK,
            _CALL,
            _result(),
            _DONE,
            Message.request(TextPart(content="And /tmp/b")),
            Message.response(ToolCallPart(tool_call_id="a2", tool_name="delete_file", args={"path": "/tmp/b"})),
            Message.request(
                ToolReturnPart(
                    tool_call_id="a2",
                    tool_name="delete_file",
                    content="tool 'delete_file' call #2 failed: disk error",
                    outcome="failed",
                )
            ),
        ],
        None,
        "call 'a2' (delete_file) failed as the YAML tool's call #2, which is call #1 of the replay",
    ),
    "result-for-no-call": (
        [_ASK, _DONE, _result()],
        None,
        "messages[2]: a result for 'a1', which no call of the response before awaits",
    ),
    "empty-response": (
        [_ASK, Message.response()],
        None,
        "messages[1]: an empty response",
    ),
    "two-thoughts": (
        [_ASK, Message.response(ThoughtPart(content="a"), ThoughtPart(content="b"), TextPart(content="x"))],
        None,
        "messages[1]: part 1 (thought) comes where a scripted step cannot hold it",
    ),
    "text-after-call": (
        [_ASK, Message.response(*_CALL.parts, TextPart(content="late")), _result(), _DONE],
        None,
        "messages[1]: part 1 (text) comes where a scripted step cannot hold it",
    ),
    "two-responses": (
        [_ASK, _DONE, _DONE],
        None,
        "messages[2]: two model responses in a row",
    ),
    "two-user-texts": (
        [Message.request(TextPart(content="a"), TextPart(content="b")), _DONE],
        None,
        "messages[0]: the request holds 2 user texts",
    ),
    "starts-with-a-response": (
        [_DONE],
        None,
        "messages[0]: the history starts with a model response",
    ),
}


_LAST_TURNS = {"failure-renumbered-by-last-turns": 1}
"""Cases scaffolded with `--last-turns`."""


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_naming_the_message_and_nothing_written(case: str, tmp_path: Path) -> None:
    messages, agent, reason = CASES[case]
    source = tmp_path / f"{case}.json"
    jsonio.write_atomic(source, dumps_history(messages))
    with pytest.raises(Unreplayable) as refused:
        scaffold_to(source, tmp_path / "suite", agent=agent, last_turns=_LAST_TURNS.get(case))
    head = f"{source}: {reason}" if reason.startswith("messages[") else f"{source}: "
    assert refused.value.message.startswith(head), refused.value.message
    assert reason in refused.value.message, refused.value.message
    assert refused.value.message.endswith(f": {refused.value.hint}"), refused.value.message
    assert refused.value.hint.startswith(HINT_VERBS), refused.value.hint
    assert not (tmp_path / "suite").exists()


HINT_VERBS = ("scaffold", "drop", "merge", "join", "add", "move", "make", "put", "keep", "complete", "mark", "remove")
"""How a refusal's hint starts: what to do so the second try works (a flag, another file, an edit)."""
_HINT_NAMES = {"AGENT_HINT", "EDIT_HINT", "hint"}  # `hint`: passed on by a wrapper that takes one


def _hint_starts_well(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _HINT_NAMES
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.startswith(HINT_VERBS)
    if isinstance(node, ast.JoinedStr) and node.values:
        return _hint_starts_well(
            node.values[0].value if isinstance(node.values[0], ast.FormattedValue) else node.values[0]
        )
    return False


def test_every_refusal_in_the_code_ends_with_what_to_do() -> None:
    """Issue 42 item 4: each refusal scaffold can raise, tested or not, passes a hint naming what to add or do."""
    folder = Path(__file__).resolve().parents[2] / "src" / "agentrig" / "runtime" / "scaffold"
    calls: list[str] = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in ("refuse", "Unreplayable"):
                continue
            hint = next((keyword.value for keyword in node.keywords if keyword.arg == "hint"), None)
            where = f"{path.name}:{node.lineno}"
            assert hint is not None, f"{where}: a refusal without a hint of what to do"
            assert _hint_starts_well(hint), f"{where}: a hint that does not start with what to do"
            calls.append(where)
    assert len(calls) > 40  # every refusal of the planner was seen


def test_the_docs_refusal_table_names_each_case_and_only_cases_that_exist() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "scaffold.md").read_text(encoding="utf-8")
    table = text[text.index("| refused | why | test |") :].split("\n\n", 1)[0]
    named = {name for row in table.splitlines()[2:] for name in re.findall(r"`([^`]+)`", row.rsplit("|", 2)[1])}
    cases = {name for name in named if not name.endswith(".json")}
    assert cases == set(CASES)  # every case documented, no entry naming a case that is gone
    fixtures = {Path(name).name for name in named if name.endswith(".json")}
    assert fixtures <= {Path(path).name for path in REFUSED} | {"history-*.json", "deferred-*.json"}
