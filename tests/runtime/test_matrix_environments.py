"""What `agentrig matrix` says of each version beside its results: the packages its environment resolved (and the
other packages beside a regression), environments that could not be built, fields the canonical form does not
carry, warnings new on a version, and raw-dump diffs that mask per-run values and name changed values."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentrig.errors import EXIT_FAILED
from agentrig.runtime.matrix.compare import compare_dumps, load_version_output
from agentrig.runtime.matrix.environments import MatrixOptions, run_matrix
from agentrig.runtime.matrix.masking import mask
from agentrig.runtime.matrix.report import build_report
from tests.reports.runs import data_blocks
from tests.runtime.test_matrix import REPO_ROOT, fake_environment, no_real_builds, spec_for

__all__ = ["no_real_builds"]  # the autouse fixture applies here too


def options(tmp_path: Path, *versions: str) -> MatrixOptions:
    return MatrixOptions(paths=(Path("s"),), versions=versions, out=tmp_path / "out", env_root=tmp_path / "envs")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- packages ----------------------------------------------------------------------------------------------------


def test_every_package_is_recorded_and_a_regression_names_the_other_packages_that_changed(tmp_path: Path) -> None:
    fake_environment(
        spec_for(tmp_path, "2.68.0"),
        {"ui": "passed", "plain": "passed"},
        packages={"pydantic-ai-slim": "2.68.0", "pydantic-graph": "2.68.0", "ag-ui-protocol": "0.1.22"},
    )
    fake_environment(
        spec_for(tmp_path, "2.78.0"),
        {"ui": "failed", "plain": "passed"},
        packages={"pydantic-ai-slim": "2.78.0", "pydantic-graph": "2.78.0", "ag-ui-protocol": "1.0.0", "uuid7": "0.1"},
    )

    report = run_matrix(options(tmp_path, "2.68.0", "2.78.0"), progress=lambda line: None)

    assert report.exit_code == EXIT_FAILED
    document = read_json(tmp_path / "out" / "compatibility.json")
    assert document["versions"][0]["packages"] == {
        "ag-ui-protocol": "0.1.22",
        "pydantic-ai-slim": "2.68.0",
        "pydantic-graph": "2.68.0",
    }
    assert document["versions"][0]["package_changes"] is None  # the baseline
    (regression,) = document["regressions"]
    assert regression["package_changes"] == [
        {"name": "pydantic-ai-slim", "before": "2.68.0", "after": "2.78.0"},
        {"name": "pydantic-graph", "before": "2.68.0", "after": "2.78.0"},
        {"name": "ag-ui-protocol", "before": "0.1.22", "after": "1.0.0"},
        {"name": "uuid7", "before": None, "after": "0.1"},
    ]
    sentence = "ag-ui-protocol 0.1.22 → 1.0.0, uuid7 0.1 (new) also changed: the regression may be theirs."
    assert regression["also_changed"] == sentence
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert (
        "- `ui` on 2.78.0: failed\n  - packages that differ from 2.68.0: pydantic-ai-slim 2.68.0 → 2.78.0," in markdown
    )
    assert f"  - **{sentence}**" in markdown
    assert "- **2.78.0**: 4 packages; differ from 2.68.0: pydantic-ai-slim 2.68.0 → 2.78.0" in markdown


def test_only_pydantic_ai_changing_is_said_plainly_too(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.68.0"), {"a": "passed"}, packages={"pydantic-ai-slim": "2.68.0"})
    fake_environment(spec_for(tmp_path, "2.78.0"), {"a": "failed"}, packages={"pydantic-ai-slim": "2.78.0"})
    run_matrix(options(tmp_path, "2.68.0", "2.78.0"), progress=lambda line: None)
    (regression,) = read_json(tmp_path / "out" / "compatibility.json")["regressions"]
    assert regression["also_changed"] is None
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert "  - packages that differ from 2.68.0: pydantic-ai-slim 2.68.0 → 2.78.0\n" in markdown
    assert "may be theirs" not in markdown


# --- an environment that cannot be built ----------------------------------------------------------------------


def test_a_version_that_cannot_be_built_leaves_the_page_for_the_others_and_exits_3(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.68.0"), {"a": "passed"})
    fake_environment(spec_for(tmp_path, "2.78.0"), {"a": "passed"})
    run_matrix(options(tmp_path, "2.68.0", "2.78.0", "9.9.9"), progress=lambda line: None)
    out = tmp_path / "out"
    assert (out / "2.78.0" / "report.json").is_file()
    # The second matrix cannot build 2.78.0 any more (the test's guard uv refuses every build): its folder still
    # holds the first matrix's run, which the page must not show as this one's.
    shutil.rmtree(spec_for(tmp_path, "2.78.0").location)
    lines: list[str] = []

    report = run_matrix(options(tmp_path, "2.68.0", "2.78.0", "9.9.9"), progress=lines.append)

    assert report.exit_code == 3
    assert report.regressions == ()  # nothing ran there: not a regression, an environment that is missing
    assert [output.version for output in report.not_built] == ["2.78.0", "9.9.9"]
    assert "[2/3] pydantic-ai 2.78.0: environment not built: cannot build the environment " in "\n".join(lines)
    assert lines[:2] == ["[1/3] pydantic-ai 2.68.0: environment ready (reused)", "[1/3] pydantic-ai 2.68.0: 1 passed"]
    document = read_json(out / "compatibility.json")
    failed = document["versions"][1]
    assert failed["build_error"].startswith("pydantic-ai 2.78.0: cannot build the environment ")
    assert failed["build_error"].endswith("tests must not build real environments")
    assert "tests must not build real environments" in failed["build_log_tail"]
    assert (out / failed["build_log"]).read_text(encoding="utf-8").startswith("$ ")
    markdown = (out / "compatibility.md").read_text(encoding="utf-8")
    assert "- **Not built:** the environment of 2.78.0, 9.9.9 could not be built (exit 3)" in markdown
    assert "## Environments that could not be built" in markdown
    assert "| 9.9.9 | 0 | 0 | 0 | 0 | environment not built |" in markdown
    blocks = data_blocks((out / "compatibility.html").read_text(encoding="utf-8"))
    index = blocks["ar-index"]
    assert isinstance(index, dict)
    assert "2.78.0" not in index["links"]  # the stale run's report.html is not linked
    scenario = blocks["ar-s0"]
    assert isinstance(scenario, dict)
    assert scenario["versions"]["2.78.0"] is None  # nor its statuses shown


def test_a_baseline_that_cannot_be_built_still_gets_its_page_and_compares_nothing(tmp_path: Path) -> None:
    fake_environment(spec_for(tmp_path, "2.68.0"), {"a": "passed"})
    fake_environment(spec_for(tmp_path, "2.78.0"), {"a": "failed"})
    run_matrix(options(tmp_path, "2.68.0", "2.78.0"), progress=lambda line: None)
    # The baseline's folder now holds a stale run, its environment cannot be built any more, and 2.78.0's history
    # differs from that stale one.
    shutil.rmtree(spec_for(tmp_path, "2.68.0").location)
    fake_environment(spec_for(tmp_path, "2.78.0"), {"a": "failed"}, history={"messages": [], "note": "changed"})

    report = run_matrix(options(tmp_path, "2.68.0", "2.78.0"), progress=lambda line: None)

    assert report.exit_code == 3
    assert report.regressions == ()
    assert [item.canonical_differs for item in report.scenarios] == [()]  # not compared with the stale run
    assert report.scenarios[0].statuses == {"2.68.0": "missing", "2.78.0": "failed"}
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert "- **Not built:** the environment of 2.68.0 could not be built (exit 3)" in markdown


# --- fields the canonical form does not carry -------------------------------------------------------------------


def inventory(version: str, fields: list[tuple[str, str, str, str, str]], unknown: list[tuple[str, str, str]]) -> str:
    """The JSON `agentrig.runtime.models.message_fields.inventory_json()` prints: (owner, class, field, how, reason)
    per field on agentrig's lists, (owner, class, field) per field on neither."""
    return json.dumps(
        {
            "pydantic_ai": version,
            "fields": [
                {"owner": o, "class": c, "field": f, "how": h, "carried": h in ("carried", "verbatim"), "reason": r}
                for o, c, f, h, r in fields
            ],
            "unknown": [{"owner": o, "class": c, "field": f} for o, c, f in unknown],
        }
    )


