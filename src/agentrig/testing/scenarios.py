"""Run one scenario inside a user's own test: given inline (a dict, a YAML string) or as a file, against the user's
agent object with deps objects, through the runtime `agentrig run` uses (`runtime.suite.single.ScenarioSession`).

    run = run_scenario({"name": "balance", "turns": [...]}, agent=support_agent, deps=deps)
    run.assert_passed()                   # the scenario's own expectations, as `agentrig run` checks them
    assert run.output == "..."; run.messages; run.usage; run.checks
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrig.runtime.history.canonical import JsonValue, Message
from agentrig.runtime.history.run_records import Check, RunError, ScenarioResult
from agentrig.runtime.history.usage import Usage

if TYPE_CHECKING:
    from agentrig.runtime.suite.single import ScenarioSession
    from agentrig.scenarios.loader import LoadedScenario

__all__ = [
    "NOT_GIVEN",
    "ScenarioRun",
    "ScenarioRunner",
    "TurnRun",
    "load_scenario",
    "run_scenario",
    "run_scenario_async",
]

NOT_GIVEN: Any = object()
"""`deps=` not given: the scenario's own `deps` (or none)."""

INLINE_NAME = "<inline>"
"""How an inline scenario's file is named in messages (it has none)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRun:
    """What one turn of the scenario did."""

    index: int
    """0-based turn number."""
    prompt: str | None
    output: str | None
    """The turn's output as text (a structured output as its JSON text); None when the turn ended in an error."""
    output_json: JsonValue
    """The turn's structured output as JSON data (None for a text output)."""
    error: RunError | None
    """The error the turn ended with, expected by the scenario (`expect.error`) or not: `error.kind`,
    `error.message`."""
    interrupted: bool
    """The turn was aborted or timed out (its history ends with an `[INTERRUPTED]` response)."""
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioRun:
    """What one scenario run produced: its verdict and checks, and what the agent did."""

    name: str
    status: str
    """passed, failed, error or skipped (the statuses of `agentrig run`): skipped when an extra its `requires:` names
    is not installed (`assert_passed` then skips the calling test, with the command that installs it)."""
    output: str | None
    """The last turn's output as text (a structured output as its JSON text)."""
    output_json: JsonValue
    """The last turn's structured output as JSON data (None for a text output)."""
    messages: tuple[Message, ...]
    """The canonical history of the whole scenario (what history.json holds); the assertions accept the run."""
    usage: Usage
    """The usage summed over every turn."""
    checks: tuple[Check, ...]
    """Every check of the scenario's expectations, passed or not."""
    error: RunError | None = None
    """The error that made the scenario fail or error, if any (an error the scenario expected is in `turns`)."""
    turns: tuple[TurnRun, ...] = ()
    """Each turn: its output, and the error it ended with (`run.turns[0].error.kind == "rate_limit"`)."""
    report: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)
    """The scenario's report.json entry."""
    update_golden: str = field(default="update_golden=True", repr=False)
    """How its runner writes goldens, for `assert_passed`'s message (the fixture: `--agentrig-update-golden`)."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.passed)

    def assert_passed(self) -> None:
        """Raise an `AssertionError` reading like `agentrig run`'s failure (checks, expected, actual, diffs); skip the
        calling test (`pytest.skip`, with the reason) when the scenario was skipped: it did not run, so it did not
        pass."""
        __tracebackhide__ = True  # the test's own line is the frame to show, not this one
        if self.status == "skipped":
            import pytest

            reasons = [check.skipped_reason for check in self.checks if check.skipped_reason]
            pytest.skip(reasons[0] if reasons else "skipped")
        if self.status in ("failed", "error"):
            from agentrig.testing.failures import failure_text

            raise AssertionError(failure_text(self.report, update_golden=self.update_golden))


def load_scenario(
    scenario: Mapping[str, Any] | str | Path,
    *,
    name: str | None = None,
    base_dir: Path | None = None,
    agent_given: bool = False,
) -> LoadedScenario:
    """The one scenario `scenario` gives, validated as `agentrig run` validates it: a mapping, YAML text, or a
    path to a scenario file (`name` picks one of several). Relative file names in an inline scenario (a golden,
    an initial history) are resolved against `base_dir` (default: the current directory)."""
    import yaml

    from agentrig.scenarios.loader import discover, load_scenario_file, load_scenario_text
    from agentrig.scenarios.model import AGENT_OBJECT_GIVEN
    from agentrig.scenarios.tool_names import unknown_tool_call_errors

    # Given an agent, the scenario is not self-contained, whatever form it comes in: its `deps:` are for that
    # agent, and its scripted calls name that agent's tools (known once it runs), not YAML ones.
    token = AGENT_OBJECT_GIVEN.set(agent_given)
    try:
        if isinstance(scenario, Path) or (isinstance(scenario, str) and _names_a_file(scenario)):
            found = [loaded for path in discover([Path(scenario)]) for loaded in load_scenario_file(path)]
        else:
            # A YAML string in a test is usually indented with the code around it.
            text = (
                textwrap.dedent(scenario)
                if isinstance(scenario, str)
                else yaml.safe_dump(dict(scenario), sort_keys=False)
            )
            found = load_scenario_text(text, base_dir / INLINE_NAME if base_dir is not None else Path(INLINE_NAME))
    finally:
        AGENT_OBJECT_GIVEN.reset(token)
    if not agent_given:  # a self-contained agent: its tools are the YAML's, known now (as `agentrig run` checks)
        for loaded in found:
            prefix = (loaded.index,) if loaded.in_list else ()
            errors = unknown_tool_call_errors(loaded.scenario, path=loaded.path, node=loaded.node, prefix=prefix)
            if errors:
                raise errors[0]
    chosen = [loaded for loaded in found if name is None or loaded.name == name]
    if len(chosen) != 1:
        names = [loaded.name for loaded in found]
        wanted = f"no scenario named {name!r}" if name is not None else f"{len(found)} scenarios; pass name="
        raise ValueError(f"{wanted} (the scenarios given: {names})")
    return chosen[0].detached()


def _names_a_file(text: str) -> bool:
    return "\n" not in text and text.endswith((".yaml", ".yml"))


def _as_run(result: ScenarioResult, report: dict[str, Any], update_golden: str) -> ScenarioRun:
    last = result.turns[-1] if result.turns else None
    return ScenarioRun(
        name=result.name,
        status=result.status,
        output=last.output if last is not None else None,
        output_json=last.output_json if last is not None else None,
        messages=result.history,
        usage=result.usage,
        checks=result.checks,
        error=result.error,
        turns=tuple(
            TurnRun(
                index=turn.index,
                prompt=turn.prompt,
                output=turn.output,
                output_json=turn.output_json,
                error=turn.error,
                interrupted=turn.interrupted,
                usage=turn.usage,
            )
            for turn in result.turns
        ),
        report=report,
        update_golden=update_golden,
    )


class ScenarioRunner:
    """Runs scenarios with one set of run options (the `agentrig_scenario` fixture holds one per pytest session,
    built from its `--agentrig-*` options); `run_scenario` builds one per call."""

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        stream: bool = False,
        update_golden: bool = False,
        record_dir: Path | None = None,
        replay_dir: Path | None = None,
        session: ScenarioSession | None = None,
        update_golden_option: str = "update_golden=True",
    ) -> None:
        self.update_golden = update_golden_option
        """How a failure tells its reader to write goldens (`run_scenario(update_golden=True)`, or the plugin's
        `--agentrig-update-golden` for the fixture's runner)."""
        if session is None:
            from agentrig.runtime.suite.options import RunOptions
            from agentrig.runtime.suite.single import ScenarioSession

            options = RunOptions(
                paths=(),
                out_dir=None,  # nothing written: the result comes back to the test, with its history
                model=model,
                base_url=base_url,
                stream=stream,
                update_golden=update_golden,
                record_dir=record_dir,
                replay_dir=replay_dir,
            )
            session = ScenarioSession(options)
        self._session = session

    def _prepared(
        self, scenario: Mapping[str, Any] | str | Path, agent: Any, deps: Any, name: str | None, base_dir: Path | None
    ) -> tuple[LoadedScenario, Any]:
        from agentrig.runtime.suite.single import with_agent

        loaded = load_scenario(scenario, name=name, base_dir=base_dir, agent_given=agent is not None)
        if isinstance(agent, str):  # `module:attribute`, as a scenario's `agent:` names it
            loaded = _with_agent_spec(loaded, agent)
            agent = None
        execute = with_agent(None, agent=agent, deps=deps, deps_given=deps is not NOT_GIVEN)
        return loaded, execute

    def run(
        self,
        scenario: Mapping[str, Any] | str | Path,
        *,
        agent: Any = None,
        deps: Any = NOT_GIVEN,
        name: str | None = None,
        base_dir: Path | None = None,
    ) -> ScenarioRun:
        """Run one scenario (see `run_scenario`)."""
        __tracebackhide__ = True
        _outside_a_running_loop()
        loaded, execute = self._prepared(scenario, agent, deps, name, base_dir)
        return self._finish(self._session.run(loaded, execute=execute))

    async def run_async(
        self,
        scenario: Mapping[str, Any] | str | Path,
        *,
        agent: Any = None,
        deps: Any = NOT_GIVEN,
        name: str | None = None,
        base_dir: Path | None = None,
    ) -> ScenarioRun:
        """`run` from an async test (inside its running event loop)."""
        loaded, execute = self._prepared(scenario, agent, deps, name, base_dir)
        return self._finish(await self._session.run_async(loaded, execute=execute))

    def _finish(self, result: ScenarioResult) -> ScenarioRun:
        from agentrig.runtime.history.redaction import redact_json
        from agentrig.runtime.suite.outputs.reports import scenario_json

        return _as_run(result, redact_json(scenario_json(result)), self.update_golden)

    def close(self) -> None:
        self._session.close()


def _outside_a_running_loop() -> None:
    """A `RuntimeError` saying what to call instead when called from a running event loop (an async test)."""
    __tracebackhide__ = True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "run_scenario() and ScenarioRunner.run() cannot be called inside a running event loop (an async test, or"
        " code an event loop runs): there, `await run_scenario_async(...)`"
        " (or `await agentrig_scenario.run_async(...)`)"
    )


