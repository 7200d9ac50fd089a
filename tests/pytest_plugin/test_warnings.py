"""The plugin records the warnings each scenario item showed (its report.json entry, `--agentrig-out`'s reports), and
still hands them to pytest: its warnings summary lists them, and its filters (`-W`, `filterwarnings`) decide. In
fresh processes, so that the filters are the inner session's alone (this suite's own `filterwarnings = error` would
apply to an in-process session too)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.pytest_plugin.project import write

pytest_plugins = ["pytester"]

# Only categories pytest-xdist's controller can import: it rebuilds each warning a worker recorded from its class's
# module, and one only the scenario's folder holds (the agent's module) ends the session (pytest-xdist 3.x).
_AGENT = textwrap.dedent(
    """
    import warnings
    from pydantic_ai import Agent, PydanticAIDeprecationWarning

    warnings.warn("plugin_agent is imported", UserWarning)

    agent = Agent(None)

    @agent.tool_plain
    def legacy() -> str:  # sync: pydantic-ai runs it in a thread
        warnings.warn("legacy() is going away", PydanticAIDeprecationWarning)
        return "ok"

    @agent.tool_plain
    async def loud() -> str:
        warnings.warn("loud has something to say", UserWarning)
        return "ok"
    """
)

_SCENARIO = """\
name: {name}
agent: plugin_agent:agent
turns:
  - user: hi
    model:
      - tool_calls: [{{id: t1, name: legacy, args: {{}}}}, {{id: t2, name: loud, args: {{}}}}]
      - text: done
"""

_SHOWN = [
    {"category": category, "message": message, "module": "plugin_agent", "count": 1}
    for category, message in (
        ("PydanticAIDeprecationWarning", "legacy() is going away"),
        ("UserWarning", "loud has something to say"),
        ("UserWarning", "plugin_agent is imported"),
    )
]


def _project(pytester: pytest.Pytester) -> None:
    files = {"scenarios/plugin_agent.py": _AGENT}
    files |= {f"scenarios/{name}.yaml": _SCENARIO.format(name=name) for name in ("one", "two", "three")}
    write(pytester, files)


def _warnings(pytester: pytest.Pytester) -> dict[str, Any]:
    report: dict[str, Any] = jsonio.read_json_file(pytester.path / "out" / "report.json")
    return {scenario["name"]: scenario["warnings"] for scenario in report["scenarios"]} | {
        "totals": (report["totals"]["warnings"], report["totals"]["scenarios_warned"])
    }


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["in-process", "n2"])
def test_each_item_records_its_warnings_and_pytest_still_shows_them(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: not the inner controller's
    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    _project(pytester)
    result = pytester.runpytest_subprocess(*workers, "--agentrig-out=out", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, warnings=result.parseoutcomes().get("warnings", 0))
    assert _warnings(pytester) == {"one": _SHOWN, "two": _SHOWN, "three": _SHOWN, "totals": (9, 3)}
    # pytest's warnings summary, as before: what the plugin records it also passes on.
    result.stdout.fnmatch_lines(
        [
            "*warnings summary*",
            "*PydanticAIDeprecationWarning: legacy() is going away",
            "*UserWarning: loud has something to say",
        ]
    )
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| `UserWarning`: loud has something to say | `plugin_agent` | 3 | `one`, `three`, `two` |" in summary


def test_pytests_own_filters_decide(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    _project(pytester)
    pytester.makeini(
        "[pytest]\nfilterwarnings =\n    ignore::UserWarning:plugin_agent\n"
        "    error::pydantic_ai.PydanticAIDeprecationWarning\n"
    )
    result = pytester.runpytest_subprocess("--agentrig-out=out", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*cause tool_failed: tool 'legacy' (call t1) raised PydanticAIDeprecationWarning*"])
    assert _warnings(pytester) == {"one": [], "two": [], "three": [], "totals": (0, 0)}
