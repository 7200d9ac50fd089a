"""`agentrig matrix`: report building and diffing on fabricated run outputs, environment reuse and failures on
fake environments (fast), and one real environment build (slow: `pytest -m slow tests/runtime/test_matrix.py`)."""

from __future__ import annotations

import base64
import json
import shutil
import stat
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import EXIT_FAILED, EXIT_OK, EXIT_PROVIDER, InfrastructureError, UsageError
from agentrig.runtime.matrix import builds as builds_module
from agentrig.runtime.matrix import environments as matrix_module
from agentrig.runtime.matrix.compare import VersionOutput, load_version_output, normalized_json_text, summarize_change
from agentrig.runtime.matrix.environments import (
    MARKER_FILE,
    EnvironmentSpec,
    MatrixOptions,
    agentrig_install_args,
    ensure_environment,
    environment_spec,
    probe_python,
    run_matrix,
)
from agentrig.runtime.matrix.extras import scenario_extras
from agentrig.runtime.matrix.report import REPORT_FORMAT, build_report
from agentrig.runtime.runfolder.output_manifest import MANIFEST_NAME

REPO_ROOT = Path(__file__).resolve().parents[2]


# --- fabricated run outputs (the shape `agentrig run --out DIR` writes) ---------------------------------------


def canonical_history(answer: str = "Two files.") -> dict[str, Any]:
    """A canonical history with one tool round trip."""
    return {
        "format": "agentrig.history/1",
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "text", "content": "List the files."}]},
            {
                "kind": "response",
                "parts": [{"part_kind": "tool-call", "tool_call_id": "tc_1", "tool_name": "bash", "args": {}}],
            },
            {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_call_id": "tc_1", "content": "a"}]},
            {"kind": "response", "parts": [{"part_kind": "text", "content": answer}]},
        ],
    }


def retry_dump(*, new_format: bool, timestamp: str = "2026-01-01T00:00:00Z") -> list[dict[str, Any]]:
    """A raw pydantic-ai dump of a tool retry: RetryPromptPart before 2.60, ToolReturnPart(outcome='retried') after."""
    if new_format:
        retry: dict[str, Any] = {
            "part_kind": "tool-return",
            "tool_call_id": "tc_1",
            "tool_name": "bash",
            "content": "unknown flag",
            "outcome": "retried",
            "timestamp": timestamp,
        }
    else:
        retry = {
            "part_kind": "retry-prompt",
            "tool_call_id": "tc_1",
            "tool_name": "bash",
            "content": "unknown flag",
            "timestamp": timestamp,
        }
    return [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi", "timestamp": timestamp}]},
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_call_id": "tc_1", "tool_name": "bash"}]},
        {"kind": "request", "parts": [retry], "run_id": "0f3c"},
    ]


def write_run(
    directory: Path,
    version: str,
    scenarios: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]],
    tags: dict[str, list[str]] | None = None,
) -> None:
    """Write `report.json` and each scenario's history and dump, as `agentrig run --out` does."""
    report = {
        "format": "agentrig.report/1",
        "pydantic_ai_version": version,
        "summary": {"total": len(scenarios)},
        "scenarios": [
            {"name": name, "status": status, "tags": (tags or {}).get(name, [])}
            for name, (status, _, _) in scenarios.items()
        ],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "report.json").write_text(json.dumps(report), encoding="utf-8")
    for name, (_, history, dump) in scenarios.items():
        scenario_dir = directory / "scenarios" / name
        scenario_dir.mkdir(parents=True)
        (scenario_dir / "history.json").write_text(json.dumps(history), encoding="utf-8")
        (scenario_dir / "pydantic_ai_dump.json").write_text(json.dumps(dump), encoding="utf-8")


def outputs_for(
    tmp_path: Path, runs: dict[str, dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]]]
) -> list[VersionOutput]:
    """Fabricate one run directory per version and load them."""
    loaded: list[VersionOutput] = []
    for version, scenarios in runs.items():
        write_run(tmp_path / version, version, scenarios, tags={name: ["tools"] for name in scenarios})
        loaded.append(load_version_output(version, tmp_path / version, exit_code=0))
    return loaded


# --- report building and diffing --------------------------------------------------------------------------------


