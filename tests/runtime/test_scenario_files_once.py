"""Issue 45 item 2: a scenario's folder writes nothing twice, and report.json says where each of its files is.

The checks are report.json's (its entry's `checks`: no checks.json); session.json names the folder's history.json
instead of holding its messages again, unless its messages differ from it (then they stay inline); each entry's
`files` names the files its folder holds, relative to the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import HistoryFormatError, InputError, UsageError
from agentrig.runtime.history.canonical import Message, TextPart
from agentrig.runtime.history.run_records import ScenarioResult
from agentrig.runtime.history.sessions import load_history_file, load_session, new_session, save_session
from agentrig.runtime.runfolder.jsonio import dumps, read_json_file
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.outputs.reports import FILES_KEYS, merge_reports
from agentrig.runtime.suite.outputs.scenario_files import prepare_run_out_dir, write_folder, write_scenario_outputs
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.runtime.runner_fakes import FakeExecution, fake_execute
from tests.runtime.test_runner import write_scenario

RAN = {"events.jsonl", "history.json", "pydantic_ai_dump.json", "session.json", "usage.json"}


def _run(scenarios: Path, out: Path) -> dict[str, Any]:
    run_suite(RunOptions(paths=(scenarios,), out_dir=out), execute=fake_execute)
    return {entry["name"]: entry for entry in read_json_file(out / "report.json")["scenarios"]}


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    write_scenario(directory, "alpha")
    write_scenario(directory, "broken", text="CRASH")  # the engine raises: no history, no session
    return directory


def test_a_run_writes_no_checks_json_and_its_report_says_where_each_file_is(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    entries = _run(scenarios, out)
    alpha = out / "scenarios" / "alpha"
    assert {path.name for path in alpha.iterdir()} == RAN
    assert entries["alpha"]["files"] == {
        "history": "scenarios/alpha/history.json",
        "session": "scenarios/alpha/session.json",
        "usage": "scenarios/alpha/usage.json",
        "events": "scenarios/alpha/events.jsonl",
        "pydantic_ai_dump": "scenarios/alpha/pydantic_ai_dump.json",
    }
    assert entries["broken"]["files"] == {
        "usage": "scenarios/broken/usage.json",
        "events": "scenarios/broken/events.jsonl",
    }
    for entry in entries.values():
        assert set(entry["files"]) <= FILES_KEYS
        folder = out / entry["output_dir"]
        assert {path.name for path in folder.iterdir()} == {Path(name).name for name in entry["files"].values()}
    assert entries["alpha"]["checks"][0]["name"] == "turn 1: output.equals"  # the checks' one home


def test_session_json_names_its_history_and_loads_to_the_same_messages(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(scenarios, out)
    alpha = out / "scenarios" / "alpha"
    stored = read_json_file(alpha / "session.json")
    assert "messages" not in stored
    assert stored["history"] == "history.json"
    assert list(stored).index("history") == list(stored).index("thoughts") + 1  # where `messages` would be
    session = load_session(alpha / "session.json")
    assert session.messages
    assert list(session.messages) == load_history_file(alpha / "history.json")
    assert "history" not in session.extras
    # Saved again it is whole: it no longer depends on the history file beside it.
    copy = save_session(session, tmp_path / "copy.json")
    saved = read_json_file(tmp_path / "copy.json")
    assert "history" not in saved
    assert len(saved["messages"]) == len(copy.messages)


def test_a_session_whose_messages_differ_from_the_history_keeps_them(tmp_path: Path) -> None:
    history = (Message.request(TextPart(content="hi")), Message.response(TextPart(content="hello")))
    compacted = (Message.request(TextPart(content="summary of hi")), history[1])
    prepare_run_out_dir(tmp_path)
    for name, session_messages in (("same", history), ("compacted", compacted)):
        result = ScenarioResult(name=name, path="x.yaml", status="passed", history=history)
        execution = FakeExecution(
            turns=(), session=new_session(working_directory="/w", messages=session_messages), pydantic_ai_dump=b"[]"
        )
        write_scenario_outputs(tmp_path, result, execution=execution)
    same = read_json_file(tmp_path / "scenarios" / "same" / "session.json")
    kept = read_json_file(tmp_path / "scenarios" / "compacted" / "session.json")
    assert "messages" not in same
    assert same["history"] == "history.json"
    assert "history" not in kept
    assert [m["parts"][0]["content"] for m in kept["messages"]] == ["summary of hi", "hello"]
    assert load_session(tmp_path / "scenarios" / "compacted" / "session.json").messages == compacted
    assert load_session(tmp_path / "scenarios" / "same" / "session.json").messages == history


def _by_reference(folder: Path, value: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "history.json").write_text('{"format": "agentrig.history/1", "messages": []}', encoding="utf-8")
    path = folder / "session.json"
    path.write_text(json.dumps({"version": 1, "session_id": "s", "history": value}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "value", ["../history.json", "/etc/passwd", "sub/history.json", "sub\\history.json", "..", ".", "", 3, None]
)
def test_a_history_that_is_not_a_file_beside_the_session_is_refused(tmp_path: Path, value: object) -> None:
    path = _by_reference(tmp_path / "run", value)
    with pytest.raises(HistoryFormatError) as raised:
        load_session(path)
    message = raised.value.message
    assert message.startswith(f"{path}: history: ")
    assert "\n" not in message
    assert "a file name in the session's folder" in message


def test_a_missing_or_invalid_history_file_names_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _by_reference(tmp_path / "run", "history.json")
    history = tmp_path / "run" / "history.json"
    for content, reason in ((None, "no such file"), ("{not json", "invalid JSON"), ('{"messages": {}}', "expected")):
        if content is None:
            history.unlink(missing_ok=True)
        else:
            history.write_text(content, encoding="utf-8")
        with pytest.raises(HistoryFormatError) as raised:
            load_session(path)
        message = raised.value.message
        assert message.startswith(f"{path}: history: {history}: ")
        assert "\n" not in message
        assert reason in message
        if content is None:  # what keeps a copied session whole is said
            assert message.endswith("beside it: copy the two together)")
        code, _, err = run_main(capsys, "check", str(path))
        assert code == 2
        assert err.count("\n") == 1
        assert str(history) in err
        assert str(path) in err


def test_an_earlier_runs_checks_json_goes_and_a_users_is_refused(scenarios: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(scenarios, out)
    alpha = out / "scenarios" / "alpha"
    # What an agentrig before this one wrote: its checks.json, recorded in the manifest as agentrig records its files.
    earlier = [(path.name, path.read_bytes()) for path in sorted(alpha.iterdir())]
    write_folder(out, "scenarios/alpha", [*earlier, ("checks.json", b"[]\n")])
    assert (alpha / "checks.json").is_file()
    _run(scenarios, out)
    assert {path.name for path in alpha.iterdir()} == RAN
    (alpha / "checks.json").write_text("[]\n", encoding="utf-8")  # a user's, in the manifest nowhere
    with pytest.raises(UsageError, match=r"scenarios/alpha/checks\.json: agentrig did not write it"):
        _run(scenarios, out)
    assert (alpha / "checks.json").read_text(encoding="utf-8") == "[]\n"


def test_a_merge_keeps_each_entrys_files_and_refuses_files_outside_its_folder(scenarios: Path, tmp_path: Path) -> None:
    shards = [tmp_path / f"shard-{index}" for index in (1, 2)]
    for index, directory in enumerate(shards, start=1):
        run_suite(RunOptions(paths=(scenarios,), out_dir=directory, shard=(index, 2)), execute=fake_execute)
    merged = merge_reports(shards, tmp_path / "merged")
    for entry in merged["scenarios"]:
        assert entry["files"]
        for relative in entry["files"].values():
            assert (tmp_path / "merged" / relative).is_file()
    report = read_json_file(shards[0] / "report.json")
    report["scenarios"][0]["files"]["history"] = "../../outside.json"
    (shards[0] / "report.json").write_bytes(dumps(report))
    with pytest.raises(InputError, match=r"scenarios\[0\]: files: expected an object naming files in scenarios/"):
        merge_reports(shards, tmp_path / "merged-2")
