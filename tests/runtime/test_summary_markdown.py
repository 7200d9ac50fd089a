"""summary.md shows what a run or a report says as text: never as markdown or HTML of its own (issue 27, item 9)."""

from __future__ import annotations

from typing import Any

from agentrig.runtime.reports.markdown_text import code, fence, inline
from agentrig.runtime.reports.report_files import render_summary

HOSTILE = "<img src=x onerror=alert(1)> | **bold** [link](http://example.com) `tick` ``two``\n# heading"


def _report(**entry: Any) -> dict[str, Any]:
    scenario = {
        "id": "s.yaml::s",
        "name": "s",
        "path": "scenarios/a|b<script>.yaml",
        "status": "error",
        "tags": [],
        "duration_s": 0.1,
        "error": {"kind": "agent_error", "message": HOSTILE},
        "usage": {"requests": 1, "input_tokens": 2, "output_tokens": 3},
        "turns": [],
        "checks": [
            {
                "name": "turn 1: output.equals <b>",
                "passed": False,
                "expected": HOSTILE,
                "actual": "a|b",
                "detail": "```\n<script>alert(1)</script>\n```",
                "skipped_reason": None,
            }
        ],
        "output_dir": "scenarios/s",
    } | entry
    summary = {"passed": 0, "failed": 0, "error": 1, "skipped": 0, "total": 1, "duration_s": 0.1}
    head = {"pydantic_ai_version": "2.68.0<b>", "agentrig_version": "0.1.0", "summary": summary}
    return {**head, "scenarios": [scenario]}


def test_hostile_text_is_shown_as_text() -> None:
    lines = render_summary(_report()).splitlines()

    assert lines[2].startswith("pydantic-ai 2.68.0\\<b\\> · agentrig 0.1.0")
    # Seven cells: the path's | and < are escaped, so the row neither splits nor opens a tag.
    assert lines[6] == "| 💥 error | `s` | scenarios/a\\|b\\<script\\>.yaml | 1 | 2 / 3 | — | 0.10 s |"
    assert lines[10] == "#### `s` (scenarios/a\\|b\\<script\\>.yaml)"
    # A message's markup is escaped, and its line break never starts a line of markdown (a heading here).
    assert lines[12] == (
        "- **error** `agent_error`: \\<img src=x onerror=alert(1)\\> \\| \\*\\*bold\\*\\* "
        "\\[link\\](http://example.com) \\`tick\\` \\`\\`two\\`\\` # heading"
    )
    # Code spans outlast the backticks inside them: `` inside needs ``` around.
    assert lines[13] == (
        "- **turn 1: output.equals \\<b\\>** expected ``` <img src=x onerror=alert(1)> | **bold** "
        "[link](http://example.com) `tick` ``two`` # heading ```, got `a|b`"
    )
    # The detail's own ``` cannot close the block it sits in.
    assert lines[14:20] == ["", "  ````text", "  ```", "  <script>alert(1)</script>", "  ```", "  ````"]


def test_code_spans_outlast_the_backticks_inside_them() -> None:
    assert code("done") == "`done`"
    assert code("a `b` c") == "`` a `b` c ``"
    assert code("``x``") == "``` ``x`` ```"
    assert code("a|b\nc") == "`a|b c`"
    assert code("a|b", in_table=True) == "`a\\|b`"
    assert inline("a_b *c* <d>") == "a\\_b \\*c\\* \\<d\\>"
    assert fence(["plain"]) == "```"
    assert fence(["````"]) == "`````"
