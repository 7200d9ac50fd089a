"""The `expect_input` checks every engine answers the same way, once the engine has said what the model received:
how many messages, the texts the model reads, the instructions it was given and the tools it was offered.

The engine-specific checks (where a system prompt came from, which tool returns the framework synthesized) stay
with each engine's scripted model. Framework-free, so the tinyagent engine uses it without pydantic-ai.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.history.run_records import Check
from agentrig.scenarios.model import ModelInputCheck

__all__ = ["common_input_checks"]


def _as_texts(value: tuple[str, ...] | str) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else value


def common_input_checks(
    expect: ModelInputCheck,
    *,
    prefix: str,
    message_count: int,
    texts: Sequence[str],
    instructions: str,
    offered_tools: Iterable[str],
) -> list[Check]:
    """message_count, contains_text / not_contains_text, instructions_contain / _not_contain, tools: in that order."""
    checks: list[Check] = []
    if expect.message_count is not None:
        checks.append(
            Check(
                name=f"{prefix}.message_count",
                passed=message_count == expect.message_count,
                expected=expect.message_count,
                actual=message_count,
            )
        )
    # A failure shows what the model read (every text of its input, in order; the ones holding what it must not
    # read), not a bare `false`; a pass keeps `true`, so report.json does not repeat the conversation per check.
    for wanted in expect.contains_text:
        found = any(wanted in text for text in texts)
        seen: JsonValue = True if found else list(texts)
        checks.append(Check(name=f"{prefix}.contains_text", passed=found, expected=wanted, actual=seen))
    for unwanted in expect.not_contains_text:
        holding: list[JsonValue] = [text for text in texts if unwanted in text]
        checks.append(
            Check(
                name=f"{prefix}.not_contains_text",
                passed=not holding,
                expected=unwanted,
                actual=holding if holding else False,
            )
        )
    for wanted in _as_texts(expect.instructions_contain):
        checks.append(
            Check(name=f"{prefix}.instructions_contain", passed=wanted in instructions, expected=wanted,
                  actual=instructions)
        )  # fmt: skip
    for unwanted in _as_texts(expect.instructions_not_contain):
        checks.append(
            Check(name=f"{prefix}.instructions_not_contain", passed=unwanted not in instructions, expected=unwanted,
                  actual=instructions)
        )  # fmt: skip
    if expect.tools is not None:
        offered = sorted(offered_tools)
        checks.append(
            Check(
                name=f"{prefix}.tools",
                passed=offered == sorted(expect.tools),
                expected=sorted(expect.tools),
                actual=offered,
            )
        )
    return checks
