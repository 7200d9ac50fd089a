"""A run whose page must explain every kind of failure and stay trustworthy whatever the data holds: a structured
output that differs, a tool-call sequence, a text the model must not see, a tool error that makes later checks
fail, an agent that cannot load (an error, with no checks), tool call ids named like Object's own properties,
hidden characters in a prompt, names that look like keys and names that only start like one, a streamed run with
many tags, and a word that only the conversation holds."""

from __future__ import annotations

import contextlib
from pathlib import Path

from tests.reports.runs import run_cli

KEY_NAMES = ("sk-abc123def456ghi789jkl", "sk-zzz999yyy888xxx777www")
"""Scenario names redaction must replace (they look like keys), each with its own conversation."""
WORD_NAMES = ("sk-learn-classifier", "sk-learn-regressor")
"""Names that only start like a key: kept as they are."""
NEEDLE = "quokka"
"""A word only one scenario's conversation holds (not its name, file or tags)."""
LONG_TAGS = ("integration-with-the-billing-service", "regression-2026-11", "slow-on-ci-runners", "needs-network-mock")

_SCENARIOS = {
    "json.yaml": """\
name: json-equals
turns:
  - user: Give JSON.
    model:
      - text: '{"a": 1, "b": [1, 2, 3], "c": {"d": "x"}}'
    expect:
      output: {json_equals: {"a": 1, "b": [1, 2, 4], "c": {"d": "y"}}}
""",
    "sequence.yaml": """\
name: tool-sequence
tools:
  bash:
    results:
      - return: ok
turns:
  - user: go
    model:
      - tool_calls: [{id: tc_1, name: bash, args: {command: ls}}]
      - tool_calls: [{id: tc_2, name: bash, args: {command: pwd}}]
      - text: Done.
    expect:
      tool_calls: {sequence: [{name: bash, args: {command: ls}}, {name: bash, args: {command: cat}}]}
""",
    "unseen.yaml": """\
name: must-not-see
system_prompt: You are terse.
tools:
  read:
    results:
      - return: "the password is hunter2"
turns:
  - user: Read it.
    model:
      - tool_calls: [{id: tc_1, name: read, args: {}}]
      - text: Read.
        expect_input: {not_contains_text: ["password"]}
""",
    "cause.yaml": """\
name: tool-error-cause
tools:
  write_file:
    results:
      - fail: "disk full"
turns:
  - user: Save the notes.
    model:
      - tool_calls: [{id: tc_1, name: write_file, args: {path: notes.txt}}]
      - text: Saved.
    expect:
      output: {contains: Saved}
      usage: {requests: 2}
""",
    "missing_agent.yaml": """\
name: agent-missing
agent: nowhere_module_for_the_report_test:agent
turns:
  - user: hi
    model:
      - text: hello
""",
    "ids.yaml": """\
name: hostile-ids
tools:
  probe:
    results:
      - return: ok
turns:
  - user: "Look \\u202Eevil\\u202C and zero\\u200Bwidth"
    model:
      - tool_calls:
          - {id: constructor, name: probe, args: {}}
          - {id: toString, name: probe, args: {}}
          - {id: __proto__, name: probe, args: {}}
      - text: Done.
""",
    "streamed.yaml": f"""\
name: streamed-tagged
stream: true
tags: [{", ".join(LONG_TAGS)}]
turns:
  - user: Which animal?
    model:
      - text: The {NEEDLE} is a small marsupial.
""",
}


def _named(name: str, prompt: str) -> str:
    return f"name: {name}\nturns:\n  - user: {prompt}\n    model:\n      - text: Answer to {prompt}\n"


def write_explain_suite(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for file, text in _SCENARIOS.items():
        (directory / file).write_text(text, encoding="utf-8")
    for number, name in enumerate((*KEY_NAMES, *WORD_NAMES)):
        (directory / f"named{number}.yaml").write_text(_named(name, f"prompt of {name.split('-')[1]} {number}"))
    return directory


def make_explain_run(root: Path) -> Path:
    """The run folder (`root/explain`), run from `root` with relative paths; the run errors (exit code 3)."""
    with contextlib.chdir(root):
        write_explain_suite(Path("suite"))
        assert run_cli("run", "suite", "--out", "explain", "-q") == 3
    return root / "explain"