def test_retry_change_shows_in_raw_dumps_while_canonical_histories_stay_identical(tmp_path: Path) -> None:
    history = canonical_history()
    outputs = outputs_for(
        tmp_path,
        {
            "2.38.0": {"retry": ("passed", history, retry_dump(new_format=False))},
            "2.60.0": {"retry": ("passed", history, retry_dump(new_format=True, timestamp="2026-05-05T00:00:00Z"))},
        },
    )
    out = tmp_path / "report"
    report = build_report(outputs, python_version="3.11", paths=["scenarios"], out=out, command="agentrig matrix x")

    (scenario,) = report.scenarios
    assert scenario.canonical_differs == ()
    assert scenario.raw_differs == ("2.60.0",)
    change = scenario.raw_changes["2.60.0"]
    assert change.part_kinds == {"retry-prompt": (1, 0), "tool-return": (0, 1)}
    assert change.new_keys == ("outcome",)
    assert change.removed_keys == ()
    assert scenario.diffs == ("diffs/retry/2.60.0.pydantic_ai_dump.diff",)
    diff = (out / scenario.diffs[0]).read_text(encoding="utf-8")
    assert diff.startswith("--- 2.38.0/scenarios/retry/pydantic_ai_dump.json\n+++ 2.60.0/scenarios/retry/")
    assert '-        "part_kind": "retry-prompt",' in diff
    assert '+        "outcome": "retried",' in diff
    assert "2026-05-05" not in diff  # timestamps are masked: only the format change shows
    assert report.exit_code == EXIT_OK

    markdown = (out / "compatibility.md").read_text(encoding="utf-8")
    assert "identical on every version, for all 1 scenarios" in markdown
    assert "the removal contract doing its job" in markdown
    assert "  - part kinds change in 1: `retry` retry-prompt 1→0, tool-return 0→1" in markdown
    assert "  - new keys: `outcome` (1)" in markdown
    assert "| `retry` | pass | pass | identical | differs: 2.60.0 |" in markdown
    assert "agentrig matrix x" in markdown


def test_a_changed_canonical_history_is_reported_with_its_diff(tmp_path: Path) -> None:
    dump = retry_dump(new_format=False)
    outputs = outputs_for(
        tmp_path,
        {
            "2.38.0": {"roundtrip": ("passed", canonical_history("Two files."), dump)},
            "2.68.0": {"roundtrip": ("passed", canonical_history("Three files."), dump)},
        },
    )
    report = build_report(outputs, python_version="3.11", paths=["scenarios"], out=tmp_path / "r")

    (scenario,) = report.scenarios
    assert scenario.canonical_differs == ("2.68.0",)
    assert scenario.raw_differs == ()
    diff = (tmp_path / "r" / "diffs" / "roundtrip" / "2.68.0.history.diff").read_text(encoding="utf-8")
    assert '-          "content": "Two files.",' in diff or '-          "content": "Two files."' in diff
    assert "Three files." in diff
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert "**differ from 2.38.0 in 1 of 1 scenarios**: `roundtrip`" in markdown


def test_only_volatile_values_differing_counts_as_identical(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(retry_dump(new_format=False, timestamp="2026-01-01T00:00:00Z")), encoding="utf-8")
    b.write_text(json.dumps(retry_dump(new_format=False, timestamp="2027-02-02T00:00:00Z")), encoding="utf-8")
    assert normalized_json_text(a) == normalized_json_text(b)
    assert normalized_json_text(tmp_path / "absent.json") is None


