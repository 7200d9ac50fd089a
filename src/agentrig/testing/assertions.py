"""Semantic assertions over any pydantic-ai run's messages: the tool calls that were made, in what order, to which
tools, and the usage. No indexing into `capture_run_messages()`.

    result = await support_agent.run("What is my balance?", deps=deps, model=TestModel())
    assert_tool_called(result, "customer_balance")                     # any args
    assert_tool_called(result, "get_weather", {"lat": 51.5})          # args containing these (exact=True: equal)
    assert_tool_calls_in_order(result, "get_lat_lng", ("get_weather", {"lat": 51.5}))
    assert_no_unknown_tools(result)
    assert_usage(result, requests=(1, 3), total_tokens=(None, 2000))

`messages` is anything holding a run's messages: pydantic-ai's `AgentRunResult` (its `all_messages()`), a list of
its `ModelMessage`s, an `agentrig.testing.ScenarioRun`, or agentrig canonical messages. Calls are matched by the
rules of a scenario's `tool_calls` expectations (`runtime/checks/tool_call_checks`); each failure lists every call
that was made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentrig.runtime.history.canonical import JsonValue, Message, RetryPromptPart, ToolCallPart
from agentrig.runtime.history.usage import Usage

__all__ = [
    "ToolCall",
    "assert_no_unknown_tools",
    "assert_tool_called",
    "assert_tool_calls_in_order",
    "assert_tool_not_called",
    "assert_usage",
    "canonical_messages",
    "tool_calls",
]

UNKNOWN_TOOL_MESSAGE = "Unknown tool name: "
"""How pydantic-ai answers a call to a tool the agent lacks (every supported version): the run goes on."""

OUTPUT_TOOL_PREFIX = "final_result"
"""pydantic-ai's output tools (`final_result`, `final_result_<Type>` for a union): never unknown."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model made."""

    name: str
    args: dict[str, JsonValue] | str
    """The arguments (a raw string when the model sent JSON that is not an object)."""
    id: str

    def __str__(self) -> str:
        from agentrig.runtime.runfolder.jsonio import dumps

        args = self.args if isinstance(self.args, str) else dumps(self.args).decode("utf-8")
        return f"{self.name}({args}) [id {self.id}]"


def canonical_messages(messages: Any) -> tuple[Message, ...]:
    """The run's messages as agentrig canonical messages, from any of the forms this module accepts."""
    history = getattr(messages, "messages", None)  # a ScenarioRun
    if history is not None and not callable(history):
        return tuple(history)
    all_messages = getattr(messages, "all_messages", None)  # pydantic-ai's AgentRunResult / StreamedRunResult
    if callable(all_messages):
        messages = all_messages()
    listed = list(messages)
    if all(isinstance(message, Message) for message in listed):
        return tuple(listed)
    from agentrig.runtime.models.conversion import to_canonical

    return tuple(to_canonical(listed))


def tool_calls(messages: Any) -> list[ToolCall]:
    """Every tool call of the run, in order (output tool calls included)."""
    return [
        ToolCall(name=part.tool_name, args=part.args, id=part.tool_call_id)
        for message in canonical_messages(messages)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]


def _calls_made(calls: Sequence[ToolCall]) -> str:
    if not calls:
        return "no tool calls were made"
    return f"tool calls made ({len(calls)}):\n" + "\n".join(f"  {index}. {call}" for index, call in enumerate(calls, 1))


def _args_match(call: ToolCall, args: Mapping[str, Any] | None, *, exact: bool) -> bool:
    from agentrig.runtime.checks.tool_call_checks import args_dict

    if args is None:
        return True
    actual = args_dict(call.args)
    if actual is None:
        return False
    if exact:
        return actual == dict(args)
    return all(key in actual and actual[key] == value for key, value in args.items())


def _describe(name: str, args: Mapping[str, Any] | None, *, exact: bool) -> str:
    from agentrig.runtime.runfolder.jsonio import dumps

    if args is None:
        return repr(name)
    relation = "equal to" if exact else "including"
    return f"{name!r} with args {relation} {dumps(dict(args)).decode('utf-8')}"


def assert_tool_called(
    messages: Any, name: str, args: Mapping[str, Any] | None = None, *, exact: bool = False, times: int | None = None
) -> ToolCall:
    """Assert a call to `name` was made (with `args` among its arguments, or equal to them with `exact`), `times`
    times when given; returns the first matching call."""
    __tracebackhide__ = True  # a failure points at the test's line, not at agentrig's
    calls = tool_calls(messages)
    matching = [call for call in calls if call.name == name and _args_match(call, args, exact=exact)]
    wanted = _describe(name, args, exact=exact)
    if not matching:
        raise AssertionError(f"expected a call to {wanted}\n{_calls_made(calls)}")
    if times is not None and len(matching) != times:
        raise AssertionError(f"expected {times} call(s) to {wanted}, got {len(matching)}\n{_calls_made(calls)}")
    return matching[0]


