"""Scenario items run through agentrig's runtime: failures read like `agentrig run`'s, pytest's features work per
scenario, and `--agentrig-out` writes what `agentrig run --out` writes."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.history.per_run import without_per_run_values
from agentrig.runtime.history.wire import dumps_history, loads_history
from agentrig.runtime.runfolder import jsonio
from tests.pytest_plugin.project import accept_goldens, scenario, write

pytest_plugins = ["pytester"]

RATE_LIMITED = """\
name: limited
system_prompt: You are terse.
turns:
  - user: hi
    model:
      - error: {kind: rate_limit, message: "429 Too Many Requests"}
"""

TOOL_RAISES = """\
name: raises
agent: shaky_agent:agent
turns:
  - user: hi
    model:
      - tool_calls: [{id: c1, name: lookup}]
      - text: never reached
"""

SHAKY_AGENT = """\
from pydantic_ai import Agent

agent = Agent(None)


@agent.tool_plain
def lookup() -> str:
    raise ValueError("database down")
"""


def test_a_failing_scenario_shows_its_checks_and_the_golden_diff_without_a_traceback(
    pytester: pytest.Pytester,
) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("answers", golden=True)})
    accept_goldens(pytester)
    golden = pytester.path / "scenarios" / "golden" / "answers.json"
    golden.write_text(golden.read_text(encoding="utf-8").replace("One file.", "Two files."), encoding="utf-8")
    write(pytester, {"scenarios/a.yaml": scenario("answers", golden=True, answer="No files.")})

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "FAIL answers (scenarios/a.yaml)",
            "  turn 1: output.equals",
            "    expected: No files.",
            "    actual:   One file.",
            "  scenario: golden",
            "*-*Two files.*",
            "*+*One file.*",
        ]
    )
    output = result.stdout.str()
    assert "Traceback" not in output
    assert "agentrig/runtime" not in output
    assert "pytest_plugin" not in output


def test_an_errored_scenario_says_whether_the_provider_or_the_agent_failed(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/limited.yaml": RATE_LIMITED, "scenarios/raises.yaml": TOOL_RAISES})
    write(pytester, {"scenarios/shaky_agent.py": SHAKY_AGENT})

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "ERROR limited (scenarios/limited.yaml)",
            "  error rate_limit (provider error): *429 Too Many Requests",
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(
        [
            "FAIL raises (scenarios/raises.yaml)",
            "  cause tool_failed: tool 'lookup' (call c1) raised ValueError: database down*",
        ]
    )


def test_last_failed_exitfirst_and_durations_work_per_scenario(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "scenarios/a.yaml": scenario("a-passes"),
            "scenarios/b.yaml": scenario("b-fails", answer="wrong"),
            "scenarios/c.yaml": scenario("c-passes"),
        },
    )

    first = pytester.runpytest_inprocess("-x", "--durations=0")
    again = pytester.runpytest_inprocess("--lf")

    first.assert_outcomes(passed=1, failed=1)  # -x: c-passes never ran
    first.stdout.fnmatch_lines(["*s call *scenarios/a.yaml::a-passes*"])
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure*", "FAILED scenarios/b.yaml::b-fails*"])


def test_junit_has_one_testcase_per_scenario_with_the_pydantic_ai_version_and_usage(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("one"), "scenarios/b.yaml": scenario("two", answer="x")})

    pytester.runpytest_inprocess("--junitxml=junit.xml", "-p", "no:cacheprovider")

    root = ElementTree.parse(pytester.path / "junit.xml").getroot()
    cases = {str(case.get("name")): case for case in root.iter("testcase")}
    assert sorted(cases) == ["one", "two"]
    properties = {prop.get("name"): prop.get("value") for prop in cases["one"].iter("property")}
    assert properties["pydantic_ai_version"] == metadata.version("pydantic-ai-slim")
    assert properties["usage.requests"] == "2"
    assert properties["usage.input_tokens"] == "30"
    assert properties["usage.output_tokens"] == "5"
    assert cases["two"].find("failure") is not None
    suite = root.find("testsuite/properties")
    assert suite is not None
    assert {prop.get("name"): prop.get("value") for prop in suite} == {
        "pydantic_ai_version": metadata.version("pydantic-ai-slim")
    }


def _report_without_timing(out: Path) -> dict[str, object]:
    report = jsonio.loads((out / "report.json").read_bytes())
    assert isinstance(report, dict)
    for entry in report["scenarios"]:
        entry["duration_s"] = 0
        for turn in entry["turns"]:
            turn["duration_s"] = 0
            turn["request_id"] = ""
    report["summary"]["duration_s"] = 0
    return report


def _folder_files(out: Path) -> dict[str, bytes]:
    # These hold the times and ids of their run; history.json the conversation id pydantic-ai drew for it (compared
    # without it); the rest is the same bytes.
    varying = {"events.jsonl", "session.json", "pydantic_ai_dump.json"}
    files: dict[str, bytes] = {}
    for path in sorted((out / "scenarios").rglob("*")):
        if not path.is_file() or path.name in varying:
            continue
        data = path.read_bytes()
        if path.name == "history.json":
            data = dumps_history(without_per_run_values(loads_history(data)))
        files[path.relative_to(out).as_posix()] = data
    return files


def test_the_out_option_writes_what_agentrig_run_writes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("one"), "scenarios/b.yaml": scenario("two", answer="x")})
    monkeypatch.chdir(pytester.path)

    pytester.runpytest_inprocess("--agentrig-out", "from-pytest", "-p", "no:cacheprovider")
    cli = CliRunner().invoke(app, ["run", "scenarios", "--out", "from-run", "-q"])

    assert cli.exit_code == 1, cli.output
    plugin_out, run_out = pytester.path / "from-pytest", pytester.path / "from-run"
    assert sorted(p.name for p in plugin_out.iterdir()) == sorted(p.name for p in run_out.iterdir())
    assert {"junit.xml", "report.json", "scenarios", "summary.md"} <= {p.name for p in plugin_out.iterdir()}
    assert _folder_files(plugin_out) == _folder_files(run_out)
    assert sorted(p.relative_to(plugin_out) for p in plugin_out.rglob("*")) == sorted(
        p.relative_to(run_out) for p in run_out.rglob("*")
    )
    assert _report_without_timing(plugin_out) == _report_without_timing(run_out)


def test_option_combinations_that_cannot_run_are_usage_errors_in_the_plugin_names(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("one")})

    golden_from_model = pytester.runpytest_inprocess("--agentrig-update-golden", "--agentrig-model", "openai:gpt-4o")
    mode_without_dir = pytester.runpytest_inprocess("--agentrig-record-mode", "none")

    assert golden_from_model.ret == pytest.ExitCode.USAGE_ERROR
    golden_from_model.stderr.fnmatch_lines(["*--agentrig-update-golden needs the scripted model*"])
    assert mode_without_dir.ret == pytest.ExitCode.USAGE_ERROR
    mode_without_dir.stderr.fnmatch_lines(["*--agentrig-record-mode none needs --agentrig-recordings DIR*"])


def test_ordinary_tests_beside_scenarios_run_as_before(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("one"), "tests/test_x.py": "def test_x():\n    assert 1 + 1 == 3\n"})

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*assert (1 + 1) == 3*"])  # pytest's own assertion rewriting, untouched


def test_the_stream_option_runs_every_scenario_streamed(pytester: pytest.Pytester) -> None:
    # Only a streamed run writes message_update events (docs/events.md).
    streamed_only = scenario("deltas") + "expect:\n  events:\n    counts: [{event: message_update, min: 1}]\n"
    write(pytester, {"scenarios/a.yaml": streamed_only})

    plain = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    streamed = pytester.runpytest_inprocess("--agentrig-stream", "-p", "no:cacheprovider")

    plain.assert_outcomes(failed=1)
    plain.stdout.fnmatch_lines(["*message_update*"])
    streamed.assert_outcomes(passed=1)


def test_an_agent_calling_sys_exit_in_a_tool_errors_its_scenario_and_the_next_still_runs(
    pytester: pytest.Pytester,
) -> None:
    exits = "from pydantic_ai import Agent\nimport sys\n\nagent = Agent()\n\n\n@agent.tool_plain\n"
    exits += "def crash() -> str:\n    sys.exit(4)\n"
    crashing = "name: a-exits\nagent: exits_agent:agent\nturns:\n  - user: hi\n    model:\n"
    crashing += "      - tool_calls: [{id: t1, name: crash, args: {}}]\n      - text: done\n"
    write(
        pytester, {"scenarios/exits_agent.py": exits, "scenarios/a.yaml": crashing, "scenarios/b.yaml": scenario("b")}
    )

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["ERROR a-exits (scenarios/a.yaml)", "  error agent_error (*): the agent called sys.exit(4)"]
    )


ENV_AGENT = """\
import os

