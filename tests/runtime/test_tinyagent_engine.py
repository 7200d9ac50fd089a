"""The second engine: self-contained scenarios run through tinyagent's own `Agent` match the pydantic-ai goldens.

The golden check of each scenario compares the canonical history with the golden file the pydantic-ai engine
wrote, so a scenario that passes here has an identical history on both engines. A scenario using a feature
the engine does not run is an error naming the feature, never a pass.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent, unsupported_features
from agentrig.runtime.history.canonical import Message, RetryPromptPart, TextPart, ToolReturnPart
from agentrig.runtime.history.wire import loads_history
from agentrig.runtime.suite.runner import RunOptions, SuiteResult, run_suite
from agentrig.scenarios.loader import load_paths
from agentrig.scenarios.model import ModelStep, SubAgentScript

REPO = Path(__file__).resolve().parents[2]

# The scenarios tinyagent does not run (docs/removal.md): two name a user's own pydantic-ai agent (refused when they
# are loaded); the others need what tinyagent cannot express, each refused before it runs, naming the feature. Written
# out so a scenario newly refused (or newly run) shows here.
OWN_AGENT = {"output-retry", "own-agent"}
REFUSED = {
    "cancel-during-call": "a cancel point",
    "cancel-mid-response": "a cancel point",
    "history-policy-model-input": "`capabilities:` / `history_processors:`",
    "history-processor-persisted": "`capabilities:` / `history_processors:`",
    "steering-from-tool": "steering",
    "steering-pending-after-cancel": "steering",
    "structured-output-native": "a structured output",
    "structured-output-prompted": "a structured output",
    "structured-output-tool": "a structured output",
    "user-documents": "attachments other than images",
    "history-cleanup-public": "`settings.prepare_history: false`",
    "harness-tool-output-limits": "`requires: ['harness']`",
    "ui-agui-frontend-tool": "UI requests (`ui: ag-ui`",
    "ui-agui-tool-results": "UI requests (`ui: ag-ui`",
    "ui-agui-refusals": "UI requests (`ui: ag-ui`",
    "ui-vercel-tool-round-trip": "UI requests (`ui: vercel-ai`",
    "incomplete-response": "a `cut` step",
}
NOT_RUN = OWN_AGENT | set(REFUSED)


@pytest.fixture(scope="module")
def run_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteResult, Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        out = tmp_path_factory.mktemp("tinyagent-out")
        options = RunOptions(paths=(Path("scenarios"),), out_dir=out)
        return run_suite(options, execute=execute_scenario_tinyagent), out


@pytest.fixture
def suite(run_out: tuple[SuiteResult, Path]) -> SuiteResult:
    return run_out[0]


def test_docs_removal_md_is_generated_from_this_run(run_out: tuple[SuiteResult, Path]) -> None:
    """docs/removal.md is what `nox -s removal` writes (the engine imports no pydantic-ai, so this run is that run)."""
    script = REPO / "scripts" / "gen_removal_doc.py"
    checked = subprocess.run(
        [sys.executable, str(script), str(run_out[1] / "report.json"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr


def test_every_scenario_passes_with_the_pydantic_ai_goldens(suite: SuiteResult) -> None:
    results = {result.name: result for result in suite.results}
    assert len(results) > len(NOT_RUN)
    for name, result in results.items():
        if name in OWN_AGENT:
            continue
        if name in REFUSED:
            assert result.status == "error", name
            assert result.error is not None
            assert REFUSED[name] in result.error.message, (name, result.error.message)
            assert result.error.kind == "unsupported", name  # the engine's limit, not the agent's error
            continue
        failed = [check.name for check in result.checks if not check.passed]
        assert result.status == "passed", (name, result.error, failed)
        assert any(check.name.endswith("golden") and check.passed for check in result.checks), name


def test_a_pydantic_ai_agent_is_an_error_naming_it(suite: SuiteResult) -> None:
    for result in suite.results:
        if result.name not in OWN_AGENT:
            continue
        assert result.status == "error", result.name
        assert result.error is not None
        assert result.error.message == (
            "the tinyagent engine does not run a user's own pydantic-ai agent"
            " (`agent: examples.myapp.agents:build_agent`)"
        )
        assert result.error.kind == "unsupported"


def _written_history(out: Path, name: str) -> list[Message]:
    """A scenario's history as the run wrote it (a run with --out keeps no history in memory)."""
    return loads_history((out / "scenarios" / name / "history.json").read_bytes())