def assert_tool_not_called(messages: Any, name: str) -> None:
    """Assert no call to `name` was made."""
    __tracebackhide__ = True  # a failure points at the test's line, not at agentrig's
    calls = tool_calls(messages)
    if any(call.name == name for call in calls):
        raise AssertionError(f"expected no call to {name!r}\n{_calls_made(calls)}")


ExpectedCall = str | tuple[str, Mapping[str, Any]]
"""A tool name, or (name, args the call's arguments include)."""


def assert_tool_calls_in_order(messages: Any, *expected: ExpectedCall, exact: bool = False) -> list[ToolCall]:
    """Assert these calls were made in this order; other calls may come between them, unless `exact` (then the
    calls are exactly these, nothing before, between or after). Returns the matched calls."""
    __tracebackhide__ = True  # a failure points at the test's line, not at agentrig's
    calls = tool_calls(messages)
    wanted = [(item, None) if isinstance(item, str) else (item[0], item[1]) for item in expected]
    listing = ", ".join(_describe(name, args, exact=False) for name, args in wanted)
    if exact:
        if len(calls) != len(wanted) or not all(
            call.name == name and _args_match(call, args, exact=False)
            for call, (name, args) in zip(calls, wanted, strict=False)
        ):
            raise AssertionError(f"expected exactly these calls: {listing}\n{_calls_made(calls)}")
        return calls
    matched: list[ToolCall] = []
    position = 0
    for name, args in wanted:
        while position < len(calls) and not (
            calls[position].name == name and _args_match(calls[position], args, exact=False)
        ):
            position += 1
        if position == len(calls):
            after = f" after {matched[-1]}" if matched else ""
            raise AssertionError(
                f"expected calls in order: {listing}\nno call to {_describe(name, args, exact=False)}{after}\n"
                + _calls_made(calls)
            )
        matched.append(calls[position])
        position += 1
    return matched


def assert_no_unknown_tools(messages: Any, known: Iterable[str] | None = None) -> None:
    """Assert no call named a tool the agent lacks: pydantic-ai answered none with "Unknown tool name", and, with
    `known`, every call names one of these tools (output tools `final_result*` always count as known)."""
    __tracebackhide__ = True  # a failure points at the test's line, not at agentrig's
    history = canonical_messages(messages)
    calls = tool_calls(history)
    problems = [
        f"{part.tool_name!r} (call {part.tool_call_id}): the model was told {part.content!r}"
        for message in history
        for part in message.parts
        if isinstance(part, RetryPromptPart)
        and isinstance(part.content, str)
        and part.content.startswith(UNKNOWN_TOOL_MESSAGE)
    ]
    if known is not None:
        names = set(known)
        problems += [
            f"{call.name!r} (call {call.id}) is not one of {sorted(names)}"
            for call in calls
            if call.name not in names and not call.name.startswith(OUTPUT_TOOL_PREFIX)
        ]
    if problems:
        raise AssertionError("calls to unknown tools:\n  " + "\n  ".join(problems) + "\n" + _calls_made(calls))


Bound = int | tuple[int | None, int | None]
"""An exact value, or an inclusive (min, max) range where None leaves that side open."""

_USAGE_FIELDS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cache_read_tokens", "total_tokens")


def _usage_of(value: Any) -> Usage:
    if isinstance(value, Usage):
        return value
    usage = getattr(value, "usage", None)
    if isinstance(usage, Usage):  # a ScenarioRun
        return usage
    if hasattr(value, "all_messages"):  # a pydantic-ai run result: `usage()` before 2.6x, a property after
        from agentrig.runtime.models.conversion import usage_from_run

        return usage_from_run(value)
    return Usage.from_object(value)  # a RunUsage


def assert_usage(usage: Any, **bounds: Bound) -> Usage:
    """Assert the run's usage is within bounds, per field: `requests`, `tool_calls`, `input_tokens`,
    `output_tokens`, `cache_read_tokens`, `total_tokens`. `usage` is a pydantic-ai `RunUsage` or `AgentRunResult`,
    a `ScenarioRun` or an agentrig `Usage`. Returns the normalized usage."""
    __tracebackhide__ = True  # a failure points at the test's line, not at agentrig's
    normalized = _usage_of(usage)
    unknown = sorted(set(bounds) - set(_USAGE_FIELDS))
    if unknown:
        raise TypeError(f"assert_usage: unknown usage field(s) {unknown}; known: {list(_USAGE_FIELDS)}")
    problems: list[str] = []
    for field_name, bound in bounds.items():
        actual: int = getattr(normalized, field_name)
        low, high = (bound, bound) if isinstance(bound, int) else bound
        if (low is not None and actual < low) or (high is not None and actual > high):
            wanted = _bound_text(low, high)
            problems.append(f"{field_name}: expected {wanted}, got {actual}")
    if problems:
        facts = ", ".join(f"{name}={getattr(normalized, name)}" for name in _USAGE_FIELDS)
        raise AssertionError("usage out of bounds:\n  " + "\n  ".join(problems) + f"\nusage: {facts}")
    return normalized


def _bound_text(low: int | None, high: int | None) -> str:
    if low == high:
        return str(low)
    if low is None:
        return f"at most {high}"
    if high is None:
        return f"at least {low}"
    return f"between {low} and {high}"
