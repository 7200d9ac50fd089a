"""The results of a response's tool calls: those the run produced itself, and those the host handed back after
the run paused (approvals of calls that asked for one, results of external or deferred calls), which become a
turn of their own (`approvals:` / `deferred_results:`, no user message).

A result is the host's when:
- the user's agent says so: the call's tool asks for approval (`requires_approval=True`) or is external;
- it ended `denied` (only a host's decision denies a call);
- the request holding it belongs to another run than the response that made the call (pydantic-ai dumps record
  each message's `run_id`: a resumed run has a new one);
- an earlier request already answered part of the calls (the run's own results, then the run paused);
- it comes after a result for a later call (pydantic-ai answers a run's own calls in call order; agentrig's
  session files merge the host's answers behind them, so the order breaks where the host's begin).

Without the user's agent, deferred results are scripted as a YAML tool rule that defers the call (`defer:
true`) and the host's turn answers it; a denial, as a rule that asks for approval (`ask_approval: true`) and the
host's turn denying it with the recorded message. A call the host approved is, in the record, its tool's result
after a run boundary, which a deferred result reproduces.
"""

from __future__ import annotations

from typing import Any

from agentrig.runtime.history.canonical import Message, RetryPromptPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.scaffold.endings import close_turn
from agentrig.runtime.scaffold.turns import (
    AGENT_HINT,
    EDIT_HINT,
    Answer,
    OutputEvent,
    ScriptTurn,
    Walk,
    is_output_tool_call,
)

__all__ = ["close_paused_end", "take_results"]


def take_results(walk: Walk, index: int, message: Message, results: list[Answer], *, user_follows: bool) -> None:
    """Take one request's results: the run's own answer the pending calls, the host's open a turn."""
    if not walk.turns or walk.previous is None:
        raise walk.refuse(
            index,
            "tool results before any model response; a turn starts with the user",
            hint=f"drop the messages before the first user message ({EDIT_HINT})",
        )
    turn = walk.turns[-1]
    output_retries = [r for r in results if isinstance(r, RetryPromptPart) and r.tool_call_id is None]
    if output_retries:
        _judged_text(walk, index, turn, output_retries)
    turn.output_retries += len(output_retries)
    answers = [r for r in results if r.tool_call_id is not None]
    if answers:
        own, host = _split(walk, index, message, answers)
        if own:
            _answer(walk, index, turn, own)
        if host:
            if user_follows:
                raise walk.refuse(
                    index,
                    "the host's answers to paused calls share a request with a user message",
                    hint=f"move the user's message into a request of its own after the answers ({EDIT_HINT})",
                )
            _host_turn(walk, index, host)
    walk.previous = "request"


def _judged_text(walk: Walk, index: int, turn: ScriptTurn, retries: list[RetryPromptPart]) -> None:
    """An output retry answers the text answer before it: the output validator, or the output's schema (a list
    of validation errors: a native or prompted output), asked again."""
    last = turn.outputs[-1] if turn.outputs else None
    if len(retries) != 1 or last is None or last.kind != "text" or walk.previous != "response":
        raise walk.refuse(
            index,
            "an output retry that answers no text answer of the model",
            hint=f"drop the retry ({EDIT_HINT})",
        )
    content = retries[0].content
    value = last.value
    if isinstance(content, str):
        turn.outputs[-1] = OutputEvent(kind="text", verdict="retry", message=content, value=value)
    else:
        turn.outputs[-1] = OutputEvent(kind="text", verdict="invalid", errors=tuple(content), value=value)


def close_paused_end(walk: Walk, last: Message | None) -> None:
    """A conversation that ends with calls only the host answers (awaiting approval) ends paused, as it did; so
    does one whose last request is the record of a pause for deferred calls: marked (`deferred_pause`, which
    agentrig's histories and pydantic-ai 2.78's dumps write) or, in an earlier release's dump, which has no mark,
    a request of tool results that answers some of the last response's calls and leaves the others open (a cancelled
    run's request of the results that finished is marked interrupted; a tool that raises leaves none).
    Without the agent, a YAML tool defers the calls left open."""
    if not walk.turns or not walk.pending:
        return
    if all(_host_kind(walk, call) for call in walk.pending):
        walk.turns[-1].paused = True
    elif last is not None and last.kind == "request" and (_pause_mark(last) or _partial_results(last)):
        walk.turns[-1].paused = True
        if not walk.own_agent:
            walk.turns[-1].deferred_calls.update(call.tool_call_id for call in walk.pending)
        walk.pending = []


def _pause_mark(message: Message) -> bool:
    namespace = (message.metadata or {}).get("__pydantic_ai__")
    return isinstance(namespace, dict) and namespace.get("deferred_pause") is True


def _partial_results(message: Message) -> bool:
    """Whether the request holds tool results only (at least one) and was not cut (a cancelled run's request of the
    results that finished is `state: 'interrupted'`): with calls still open, the record of a pause."""
    return (
        message.state != "interrupted"
        and bool(message.parts)
        and all(isinstance(part, ToolReturnPart | RetryPromptPart) for part in message.parts)
    )


