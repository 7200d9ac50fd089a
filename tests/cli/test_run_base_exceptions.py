"""A tool that raises what is not an Exception (asyncio.CancelledError, GeneratorExit, a BaseException of its own)
or ends the process (os._exit) errors its scenario only: the run goes on and the reports are written. Real
processes: os._exit at -j 1 would end the test's own process."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.cli.run_process import finish, report, start_run, statuses

_TOOLS = textwrap.dedent(
    """
    import asyncio
    import os
    from pydantic_ai import Agent

    agent = Agent()

    class Boom(BaseException):
        def __init__(self, reason):  # two arguments to rebuild it from: pickling it back would fail
            super().__init__(reason, "and more")

    @agent.tool_plain
    async def cancels() -> str:
        raise asyncio.CancelledError("from a tool")

    @agent.tool_plain
    def generator_exit() -> str:
        raise GeneratorExit("from a tool")

    @agent.tool_plain
    def custom() -> str:
        raise Boom("boom")

    @agent.tool_plain
    async def custom_async() -> str:
        raise Boom("async boom")

    @agent.tool_plain
    def hard_exit() -> str:
        os._exit(0)
    """
)

_EXPECTED = {
    "cancels": "CancelledError: from a tool",
    "generator_exit": "GeneratorExit: from a tool",
    "custom": "Boom: ('boom', 'and more')",
    "custom_async": "Boom: ('async boom', 'and more')",
    "hard_exit": "the agent called os._exit(0)",
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_becomes_its_scenarios_error_and_the_run_goes_on(tmp_path: Path, jobs: str) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "tools.py").write_text(_TOOLS, encoding="utf-8")
    for tool in _EXPECTED:
        (suite / f"{tool}.yaml").write_text(
            f"name: {tool}\nagent: tools:agent\nturns:\n  - user: hi\n    model:\n"
            f"      - tool_calls: [{{id: t1, name: {tool}, args: {{}}}}]\n      - text: done\n",
            encoding="utf-8",
        )
    for index in range(3):
        (suite / f"healthy-{index}.yaml").write_text(
            f"name: healthy-{index}\nturns:\n  - user: hi\n    model:\n      - text: done\n", encoding="utf-8"
        )
    out = tmp_path / "out"
    code, output = finish(start_run(suite, out, "-j", jobs))
    assert code == 3, output
    assert "Traceback" not in output
    found = statuses(out)
    for tool, message in _EXPECTED.items():
        status, error = found.pop(tool)
        assert status == "error", (tool, output)
        assert message in error, (tool, error)
    assert found == {f"healthy-{index}": ("passed", "") for index in range(3)}
    assert report(out)["interrupted"] is False