def test_new_fields_not_carried_and_unknown_fields_are_named_per_version(tmp_path: Path) -> None:
    base_fields = [
        ("response", "ModelResponse", "timestamp", "per-run", "when the response was received"),
        ("text", "TextPart", "content", "carried", ""),
    ]
    fake_environment(spec_for(tmp_path, "2.68.0"), {"a": "passed"}, inventory=inventory("2.68.0", base_fields, []))
    fake_environment(
        spec_for(tmp_path, "2.78.0"),
        {"a": "passed"},
        inventory=inventory(
            "2.78.0",
            [
                *base_fields,
                ("response", "ModelResponse", "duration", "per-run", "how long the request took"),
                ("tool-call", "ToolCallPart", "tool_kind", "carried", ""),
            ],
            [("tool-call", "ToolCallPart", "ui_visibility")],
        ),
    )
    fake_environment(spec_for(tmp_path, "2.80.0"), {"a": "passed"})  # an agentrig without the inventory

    run_matrix(options(tmp_path, "2.68.0", "2.78.0", "2.80.0"), progress=lambda line: None)

    versions = read_json(tmp_path / "out" / "compatibility.json")["versions"]
    assert versions[0]["fields"]["new_not_carried"] == []  # the baseline's own are not new
    assert versions[1]["fields"] == {
        "error": None,
        "pydantic_ai": "2.78.0",
        "new_not_carried": [
            {
                "owner": "response",
                "class": "ModelResponse",
                "field": "duration",
                "carried": False,
                "how": "per-run",
                "reason": "how long the request took",
            }
        ],
        "unknown": [{"owner": "tool-call", "class": "ToolCallPart", "field": "ui_visibility"}],
    }
    assert versions[2]["fields"]["error"].startswith("exit 1: ModuleNotFoundError: No module named 'agentrig.runtime")
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert (
        "- **2.78.0**: new fields not carried (absent on 2.68.0): "
        "`ModelResponse.duration (per-run: how long the request took)`; "
        "fields on neither of agentrig's lists: `ToolCallPart.ui_visibility`." in markdown
    )
    assert "- **2.80.0**: no field inventory (exit 1: ModuleNotFoundError" in markdown