def _host_kind(walk: Walk, call: ToolCallPart) -> bool:
    tools = walk.host_tools
    return tools is not None and call.tool_name in tools.approval | tools.external


def _split(walk: Walk, index: int, message: Message, answers: list[Answer]) -> tuple[list[Answer], list[Answer]]:
    """The run's own results and the host's, each in call order."""
    order = {call.tool_call_id: number for number, call in enumerate(walk.pending)}
    calls = {call.tool_call_id: call for call in walk.pending}
    for answer in answers:
        if answer.tool_call_id not in order:
            raise walk.refuse(
                index,
                f"a result for {answer.tool_call_id!r}, which no call of the response before awaits",
                hint=f"drop the result ({EDIT_HINT})",
            )
    resumed = walk.previous == "request" or (
        message.run_id is not None and walk.response_run_id is not None and message.run_id != walk.response_run_id
    )
    if resumed:
        return [], _in_call_order(walk, index, answers, order)
    if message.state == "interrupted":
        # A cancelled request holds the results that completed, then agentrig's closures of the calls the
        # cancellation cut (`interrupted`) behind them: all the run's own, whatever their order.
        return sorted(answers, key=lambda answer: order[str(answer.tool_call_id)]), []
    own: list[Answer] = []
    host: list[Answer] = []
    for answer in answers:
        if host:  # once the host's answers began, every later result is the host's too
            host.append(answer)
            continue
        call = calls[str(answer.tool_call_id)]
        # Without the agent, a denial in the run's own request is the YAML tool's own (`outcome: denied`).
        denied = isinstance(answer, ToolReturnPart) and answer.outcome == "denied" and walk.own_agent
        order_breaks = bool(own) and order[str(answer.tool_call_id)] < order[str(own[-1].tool_call_id)]
        (host if _host_kind(walk, call) or denied or order_breaks else own).append(answer)
    return own, _in_call_order(walk, index, host, order)


def _in_call_order(walk: Walk, index: int, answers: list[Answer], order: dict[str, int]) -> list[Answer]:
    positions = [order[str(answer.tool_call_id)] for answer in answers]
    if positions != sorted(positions):
        ids = [answer.tool_call_id for answer in answers]
        raise walk.refuse(
            index,
            f"the host's results {ids} are not in the order of the calls",
            hint=f"put them in the order of the calls ({EDIT_HINT})",
        )
    return answers


def _answer(walk: Walk, index: int, turn: ScriptTurn, answers: list[Answer]) -> None:
    """The run's own results: they answer pending calls in call order, each checked for what a replay can do."""
    calls = {call.tool_call_id: call for call in walk.pending}
    answered = [str(answer.tool_call_id) for answer in answers]
    expected = [call.tool_call_id for call in walk.pending if call.tool_call_id in answered]
    if answered != expected:
        raise walk.refuse(
            index,
            f"the results answer {answered} but the calls were {[c.tool_call_id for c in walk.pending]}; a run"
            " answers each call once, in order",
            hint=f"keep one result per call, in the order of the calls ({EDIT_HINT})",
        )
    failed = any(isinstance(a, ToolReturnPart) and a.outcome == "failed" for a in answers)
    for answer in answers:
        call = calls[str(answer.tool_call_id)]
        _check_answer(walk, index, call, answer, after_failure=failed)
        turn.answers.append((call, answer))
        if is_output_tool_call(call):
            _judged_call(turn, call, answer)
    _count_retries(walk, turn, answers)
    walk.pending = [call for call in walk.pending if call.tool_call_id not in answered]


def _host_turn(walk: Walk, index: int, answers: list[Answer]) -> None:
    """The host's answers: the turn before ends paused, a turn without a user message continues it."""
    paused = walk.turns[-1]
    calls = {call.tool_call_id: call for call in walk.pending}
    approvals: dict[str, Any] = {}
    deferred: dict[str, Any] = {}
    for answer in answers:
        call = calls[str(answer.tool_call_id)]
        what = f"call {call.tool_call_id!r} ({call.tool_name})"
        outcome = answer.outcome if isinstance(answer, ToolReturnPart) else "retried"
        tools = walk.host_tools
        if outcome == "denied" or (tools is not None and call.tool_name in tools.approval):
            if not walk.own_agent:
                paused.approval_calls.add(call.tool_call_id)  # its YAML tool asks for approval
            if outcome == "success":
                approvals[call.tool_call_id] = True
            elif outcome == "denied":
                approvals[call.tool_call_id] = {"deny": _message(answer.content)}
            else:
                raise walk.refuse(
                    index,
                    f"{what} asked for approval and ended {outcome!r}; approvals approve or deny",
                    hint=f"make its result the tool's (approved) or a denial ({EDIT_HINT})",
                )
        elif outcome == "success":
            deferred[call.tool_call_id] = answer.content
            if not walk.own_agent:
                paused.deferred_calls.add(call.tool_call_id)
        else:
            how = "a retry" if outcome == "retried" else f"the outcome {outcome!r}"
            raise walk.refuse(
                index,
                f"the host answered {what} with {how}; a scenario's deferred_results hold the values the calls return",
                hint=f"make the host's result the value the call returned ({EDIT_HINT})",
            )
        paused.answers.append((call, answer))
    answered = {str(answer.tool_call_id) for answer in answers}
    left = [call.tool_call_id for call in walk.pending if call.tool_call_id not in answered]
    if left:
        raise walk.refuse(
            index,
            f"the host answered some paused calls but not {left}; a resumed run answers all",
            hint=f"add the host's result of each of them ({EDIT_HINT})",
        )
    paused.paused = True
    walk.pending = []
    close_turn(walk, index)
    walk.turns.append(
        ScriptTurn(user=None, message_index=index, approvals=approvals or None, deferred_results=deferred or None)
    )
    walk.streaks = {}


