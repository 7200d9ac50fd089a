"""How a turn ends: with an answer, by an output tool, paused for the host, or as agentrig's loop ends a turn that
went wrong, scripted so the replay goes wrong the same way.

Agentrig's own histories (session files, `history.json`) keep what its loop made of such a turn; a pydantic-ai
dump keeps only pydantic-ai's messages, and the golden history gets what the loop will add (`GoldenEdits`):

- a result `failed` with agentrig's failure text and nothing after it (a dump: calls left without a result): the
  tool's rule `fail` (with `raises`, the class a real tool raised); the turn expects `error: tool_failed`;
- a request in state `interrupted`, then `[INTERRUPTED]` (a dump: the request, then the next user message): the
  unfinished calls' rules `abort`; the turn expects `interrupted: true`;
- a request in state `interrupted` that closes the last response's calls and ends the conversation, with no
  `[INTERRUPTED]` (agentrig's histories only): a usage limit stopped the run before the calls ran;
  `settings.tool_calls_limit` at the calls the turn ran; the turn expects `error: usage_limit`;
- the last response's output tool calls left without a result (a dump; 2.78 adds an empty request `interrupted`),
  or closed `interrupted` with no `[INTERRUPTED]` (agentrig's histories): the run ran out of output retries
  (pydantic-ai's `Exceeded maximum output retries (N)`); `settings.output_retries` at the retries the turn used;
  the turn expects `error: unexpected_model_behavior`;
- `[INTERRUPTED] partial text` after a request: a step `{text: partial, abort: true}`; `interrupted: true`;
- tool results and nothing after them (a `failed` one without agentrig's failure text is a result the model was to
  read), or a user's message with no answer: a step `error: server_error`; the turn expects `error: server_error`
  (agentrig's loop drops the unanswered user message when a turn follows; a dump keeps it).

The source does not say which provider error (or limit) stopped a turn: scaffold scripts `server_error`, which ends
the turn with the same history. A dump does not keep a failed tool's error: without `--agent` the rule's message
says so; with `--agent` the real tool's message is unknown, and the source is refused.
"""

from __future__ import annotations

import re
from typing import Any

from agentrig.runtime.history.canonical import Message, ToolCallPart, ToolReturnPart
from agentrig.runtime.scaffold.turns import EDIT_HINT, ScriptTurn, Walk, interrupted_marker, is_output_tool_call

__all__ = ["FAILED_CALL_NUMBER", "NO_ANSWER", "UNKNOWN_FAILURE", "close_turn", "failure_rule", "take_marker"]

NO_ANSWER = "the source recorded no answer to this request"
"""The message of the provider error scaffold scripts where the source's run stopped without an answer."""

UNKNOWN_FAILURE = "the source does not record the tool's error"
"""The message of the `fail` rule of a call a pydantic-ai dump leaves without a result (its tool raised)."""

_YAML_FAILURE = re.compile(r"tool '(?P<name>.*)' call #(?P<ordinal>\d+) failed: (?P<message>.*)", re.DOTALL)

FAILED_CALL_NUMBER = "failed_call_number"
"""A rule's key (never written) for the number a YAML tool's failure text gives its call: the replay's must match."""
_RAISED = re.compile(
    r"tool '(?P<name>.*)' \(call (?P<id>.*?)\) raised (?P<cls>[A-Za-z_]\w*): (?P<message>.*)", re.DOTALL
)


def failure_rule(call: ToolCallPart, content: object) -> dict[str, Any] | None:
    """The YAML rule that fails `call` with exactly `content` as agentrig records the failure, or None."""
    if not isinstance(content, str):
        return None
    raised = _RAISED.fullmatch(content)
    if raised is not None and raised["name"] == call.tool_name and raised["id"] == call.tool_call_id:
        return {"fail": raised["message"], "raises": raised["cls"]}
    scripted = _YAML_FAILURE.fullmatch(content)
    if scripted is not None and scripted["name"] == call.tool_name:
        return {"fail": scripted["message"], FAILED_CALL_NUMBER: int(scripted["ordinal"])}
    return None


