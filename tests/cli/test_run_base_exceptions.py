"""A tool that raises what is not an Exception (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt, a
BaseException of its own) or ends the process (os._exit) errors its scenario only: the run goes on and the reports
are written; only a real signal interrupts the run. Real processes: os._exit at -j 1 would end the test's own
process."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest

from tests.cli.run_process import finish, report, start_run, statuses, wait_for

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

    @agent.tool_plain
    def keyboard_interrupt() -> str:
        raise KeyboardInterrupt("from a sync tool")

    @agent.tool_plain
    async def keyboard_interrupt_async() -> str:
        raise KeyboardInterrupt("from an async tool")
    """
)

_EXPECTED = {
    "cancels": "CancelledError: from a tool",
    "generator_exit": "GeneratorExit: from a tool",
    "custom": "Boom: ('boom', 'and more')",
    "custom_async": "Boom: ('async boom', 'and more')",
    "hard_exit": "the agent called os._exit(0)",
    "keyboard_interrupt": "KeyboardInterrupt: from a sync tool",
    "keyboard_interrupt_async": "KeyboardInterrupt: from an async tool",
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


_SIGNALLED = textwrap.dedent(
    """
    import time
    from pathlib import Path
    from pydantic_ai import Agent

    agent = Agent()

    @agent.tool_plain
    def wait_for_ctrl_c() -> str:
        Path("started").write_text("")
        time.sleep(120)
        return "never"
    """
)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_real_ctrl_c_still_interrupts_the_run(tmp_path: Path, jobs: str) -> None:
    """The other side of the rule above: Ctrl-C from outside (a real SIGINT) interrupts the run, exit 130."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "tools.py").write_text(_SIGNALLED, encoding="utf-8")
    (suite / "waits.yaml").write_text(
        "name: waits\nagent: tools:agent\nturns:\n  - user: hi\n    model:\n"
        "      - tool_calls: [{id: t1, name: wait_for_ctrl_c, args: {}}]\n      - text: done\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    process = start_run(suite, out, "-j", jobs)
    wait_for(tmp_path / "started", process)
    os.kill(process.pid, signal.SIGINT)
    code, output = finish(process)
    assert code == 130, output
    assert "Traceback" not in output
    assert report(out)["interrupted"] is True
    assert statuses(out)["waits"][0] == "skipped"
