"""Warnings as data (`engine/warning_capture`): what each scenario showed, attributed to it whichever task, thread or
import raised it, as the filters let it through. In this process, under filters each test sets itself (the suite's
own `filterwarnings = error` would turn every warning into an exception)."""

from __future__ import annotations

import asyncio
import contextvars
import textwrap
import threading
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrig.runtime.engine import warning_capture
from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.history.warning_records import WarningRecord
from agentrig.runtime.suite.runner import RunOptions, run_suite

_AGENT = textwrap.dedent(
    """
    import warnings
    from pydantic_ai import Agent, PydanticAIDeprecationWarning

    warnings.warn("imported at last", UserWarning)

    agent = Agent(None)

    @agent.tool_plain
    def legacy() -> str:  # a sync tool: pydantic-ai runs it in a thread of its own
        warnings.warn("legacy() is deprecated, use modern()", PydanticAIDeprecationWarning)
        return "ok"

    @agent.tool_plain
    async def loud() -> str:
        warnings.warn("loud says so", UserWarning)
        return "ok"

    @agent.tool_plain
    def twice() -> str:
        warnings.warn("same words", UserWarning)
        warnings.warn("same words", UserWarning)  # another line: another place, shown too
        return "ok"

    @agent.tool_plain
    def quits() -> str:
        warnings.warn("before the exit", UserWarning)
        raise SystemExit(3)
    """
)


def _scenario(directory: Path, name: str, module: str, *tools: str) -> None:
    calls = ", ".join(f"{{id: t{n}, name: {tool}, args: {{}}}}" for n, tool in enumerate(tools))
    (directory / f"{name}.yaml").write_text(
        f"name: {name}\nagent: {module}:agent\nturns:\n  - user: hi\n    model:\n"
        f"      - tool_calls: [{calls}]\n      - text: done\n",
        encoding="utf-8",
    )


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, str]:
    """A folder with an agent module of a name no other test imported (a module is imported once per process)."""
    module = f"warning_agent_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{module}.py").write_text(_AGENT, encoding="utf-8")
    return tmp_path, module


@pytest.fixture
def default_filters() -> Iterator[list[warnings.WarningMessage]]:
    """Python's default action for every warning (shown once per place), as a user without -W runs; what reaches
    Python's own display is kept in the list."""
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        yield shown


def _run(directory: Path) -> dict[str, ScenarioResult]:
    suite = run_suite(RunOptions(paths=(directory,), out_dir=None, show_warnings=False))
    return {result.name: result for result in suite.results}


def _record(category: str, message: str, module: str, count: int = 1) -> WarningRecord:
    return WarningRecord(category=category, message=message, module=module, count=count)


@pytest.mark.usefixtures("default_filters")
def test_each_scenario_records_its_tools_warnings_and_its_modules_import(suite: tuple[Path, str]) -> None:
    directory, module = suite
    _scenario(directory, "first", module, "legacy", "loud")
    _scenario(directory, "second", module, "legacy", "loud")
    results = _run(directory)
    expected = (
        _record("PydanticAIDeprecationWarning", "legacy() is deprecated, use modern()", module),
        _record("UserWarning", "imported at last", module),
        _record("UserWarning", "loud says so", module),
    )
    # The second scenario imports nothing (the module is imported) and runs the same lines as the first, which the
    # default action shows once per place: each scenario still records what it would alone.
    assert results["first"].warnings == expected
    assert results["second"].warnings == expected
    assert results["first"].status == results["second"].status == "passed"


@pytest.mark.usefixtures("default_filters")
def test_the_same_warning_from_two_places_is_one_record_shown_twice(suite: tuple[Path, str]) -> None:
    directory, module = suite
    _scenario(directory, "twice", module, "twice", "twice")  # called twice: each place shows once
    (result,) = _run(directory).values()
    assert _record("UserWarning", "same words", module, count=2) in result.warnings


def test_always_shows_every_call(suite: tuple[Path, str]) -> None:
    directory, module = suite
    _scenario(directory, "twice", module, "twice", "twice")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        (result,) = _run(directory).values()
    assert _record("UserWarning", "same words", module, count=4) in result.warnings


def test_an_ignored_warning_is_not_recorded_and_an_error_one_is_the_scenarios_error(suite: tuple[Path, str]) -> None:
    directory, module = suite
    _scenario(directory, "deprecated", module, "legacy", "loud")
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("error", message="legacy", category=UserWarning)  # first: it wins over the ignore
        (result,) = _run(directory).values()
    assert result.warnings == ()
    assert result.error is not None
    assert result.error.kind == "tool_failed"
    assert "PydanticAIDeprecationWarning: legacy() is deprecated" in result.error.message