def take_marker(walk: Walk, index: int, partial: str) -> None:
    """Agentrig's `[INTERRUPTED]` response: the turn was cancelled, in its tools or while the model answered."""
    turn = walk.turns[-1]
    if walk.interrupted_at is not None:  # cancelled while its tools ran: the calls left open abort
        _abort_open_calls(walk, turn)
    else:  # cancelled while the model answered: the partial text is what it had written
        turn.steps.append({"text": partial, "abort": True} if partial else {"abort": True})
    turn.ending = {"interrupted": True}
    walk.pending = []
    walk.previous = "response"


def close_turn(walk: Walk, index: int, *, last: bool = False) -> None:
    """The turn before `index` ends here: answered, paused, ended by an output tool, or gone wrong. `last`: the
    conversation ends with it."""
    if not walk.turns:
        return
    turn = walk.turns[-1]
    if turn.ending is not None:
        return
    if _output_retries_exhausted(walk, turn):
        return
    if last and walk.interrupted_at is not None and _limit_stopped(walk, turn):
        return
    if walk.interrupted_at is not None:  # a dump: the cancelled request, then the next user message
        walk.edits.interrupted.add(walk.interrupted_at)
        _abort_open_calls(walk, turn)
        turn.ending = {"interrupted": True}
        return
    if turn.last_response is None:
        if not last:  # a dump keeps the request a provider failed on; agentrig's loop drops it when a turn follows
            walk.edits.dropped.add(turn.message_index)
        _no_answer(turn)
        return
    if walk.pending and not turn.paused:
        _tool_raised(walk, turn)
        return
    if turn.paused or walk.previous != "request" or not turn.steps or not turn.last_response.tool_calls:
        return
    if any(is_output_tool_call(call) for call in turn.last_response.tool_calls):
        return
    last_calls = {call.tool_call_id for call in turn.last_response.tool_calls}
    answers = [(call, answer) for call, answer in turn.answers if call.tool_call_id in last_calls]
    failures = [(call, failure_rule(call, answer.content)) for call, answer in answers if _outcome(answer) == "failed"]
    call, rule = next(((call, rule) for call, rule in failures if rule is not None), (None, None))
    if call is None or rule is None:
        # No result holds agentrig's failure text: a `failed` one is a result the model was to read (`ToolFailed`,
        # recorded as the rule's `outcome: failed`), and the request after the results got no answer.
        _no_answer(turn)
        return
    if not walk.own_agent:
        turn.rules[call.tool_call_id] = rule
    _after_failure(turn, call, answers)
    turn.ending = {"error": {"kind": "tool_failed"}}


def _output_retries_exhausted(walk: Walk, turn: ScriptTurn) -> bool:
    """The last response's calls left open are its output tool calls, the first of them among them: pydantic-ai
    judged the output, rejected it once more than its budget allows and ended the run (`UnexpectedModelBehavior`),
    leaving them without a result (agentrig's loop closes them `interrupted`; a cancellation would write
    `[INTERRUPTED]`, and a usage limit counts no output call)."""
    last = turn.last_response
    if last is None or turn.paused:
        return False
    calls = {call.tool_call_id for call in last.tool_calls}
    open_calls = [call for call in walk.pending if call.tool_call_id in calls]
    if walk.interrupted_at is not None:
        open_calls += [c for c, a in turn.answers if c.tool_call_id in calls and _outcome(a) == "interrupted"]
    first_output = next((call for call in last.tool_calls if is_output_tool_call(call)), None)
    if not open_calls or first_output is None or first_output not in open_calls:
        return False
    if not all(is_output_tool_call(call) for call in open_calls):
        return False
    if walk.pending:  # a dump: the calls are closed where agentrig's loop closes them
        walk.edits.exhausted.add(walk.interrupted_at if walk.interrupted_at is not None else walk.pending_at)
    # The call closed `interrupted` was rejected, not taken: no evidence an output schema accepts its arguments.
    turn.outputs = [event for event in turn.outputs if event.call is None or event.call not in open_calls]
    turn.exhausted_output_retries = turn.output_retries
    turn.exhausted_output = first_output
    turn.ending = {"error": {"kind": "unexpected_model_behavior"}}
    walk.pending = []
    walk.interrupted_at = None
    return True