from pydantic_ai import Agent

agent = Agent(None)


@agent.tool_plain
def read_env() -> str:
    return os.environ.get("FROM_FIXTURE", "unset")
"""

SEES_THE_FIXTURE = """\
name: sees-the-fixture
agent: env_agent:agent
turns:
  - user: hi
    model:
      - tool_calls: [{id: c1, name: read_env}]
      - text: done
        expect_input: {contains_text: ["set by the fixture"]}
"""

AUTOUSE_CONFTEST = """\
import pytest


@pytest.fixture(autouse=True)
def environment(monkeypatch, request):
    log = request.config.rootpath / "fixture.log"
    if request.config.getoption("--fail-setup", default=False):
        raise RuntimeError("the database is down")
    monkeypatch.setenv("FROM_FIXTURE", "set by the fixture")
    with log.open("a") as handle:
        handle.write(f"setup {request.node.name}\\n")
    yield
    with log.open("a") as handle:
        handle.write(f"teardown {request.node.name}\\n")


def pytest_addoption(parser):
    parser.addoption("--fail-setup", action="store_true")
"""


def test_autouse_fixtures_of_conftest_files_run_around_each_scenario(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {"scenarios/a.yaml": SEES_THE_FIXTURE, "env_agent.py": ENV_AGENT, "conftest.py": AUTOUSE_CONFTEST},
    )

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    failing = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--fail-setup", "--agentrig-out", "out")

    result.assert_outcomes(passed=1)  # the tool read what the fixture set, and the model saw it
    log = (pytester.path / "fixture.log").read_text(encoding="utf-8")
    assert log == "setup sees-the-fixture\nteardown sees-the-fixture\n"
    failing.assert_outcomes(errors=1)
    report = jsonio.loads((pytester.path / "out" / "report.json").read_bytes())
    assert isinstance(report, dict)
    (entry,) = report["scenarios"]
    assert (entry["status"], entry["error"]["kind"]) == ("error", "agent_error")
    assert entry["error"]["message"] == "its pytest setup failed: RuntimeError: the database is down"
