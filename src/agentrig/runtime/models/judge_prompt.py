"""What a judge is shown: its instructions, and one prompt holding the rubric, the material to grade (the output, or
the conversation as plain text) and the reference answer when there is one, each in a tag of its own."""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentrig.runtime.history.canonical import (
    Message,
    RetryPromptPart,
    TextPart,
    ThoughtPart,
    ToolCallPart,
    ToolReturnPart,
    UserContentPart,
)
from agentrig.scenarios.model import JudgeExpectation

__all__ = ["JUDGE_INSTRUCTIONS", "conversation_text", "judge_prompt"]

JUDGE_INSTRUCTIONS = (
    "You grade the work of an AI agent against a rubric. Read the rubric, the material in <output> or "
    "<conversation>, and the <reference> answer when one is given. Judge only what the rubric asks. Answer with "
    "the verdict: a short reason citing the material, pass (true when the rubric is met), and a score from 0 "
    "(not met at all) to 1 (fully met)."
)


def judge_prompt(judge: JudgeExpectation, *, output: str | None, conversation: Sequence[Message]) -> str:
    material = (
        f"<output>\n{output or ''}\n</output>"
        if judge.of == "output"
        else f"<conversation>\n{conversation_text(conversation)}\n</conversation>"
    )
    parts = [f"<rubric>\n{judge.rubric}\n</rubric>", material]
    if judge.reference is not None:
        parts.append(f"<reference>\n{judge.reference}\n</reference>")
    return "\n\n".join(parts)


def conversation_text(messages: Sequence[Message]) -> str:
    """The conversation as lines a judge reads: the user's words, the agent's answers, its tool calls and their
    results (thoughts and system prompts left out: the rubric grades what was said and done)."""
    lines: list[str] = []
    for message in messages:
        speaker = "user" if message.kind == "request" else "assistant"
        for part in message.parts:
            if isinstance(part, TextPart):
                lines.append(f"{speaker}: {part.content}")
            elif isinstance(part, UserContentPart):
                texts = [item if isinstance(item, str) else f"[{type(item).__name__}]" for item in part.content]
                lines.append(f"user: {' '.join(texts)}")
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args, ensure_ascii=False)
                lines.append(f"assistant calls {part.tool_name}: {args}")
            elif isinstance(part, ToolReturnPart):
                content = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                lines.append(f"tool {part.tool_name or ''} returned: {content}")
            elif isinstance(part, RetryPromptPart):
                lines.append(f"retry asked of {part.tool_name or 'the answer'}")
            elif isinstance(part, ThoughtPart):
                continue
    return "\n".join(lines)
