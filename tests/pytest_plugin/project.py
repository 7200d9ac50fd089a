"""Scenario projects for the plugin's tests: YAML files written into a pytester directory."""

from __future__ import annotations

from pathlib import Path

import pytest

PASSING = """\
name: {name}
tags: [{tags}]
system_prompt: You are terse.
tools:
  bash:
    description: Run a shell command.
    parameters: {{type: object, properties: {{command: {{type: string}}}}, required: [command]}}
    results:
      - when: {{command: ls}}
        return: "a.txt"
turns:
  - user: List the files.
    model:
      - tool_calls: [{{id: tc_1, name: bash, args: {{command: ls}}}}]
        usage: {{input_tokens: 10, output_tokens: 2}}
      - text: One file.
        usage: {{input_tokens: 20, output_tokens: 3}}
    expect:
      output: {{equals: {answer}}}
"""


def scenario(name: str, *, tags: str = "", answer: str = "One file.", golden: bool = False) -> str:
    """A self-contained scenario calling one tool; it fails when `answer` is not the scripted "One file.", and
    with `golden` it compares its history with `golden/NAME.json`."""
    text = PASSING.format(name=name, tags=tags, answer=answer)
    return text + (f"expect:\n  golden: golden/{name}.json\n" if golden else "")


AGENT_RAISES = """\
name: {name}
agent: broken_agent:agent
turns:
  - user: hi
    model:
      - tool_calls: [{{id: c1, name: explode}}]
      - text: never
"""

BROKEN_AGENT = """\
from pydantic_ai import Agent

agent = Agent(None)


@agent.tool_plain
def explode() -> str:
    raise SystemExit(7)
"""


def write(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = Path(pytester.path, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def accept_goldens(pytester: pytest.Pytester, *args: str) -> None:
    """Write the goldens of the project's scenarios (agentrig's own update), so the next run compares them."""
    result = pytester.runpytest("--agentrig-update-golden", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=result.parseoutcomes().get("passed", 0))
