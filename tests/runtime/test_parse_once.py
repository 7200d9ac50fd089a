"""A scenario file is parsed once per run: `-j` workers get the loaded scenario, never the file to read again."""

from __future__ import annotations

import pickle
from pathlib import Path

from agentrig.runtime.suite.runner import RunOptions, run_suite
from agentrig.scenarios.loader import load_paths, load_scenario_file
from tests.runtime.runner_fakes import fake_execute

SCENARIOS = """- name: first
  system_prompt: You are terse.
  turns:
    - user: hello
      model:
        - text: done
      expect:
        output: {equals: done}
  expect:
    invariants: none
- name: second
  agent: agents.py:agent
  turns:
    - user: hello
      model:
        - text: done
"""


def test_workers_run_scenarios_whose_file_is_gone(tmp_path: Path) -> None:
    first = SCENARIOS.split("- name: second")[0]
    (tmp_path / "many.yaml").write_text(first, encoding="utf-8")
    for index in range(3):
        (tmp_path / f"s{index}.yaml").write_text(first.replace("name: first", f"name: s{index}"), encoding="utf-8")
    loaded = load_paths([tmp_path])
    for scenario_file in tmp_path.glob("*.yaml"):
        scenario_file.unlink()  # a worker that read the file again would fail on this
    suite = run_suite(RunOptions(paths=(tmp_path,), jobs=2), execute=fake_execute, loaded=loaded)
    assert [(result.name, result.status) for result in suite.results] == [
        ("first", "passed"),
        ("s0", "passed"),
        ("s1", "passed"),
        ("s2", "passed"),
    ]


def test_a_detached_scenario_pickles_and_keeps_its_top_level_lines(tmp_path: Path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text(SCENARIOS, encoding="utf-8")
    _first, second = load_scenario_file(path)
    detached = pickle.loads(pickle.dumps(second.detached()))
    assert detached == second
    assert detached.node is None
    for field_name in ("name", "agent", "turns", "missing"):
        assert detached.line_of(field_name) == second.line_of(field_name)
    assert detached.line_of("agent") == 12
    assert detached.line_of("turns", 0) == second.line  # deeper fields fall back to the scenario's own line