def test_generated_call_ids_are_masked_but_explicit_ones_are_not(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text(json.dumps([{"tool_call_id": "pyd_ai_" + "ab" * 16}, {"tool_call_id": "tc_1"}]), encoding="utf-8")
    text = normalized_json_text(path)
    assert text is not None
    assert "pyd_ai_" not in text
    assert '"tc_1"' in text


def test_a_scenario_failing_only_on_a_later_version_is_a_regression(tmp_path: Path) -> None:
    history, dump = canonical_history(), retry_dump(new_format=False)
    outputs = outputs_for(
        tmp_path,
        {
            "2.38.0": {"a": ("passed", history, dump), "b": ("failed", history, dump)},
            "2.59.0": {"a": ("failed", history, dump), "b": ("failed", history, dump)},
            "2.68.0": {"a": ("error", history, dump), "b": ("passed", history, dump)},
        },
    )
    report = build_report(outputs, python_version="3.11", paths=["s"], out=tmp_path / "r")

    assert [(item.scenario, item.version, item.status) for item in report.regressions] == [
        ("a", "2.59.0", "failed"),
        ("a", "2.68.0", "error"),
    ]
    assert report.exit_code == EXIT_FAILED
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert "## Regressions" in markdown
    assert "- `a` on 2.59.0: failed" in markdown
    assert "| tools | `a`, `b` | 1/2 | 0/2 | 1/2 |" in markdown


def test_a_run_that_left_no_report_fails_every_scenario_that_passed_on_the_baseline(tmp_path: Path) -> None:
    write_run(tmp_path / "2.38.0", "2.38.0", {"a": ("passed", canonical_history(), retry_dump(new_format=False))})
    (tmp_path / "2.60.0").mkdir()
    baseline = load_version_output("2.38.0", tmp_path / "2.38.0", exit_code=0)
    crashed = load_version_output(
        "2.60.0", tmp_path / "2.60.0", exit_code=1, stderr_tail="ImportError: cannot import name 'RetryPromptPart'"
    )
    assert crashed.error == "ImportError: cannot import name 'RetryPromptPart'"

    report = build_report([baseline, crashed], python_version="3.11", paths=["s"], out=tmp_path / "r")

    assert [(item.scenario, item.version, item.status) for item in report.regressions] == [("a", "2.60.0", "missing")]
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert "ImportError: cannot import name 'RetryPromptPart'" in markdown
    assert "agentrig run failed (exit 1)" in markdown


def test_a_run_that_resolved_another_version_is_flagged(tmp_path: Path) -> None:
    history, dump = canonical_history(), retry_dump(new_format=False)
    write_run(tmp_path / "2.38.0", "2.38.0", {"a": ("passed", history, dump)})
    write_run(tmp_path / "2.40.0", "2.41.0", {"a": ("passed", history, dump)})  # the pin did not hold
    outputs = [load_version_output(v, tmp_path / v, exit_code=0) for v in ("2.38.0", "2.40.0")]
    build_report(outputs, python_version="3.11", paths=["s"], out=tmp_path / "r")
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert "| 2.40.0 | 1 | 0 | 0 | 0 | resolved 2.41.0 |" in markdown


def test_compatibility_json_is_a_tagged_document_with_only_declared_keys(tmp_path: Path) -> None:
    history, dump = canonical_history(), retry_dump(new_format=False)
    outputs = outputs_for(
        tmp_path, {"2.38.0": {"a": ("passed", history, dump)}, "2.40.0": {"a": ("passed", history, dump)}}
    )
    build_report(outputs, python_version="3.11", paths=["s"], out=tmp_path / "r", generated_on="2026-12-02")

    document = json.loads((tmp_path / "r" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["format"] == REPORT_FORMAT
    assert set(document) == {
        "format",
        "agentrig_version",
        "generated_on",
        "python_version",
        "paths",
        "baseline",
        "command",
        "axis",
        "evidence_boundary",
        "resolution",
        "lock",
        "masked_keys",
        "versions",
        "scenarios",
        "regressions",
        "exit_code",
    }
    assert document["axis"] == "pydantic-ai"
    assert document["generated_on"] == "2026-12-02"
    assert [version["version"] for version in document["versions"]] == ["2.38.0", "2.40.0"]
    assert document["versions"][1]["counts"] == {"passed": 1}
    metrics = document["scenarios"][0].pop("metrics")  # what each version's run cost (tokens, money, seconds)
    assert set(metrics) == {"2.38.0", "2.40.0"}
    assert document["scenarios"] == [
        {
            "name": "a",
            "tags": ["tools"],
            "statuses": {"2.38.0": "passed", "2.40.0": "passed"},
            "canonical_identical": True,
            "canonical_differs": [],
            "raw_dump_identical": True,
            "raw_dump_differs": [],
            "raw_dump_changes": {},
            "diffs": [],
            "new_warnings": {},
        }
    ]
    assert not (tmp_path / "r" / "diffs").exists()


def test_summarize_change_names_keys_that_appear_and_disappear() -> None:
    before = json.dumps([{"part_kind": "text", "content": "x", "old": 1}])
    after = json.dumps([{"part_kind": "text", "content": "x", "model_id": "m"}])
    assert summarize_change(before, after) == "new keys `model_id`; keys gone `old`"
    assert summarize_change(before, before) == "values differ"


# --- where agentrig is installed from ----------------------------------------------------------------------------


class FakeDistribution:
    """Just enough of importlib.metadata.Distribution."""

    def __init__(self, direct_url: dict[str, Any] | None, version: str = "0.1.0") -> None:
        self._direct_url = direct_url
        self.version = version

    def read_text(self, filename: str) -> str | None:
        assert filename == "direct_url.json"
        return None if self._direct_url is None else json.dumps(self._direct_url)


@pytest.mark.parametrize(
    ("direct_url", "expected"),
    [
        ({"url": "file:///src/agentrig", "dir_info": {"editable": True}}, ("-e", "/src/agentrig")),
        ({"url": "file:///src/agentrig", "dir_info": {}}, ("/src/agentrig",)),
        (
            {"url": "file:///w/agentrig-0.1.0-py3-none-any.whl", "archive_info": {}},
            ("/w/agentrig-0.1.0-py3-none-any.whl",),
        ),
        (None, ("agentrig==0.1.0",)),
    ],
    ids=["editable", "local-dir", "local-wheel", "pypi"],
)
def test_agentrig_is_installed_from_where_it_runs_from(
    monkeypatch: pytest.MonkeyPatch, direct_url: dict[str, Any] | None, expected: tuple[str, ...]
) -> None:
    def fake_distribution(name: str) -> FakeDistribution:
        assert name == "agentrig"
        return FakeDistribution(direct_url)

    monkeypatch.setattr(builds_module.importlib.metadata, "distribution", fake_distribution)
    assert agentrig_install_args() == expected


def test_the_project_and_the_pin_go_into_one_install_call(tmp_path: Path) -> None:
    project = tmp_path / "myapp"
    project.mkdir()
    spec = environment_spec(
        "2.40.0", python="/usr/bin/python3", python_version="3.11", env_root=tmp_path, project=project
    )
    assert spec.location == tmp_path / "py3.11-2.40.0"
    assert spec.install_args[:2] == ("-e", str(project.resolve()))
    assert spec.install_args[-2:] == ("pydantic-ai-slim==2.40.0", "pydantic-graph==2.40.0")
    assert spec.install_args[2:-2] == agentrig_install_args()


def test_agentrig_own_checkout_as_the_project_is_installed_once(tmp_path: Path) -> None:
    own = agentrig_install_args()
    if own[0] != "-e":
        pytest.skip("agentrig is not installed editable here")
    spec = environment_spec("2.40.0", python="py", python_version="3.11", env_root=tmp_path, project=Path(own[1]))
    assert spec.install_args == (*own, "pydantic-ai-slim==2.40.0", "pydantic-graph==2.40.0")


# --- environments: reuse, refusal, failure (fake interpreters, no network) ---------------------------------------

FAKE_PYTHON = """\
#!{python}
# A stand-in for an environment's interpreter: reports a pinned pydantic-ai version, its packages and field
# inventory (or fails to, like an agentrig without one), and plays `agentrig run`.
import json, pathlib, sys
VERSION = {version!r}
STATUSES = {statuses!r}
PACKAGES = {packages!r}
INVENTORY = {inventory!r}
HISTORY = {history!r}
if sys.argv[1:2] == ["-c"]:
    script = sys.argv[2]
    if "distributions()" in script:
        print(json.dumps(PACKAGES))
    elif "inventory_json" in script:
        if INVENTORY is None:
            print("ModuleNotFoundError: No module named 'agentrig.runtime.models.message_fields'", file=sys.stderr)
            raise SystemExit(1)
        print(INVENTORY)
    else:
        print(VERSION)
    raise SystemExit(0)
if STATUSES == {{"crash": "exit 2"}}:
    print("agentrig: error: scenarios/bad.yaml:3:1: turns: field required", file=sys.stderr)
    raise SystemExit(2)
# Its output folder as `agentrig run` keeps it: claimed, every file recorded in the manifest, the rest removed.
from agentrig.runtime.runfolder.owned_folder import OwnedFolder
from agentrig.runtime.reports.report_files import RUN_LAYOUT
from agentrig.runtime.suite.outputs.scenario_files import write_folder
out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1])
scenarios = [{{"name": name, "status": status}} for name, status in STATUSES.items()]
folder = OwnedFolder.claim(out, label=f"--out {{out}}", layout=RUN_LAYOUT)
for name in STATUSES:
    write_folder(out, f"scenarios/{{name}}", [("history.json", json.dumps(HISTORY).encode())])
folder.write("report.json", json.dumps({{"pydantic_ai_version": VERSION, "scenarios": scenarios}}).encode())
folder.finish()
raise SystemExit(1 if "failed" in STATUSES.values() else 0)
"""


def executable(path: Path, text: str) -> Path:
    """Write an executable script."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def fake_environment(
    spec: EnvironmentSpec,
    statuses: dict[str, str],
    *,
    marker: bool = True,
    packages: dict[str, str] | None = None,
    inventory: str | None = None,
    history: dict[str, Any] | None = None,
) -> None:
    """An environment that looks built for `spec`: pyvenv.cfg, a fake interpreter, and (optionally) the marker.
    `packages` is what it says it holds (default: pydantic-ai-slim at its pin); `inventory` the JSON its field
    inventory prints (None: it has none); `history` what its run writes as every scenario's history.json."""
    (spec.location / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (spec.location / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    held = packages if packages is not None else {"pydantic-ai-slim": spec.version}
    executable(
        spec.env_python,
        textwrap.dedent(FAKE_PYTHON).format(
            python=sys.executable,
            version=spec.version,
            statuses=statuses,
            packages=held,
            inventory=inventory,
            history=history if history is not None else {"messages": []},
        ),
    )
    if marker:
        (spec.location / MARKER_FILE).write_text(json.dumps(matrix_module.environment_marker(spec)), encoding="utf-8")


@pytest.fixture(autouse=True)
def no_real_builds(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the slow test, an environment that is not faked fails to build instead of downloading anything."""
    if request.node.get_closest_marker("slow"):
        return
    guard = executable(
        tmp_path / "guard" / "uv", "#!/bin/sh\necho 'tests must not build real environments' >&2\nexit 1\n"
    )
    monkeypatch.setattr(matrix_module, "find_uv", lambda: str(guard))


def spec_for(tmp_path: Path, version: str, *, extras: tuple[str, ...] = ()) -> EnvironmentSpec:
    """The spec run_matrix computes for this interpreter and no project."""
    python, python_version = probe_python(sys.executable)
    return environment_spec(
        version, python=python, python_version=python_version, env_root=tmp_path / "envs", project=None, extras=extras
    )


def test_the_environments_install_the_extras_the_scenarios_need(tmp_path: Path) -> None:
    # The shipped suite has UI turns (ag-ui, vercel-ai) and harness scenarios: every version's environment gets
    # pydantic-ai-slim's adapter extras on the pin and pydantic-ai-harness unpinned, in the one install call.
    extras = scenario_extras([REPO_ROOT / "scenarios"])
    assert extras == ("ag-ui", "harness", "vercel-ai")
    spec = spec_for(tmp_path, "2.38.0", extras=extras)
    assert spec.install_args[-3:] == (
        "pydantic-ai-slim[ag-ui,ui]==2.38.0",
        "pydantic-graph==2.38.0",
        "pydantic-ai-harness",
    )
    plain = spec_for(tmp_path, "2.38.0", extras=scenario_extras([REPO_ROOT / "scenarios" / "text_answer.yaml"]))
    assert plain.install_args[-2:] == ("pydantic-ai-slim==2.38.0", "pydantic-graph==2.38.0")


def test_an_environment_that_holds_the_pin_is_reused(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "2.38.0")
    fake_environment(spec, {})
    assert ensure_environment(spec, uv="/nonexistent/uv") is True


def test_a_stale_environment_is_rebuilt_and_a_failed_build_is_one_line_naming_the_version(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "2.38.0")
    fake_environment(spec, {}, marker=False)  # no marker: not known to hold the pin
    failing_uv = executable(tmp_path / "uv", "#!/bin/sh\necho '  x No solution found when resolving' >&2\nexit 1\n")

    with pytest.raises(InfrastructureError) as raised:
        ensure_environment(spec, uv=str(failing_uv))

    assert raised.value.exit_code == EXIT_PROVIDER
    assert raised.value.message.startswith(f"pydantic-ai 2.38.0: cannot build the environment {spec.location}")
    assert raised.value.message.endswith("x No solution found when resolving")
    assert "\n" not in raised.value.message
    assert not spec.location.exists()  # the stale environment was removed before the rebuild


def test_a_directory_that_is_not_an_environment_is_never_deleted(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "2.38.0")
    spec.location.mkdir(parents=True)
    (spec.location / "notes.txt").write_text("mine", encoding="utf-8")

    with pytest.raises(InfrastructureError, match="is not a virtual environment"):
        ensure_environment(spec, uv=None)
    assert (spec.location / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_run_matrix_runs_each_version_in_its_environment_and_reports_progress(tmp_path: Path) -> None:
    extras = scenario_extras([Path("scenarios")])  # the environments install what the shipped scenarios require
    fake_environment(spec_for(tmp_path, "2.38.0", extras=extras), {"a": "passed", "b": "passed"})
    fake_environment(spec_for(tmp_path, "2.60.0", extras=extras), {"a": "passed", "b": "failed"})
    lines: list[str] = []
    options = MatrixOptions(
        paths=(Path("scenarios"),), versions=("2.38.0", "2.60.0"), out=tmp_path / "out", env_root=tmp_path / "envs"
    )

    report = run_matrix(options, command_line="agentrig matrix scenarios", progress=lines.append)

    assert lines == [
        "[1/2] pydantic-ai 2.38.0: environment ready (reused)",
        "[1/2] pydantic-ai 2.38.0: 2 passed",
        "[2/2] pydantic-ai 2.60.0: environment ready (reused)",
        "[2/2] pydantic-ai 2.60.0: 1 passed, 1 failed",
    ]
    assert [(item.scenario, item.version) for item in report.regressions] == [("b", "2.60.0")]
    assert report.exit_code == EXIT_FAILED
    assert (tmp_path / "out" / "compatibility.md").is_file()
    assert (tmp_path / "out" / "logs" / "2.60.0.log").is_file()
    assert (tmp_path / "envs" / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")


def test_a_previous_run_output_is_replaced_but_foreign_files_are_not(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.38.0"), {"a": "passed", "gone": "passed"})
    out = tmp_path / "out"
    options = MatrixOptions(paths=(Path("s"),), versions=("2.38.0",), out=out, env_root=tmp_path / "envs")
    run_matrix(options, progress=lambda line: None)
    assert (out / "2.38.0" / "scenarios" / "gone").is_dir()

    fake_environment(spec_for(tmp_path, "2.38.0"), {"a": "passed"})
    report = run_matrix(options, progress=lambda line: None)
    assert [item.name for item in report.scenarios] == ["a"]
    assert not (out / "2.38.0" / "scenarios" / "gone").exists()  # the version's own run removed its stale folder

    version_dir = out / "2.38.0"
    shutil.rmtree(version_dir)
    version_dir.mkdir()
    (version_dir / "keep.txt").write_text("mine", encoding="utf-8")
    lines: list[str] = []
    with pytest.raises(UsageError, match=r"2\.38\.0: the folder is not empty and is not an agentrig output folder"):
        run_matrix(options, progress=lines.append)
    assert (version_dir / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert lines == []  # refused before any environment was looked at


def test_a_baseline_that_cannot_load_the_scenarios_is_a_usage_error(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.38.0"), {"crash": "exit 2"})
    fake_environment(spec_for(tmp_path, "2.40.0"), {"a": "passed"})
    options = MatrixOptions(
        paths=(Path("s"),), versions=("2.38.0", "2.40.0"), out=tmp_path / "out", env_root=tmp_path / "envs"
    )
    with pytest.raises(UsageError) as raised:
        run_matrix(options, progress=lambda line: None)
    assert raised.value.message == (
        "pydantic-ai 2.38.0 (baseline): agentrig run left no report (exit 2): "
        "scenarios/bad.yaml:3:1: turns: field required"
    )


# --- one real environment (slow; needs PyPI or a warm uv cache) -------------------------------------------------


@pytest.mark.slow
def test_real_environments_run_the_suite_on_the_floor_and_the_newest_pin(tmp_path: Path) -> None:
    # The one test that builds real environments (uv or pip, from the package index): nox's `matrix_smoke` session
    # runs it in CI. Two scenarios, one of them with a tool retry, whose raw dump changes shape at 2.60.
    chosen = [REPO_ROOT / "scenarios" / name for name in ("tool_roundtrip.yaml", "tool_retry.yaml")]
    assert all(path.is_file() for path in chosen), chosen
    options = MatrixOptions(
        paths=tuple(chosen),
        versions=("2.38.0", "2.68.0"),
        out=tmp_path / "out",
        env_root=tmp_path / "envs",
        project=None,
    )
    lines: list[str] = []
    report = run_matrix(options, progress=lines.append)

    assert lines[0] == "[1/2] pydantic-ai 2.38.0: environment ready (built)", lines
    assert [output.resolved_version for output in report.versions] == ["2.38.0", "2.68.0"]
    assert all(output.error is None for output in report.versions), [o.error for o in report.versions]
    assert len(report.scenarios) == 2
    assert report.regressions == ()
    assert report.exit_code == 0
    # The removal contract across the retry-format change: canonical histories identical, raw dumps not.
    assert all(comparison.canonical_differs == () for comparison in report.scenarios)
    assert any(comparison.raw_differs == ("2.68.0",) for comparison in report.scenarios)
    assert (tmp_path / "out" / "compatibility.md").is_file()
    # The second call finds the pins in place and reuses the environments.
    again: list[str] = []
    run_matrix(options, progress=again.append)
    assert again[0] == "[1/2] pydantic-ai 2.38.0: environment ready (reused)", again


def test_a_version_run_does_not_write_the_ci_job_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/tmp/summary.md")
    monkeypatch.setenv("VIRTUAL_ENV", "/somewhere/.venv")
    env = matrix_module.version_run_env()
    assert "GITHUB_STEP_SUMMARY" not in env
    assert "VIRTUAL_ENV" not in env
    assert env["UV_PYTHON_DOWNLOADS"] == "never"


# --- OUT: only what agentrig can prove its own is replaced (issue 27, item 1) ------------------------------------


def _matrix_out_shapes(tmp_path: Path, run_once: Callable[[], None]) -> dict[str, Callable[[Path], str]]:
    """Ways to hand `agentrig matrix --out` a folder it must refuse: each makes `out` so and returns what the refusal
    says. `run_once` fills `out` with a real matrix output first."""

    def project_root(out: Path) -> str:
        (out / "scenarios").mkdir(parents=True)
        (out / "scenarios" / "a.yaml").write_text("name: a\n", encoding="utf-8")
        (out / "README.md").write_text("# project\n", encoding="utf-8")
        (out / "report.json").write_text('{"format": "agentrig.report/1", "scenarios": []}\n', encoding="utf-8")
        return "holds report.json but no .agentrig-manifest.jsonl"

    def earlier_matrix_without_manifest(out: Path) -> str:
        run_once()
        (out / MANIFEST_NAME).unlink()
        return "holds report files but no .agentrig-manifest.jsonl"

    def tampered(line: str, says: str) -> Callable[[Path], str]:
        def prepare(out: Path) -> str:
            run_once()
            with (out / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
                manifest.write(line + "\n")
            return says

        return prepare

    def replaced(out: Path) -> str:
        run_once()
        (out / "compatibility.md").write_text("my edits\n", encoding="utf-8")
        return "compatibility.md: changed since agentrig wrote it"

    def added(out: Path) -> str:
        run_once()
        (out / "logs" / "mine.txt").write_text("mine\n", encoding="utf-8")
        return "logs/mine.txt: agentrig did not write it"

    def version_folder_replaced(out: Path) -> str:
        run_once()
        (out / "2.38.0" / "report.json").write_text("{}\n", encoding="utf-8")
        return "2.38.0: report.json: changed since agentrig wrote it"

    digest = "0" * 64
    return {
        "project-root": project_root,
        "earlier-matrix": earlier_matrix_without_manifest,
        "dot-dot": tampered(f'{{"file": "../x", "size": 1, "sha256": "{digest}"}}', "'../x' leads outside"),
        "etc-passwd": tampered(f'{{"file": "/etc/passwd", "size": 1, "sha256": "{digest}"}}', "is absolute"),
        "run-folder-file": tampered(
            f'{{"file": "2.38.0/report.json", "size": 1, "sha256": "{digest}"}}',
            "lists '2.38.0/report.json', which agentrig matrix never writes",
        ),
        "replaced-by-the-user": replaced,
        "added-by-the-user": added,
        "version-folder-replaced": version_folder_replaced,
    }


SHAPE_IDS = [
    "project-root",
    "earlier-matrix",
    "dot-dot",
    "etc-passwd",
    "run-folder-file",
    "replaced-by-the-user",
    "added-by-the-user",
    "version-folder-replaced",
]


@pytest.mark.parametrize("shape", SHAPE_IDS)
def test_matrix_refuses_an_out_it_cannot_prove_before_it_builds_anything(tmp_path: Path, shape: str) -> None:
    fake_environment(spec_for(tmp_path, "2.38.0"), {"a": "passed"})
    out = tmp_path / "out"
    options = MatrixOptions(paths=(Path("s"),), versions=("2.38.0",), out=out, env_root=tmp_path / "envs")

    def run_once() -> None:
        run_matrix(options, progress=lambda line: None)

    says = _matrix_out_shapes(tmp_path, run_once)[shape](out)
    before = {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}
    lines: list[str] = []

    with pytest.raises(UsageError) as raised:
        run_matrix(options, progress=lines.append)

    assert says in raised.value.message
    assert "touched nothing" in raised.value.message or "cannot prove" in raised.value.message
    assert "\n" not in raised.value.message
    assert lines == []  # no environment looked at
    assert {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()} == before
    assert Path("/etc/passwd").is_file()


def test_matrix_replaces_its_own_diffs_and_logs_and_keeps_a_users_file(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.38.0"), {"a": "passed"})
    fake_environment(spec_for(tmp_path, "2.40.0"), {"a": "failed"})
    out = tmp_path / "out"
    both = MatrixOptions(paths=(Path("s"),), versions=("2.38.0", "2.40.0"), out=out, env_root=tmp_path / "envs")
    run_matrix(both, progress=lambda line: None)
    assert (out / "logs" / "2.40.0.log").is_file()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")

    run_matrix(replace(both, versions=("2.38.0",)), progress=lambda line: None)

    assert sorted(path.name for path in (out / "logs").iterdir()) == ["2.38.0.log"]  # the earlier matrix's log went
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (out / "2.40.0" / "report.json").is_file()  # a version's run folder is its own: never the matrix's to remove


def test_an_attachment_that_differs_shows_in_the_diff_as_its_size_and_hash(tmp_path: Path) -> None:
    def with_image(data: bytes) -> dict[str, Any]:
        history = canonical_history()
        image = {"kind": "binary", "media_type": "image/png", "data": base64.b64encode(data).decode()}
        history["messages"][0]["parts"][0]["content"] = ["Describe it.", image]
        return history

    dump = retry_dump(new_format=False)
    outputs = outputs_for(
        tmp_path,
        {
            "2.38.0": {"image": ("passed", with_image(b"a" * 300), dump)},
            "2.68.0": {"image": ("passed", with_image(b"b" * 300), dump)},
        },
    )
    build_report(outputs, python_version="3.11", paths=["scenarios"], out=tmp_path / "r")

    diff = (tmp_path / "r" / "diffs" / "image" / "2.68.0.history.diff").read_text(encoding="utf-8")
    assert base64.b64encode(b"a" * 300).decode() not in diff
    removed = [line for line in diff.splitlines() if line.startswith("-") and "bytes in base64" in line]
    added = [line for line in diff.splitlines() if line.startswith("+") and "bytes in base64" in line]
    assert len(removed) == len(added) == 1
    assert "300 bytes in base64, sha256:" in removed[0]
    assert removed[0][1:] != added[0][1:]  # two payloads, two hashes


def test_each_environment_runs_with_its_extras_required(tmp_path: Path) -> None:
    # The environment installs the extras its scenarios name: a missing one is a failed install, an error on the
    # page, never a scenario skipped as on a plain install.
    spec = environment_spec("2.40.0", python="py", python_version="3.11", env_root=tmp_path, project=REPO_ROOT)
    options = MatrixOptions(paths=(Path("s"),), versions=("2.40.0",), out=tmp_path / "out", env_root=tmp_path)
    command = matrix_module.run_command(spec, options)
    assert command[command.index("run") :][:4] == ("run", "s", "--out", str(tmp_path / "out" / "2.40.0"))
    assert "--require-extras" in command