def _limit_stopped(walk: Walk, turn: ScriptTurn) -> bool:
    """Agentrig's history ends on a request in state `interrupted` that closed the last response's calls and no
    `[INTERRUPTED]` after it: a usage limit stopped the run before those calls ran (a cancellation writes the
    marker; a dump closes nothing). Scripted as `settings.tool_calls_limit` at the calls the turn ran, when no
    other turn ran more (then the same limit would have stopped it too)."""
    closed = [call for call, answer in turn.answers if _outcome(answer) == "interrupted"]
    if walk.pending or not closed or turn.last_response is None:
        return False
    if {call.tool_call_id for call in closed} != {call.tool_call_id for call in turn.last_response.tool_calls}:
        return False
    ran = _calls_ran(turn)
    if any(_calls_ran(other) > ran for other in walk.turns if other is not turn):
        return False
    turn.tool_calls_limit = ran
    turn.ending = {"error": {"kind": "usage_limit"}}
    walk.interrupted_at = None
    return True


def _calls_ran(turn: ScriptTurn) -> int:
    return sum(
        1 for call, answer in turn.answers if _outcome(answer) != "interrupted" and not is_output_tool_call(call)
    )


def _outcome(answer: object) -> str:
    return answer.outcome if isinstance(answer, ToolReturnPart) else "retried"


def _after_failure(turn: ScriptTurn, failed: ToolCallPart, answers: list[tuple[ToolCallPart, Any]]) -> None:
    """The calls after the failed one in its response ran, but the run closed them `interrupted`: any outcome."""
    names = [call.tool_call_id for call in failed_response_calls(turn, failed)]
    after = set(names[names.index(failed.tool_call_id) + 1 :])
    for call, answer in answers:
        if call.tool_call_id in after and _outcome(answer) == "interrupted":
            turn.rules[call.tool_call_id] = {"return": None}


def failed_response_calls(turn: ScriptTurn, failed: ToolCallPart) -> list[ToolCallPart]:
    last = turn.last_response
    return list(last.tool_calls) if last is not None else [failed]


def _no_answer(turn: ScriptTurn) -> None:
    turn.steps.append({"error": {"kind": "server_error", "message": NO_ANSWER}})
    turn.ending = {"error": {"kind": "server_error"}}


def _tool_raised(walk: Walk, turn: ScriptTurn) -> None:
    """Calls left without a result (a pydantic-ai dump: a tool raised, and pydantic-ai recorded nothing of the
    batch): the first fails the turn, the others are closed `interrupted` after it, as agentrig's loop does."""
    names = ", ".join(repr(call.tool_call_id) for call in walk.pending)
    if walk.own_agent:
        raise walk.refuse(
            walk.pending_at,
            f"tool call(s) {names} have no recorded result (a tool raised, and the source does not record its"
            " error, which the replay's history holds)",
            hint="scaffold the run's session.json or history.json (they record the error), or without --agent",
        )
    first, *others = walk.pending
    turn.rules[first.tool_call_id] = {"fail": UNKNOWN_FAILURE, "raises": "Exception"}
    for call in others:
        turn.rules[call.tool_call_id] = {"return": None}
    failure = f"tool {first.tool_name!r} (call {first.tool_call_id}) raised Exception: {UNKNOWN_FAILURE}"
    walk.edits.closed[walk.pending_at] = (first.tool_call_id, failure)
    walk.pending = []
    turn.ending = {"error": {"kind": "tool_failed"}}


def _abort_open_calls(walk: Walk, turn: ScriptTurn) -> None:
    """Each call the cancelled request leaves unanswered, or answers `interrupted`, aborts (the first one to run
    cancels the run; the calls that completed first keep their results)."""
    open_calls = [call.tool_call_id for call in walk.pending]
    open_calls += [c.tool_call_id for c, a in turn.answers if _outcome(a) == "interrupted"]
    if not open_calls:
        raise walk.refuse(
            walk.interrupted_at or 0,
            "the request is 'interrupted' but no call was left unfinished",
            hint=f"mark the request complete ({EDIT_HINT})",
        )
    for call_id in open_calls:
        # Delayed: the calls of the batch that completed in the source return first (both engines keep them).
        turn.rules[call_id] = {"abort": True, "delay": 0.05}
    walk.pending = []
    walk.interrupted_at = None


def is_marker(message: Message) -> bool:
    return interrupted_marker(message) is not None
