"""A run into an earlier run's output directory writes over its scenario folders instead of deleting them
first, and must still leave exactly what a run into an empty directory would: nothing of the earlier run
survives, nothing it did not write is removed (it refuses instead), and nothing outside the folder is written
through a link."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import UsageError
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import loads_history
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.outputs.scenario_files import write_folder
from agentrig.runtime.suite.runner import run_suite
from tests.runtime.runner_fakes import fake_execute
from tests.runtime.test_runner import write_scenario

RAN = {"events.jsonl", "history.json", "pydantic_ai_dump.json", "session.json", "usage.json"}
"""The files of a scenario that ran."""
NOT_RUN = {"events.jsonl", "usage.json"}
"""The files of a scenario that failed to run or was not run."""


def run(scenarios: Path, out: Path, **options: object) -> None:
    run_suite(RunOptions(paths=(scenarios,), out_dir=out, **options), execute=fake_execute)  # pyright: ignore[reportArgumentType]


def files(folder: Path) -> set[str]:
    return {entry.name for entry in folder.iterdir()}


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha")
    write_scenario(directory, "beta")
    return directory


def test_a_second_run_leaves_what_a_first_run_leaves(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    first = {name: _history(out, name) for name in ("alpha", "beta")}
    # What an earlier run wrote and this one does not (a sub-agent's history), recorded as agentrig writes it.
    earlier = [(name, (out / "scenarios" / "alpha" / name).read_bytes()) for name in sorted(RAN)]
    write_folder(out, "scenarios/alpha", [*earlier, ("subagents/old.history.json", b"[]")], subfolders=["subagents"])
    run(scenarios, out)
    for name in ("alpha", "beta"):
        assert files(out / "scenarios" / name) == RAN
        assert _history(out, name) == first[name]


def test_files_left_by_hand_in_a_scenario_folder_stop_the_run_untouched(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    (out / "scenarios" / "alpha" / "notes.txt").write_text("left by hand", encoding="utf-8")
    with pytest.raises(UsageError, match=r"scenarios/alpha/notes\.txt: agentrig did not write it"):
        run(scenarios, out)
    assert (out / "scenarios" / "alpha" / "notes.txt").read_text(encoding="utf-8") == "left by hand"


def test_a_scenario_that_no_longer_runs_keeps_no_history_of_the_earlier_run(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    write_scenario(scenarios, "alpha", text="CRASH")  # the engine raises: no history this time
    run(scenarios, out)
    assert files(out / "scenarios" / "alpha") == NOT_RUN
    assert files(out / "scenarios" / "beta") == RAN


def test_folders_of_scenarios_outside_this_run_are_removed(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    run(scenarios, out, keyword="beta")
    assert files(out / "scenarios") == {"beta"}


def test_scenarios_not_run_after_a_failure_get_a_folder_without_the_earlier_history(
    scenarios: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    write_scenario(scenarios, "alpha", text="wrong")
    run(scenarios, out, fail_fast=True)
    assert files(out / "scenarios" / "alpha") == RAN
    assert files(out / "scenarios" / "beta") == NOT_RUN


def test_a_link_in_an_earlier_folder_stops_the_run_and_is_never_written_through(
    scenarios: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run(scenarios, out)
    victim = tmp_path / "precious.txt"
    victim.write_text("user data", encoding="utf-8")
    history = out / "scenarios" / "alpha" / "history.json"
    history.unlink()
    history.symlink_to(victim)
    with pytest.raises(UsageError, match=r"scenarios/alpha/history\.json: "):
        run(scenarios, out)
    assert victim.read_text(encoding="utf-8") == "user data"
    assert history.is_symlink()
    beta = out / "scenarios" / "beta"
    history.unlink()
    for entry in beta.iterdir():
        entry.unlink()
    beta.rmdir()
    beta.symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(UsageError, match="scenarios/beta on its way is a link or not a folder"):
        run(scenarios, out)
    assert beta.is_symlink()
    assert not (tmp_path / "history.json").exists()


def test_a_shorter_file_written_over_a_longer_one_ends_where_it_should(scenarios: Path, tmp_path: Path) -> None:
    write_scenario(scenarios, "alpha", text="a much longer answer " * 200)
    out, new = tmp_path / "out", tmp_path / "new"
    run(scenarios, out)
    write_scenario(scenarios, "alpha")
    run(scenarios, out)
    run(scenarios, new)
    for name in ("history.json", "pydantic_ai_dump.json", "usage.json", "events.jsonl"):
        written, fresh = ((base / "scenarios" / "alpha" / name).read_bytes() for base in (out, new))
        if name == "events.jsonl":  # each event's time differs from run to run; the rest must not
            written, fresh = (re.sub(rb',"t":[0-9.e-]+', b"", data) for data in (written, fresh))
        assert written == fresh


def test_a_scenarios_folder_that_is_a_link_is_refused(scenarios: Path, tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    run(scenarios, out)
    elsewhere.mkdir()
    shutil.rmtree(out / "scenarios")
    (out / "scenarios").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="scenarios on its way is a link or not a folder"):
        run(scenarios, out)
    assert list(elsewhere.iterdir()) == []


def _history(out: Path, name: str) -> list[Any]:
    """A scenario's history.json without the ids pydantic-ai draws per run (a conversation id)."""
    return without_per_run_values(loads_history((out / "scenarios" / name / "history.json").read_bytes()))
