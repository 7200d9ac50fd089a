"""A scenario file as a pytest collector, each scenario as an item; failures rendered as `agentrig run` prints them.

A file that does not validate is a collection error whose text is agentrig's one-line `file:line: field: message`;
a failing item shows the failed checks (expected, actual, the golden diff) and no traceback of agentrig's.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from _pytest.fixtures import TopRequest  # as pytest's doctest items: fixtures for a non-function item

from agentrig.errors import AgentrigError
from agentrig.pytest_plugin.parse_cache import CachedScenario, shown_path
from agentrig.pytest_plugin.state import STATE_KEY, PluginState

__all__ = ["ScenarioFailure", "ScenarioFile", "ScenarioItem"]


class ScenarioFailure(Exception):
    """A scenario failed or errored; its text is the whole failure report."""


class ScenarioFile(pytest.File):
    """One scenario file: its scenarios, validated as `agentrig run` validates them."""

    def collect(self) -> Iterator[ScenarioItem]:
        state = self.config.stash[STATE_KEY]
        here, rootpath = self.config.invocation_params.dir, self.config.rootpath
        shown = shown_path(self.path, here)
        # Named rootdir-relative in reports (as the item's id); its files (goldens, histories) are resolved as
        # `agentrig run` resolves them, from the file's folder as the command line reached it.
        reported = shown if rootpath == here else shown_path(self.path, rootpath)
        # Under pytest-xdist, as the controller read the file while this worker started, if it is unchanged since.
        parse_cache = state.parse_cache
        scenarios: list[Any] | None = None
        if parse_cache is not None:
            scenarios = parse_cache.scenarios(state.resolved(self.path), shown)
        if scenarios is None:
            from agentrig.scenarios.loader import iter_scenarios

            scenarios = list(iter_scenarios([shown]))
        for loaded in scenarios:
            where = f"{shown}:{loaded.line}"
            first = state.names.setdefault(loaded.name, where)
            if first != where:
                from agentrig.errors import ScenarioError

                raise ScenarioError(
                    f"duplicate scenario name '{loaded.name}' (first defined in {first})",
                    path=shown,
                    line=loaded.line_of("name"),
                    field="name",
                )
            state.collected_count += 1
            yield ScenarioItem.from_parent(self, name=loaded.name, scenario=loaded, scenario_path=reported)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        if isinstance(excinfo.value, AgentrigError):  # `file:line: field: message`, no traceback
            return excinfo.value.message.replace("agentrig run --update-golden", "pytest --agentrig-update-golden")
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Item):
    """One scenario: run through the session's `ScenarioSession`, the path `agentrig run` takes."""

    agentrig_scenario = True
    """Marks the items of this plugin (`state` finds them without importing this module)."""

    def __init__(self, *, scenario: Any, scenario_path: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._scenario = scenario
        """A `LoadedScenario`, or a `CachedScenario` (the controller's reading) unpickled once it is needed."""
        self.scenario_path = scenario_path
        """The scenario file as reports name it (relative to the rootdir)."""
        self.scenario_tags: tuple[str, ...] = scenario.tags
        self.scenario_line: int = scenario.line
        self.agentrig_entry: dict[str, Any] | None = None
        state = self.config.stash[STATE_KEY]
        self.add_marker("agentrig")
        for tag in self.scenario_tags:
            self.extra_keyword_matches.add(tag)  # `-k tag`, whatever the tag is
            if state.tag_markers.is_marker(tag):
                self.add_marker(tag)
        # Fixtures, as pytest's own doctest items have them (a non-function item: `getfixtureinfo(func=None)`): the
        # autouse fixtures of conftest.py files and plugins that apply here run around the scenario.
        self.obj = None
        manager = self.session._fixturemanager  # pyright: ignore[reportPrivateUsage]
        self._fixtureinfo = manager.getfixtureinfo(node=self, func=None, cls=None)
        self.fixturenames = self._fixtureinfo.names_closure
        self.funcargs: dict[str, object] = {}
        self._request = TopRequest(self, _ispytest=True)  # pyright: ignore[reportArgumentType]

    @functools.cached_property
    def loaded(self) -> Any:
        """The scenario as `agentrig run` would run it (a `LoadedScenario`), named as the reports name it."""
        scenario = self._scenario
        if isinstance(scenario, CachedScenario):
            scenario = scenario.load()
        return dataclasses.replace(scenario, path=self.scenario_path)

    def setup(self) -> None:
        self._request._fillfixtures()  # pyright: ignore[reportPrivateUsage]

    def runtest(self) -> None:
        from agentrig.runtime.history.redaction import redact_json
        from agentrig.runtime.suite.outputs.reports import scenario_json

        state = self.config.stash[STATE_KEY]
        started = time.perf_counter()
        try:
            # On a watched lane, as `agentrig run` runs it: bounded by its timeout, stopped by Ctrl-C and SIGTERM.
            result = state.session().run_watched(self.loaded)
        except AgentrigError as error:  # e.g. a provider that cannot be built: the item's error, in one line
            raise ScenarioFailure(error.message) from None
        except pytest.fail.Exception as failed:  # pytest-timeout's signal method: raised into the watching thread
            if PYTEST_TIMEOUT_MESSAGE not in str(failed):
                raise
            result = _timed_out(self.loaded, str(failed), started)
        entry: dict[str, Any] = redact_json(scenario_json(result))
        self.agentrig_entry = entry
        self.user_properties.extend(_properties(entry, state))
        if entry["status"] == "skipped":
            # Reported at the scenario's file and line, as a skip marker is, not at this line of agentrig's: pytest's
            # own `_use_item_location` (pytest 7 on; its skip markers set it).
            raise pytest.skip.Exception(_skip_reason(entry), _use_item_location=True)
        if entry["status"] in ("failed", "error"):
            from agentrig.testing.failures import PYTEST_UPDATE_GOLDEN, failure_text

            raise ScenarioFailure(failure_text(entry, update_golden=PYTEST_UPDATE_GOLDEN))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.scenario_line - 1, f"scenario {self.name}"


PYTEST_TIMEOUT_MESSAGE = "from pytest-timeout"
"""In the failure pytest-timeout raises when a test outlives its timeout (2.x: `Timeout (>5.0s) from
pytest-timeout.`)."""


def _timed_out(loaded: Any, message: str, started: float) -> Any:
    """The result of a scenario pytest-timeout ended: failed, a `timeout` (the scenario was left, as past its own
    `settings.timeout`), never the agent's error."""
    from agentrig.runtime.engine.warning_capture import take_warnings
    from agentrig.runtime.history.run_records import RunError, ScenarioResult

    return ScenarioResult(
        name=loaded.name,
        path=loaded.path.as_posix(),
        tags=loaded.tags,
        status="failed",
        error=RunError(kind="timeout", message=f"{message.rstrip('.')}: the scenario was abandoned"),
        duration_s=time.perf_counter() - started,
        warnings=take_warnings(loaded),  # what it showed before pytest-timeout ended it
    )


def _properties(entry: Mapping[str, Any], state: PluginState) -> list[tuple[str, object]]:
    """The testcase properties in JUnit: the pydantic-ai version, the status, the usage and the warnings shown."""
    usage = entry["usage"]
    properties: list[tuple[str, object]] = [("agentrig_status", entry["status"])]
    if state.pydantic_ai_version is not None:
        properties.append(("pydantic_ai_version", state.pydantic_ai_version))
    for key in ("requests", "input_tokens", "output_tokens", "total_tokens", "tool_calls"):
        if key in usage:
            properties.append((f"usage.{key}", usage[key]))
    shown = sum(int(record.get("count") or 1) for record in entry.get("warnings") or ())
    if shown:
        properties.append(("agentrig_warnings", shown))
    return properties


def _skip_reason(entry: Mapping[str, Any]) -> str:
    reasons = [check["skipped_reason"] for check in entry["checks"] if check.get("skipped_reason")]
    return reasons[0] if reasons else "skipped"
