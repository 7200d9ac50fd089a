"""The composite action (action.yml): its steps run with bash, as on GitHub, against real scenarios."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.ci.action_runner import EXPRESSION, PINNED_USES, ROOT, ActionRun, load_action, run_action, steps_of

pytestmark = pytest.mark.process

BIN = Path(sys.executable).parent  # where this environment's `agentrig` and `python` live

FAILING_SCENARIO = """\
name: wrong-greeting
system_prompt: You are terse.
turns:
  - user: Say hello.
    model:
      - text: Hello!
    expect:
      output: {equals: Goodbye!}
"""


def run(tmp_path: Path, inputs: dict[str, str], *, path_prefix: list[Path] | None = None) -> tuple[ActionRun, str]:
    """Run the action from `tmp_path` as its workspace; return the run and the job summary it wrote."""
    summary = tmp_path / "step-summary.md"
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    result = run_action(
        inputs, workspace=tmp_path, step_summary=summary, path_prefix=[*(path_prefix or []), BIN], temp=temp
    )
    return result, summary.read_text(encoding="utf-8") if summary.exists() else ""


def test_inputs_reach_the_shell_only_through_env_and_every_action_is_pinned() -> None:
    for step in steps_of(load_action()):
        if "run" in step:
            assert not EXPRESSION.search(step["run"]), f"expression inside run: {step['run']!r}"
        else:
            assert PINNED_USES.match(step["uses"]), f"not pinned to a commit: {step['uses']}"


def test_shards_pass_upload_their_output_and_merge_into_one_summary(tmp_path: Path) -> None:
    picked = {"paths": str(ROOT / "scenarios"), "k": "text-answer or tool-roundtrip", "install": "false"}
    for shard in ("1", "2"):
        result, _ = run(tmp_path, picked | {"shard": f"{shard}/2", "out": f"shard-{shard}", "artifact-name": shard})

        assert result.exit_code == 0
        out = tmp_path / f"shard-{shard}"
        page = str(out / "report.html")
        assert result.outputs == {"exit-code": "0", "out-dir": str(out), "report-html": page}
        assert (out / "report.json").is_file()
        assert "Install agentrig" not in result.ran  # install: false uses the agentrig on PATH
        [(uses, with_values), (page_uses, page_values)] = result.uses
        assert uses.startswith("actions/upload-artifact@")
        assert with_values == {"name": shard, "path": str(out), "if-no-files-found": "warn"}
        # The page alone is its own artifact, named in the job summary.
        assert page_uses == uses
        assert page_values == {"name": f"html-{shard}", "path": page, "if-no-files-found": "warn"}

    result, summary = run(tmp_path, {"command": "merge", "paths": "shard-*", "install": "false"})

    assert result.exit_code == 0
    assert result.outputs["out-dir"] == str(tmp_path / "agentrig-out")
    assert (tmp_path / "agentrig-out" / "junit.xml").is_file()
    # agentrig appends each summary.md itself (two shards, then the merge); the action must not add them again.
    assert summary.count("## agentrig:") == 3
    assert summary.rstrip().split("## agentrig:")[-1].startswith(" 2 passed, 0 failed")


def test_a_failing_scenario_still_uploads_and_fails_the_action_with_exit_code_1(tmp_path: Path) -> None:
    scenarios = tmp_path / "project" / "scenarios"
    scenarios.mkdir(parents=True)
    (scenarios / "wrong_greeting.yaml").write_text(FAILING_SCENARIO, encoding="utf-8")

    result, summary = run(
        tmp_path,
        {
            "working-directory": "project",
            "out": "reports/shard 1",
            "args": "-q --exitfirst",
            "install": "false",
            "artifact-name": "agentrig-shard-1",
        },
    )

    assert result.exit_code == 1
    out = tmp_path / "project" / "reports" / "shard 1"
    page = str(out / "report.html")
    assert result.outputs == {"exit-code": "1", "out-dir": str(out), "report-html": page}
    assert "wrong-greeting" in (out / "summary.md").read_text(encoding="utf-8")
    assert "0 passed, 1 failed" in summary
    assert result.uses == [
        (result.uses[0][0], {"name": "agentrig-shard-1", "path": str(out), "if-no-files-found": "warn"}),
        (result.uses[0][0], {"name": "html-agentrig-shard-1", "path": page, "if-no-files-found": "warn"}),
    ]
    assert "**report.html**: the run in one page" in summary
    assert "`html-agentrig-shard-1`" in summary


def test_a_usage_error_fails_with_exit_code_2_and_says_so_in_the_summary(tmp_path: Path) -> None:
    result, summary = run(tmp_path, {"paths": "no-such-dir", "install": "false"})

    assert result.exit_code == 2
    assert result.outputs == {"exit-code": "2", "out-dir": "", "report-html": ""}
    assert result.uses == []  # nothing to upload
    assert "exited with code 2 before writing a report" in summary


@pytest.mark.parametrize(
    ("spec", "installed"),
    [("", f"{ROOT}[providers]"), ("agentrig[providers]==0.1.0", "agentrig[providers]==0.1.0")],
    ids=["action-source", "given-spec"],
)
def test_the_install_step_pip_installs_the_action_source_or_the_given_spec(
    tmp_path: Path, spec: str, installed: str
) -> None:
    # A `python` that records `-m pip ...` instead of installing (no network), and is the real one otherwise.
    shims = tmp_path / "shims"
    shims.mkdir()
    log = tmp_path / "pip.log"
    shim = shims / "python"
    shim.write_text(
        f'#!/usr/bin/env bash\nif [[ "$1 $2" == "-m pip" ]]; then printf "%s\\n" "$@" > "{log}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)

    result, _ = run(tmp_path, {"paths": "no-such-dir", "agentrig-spec": spec}, path_prefix=[shims])

    assert "Install agentrig" in result.ran
    assert log.read_text(encoding="utf-8").splitlines()[-1] == installed
    assert result.exit_code == 2  # the run after it still happened


def test_matrix_publishes_compatibility_md_and_fails_with_its_exit_code(tmp_path: Path) -> None:
    # A stand-in for `agentrig matrix` (the real one builds environments from the package index): it writes a
    # report and exits 1, as on a regression. Only compatibility.md may reach the job summary.
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "agentrig"
    shim.write_text(
        '#!/usr/bin/env bash\nprintf "%s\\n" "$@" > argv.txt\nmkdir -p agentrig-matrix\n'
        # as each version's `agentrig run` would, given the chance
        'if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then echo "## agentrig: 1 passed" >> "$GITHUB_STEP_SUMMARY"; fi\n'
        'echo "# compatibility: 1 regression" > agentrig-matrix/compatibility.md\n'
        "echo '<!doctype html>' > agentrig-matrix/compatibility.html\nexit 1\n",
        encoding="utf-8",
    )
    shim.chmod(0o755)

    result, summary = run(
        tmp_path,
        {"command": "matrix", "args": "--versions 2.60.0,2.68.0", "install": "false"},
        path_prefix=[shims],
    )

    assert result.exit_code == 1
    page = str(tmp_path / "agentrig-matrix" / "compatibility.html")
    assert result.outputs == {"exit-code": "1", "out-dir": str(tmp_path / "agentrig-matrix"), "report-html": page}
    argv = (tmp_path / "argv.txt").read_text(encoding="utf-8").split()
    assert argv == ["matrix", "scenarios", "--out", "agentrig-matrix", "--versions", "2.60.0,2.68.0"]
    assert summary.startswith("# compatibility: 1 regression\n\n**compatibility.html**: the run in one page")
    assert "## agentrig" not in summary


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"command": "merge", "shard": "1/2"}, "input shard is only for command run"),
        ({"command": "matrix", "model": "openai:gpt-4o"}, "input model is only for command run"),
        ({"command": "deploy"}, "command must be run, merge or matrix, not 'deploy'"),
        ({"durations": "last/report.json"}, "input durations balances shards: it needs input shard"),
        ({"command": "merge", "durations": "r.json"}, "input durations is only for command run"),
    ],
    ids=["shard-with-merge", "model-with-matrix", "unknown-command", "durations-without-shard", "durations-merge"],
)
def test_inputs_a_command_does_not_take_are_a_usage_error(tmp_path: Path, inputs: dict[str, str], message: str) -> None:
    result, summary = run(tmp_path, inputs | {"install": "false"})

    assert result.exit_code == 2
    assert result.outputs["exit-code"] == "2"
    assert summary == f"**agentrig action: {message}**\n"


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"args": '-k "plain'}, "input args cannot be split into words: no closing quotation in '-k \"plain'"),
        (
            {"paths": "'my scenarios"},
            'input paths cannot be split into words: no closing quotation in "\'my scenarios"',
        ),
        ({"args": "-x \\"}, "input args cannot be split into words: no escaped character in '-x \\\\'"),
        ({"out": "reports\nout-dir=/etc"}, "input out must be one line (it holds a line break)"),
        ({"out": "--help"}, "input out must be a directory, not an option ('--help'): give options in input args"),
        ({"paths": "scenarios -x"}, "input paths holds '-x', an option: give options in input args"),
    ],
    ids=[
        "unbalanced-quote-in-args",
        "unbalanced-quote-in-paths",
        "trailing-escape",
        "newline-in-out",
        "out-option",
        "option-in-paths",
    ],
)
def test_malformed_inputs_fail_the_step_with_one_clear_line_and_run_nothing(
    tmp_path: Path, inputs: dict[str, str], message: str
) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "fine.yaml").write_text(FAILING_SCENARIO.replace("Goodbye!", "Hello!"), "utf-8")

    result, summary = run(tmp_path, inputs | {"install": "false"})

    assert result.exit_code == 2
    # Only the exit code reaches $GITHUB_OUTPUT: no out-dir line, let alone a second line the input smuggled in.
    assert result.step_outputs["run"] == {"exit-code": "2"}
    assert result.outputs == {"exit-code": "2", "out-dir": "", "report-html": ""}
    assert result.uses == []
    assert summary == f"**agentrig action: {message}**\n"
    assert not (tmp_path / "agentrig-out").exists()  # nothing ran with the input dropped


def test_shards_balanced_by_an_earlier_reports_durations_cover_the_suite(tmp_path: Path) -> None:
    picked = {"paths": str(ROOT / "scenarios"), "k": "text-answer or tool-roundtrip or tool-retry", "install": "false"}
    result, _ = run(tmp_path, picked | {"out": "earlier"})
    assert result.exit_code == 0

    names: list[str] = []
    for shard in ("1", "2"):
        inputs = picked | {"shard": f"{shard}/2", "durations": "earlier/report.json", "out": f"shard-{shard}"}
        result, _ = run(tmp_path, inputs)
        assert result.exit_code == 0
        report = json.loads((tmp_path / f"shard-{shard}" / "report.json").read_text("utf-8"))
        assert report["shard"]["plan"].startswith("durations ")
        names += [entry["name"] for entry in report["scenarios"]]

    earlier = json.loads((tmp_path / "earlier" / "report.json").read_text("utf-8"))
    assert sorted(names) == sorted(entry["name"] for entry in earlier["scenarios"])


@pytest.mark.parametrize("args", ["--out custom/run", "-q --out=custom/run"], ids=["space", "equals"])
def test_out_given_in_args_is_the_folder_the_outputs_and_the_upload_name(tmp_path: Path, args: str) -> None:
    # agentrig takes the last --out it is given, so args' --out is where the reports go: out-dir, report-html and
    # the upload must name that folder, not the default agentrig-out (issue 27, item 9).
    inputs = {"paths": str(ROOT / "scenarios"), "k": "text-answer", "args": args, "install": "false"}
    result, _ = run(tmp_path, inputs)

    out = tmp_path / "custom" / "run"
    assert result.exit_code == 0
    assert result.outputs == {"exit-code": "0", "out-dir": str(out), "report-html": str(out / "report.html")}
    assert (out / "report.json").is_file()
    assert not (tmp_path / "agentrig-out").exists()
    assert result.uses[0][1]["path"] == str(out)


def test_out_given_twice_in_input_out_and_args_is_a_usage_error(tmp_path: Path) -> None:
    inputs = {"paths": str(ROOT / "scenarios"), "out": "one", "args": "--out two", "install": "false"}
    result, summary = run(tmp_path, inputs)

    assert result.exit_code == 2
    assert result.outputs == {"exit-code": "2", "out-dir": "", "report-html": ""}
    assert "input args gives --out and input out is set: give the output directory once" in summary
    assert not (tmp_path / "one").exists()
    assert not (tmp_path / "two").exists()