def _message(content: Any) -> str:
    return content if isinstance(content, str) else str(content)


def _count_retries(walk: Walk, turn: ScriptTurn, answers: list[Answer]) -> None:
    """pydantic-ai counts, per tool, the run steps in which it was retried; a run fails once the count passes the
    tool's budget. When the count starts again differs by version (2.68: only a step in which the tool succeeded
    resets it; a failed result or a step without a call keeps it): the turn's count never resets here, a budget
    at least what the source needed. An output tool's retries count against the output budget instead."""
    retried = {r.tool_name for r in answers if isinstance(r, RetryPromptPart) and r.tool_call_id and r.tool_name}
    output_calls = [call for call, _ in turn.answers if is_output_tool_call(call)]
    outputs = {name for name in retried if any(call.tool_name == name for call in output_calls)}
    turn.output_retries += len(outputs)
    walk.streaks.update({name: walk.streaks.get(name, 0) + 1 for name in retried - outputs})
    turn.retry_streak = max([turn.retry_streak, *walk.streaks.values()])


def _judged_call(turn: ScriptTurn, call: ToolCallPart, answer: Answer) -> None:
    """The first output tool call of a response is the run's output candidate (pydantic-ai answers the others
    without judging them)."""
    last = turn.last_response
    first = next((c for c in last.tool_calls if is_output_tool_call(c)), None) if last is not None else None
    if first is None or first.tool_call_id != call.tool_call_id:
        return
    if isinstance(answer, ToolReturnPart):
        turn.outputs.append(OutputEvent(kind="tool", verdict="accepted", call=call))
    elif isinstance(answer.content, str):
        turn.outputs.append(OutputEvent(kind="tool", verdict="retry", call=call, message=answer.content))
    else:
        turn.outputs.append(OutputEvent(kind="tool", verdict="invalid", call=call, errors=tuple(answer.content)))


def _check_answer(walk: Walk, index: int, call: ToolCallPart, result: Answer, *, after_failure: bool) -> None:
    what = f"call {call.tool_call_id!r} ({call.tool_name})"
    if isinstance(result, ToolReturnPart):
        interrupted_ok = walk.interrupted_at == index or after_failure
        if result.outcome == "interrupted" and not interrupted_ok:
            raise walk.refuse(
                index,
                f"{what} ended 'interrupted' and the conversation went on without `[INTERRUPTED]` (pydantic-ai"
                " closed it when a cancelled run was resumed); agentrig's loop ends a cancelled turn with"
                " `[INTERRUPTED]`, so a replay cannot hold this history",
                hint="drop that turn's messages, or record it as agentrig's loop records a cancelled turn: the"
                f" request that closed the call `state: interrupted`, then the response `[INTERRUPTED]` ({EDIT_HINT})",
            )
        if result.outcome in ("failed", "denied") and not walk.own_agent and not isinstance(result.content, str):
            raise walk.refuse(
                index,
                f"{what} ended {result.outcome!r} with a result that is not a message",
                hint=f"{AGENT_HINT}, or make the result's content a string ({EDIT_HINT})",
            )
        if isinstance(call.args, str) and not is_output_tool_call(call) and result.outcome == "success":
            raise walk.refuse(
                index,
                f"{what} returned a result although its arguments are not a JSON object",
                hint=f"make its arguments the JSON object the tool was given ({EDIT_HINT})",
            )
        return
    if walk.own_agent:
        return  # the agent's own tool and its schema decide; the golden history checks the outcome
    if isinstance(result.content, str) and isinstance(call.args, str):
        raise walk.refuse(
            index,
            f"{what} has arguments that are not a JSON object, which pydantic-ai answers with validation"
            " errors, but the source holds a message",
            hint=f"{AGENT_HINT}, or make its arguments a JSON object ({EDIT_HINT})",
        )