# --- warnings new on a version ----------------------------------------------------------------------------------


def write_run(directory: Path, version: str, entries: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True)
    report = {"format": "agentrig.report/1", "pydantic_ai_version": version, "scenarios": entries}
    (directory / "report.json").write_text(json.dumps(report), encoding="utf-8")


def test_a_warning_new_on_a_version_is_named_beside_it(tmp_path: Path) -> None:
    old = {"category": "DeprecationWarning", "message": "old API", "module": "pydantic_ai.agent", "count": 1}
    new = {"category": "DeprecatedModelWarning", "message": "gpt-4o is deprecated", "module": "pydantic_ai.providers"}
    write_run(
        tmp_path / "2.68.0",
        "2.68.0",
        [{"name": "a", "status": "passed", "warnings": [old]}, {"name": "b", "status": "passed"}],
    )
    write_run(
        tmp_path / "2.78.0",
        "2.78.0",
        [
            {"name": "a", "status": "passed", "warnings": [old, {**new, "count": 2}]},
            {"name": "b", "status": "passed", "warnings": [new]},
        ],
    )
    outputs = [load_version_output(v, tmp_path / v, exit_code=0) for v in ("2.68.0", "2.78.0")]
    report = build_report(outputs, python_version="3.11", paths=["s"], out=tmp_path / "r")

    by_name = {item.name: item for item in report.scenarios}
    assert [w.category for w in by_name["a"].new_warnings["2.78.0"]] == ["DeprecatedModelWarning"]  # not the old one
    assert [w.count for w in by_name["b"].new_warnings["2.78.0"]] == [1]  # absent on the baseline's run: none there
    document = read_json(tmp_path / "r" / "compatibility.json")
    assert document["versions"][1]["new_warnings"] == [{**new, "count": 2, "scenarios": ["a", "b"]}]
    assert document["scenarios"][0]["new_warnings"] == {"2.78.0": [{**new, "count": 2}]}
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert (
        "- **2.78.0**: `DeprecatedModelWarning` (pydantic_ai.providers): gpt-4o is deprecated in `a`, `b`" in markdown
    )


# --- raw dumps: per-run values masked, changed values named -------------------------------------------------------


def test_per_run_values_are_masked_by_name_by_key_pattern_and_by_shape() -> None:
    found: set[str] = set()
    masked = mask(
        {
            "timestamp": "2026-12-07T04:41:40.222998Z",
            "duration": "PT0.000462S",
            "request_timestamp": "2026-12-07T04:41:40.226087Z",
            "finished_at": 12.5,  # a key named like a clock: masked whatever its value
            "some_new_clock": "2026-12-07T04:41:40Z",  # a value shaped like one: masked under any key
            "trace": "01a24ece-b869-74ea-80ec-9db040831c9e",
            "tool_call_id": "pyd_ai_" + "ab" * 16,
            "tool_kind": None,  # null stays null: a key that gains a value is a change
            "format": "text",
            "content": "2026-12-07 is a date, not a clock reading",
        },
        found,
    )
    assert masked == {
        "timestamp": "<per-run>",
        "duration": "<per-run>",
        "request_timestamp": "<per-run>",
        "finished_at": "<per-run>",
        "some_new_clock": "<per-run>",
        "trace": "<per-run>",
        "tool_call_id": "<per-run>",
        "tool_kind": None,
        "format": "text",
        "content": "2026-12-07 is a date, not a clock reading",
    }
    assert found == {
        "timestamp",
        "duration",
        "request_timestamp",
        "finished_at",
        "some_new_clock",
        "trace",
        "tool_call_id",
    }


