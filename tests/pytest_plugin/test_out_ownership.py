"""`--agentrig-out` goes through `agentrig run`'s claim on its folder: any shape of folder it cannot prove its own is
refused before a test runs, every file left as it was (issue 27, item 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from tests.cli.out_shapes import NOT_OURS, REFUSED_SHAPES, Shape, snapshot, write_suite
from tests.pytest_plugin.project import scenario, write

pytest_plugins = ["pytester"]


def _earlier_run(suite: Path) -> Callable[[Path], None]:
    def run(folder: Path) -> None:
        result = CliRunner().invoke(app, ["run", str(suite), "--out", str(folder), "-q"])
        assert result.exit_code == 0, result.output

    return run


@pytest.mark.parametrize("shape", REFUSED_SHAPES, ids=[shape.id for shape in REFUSED_SHAPES])
def test_agentrig_out_refuses_a_folder_it_cannot_prove_its_own(shape: Shape, pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path / "suite")
    folder = shape.prepare(pytester.path, _earlier_run(suite))
    before = snapshot(pytester.path)

    result = pytester.runpytest_inprocess(str(suite.resolve()), "--agentrig-out", str(folder), "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.startswith("ERROR: --agentrig-out ")]
    assert len(errors) == 1, result.errlines
    assert shape.says in errors[0]
    assert NOT_OURS in errors[0] or "cannot prove" in errors[0]
    assert snapshot(pytester.path) == before


def test_agentrig_out_replaces_its_own_run_and_keeps_the_users_files(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("one"), "scenarios/b.yaml": scenario("two")})
    first = pytester.runpytest_inprocess("--agentrig-out", "out", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=2)
    (pytester.path / "out" / "notes.txt").write_text("mine\n", encoding="utf-8")
    (pytester.path / "scenarios" / "b.yaml").unlink()

    second = pytester.runpytest_inprocess("--agentrig-out", "out", "-p", "no:cacheprovider")

    second.assert_outcomes(passed=1)
    assert (pytester.path / "out" / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(path.name for path in (pytester.path / "out" / "scenarios").iterdir()) == ["one"]
