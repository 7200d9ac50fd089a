"""A session asked for scenarios runs them or says why not: `--agentrig-out DIR` cannot make pytest miss the
project's ini, a session that was asked for scenarios and collected none is a usage error, and `testpaths` that
keep pytest away from the scenarios are warned about."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pytest_plugin.project import scenario, write

pytestmark = pytest.mark.process

pytest_plugins = ["pytester"]

PROJECT = {
    "scenarios/a.yaml": scenario("first"),
    "scenarios/b.yaml": scenario("second", answer="Wrong."),  # fails: a run that skips it reads green
    "tests/test_plain.py": "def test_plain():\n    pass\n",
}


def _outside(pytester: pytest.Pytester, name: str) -> str:
    """`../NAME` (an existing directory beside the project), as the user types it."""
    directory = Path(pytester.path).parent / f"{Path(pytester.path).name}-{name}"
    directory.mkdir()
    return f"../{directory.name}"


@pytest.mark.parametrize(
    "option", [["--agentrig-out"], ["--agentrig-record-mode", "none", "--agentrig-recordings"]], ids=["out", "rec"]
)
def test_a_path_option_in_the_space_form_cannot_make_pytest_miss_the_project_ini(
    pytester: pytest.Pytester, option: list[str]
) -> None:
    write(pytester, PROJECT)
    pytester.makeini("[pytest]\nagentrig_scenarios = scenarios\ntestpaths = tests scenarios\n")
    value = _outside(pytester, "dir")

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *option, value)

    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert "passed" not in result.stdout.str()
    result.stderr.fnmatch_lines(
        [f"ERROR: {option[-1]} {value}: pytest took {value} for a test path while it looked for its configuration*"]
    )
    ini = pytester.path / "tox.ini"  # what `makeini` writes
    assert f"instead of rootdir {pytester.path} with {ini}; write {option[-1]}={value}" in result.stderr.str()


def test_the_equals_form_and_a_directory_inside_the_project_run_every_scenario(pytester: pytest.Pytester) -> None:
    write(pytester, PROJECT)
    pytester.makeini("[pytest]\nagentrig_scenarios = scenarios\ntestpaths = tests scenarios\n")
    outside = _outside(pytester, "out")

    with_equals = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--agentrig-out={outside}")
    inside = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--agentrig-out", "out")
    inside_again = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--agentrig-out", "out")  # out exists

    for result in (with_equals, inside, inside_again):
        result.assert_outcomes(passed=2, failed=1)


def test_a_session_asked_for_scenarios_that_collected_none_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write(pytester, PROJECT)
    earlier = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--agentrig-out=out")
    earlier.assert_outcomes(passed=2, failed=1)
    earlier_report = (pytester.path / "out" / "report.json").read_bytes()
    pytester.makeini("[pytest]\nagentrig_scenarios = evals\n")  # a folder that was renamed: nothing is there

    configured = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    given_out = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--agentrig-out=out", "tests")

    assert configured.ret == pytest.ExitCode.USAGE_ERROR
    configured.stderr.fnmatch_lines(
        ["ERROR: agentrig: this session was asked for scenarios (its collection reaches agentrig_scenarios (*evals))"
         " but collected none*"]
    )  # fmt: skip
    assert given_out.ret == pytest.ExitCode.USAGE_ERROR
    given_out.stderr.fnmatch_lines(["ERROR: agentrig: this session was asked for scenarios (given --agentrig-out)*"])
    assert (pytester.path / "out" / "report.json").read_bytes() == earlier_report  # stopped before touching it


def test_a_session_that_was_not_asked_for_scenarios_or_deselected_them_is_not_an_error(
    pytester: pytest.Pytester,
) -> None:
    write(pytester, PROJECT)
    pytester.makeini("[pytest]\nagentrig_scenarios = scenarios\n")

    one_test_file = pytester.runpytest_inprocess("-p", "no:cacheprovider", "tests/test_plain.py")
    deselected = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "plain")
    no_scenarios_anywhere = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "agentrig_scenarios=")

    one_test_file.assert_outcomes(passed=1)
    deselected.assert_outcomes(passed=1, deselected=2)
    no_scenarios_anywhere.assert_outcomes(passed=1)


def test_under_xdist_a_session_that_collected_no_scenario_is_not_green(pytester: pytest.Pytester) -> None:
    write(pytester, PROJECT)
    pytester.makeini("[pytest]\nagentrig_scenarios = evals\n")

    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["ERROR: agentrig: this session was asked for scenarios*but collected none*"])


def test_testpaths_that_keep_pytest_away_from_the_scenarios_are_warned_about(pytester: pytest.Pytester) -> None:
    write(pytester, PROJECT)
    pytester.makeini("[pytest]\ntestpaths = tests\n")

    warned = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    as_error = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "error::pytest.PytestWarning")
    named = pytester.runpytest_inprocess("-p", "no:cacheprovider", "tests")  # the user's choice: no warning

    warned.assert_outcomes(passed=1, warnings=1)
    warned.stdout.fnmatch_lines(
        ["*AgentrigConfigWarning: agentrig_scenarios path */scenarios is not under testpaths (tests)*"]
    )
    assert as_error.ret == pytest.ExitCode.USAGE_ERROR
    as_error.stderr.fnmatch_lines(["ERROR: AgentrigConfigWarning: agentrig_scenarios path */scenarios is not under*"])
    named.assert_outcomes(passed=1)