def _with_agent_spec(loaded: LoadedScenario, spec: str) -> LoadedScenario:
    from dataclasses import replace

    from agentrig.scenarios.model import Scenario

    data = loaded.scenario.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return replace(loaded, scenario=Scenario.model_validate({**data, "agent": spec}))


def run_scenario(
    scenario: Mapping[str, Any] | str | Path,
    *,
    agent: Any = None,
    deps: Any = NOT_GIVEN,
    name: str | None = None,
    base_dir: Path | None = None,
    model: str | None = None,
    stream: bool = False,
    update_golden: bool = False,
) -> ScenarioRun:
    """Run one scenario and return what it did; it does not raise for a failing check (`assert_passed()` does).

    `scenario`: a mapping, YAML text, or a scenario file's path (`name` picks one of several). `agent`: your
    pydantic-ai `Agent` object (or `module:attribute`), run in place of the scenario's `agent:` with its real
    tools; its model is replaced by the scenario's script, or by `model` (`provider:name`, a real model).
    `deps`: the deps object for its runs (default: the scenario's `deps:`). Call from a test function or a
    fixture; from an async test, use `run_scenario_async`."""
    __tracebackhide__ = True
    _outside_a_running_loop()
    runner = ScenarioRunner(model=model, stream=stream, update_golden=update_golden)
    try:
        return runner.run(scenario, agent=agent, deps=deps, name=name, base_dir=base_dir)
    finally:
        runner.close()


async def run_scenario_async(
    scenario: Mapping[str, Any] | str | Path,
    *,
    agent: Any = None,
    deps: Any = NOT_GIVEN,
    name: str | None = None,
    base_dir: Path | None = None,
    model: str | None = None,
    stream: bool = False,
    update_golden: bool = False,
) -> ScenarioRun:
    """`run_scenario` from an async test."""
    runner = ScenarioRunner(model=model, stream=stream, update_golden=update_golden)
    try:
        return await runner.run_async(scenario, agent=agent, deps=deps, name=name, base_dir=base_dir)
    finally:
        runner.close()
