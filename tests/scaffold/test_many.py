"""`agentrig scaffold SOURCES... -o DIR`: files, folders and run folders at once; one scenario per conversation,
never one written over another, identical conversations once, a row per source, the exit code of the worst."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.sessions import new_session, save_session
from agentrig.runtime.history.wire import dumps_history
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.cli.cli_helpers import run_main
from tests.scaffold.conversations import shop_history, write_dump
from tests.scaffold.replay import failures


def _session(path: Path, question: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    messages = [Message.request(TextPart(content=question)), Message.response(TextPart(content=f"About {question}"))]
    save_session(new_session(working_directory="/work", messages=messages), path)
    return path


def _rows(out: str) -> dict[str, str]:
    """The table's rows by source path (the header and the count line left out)."""
    lines = out.splitlines()[1:-1]
    return {line.split()[0]: line.split(None, 1)[1] for line in lines}


def test_sources_with_the_same_file_name_get_their_own_scenarios_and_goldens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _session(tmp_path / "alice" / "chat" / "session.json", "tea")
    second = _session(tmp_path / "bob" / "chat" / "session.json", "coffee")
    out_dir = tmp_path / "scenarios"
    code, out, err = run_main(capsys, "scaffold", str(first), str(second), "-o", str(out_dir))
    assert (code, err) == (0, ""), out
    rows = _rows(out)
    assert rows[str(first)] == f"scaffolded {out_dir / 'chat.yaml'}"
    assert rows[str(second)] == f"scaffolded {out_dir / 'chat-2.yaml'}"
    assert out.splitlines()[-1] == "2 scaffolded, 0 duplicate(s), 0 refused"
    assert "tea" in (out_dir / "golden" / "chat.json").read_text(encoding="utf-8")
    assert "coffee" in (out_dir / "golden" / "chat-2.json").read_text(encoding="utf-8")
    assert run_main(capsys, "run", str(out_dir))[0] == 0


def test_a_folder_keeps_identical_conversations_once_and_refuses_by_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "sessions"
    write_dump(folder / "monday.json", shop_history())
    shutil.copy(folder / "monday.json", folder / "tuesday.json")
    write_dump(folder / "cut.json", shop_history()[1:])  # starts with a response: refused
    (folder / "notes.json").write_text("{not json", encoding="utf-8")
    out_dir = tmp_path / "scenarios"
    code, out, _ = run_main(capsys, "scaffold", str(folder), "-o", str(out_dir))
    assert code == 2  # the worst row: a source that cannot be replayed or read
    rows = _rows(out)
    assert rows[str(folder / "monday.json")] == f"scaffolded {out_dir / 'monday.yaml'}"
    assert rows[str(folder / "tuesday.json")] == "duplicate: the same conversation as monday"
    assert rows[str(folder / "cut.json")].startswith("refused: ")
    assert "messages[0]: the history starts with a model response" in rows[str(folder / "cut.json")]
    assert "truncated JSON" in rows[str(folder / "notes.json")] or "invalid JSON" in rows[str(folder / "notes.json")]
    assert sorted(p.name for p in out_dir.glob("*.yaml")) == ["monday.yaml"]


def test_a_run_folder_gives_one_scenario_per_scenario_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "- {name: greet, turns: [{user: Hi, model: [{text: Hello.}]}]}\n"
        "- {name: part, turns: [{user: Bye, model: [{text: Goodbye.}]}]}\n",
        encoding="utf-8",
    )
    results = run_suite(RunOptions(paths=(suite,), out_dir=tmp_path / "out")).results
    assert all(r.status == "passed" for r in results), [failures(r) for r in results]
    out_dir = tmp_path / "scenarios"
    code, out, _ = run_main(capsys, "scaffold", str(tmp_path / "out"), "-o", str(out_dir))
    assert code == 0, out
    runs = tmp_path / "out" / "scenarios"
    assert _rows(out) == {  # the dump (it records usage and instructions), named after its folder; no report.json
        str(runs / "greet" / "pydantic_ai_dump.json"): f"scaffolded {out_dir / 'greet.yaml'}",
        str(runs / "part" / "pydantic_ai_dump.json"): f"scaffolded {out_dir / 'part.yaml'}",
    }


def test_again_without_force_refuses_and_with_force_replaces_only_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _session(tmp_path / "in" / "talk.json", "tea")
    out_dir = tmp_path / "scenarios"
    assert run_main(capsys, "scaffold", str(source), "-o", str(out_dir))[0] == 0
    code, out, _ = run_main(capsys, "scaffold", str(source), "-o", str(out_dir))
    assert code == 2
    assert "the file exists; pass --force to replace a file scaffold wrote" in out
    assert run_main(capsys, "scaffold", str(source), "-o", str(out_dir), "--force")[0] == 0

    (out_dir / "golden" / "talk.json").write_text("{}\n", encoding="utf-8")  # the user's own now
    code, out, _ = run_main(capsys, "scaffold", str(source), "-o", str(out_dir), "--force")
    assert code == 2
    assert "not written by agentrig scaffold, or changed since" in out
    assert (out_dir / "golden" / "talk.json").read_text(encoding="utf-8") == "{}\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_among_the_sources_is_refused_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    source = _session(tmp_path / "talk.json", "tea")
    code, out, _ = run_main(capsys, "scaffold", str(fifo), str(source), "-o", str(tmp_path / "scenarios"))
    assert code == 2
    assert _rows(out)[str(fifo)] == f"refused: {fifo}: not a regular file"


def test_several_sources_need_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _session(tmp_path / "a.json", "tea")
    second = _session(tmp_path / "b.json", "coffee")
    target = tmp_path / "x.yaml"
    target.write_text("mine\n", encoding="utf-8")
    code, _, err = run_main(capsys, "scaffold", str(first), str(second), "-o", str(target))
    assert code == 2
    assert "not a folder" in err
    assert target.read_text(encoding="utf-8") == "mine\n"
    code, _, err = run_main(capsys, "scaffold", str(first), str(second), "-o", str(tmp_path / "new.yaml"))
    assert code == 2
    assert "names a scenario file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "x.yaml"]


def test_masked_tool_results_mask_the_hosts_results_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The run paused on a deferred call; the host's answer came in the next run (a new run id in the dump).
    history = [
        Message.request(TextPart(content="Look up order 7"), run_id="r1"),
        Message.response(ToolCallPart(tool_call_id="d1", tool_name="orders", args={"id": 7}), run_id="r1"),
        Message.request(ToolReturnPart(tool_call_id="d1", tool_name="orders", content="customer secret"), run_id="r2"),
        Message.response(TextPart(content="Found it."), run_id="r2"),
    ]
    source = tmp_path / "deferred.json"
    source.write_bytes(dumps_history(history))
    target = tmp_path / "suite" / "replay.yaml"
    code, out, err = run_main(capsys, "scaffold", str(source), "-o", str(target), "--tool-results", "mask")
    assert code == 0, err
    text = target.read_text(encoding="utf-8")
    assert "customer secret" not in text
    assert "deferred_results:\n    d1: '[MASKED]'" in text
    assert "defer: true" in text
    assert run_main(capsys, "run", str(target))[0] == 0, out