def test_a_changed_value_is_named_with_its_key_not_only_new_keys() -> None:
    def dump(kind: object, extra: dict[str, Any] | None = None) -> str:
        call = {"part_kind": "tool-call", "tool_name": "final_result", "tool_kind": kind, **(extra or {})}
        text = {"part_kind": "text", "content": "done"}
        return json.dumps([{"kind": "response", "parts": [call, text]}, {"kind": "request", "parts": [text]}])

    change = compare_dumps(dump(None), dump("output", {"ui_visibility": None}))
    assert change.new_keys == ("ui_visibility",)
    assert [item.text() for item in change.changed_values] == ['tool_kind: null → "output"']
    assert change.summary() == 'new keys `ui_visibility`; changed values `tool_kind: null → "output"`'
    # A message inserted before the changed one does not make every later value look changed.
    inserted = json.loads(dump("output"))
    inserted.insert(0, {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]})
    shifted = compare_dumps(dump(None), json.dumps(inserted))
    assert [item.text() for item in shifted.changed_values] == ['tool_kind: null → "output"']


def test_the_page_lists_changed_values_by_count(tmp_path: Path) -> None:
    for version, kind in (("2.68.0", None), ("2.78.0", "output")):
        run = tmp_path / version
        write_run(run, version, [{"name": "s", "status": "passed"}])
        (run / "scenarios" / "s").mkdir(parents=True)
        dump = [
            {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "final_result", "tool_kind": kind}]}
        ]
        (run / "scenarios" / "s" / "pydantic_ai_dump.json").write_text(json.dumps(dump), encoding="utf-8")
    outputs = [load_version_output(v, tmp_path / v, exit_code=0) for v in ("2.68.0", "2.78.0")]
    build_report(outputs, python_version="3.11", paths=["s"], out=tmp_path / "r")
    markdown = (tmp_path / "r" / "compatibility.md").read_text(encoding="utf-8")
    assert '  - changed values: `tool_kind: null → "output"` (1)' in markdown
    change = read_json(tmp_path / "r" / "compatibility.json")["scenarios"][0]["raw_dump_changes"]["2.78.0"]
    assert change["changed_values"] == [{"key": "tool_kind", "from": "null", "to": '"output"', "count": 1}]


def test_two_runs_of_one_version_give_no_difference(tmp_path: Path) -> None:
    # The whole shipped suite, run twice on the installed pydantic-ai as a matrix runs each version (its own
    # `agentrig run` process): every canonical history and every raw dump compares equal. On 2.78 each response
    # carries `duration` and `request_timestamp`; masking only the earlier list of keys, 61 of 62 raw dumps
    # differed here. The suite is copied first (with the example agents it imports), so both runs read the same.
    for folder in ("scenarios", "examples"):
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for label in ("first", "second"):
        completed = subprocess.run(
            [sys.executable, "-m", "agentrig", "run", "scenarios", "--out", label, "-q"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"},
        )
        # Whatever the suite's verdicts are today, the two runs must agree: a failed scenario compares too.
        assert completed.returncode in (0, 1), completed.stderr[-2000:]
    outputs = [load_version_output(label, tmp_path / label, exit_code=0) for label in ("first", "second")]
    assert outputs[0].statuses == outputs[1].statuses

    report = build_report(outputs, python_version="3.11", paths=["scenarios"], out=tmp_path / "r")

    assert len(report.scenarios) > 50
    assert [item.name for item in report.scenarios if item.raw_differs or item.canonical_differs] == []
    assert not (tmp_path / "r" / "diffs").exists()
    assert {"timestamp", "run_id"} <= set(report.masked_keys)
    installed = outputs[0].resolved_version or ""
    if tuple(int(part) for part in installed.split(".")[:2]) >= (2, 78):
        assert {"duration", "request_timestamp"} <= set(report.masked_keys)