def test_retries_and_failures_map_through_the_canonical_layer(run_out: tuple[SuiteResult, Path]) -> None:
    suite, out = run_out
    results = {result.name: result for result in suite.results}
    retry_parts = [p for m in _written_history(out, "tool-retry") for p in m.parts if isinstance(p, RetryPromptPart)]
    assert retry_parts, "a YAML retry is a retry prompt, as pydantic-ai writes it"
    failed = [p for m in _written_history(out, "tool-failure") for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [p.outcome for p in failed] == ["failed"]
    assert results["tool-failure"].turns[0].error is not None
    assert results["tool-failure"].turns[0].error.kind == "tool_failed"


def test_unsupported_features_are_named() -> None:
    loaded = {item.scenario.name: item for item in load_paths([REPO / "scenarios"])}
    refused = {name: features for name, item in loaded.items() if (features := unsupported_features(item.scenario))}
    assert set(refused) == set(REFUSED)
    assert all(any(REFUSED[name] in feature for feature in features) for name, features in refused.items())
    with_pydantic_ai_parts = loaded["text-answer"].scenario.model_copy(
        update={"deps": "myapp.deps:make", "agents": {"myapp.sub:agent": SubAgentScript(model=(ModelStep(text="x"),))}}
    )
    assert unsupported_features(with_pydantic_ai_parts) == [
        "scripted sub-agents (`agents:`: pydantic-ai agents a tool delegates to)",
        "`deps:` (pydantic-ai's RunContext dependencies; a tinyagent tool receives none)",
    ]


def test_run_engine_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "scenarios/tool_retry.yaml", "--engine", "tinyagent", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "1 passed, 0 failed, 0 skipped"
    bad = CliRunner().invoke(app, ["run", "scenarios/tool_retry.yaml", "--engine", "nope", "--out", str(out)])
    assert bad.exit_code == 2


def test_a_users_own_tinyagent_agent_runs_its_real_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO / "examples")
    options = RunOptions(paths=(Path("tinyagent_app/word_count.yaml"),), out_dir=tmp_path / "out")
    suite = run_suite(options, execute=execute_scenario_tinyagent)
    (result,) = suite.results
    assert result.status == "passed", [c for c in result.checks if not c.passed] or result.error
    history = _written_history(tmp_path / "out", result.name)
    returns = [p for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    # The real tool ran: its answer and its error are in the history.
    assert [(p.content, p.outcome) for p in returns] == [
        ("4", "success"),
        ("cannot count the words of empty text", "failed"),
    ]


def test_an_agent_attribute_that_is_no_agent_is_a_scenario_error(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("name: bad\nagent: json:dumps\nturns:\n  - user: hi\n    model: [{text: hi}]\n")
    suite = run_suite(RunOptions(paths=(scenario,), out_dir=None), execute=execute_scenario_tinyagent)
    (result,) = suite.results
    assert result.status == "error"
    assert result.error is not None
    assert "agent" in result.error.message
    assert "calling the factory 'json:dumps' failed" in result.error.message


def test_the_removal_doc_refuses_an_unexplained_difference() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_removal_doc", REPO / "scripts" / "gen_removal_doc.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golden_failed = {"name": "scenario: golden", "passed": False}
    report = {
        "scenarios": [
            {"name": "same", "status": "passed", "checks": [{"name": "scenario: golden", "passed": True}]},
            {"name": "drifted", "status": "failed", "checks": [golden_failed], "error": None},
            {"name": "crashed", "status": "error", "checks": [], "error": {"kind": "agent_error", "message": "boom"}},
            {
                "name": "skipped-feature",
                "status": "error",
                "checks": [],
                "error": {"kind": "unsupported", "message": "the tinyagent engine does not run compaction settings"},
            },
        ]
    }
    text, bad = module.render(report)
    assert bad == ["crashed", "drifted"]
    assert "| `drifted` | golden | differs | scenario: golden |" in text
    assert "| `skipped-feature` | golden | not run | compaction settings |" in text
    assert "**1** scenarios identical on both engines, **2** differ, **1** not run" in text


INSTRUCTIONS_SCENARIO = """name: instructions-{word}
system_prompt: You are terse.
turns:
  - user: Hi.
    model:
      - text: Hello.
        usage: {{input_tokens: 10, output_tokens: 2}}
        expect_input:
          instructions_contain: {word}
          tools: []
"""


@pytest.mark.parametrize(("word", "status"), [("terse", "passed"), ("verbose", "failed")])
def test_instructions_are_checked_on_the_tinyagent_engine_too(tmp_path: Path, word: str, status: str) -> None:
    # The system prompt is tinyagent's instructions; an `instructions_contain` it does not hold must fail.
    path = tmp_path / f"{word}.yaml"
    path.write_text(INSTRUCTIONS_SCENARIO.format(word=word), encoding="utf-8")
    suite = run_suite(RunOptions(paths=(path,), out_dir=None), execute=execute_scenario_tinyagent)
    (result,) = suite.results
    assert result.status == status, [c for c in result.checks if not c.passed] or result.error
    names = [check.name for check in result.checks]
    assert "turn 1, step 1: input.instructions_contain" in names


PYDANTIC_AI_MODULE = """from pydantic_ai import Agent

raise RuntimeError("the module was imported")  # a provider model built here would ask for its API key first
agent = Agent("openai:gpt-4o")
"""


def test_a_pydantic_ai_agent_module_is_refused_before_it_is_imported(tmp_path: Path) -> None:
    (tmp_path / "pai_app.py").write_text(PYDANTIC_AI_MODULE, encoding="utf-8")
    scenario = tmp_path / "own.yaml"
    scenario.write_text("name: own\nagent: pai_app:agent\nturns:\n  - user: hi\n    model: [{text: hi}]\n")
    suite = run_suite(RunOptions(paths=(scenario,), out_dir=None), execute=execute_scenario_tinyagent)
    (result,) = suite.results
    assert result.status == "error"
    assert result.error is not None
    assert (
        result.error.message
        == "the tinyagent engine does not run a user's own pydantic-ai agent (`agent: pai_app:agent`)"
    )
    assert "pai_app" not in sys.modules


def test_a_module_importing_tinyagent_too_is_imported_and_judged_by_its_value(tmp_path: Path) -> None:
    # A module that uses both frameworks is not refused on sight: the value it names decides.
    pytest.importorskip("pydantic_ai")
    (tmp_path / "both_app.py").write_text("import tinyagent\nimport pydantic_ai\nagent = 42\n", encoding="utf-8")
    scenario = tmp_path / "both.yaml"
    scenario.write_text("name: both\nagent: both_app:agent\nturns:\n  - user: hi\n    model: [{text: hi}]\n")
    suite = run_suite(RunOptions(paths=(scenario,), out_dir=None), execute=execute_scenario_tinyagent)
    (result,) = suite.results
    assert result.error is not None
    assert "is a int, not a tinyagent Agent" in result.error.message


SLOW_TOOL_SCENARIO = """name: slow
system_prompt: You are terse.
tools:
  slow_build:
    description: Build.
    results: [{return: built, delay: 60}]
turns:
  - user: Build it.
    model:
      - tool_calls: [{id: tc_1, name: slow_build, args: {}}]
        usage: {input_tokens: 10, output_tokens: 2}
"""


def test_a_cancelled_turn_is_saved_interrupted_then_the_cancellation_goes_on(tmp_path: Path) -> None:
    # Ctrl-C (task cancellation) mid-tool: the orchestrator saves the turn ([INTERRUPTED], the call closed as
    # interrupted) and re-raises; tinyagent's abort signal ends the tool's wait, so nothing keeps running.
    from agentrig.runtime.engine.orchestrator import RequestOrchestrator
    from agentrig.runtime.engine.tinyagent_engine.engine import TinyagentEngine
    from agentrig.runtime.engine.tinyagent_engine.execution import _scenario_agent  # pyright: ignore[reportPrivateUsage]
    from agentrig.runtime.engine.tinyagent_engine.script import TinyagentScript
    from agentrig.runtime.engine.tinyagent_engine.tools import ToolOutcomes
    from agentrig.runtime.history.sessions import new_session

    path = tmp_path / "slow.yaml"
    path.write_text(SLOW_TOOL_SCENARIO, encoding="utf-8")
    (loaded,) = load_paths([path])
    outcomes = ToolOutcomes()
    agent, label = _scenario_agent(loaded, outcomes)
    script = TinyagentScript([turn.model for turn in loaded.scenario.turns])
    orchestrator = RequestOrchestrator(
        TinyagentEngine(agent, script, label=label, outcomes=outcomes), new_session(), settings=loaded.scenario.settings
    )

    async def cancel_mid_tool() -> None:
        task = asyncio.ensure_future(orchestrator.run("Build it."))
        while not agent.state.pending_tool_calls:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)  # tinyagent's loop task ends once the tool sees the signal
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    asyncio.run(cancel_mid_tool())
    record = orchestrator.last_record
    assert record is not None
    assert record.interrupted
    history = orchestrator.session.messages
    assert history[-1].parts == (TextPart(content="[INTERRUPTED]"),)
    closing = [p for m in history for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(p.tool_call_id, p.outcome) for p in closing] == [("tc_1", "interrupted")]
    assert [(s.tool_call_id, s.status) for s in record.tool_statuses] == [("tc_1", "cancelled")]


STOPPING_AGENT = """from tinyagent import Agent, AgentOptions


def build() -> Agent:
    # Gives up after an empty response (a user's own rule); otherwise tinyagent's loop ends as it does.
    agent = Agent(AgentOptions(should_stop_after_turn=lambda message, *rest: not message.content))
    agent.set_system_prompt("You are terse.")
    return agent
"""

STOPPING_SCENARIO = """name: stopping
agent: stopping_app:build
turns:
  - user: Hi.
    model: [{empty: true}]
  - user: Hello?
    model: [{text: Hello.}]
"""


def test_an_intervention_the_agent_stopped_before_never_reaches_a_later_turn(tmp_path: Path) -> None:
    # The user's own hook ends the run after an empty response, before the queued "Please return text." is
    # sent: it must not be sent after the next turn's answer instead.
    (tmp_path / "stopping_app.py").write_text(STOPPING_AGENT, encoding="utf-8")
    (tmp_path / "stopping.yaml").write_text(STOPPING_SCENARIO, encoding="utf-8")
    suite = run_suite(
        RunOptions(paths=(tmp_path / "stopping.yaml",), out_dir=tmp_path / "out"), execute=execute_scenario_tinyagent
    )
    (result,) = suite.results
    assert result.turns[1].error is None
    assert result.turns[1].output == "Hello."
    history = _written_history(tmp_path / "out", "stopping")
    assert not any(isinstance(p, RetryPromptPart) for m in history for p in m.parts)