@pytest.mark.usefixtures("default_filters")
def test_a_scenario_that_errors_keeps_what_it_showed(suite: tuple[Path, str]) -> None:
    directory, module = suite
    _scenario(directory, "quits", module, "quits")
    (result,) = _run(directory).values()
    assert result.status == "error"
    assert _record("UserWarning", "before the exit", module) in result.warnings


def test_a_module_that_warns_and_fails_to_import_leaves_it_to_the_scenario(tmp_path: Path) -> None:
    module = f"failing_agent_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{module}.py").write_text(
        'import warnings\nwarnings.warn("about to fail", UserWarning)\nraise RuntimeError("no agent here")\n',
        encoding="utf-8",
    )
    _scenario(tmp_path, "broken", module, "anything")
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        (result,) = _run(tmp_path).values()
    assert result.status == "error"
    assert result.warnings == (_record("UserWarning", "about to fail", module),)


def _warn_here(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=1)  # this line: one place, whoever calls


async def _scenario_task(name: str, together: asyncio.Barrier) -> tuple[WarningRecord, ...]:
    """A scenario's shape: a capture, a warning in its task, one in an executor thread given its context (as
    pydantic-ai runs sync tools), and one in a thread of its own that carries no context; the capture ends once every
    scenario of `together` got that far."""
    owner = object()
    with warning_capture.capturing(owner=owner, show=False):
        _warn_here(f"{name}: in its task")
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        # Awaited: the other scenario's task opens its capture meanwhile, before either starts its own thread.
        await loop.run_in_executor(None, lambda: context.run(_warn_here, f"{name}: in a tool thread"))
        _warn_here("said by every scenario, at one place")  # shown once per place: once in each scenario
        thread = threading.Thread(target=_warn_here, args=(f"{name}: in a thread of its own",))
        thread.start()
        thread.join()
        await together.wait()
    return warning_capture.take_warnings(owner)


def _messages(records: tuple[WarningRecord, ...]) -> list[str]:
    return [record.message for record in records]


def test_side_by_side_each_warning_goes_to_the_scenario_whose_context_raised_it(
    default_filters: list[warnings.WarningMessage],
) -> None:
    async def both() -> list[tuple[WarningRecord, ...]]:
        together = asyncio.Barrier(2)
        return await asyncio.gather(*(_scenario_task(name, together) for name in ("a", "b")))

    first, second = asyncio.run(both())
    assert _messages(first) == ["a: in a tool thread", "a: in its task", "said by every scenario, at one place"]
    assert _messages(second) == ["b: in a tool thread", "b: in its task", "said by every scenario, at one place"]
    # A thread of its own carries no scenario; with two open it is nobody's, and Python shows it as ever.
    assert sorted(str(message.message) for message in default_filters) == [
        "a: in a thread of its own",
        "b: in a thread of its own",
    ]


def test_alone_a_thread_of_the_agents_own_is_the_scenarios(default_filters: list[warnings.WarningMessage]) -> None:
    async def alone() -> tuple[WarningRecord, ...]:
        return await _scenario_task("solo", asyncio.Barrier(1))

    assert _messages(asyncio.run(alone())) == [
        "said by every scenario, at one place",
        "solo: in a thread of its own",
        "solo: in a tool thread",
        "solo: in its task",
    ]
    assert default_filters == []


def test_the_module_is_the_one_the_filters_match_not_a_file() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with warning_capture.capturing(show=False) as capture:
            _warn_here("from a test")
            warnings.warn("past the stack", UserWarning, stacklevel=500)
    assert capture.records() == (
        _record("UserWarning", "from a test", __name__),
        _record("UserWarning", "past the stack", "sys"),
    )


def test_show_passes_each_warning_on_to_pythons_own_display() -> None:
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with warning_capture.capturing(show=True) as outer, warning_capture.capturing(show=False) as inner:
            _warn_here("kept by the inner capture")
        with warning_capture.capturing(show=True) as passing:
            _warn_here("passed on")
    assert [str(message.message) for message in shown] == ["passed on"]
    assert _messages(inner.records()) == ["kept by the inner capture"]
    assert outer.records() == ()
    assert _messages(passing.records()) == ["passed on"]
