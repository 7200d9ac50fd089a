"""`-j N` workers start with the user's agent modules imported: the forkserver imports each once, as `-j 1` does,
instead of every worker importing pandas (or whatever the agent imports) again. A real process: the forkserver of
a test process may be running already, and only a fresh one reads a run's modules."""

from __future__ import annotations

import contextlib
import os
import signal
import textwrap
from pathlib import Path

import pytest

from tests.cli.run_process import finish, start_run, statuses
from tests.process_tree import ends_within, first_child

pytestmark = pytest.mark.process

_AGENT = textwrap.dedent(
    """
    import os
    from pathlib import Path
    from pydantic_ai import Agent

    with Path(__file__).with_name("imported.log").open("a") as log:  # one line per process that imports this
        log.write(f"{os.getpid()} {os.environ.get('OPENAI_API_KEY', '')}\\n")

    agent = Agent("openai:gpt-4o")  # named at import: needs the placeholder key a scripted run provides

    @agent.tool_plain
    def where() -> str:
        return "here"
    """
)


def test_workers_start_with_the_agent_module_imported_once(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "heavy_agent.py").write_text(_AGENT, encoding="utf-8")
    for index in range(12):
        (suite / f"s{index:02}.yaml").write_text(
            f"name: s{index:02}\nagent: heavy_agent:agent\nturns:\n  - user: hi\n    model:\n"
            "      - tool_calls: [{id: t1, name: where, args: {}}]\n      - text: done\n",
            encoding="utf-8",
        )
    out = tmp_path / "out"
    code, output = finish(start_run(suite, out, "-j", "2"))
    assert code == 0, output
    assert set(statuses(out).values()) == {("passed", "")}
    imports = (suite / "imported.log").read_text(encoding="utf-8").splitlines()
    assert len(imports) == 1, imports  # the forkserver's, not one per worker
    assert imports[0].endswith(" agentrig-offline-placeholder")  # imported offline, as a worker would


_GC_AGENT = textwrap.dedent(
    """
    import gc
    from pathlib import Path
    from pydantic_ai import Agent

    Path(__file__).with_name("import_gc.log").write_text(f"{gc.isenabled()}\\n")

    agent = Agent(None)

    @agent.tool_plain
    def where() -> str:
        with Path(__file__).with_name("run_gc.log").open("a") as log:
            log.write(f"{gc.isenabled()} {gc.get_freeze_count() > 0}\\n")
        return "here"
    """
)


def test_the_forkserver_imports_without_cyclic_collection_and_workers_run_with_it(tmp_path: Path) -> None:
    # Collection off is the forkserver's import phase only: a worker that ran scenarios with it off would grow.
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "gc_agent.py").write_text(_GC_AGENT, encoding="utf-8")
    for index in range(4):
        (suite / f"s{index:02}.yaml").write_text(
            f"name: s{index:02}\nagent: gc_agent:agent\nturns:\n  - user: hi\n    model:\n"
            "      - tool_calls: [{id: t1, name: where, args: {}}]\n      - text: done\n",
            encoding="utf-8",
        )
    code, output = finish(start_run(suite, tmp_path / "out", "-j", "2"))
    assert code == 0, output
    assert (suite / "import_gc.log").read_text(encoding="utf-8") == "False\n"
    assert (suite / "run_gc.log").read_text(encoding="utf-8").splitlines() == ["True True"] * 4


_SLOW_AGENT = textwrap.dedent(
    """
    import time
    from pathlib import Path
    from pydantic_ai import Agent

    with Path(__file__).with_name("slow_imports.log").open("a") as log:  # one line per import begun
        log.write("begun\\n")
    time.sleep(120)
    agent = Agent(None)
    """
)


def test_an_agent_import_past_its_scenarios_deadline_fails_them_as_at_j1(tmp_path: Path) -> None:
    # At -j 1 the scenario importing its agent is stopped at its deadline (a timeout failure). The forkserver's import
    # must not outlive that either: it would hold every worker back (for ever, for an import that hangs) and then pass
    # a scenario that -j 1 fails. It gives the import up at the longest deadline of the scenarios naming it; the
    # worker imports the module within its scenario's deadline, and the verdict is -j 1's.
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "slow_agent.py").write_text(_SLOW_AGENT, encoding="utf-8")
    (suite / "slow.yaml").write_text(
        "name: slow\nagent: slow_agent:agent\nsettings: {timeout: 0.5}\nturns:\n"
        "  - user: hi\n    model:\n      - text: done\n",
        encoding="utf-8",
    )
    code, output = finish(start_run(suite, tmp_path / "out", "-j", "2"))

    assert code == 1, output
    status, message = statuses(tmp_path / "out")["slow"]
    assert status == "failed"
    assert "did not finish within" in message, message  # -j 1's verdict, for the same reason
    # Begun by the forkserver (given up), then by the worker for the scenario.
    assert (suite / "slow_imports.log").read_text(encoding="utf-8").split() == ["begun", "begun"]


def test_the_forkserver_of_a_run_killed_before_it_named_the_modules_ends_too(tmp_path: Path) -> None:
    # The forkserver waits for the run to name the user's modules. A run killed outright (SIGKILL, or a SIGTERM in
    # its first moments, before it handles signals) never will: the forkserver must not wait for it for ever,
    # holding the run's output streams open (a CI step reading them never ends). It watches the run by the pid the
    # run gave it: by the time it looks, its parent may already be whoever adopted it.
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.yaml").write_text(
        "name: a\nturns:\n  - user: hi\n    model:\n      - text: done\n    expect:\n      output: {equals: done}\n",
        encoding="utf-8",
    )
    run = start_run(suite, tmp_path / "out", "-j", "2")
    forkserver = first_child(run, b"multiprocessing.forkserver")

    os.kill(run.pid, signal.SIGKILL)  # while the forkserver imports pydantic-ai, before the run named the modules

    try:
        assert ends_within(forkserver, 30)
        run.communicate(timeout=60)  # nothing holds the run's streams open any more
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(forkserver, signal.SIGKILL)
