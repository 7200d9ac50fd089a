"""A scenario's deps (`deps:` / `agentrig run --deps`): a sync context manager lives exactly as long as its scenario,
and a bad name is one line that says the field once and offers the name meant.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.pydantic_ai_engine.deps import enter_deps
from tests.runtime.engine_helpers import execute, load_yaml

_numbers = itertools.count()

MODULE = '''
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic_ai import Agent, RunContext

EVENTS: list[str] = []


@dataclass
class Ledger:
    entries: list[str] = field(default_factory=list)
    open: bool = True


@contextmanager
def ledger_deps():
    """A sync context manager: the ledger is closed when the scenario ends, whatever happened."""
    ledger = Ledger()
    EVENTS.append("entered")
    try:
        yield ledger
    finally:
        ledger.open = False
        EVENTS.append("exited")


def build_deps():
    return Ledger()


agent = Agent(None, deps_type=Ledger)


@agent.tool
def record(ctx: RunContext[Ledger], entry: str) -> str:
    """Write an entry into the ledger."""
    assert ctx.deps.open, "the ledger was closed before the tool ran"
    ctx.deps.entries.append(entry)
    EVENTS.append(f"recorded {entry} into {type(ctx.deps).__name__}")
    return "recorded"


@agent.tool_plain
def explode(entry: str) -> str:
    """Always fails."""
    raise RuntimeError("boom")
'''


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[str]:
    """A fresh module holding the agent and its deps builders, importable from tmp_path."""
    module = f"ledger_{os.getpid()}_{next(_numbers)}"
    (tmp_path / f"{module}.py").write_text(MODULE, encoding="utf-8")
    yield module
    sys.modules.pop(module, None)


def scenario(module: str, *, tool: str = "record", deps: str = "ledger_deps") -> str:
    return f"""
name: ledger
agent: {module}:agent
deps: {module}:{deps}
turns:
  - user: Note the payment.
    model:
      - tool_calls: [{{id: r1, name: {tool}, args: {{entry: paid}}}}]
      - text: Noted.
  - user: And the refund.
    model:
      - tool_calls: [{{id: r2, name: {tool}, args: {{entry: refunded}}}}]
      - text: Noted too.
"""


def events(module: str) -> list[str]:
    return list(sys.modules[module].EVENTS)


def test_a_sync_context_manager_is_entered_for_the_scenario_and_exited_when_it_ends(
    tmp_path: Path, ledger: str
) -> None:
    execution = execute(load_yaml(tmp_path, scenario(ledger)))

    assert [turn.error for turn in execution.turns] == [None, None]
    # One deps value for the whole scenario (both turns), the context manager's value (not the manager itself),
    # open while the tools ran, and the exit ran once after the last turn.
    assert events(ledger) == ["entered", "recorded paid into Ledger", "recorded refunded into Ledger", "exited"]


def test_the_exit_of_a_sync_context_manager_runs_when_the_scenario_fails(tmp_path: Path, ledger: str) -> None:
    execution = execute(load_yaml(tmp_path, scenario(ledger, tool="explode")))

    assert execution.turns[0].error is not None
    assert execution.turns[0].error.kind == "tool_failed"
    assert events(ledger) == ["entered", "exited"]


def test_enter_deps_hands_the_exit_to_the_stack(tmp_path: Path, ledger: str) -> None:
    async def enter_then_close() -> tuple[Any, list[str]]:
        async with AsyncExitStack() as stack:
            value = await enter_deps(f"{ledger}:ledger_deps", stack, search_paths=[tmp_path])
            before_close = events(ledger)
        return value, before_close

    value, before_close = asyncio.run(enter_then_close())
    assert before_close == ["entered"]
    assert type(value).__name__ == "Ledger"
    assert value.open is False
    assert events(ledger) == ["entered", "exited"]


def test_a_deps_typo_says_the_field_once_and_offers_the_name_meant(tmp_path: Path, ledger: str) -> None:
    loaded = load_yaml(tmp_path, scenario(ledger, deps="ledger_dep"))

    with pytest.raises(ScenarioError) as raised:
        execute(loaded)
    assert str(raised.value) == (
        f"{loaded.path}:4: deps: module '{ledger}' has no attribute 'ledger_dep'; did you mean 'ledger_deps'?"
    )


def test_a_run_deps_typo_says_the_option_once(tmp_path: Path, ledger: str) -> None:
    async def enter() -> None:
        async with AsyncExitStack() as stack:
            await enter_deps(f"{ledger}:biuld_deps", stack, search_paths=[tmp_path], scenario_path="s.yaml")

    with pytest.raises(ScenarioError) as raised:
        asyncio.run(enter())
    assert str(raised.value) == (
        f"s.yaml: --deps: module '{ledger}' has no attribute 'biuld_deps'; did you mean 'build_deps'?"
    )
