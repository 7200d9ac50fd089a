"""A scripted step's `expect_input` checks on what tinyagent sends the model, judged on the canonical history.

The same checks as the pydantic-ai engine's scripted model, computed from the canonical form of the request
context (tinyagent's messages converted by `tinyagent_format`), so both engines answer the same question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from agentrig.runtime.history.canonical import (
    Message,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserContentPart,
)
from agentrig.runtime.history.run_records import Check
from agentrig.runtime.models.attachments import attachment_check, attachments_seen
from agentrig.runtime.models.input_checks import common_input_checks
from agentrig.scenarios.model import ModelInputCheck

__all__ = ["input_checks"]


def _texts(messages: Sequence[Message]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart):
                texts.append(part.content)
            elif isinstance(part, UserContentPart):
                texts.append(part.text)
            elif isinstance(part, ToolReturnPart | RetryPromptPart):
                content = part.content
                texts.append(content if isinstance(content, str) else json.dumps(content, default=str))
    return texts


def input_checks(
    expect: ModelInputCheck,
    messages: Sequence[Message],
    tools: Sequence[str],
    *,
    instructions: str,
    where: str,
    base_dir: Path,
) -> list[Check]:
    """The checks `expect` asks for, on the canonical messages the model received, its system prompt (tinyagent's
    instructions) and the tools it was offered."""
    prefix = f"{where}: input"
    checks: list[Check] = []
    if expect.no_system_prompt_from_history:
        # tinyagent keeps the system prompt outside the messages: any system-prompt part came from history.
        stale = [p.content for m in messages for p in m.parts if isinstance(p, SystemPromptPart)]
        checks.append(
            Check(name=f"{prefix}.no_system_prompt_from_history", passed=not stale, expected=[], actual=stale)
        )
    if expect.no_dangling_tool_calls:
        answered = {
            p.tool_call_id
            for m in messages
            for p in m.parts
            if isinstance(p, ToolReturnPart | RetryPromptPart) and p.tool_call_id is not None
        }
        calls = [p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart)]
        dangling = [call_id for call_id in calls if call_id not in answered]
        checks.append(Check(name=f"{prefix}.no_dangling_tool_calls", passed=not dangling, expected=[], actual=dangling))
    checks.extend(
        common_input_checks(
            expect,
            prefix=prefix,
            message_count=len(messages),
            texts=_texts(messages),
            instructions=instructions,
            offered_tools=tools,
            system_prompt="\n\n".join(p.content for m in messages for p in m.parts if isinstance(p, SystemPromptPart)),
        )
    )
    if expect.attachments is not None:
        checks.append(attachment_check(expect.attachments, attachments_seen(messages), base_dir, prefix=prefix))
    return checks
