"""report.html and compatibility.html as files: what they hold, that they stand alone, and who writes them.

(What they look like and do in a browser: test_report_browser.py.)
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.history.redaction import refresh_secrets
from agentrig.runtime.matrix.compare import load_version_output
from agentrig.runtime.matrix.report import build_report
from agentrig.runtime.reports.html import embed_json
from agentrig.runtime.reports.render import write_run_html
from agentrig.runtime.reports.scenario_data import scenario_payload
from tests.reports.runs import HOSTILE, Runs, data_blocks, decompressed, make_runs, run_cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return make_runs(tmp_path_factory.mktemp("runs"))


def _page(path: Path) -> str:
    """The page as its script reads it: the compressed scenarios written out (a string kept out of the page must
    be out of what they hold, not only out of their compressed bytes)."""
    return decompressed(path.read_text(encoding="utf-8"))


def _index(page: str) -> dict[str, Any]:
    index = data_blocks(page)["ar-index"]
    assert isinstance(index, dict)
    return index


def _scenario(page: str, name: str) -> dict[str, Any]:
    blocks = data_blocks(page)
    row = next(row for row in _index(page)["rows"] if row["name"] == name)
    block = blocks[f"ar-s{row['i']}"]
    assert isinstance(block, dict)
    return block


VOID = {"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "wbr", "source"}


class _Balance(HTMLParser):
    """Tags opened and closed in order (the page's own markup; scripts hold data, never parsed as tags)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.doctype = False

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl.lower() == "doctype html"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()


def test_a_run_writes_report_html_with_every_scenario_failures_first_in_the_data(runs: Runs) -> None:
    page = _page(runs.candidate / "report.html")
    index = _index(page)
    assert index["kind"] == "run"
    assert index["engine"] == "pydantic-ai"
    assert {row["name"]: row["status"] for row in index["rows"]} == {
        "answering": "failed",
        "ahoy": "passed",
        "hostile-prompt": "passed",
    }
    assert index["head"]["summary"]["failed"] == 1
    assert index["totals"]["requests"] == 5
    failing = _scenario(page, "answering")
    failed = [check for check in failing["entry"]["checks"] if not check["passed"]]
    assert [check["name"] for check in failed] == ["turn 1: output.equals", "scenario: golden"]
    golden = failed[1]["detail"]
    assert golden.startswith("---")
    assert '+          "content": "Nothing is here."' in golden


def test_a_scenario_block_holds_the_conversation_usage_per_response_and_its_files(runs: Runs) -> None:
    data = _scenario(_page(runs.candidate / "report.html"), "answering")
    kinds = [[part["part_kind"] for part in message["parts"]] for message in data["messages"]]
    assert kinds == [["text"], ["thought", "tool-call"], ["retry-prompt"], ["tool-call"], ["tool-return"], ["text"]]
    responses = [message for message in data["messages"] if message["kind"] == "response"]
    assert [response["usage"]["input_tokens"] for response in responses] == [100, 130, 150]
    assert data["entry"]["turns"][0]["instructions"] == "You are terse."
    assert data["call_outcomes"] == {"tc_1": "retry", "tc_2": "success"}
    assert data["events"] is None  # not streamed: the timeline is left out (the history says it all)
    assert "scenarios/answering/history.json" in [file["path"] for file in data["files"]]
    assert data["problems"] == []


def test_a_streamed_scenario_carries_its_event_timeline(runs: Runs) -> None:
    data = _scenario(_page(runs.candidate / "report.html"), "hostile-prompt")
    assert data["events"] is not None
    assert "message_update" in {event["type"] for event in data["events"]}


def test_the_page_stands_alone_and_its_markup_is_balanced(runs: Runs) -> None:
    page = _page(runs.candidate / "report.html")
    assert "Content-Security-Policy" in page
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page), "a network URL in the page"
    assert "<link" not in page
    assert "@import" not in page
    assert "url(" not in page
    parser = _Balance()
    parser.feed(page)
    parser.close()
    assert parser.doctype
    assert parser.errors == []
    assert parser.stack == []


def test_no_string_can_close_its_script_block(runs: Runs) -> None:
    page = _page(runs.candidate / "report.html")
    assert HOSTILE not in page
    assert page.count("</script>") == page.count("<script")  # only the page's own blocks end
    assert _scenario(page, "hostile-prompt")["entry"]["turns"][0]["prompt"] == HOSTILE
    assert embed_json({"a": "</script>"}) == b'{"a":"\\u003c/script>"}'


def test_secrets_are_redacted_in_the_page(runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A folder written before the key was set (or edited by hand) still holds it: `agentrig report` redacts.
    secret = "sk-agentrig-html-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    refresh_secrets()
    run_dir = tmp_path / "run"
    shutil.copytree(runs.candidate, run_dir)
    for path in (run_dir / "report.json", run_dir / "scenarios" / "ahoy" / "history.json"):
        path.write_text(path.read_text(encoding="utf-8").replace("Hello.", f"key {secret}"), encoding="utf-8")
    write_run_html(run_dir, run_dir / "report.html")
    page = _page(run_dir / "report.html")
    assert secret not in page
    assert "[REDACTED]" in page


def test_no_html_writes_none_and_removes_an_earlier_page(runs: Runs, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("run", str(runs.scenarios / "ahoy.yaml"), "--out", str(out), "-q") == 0
    assert (out / "report.html").is_file()
    assert run_cli("run", str(runs.scenarios / "ahoy.yaml"), "--out", str(out), "-q", "--no-html") == 0
    assert not (out / "report.html").exists()
    assert (out / "report.json").is_file()


def test_report_compares_a_run_with_its_baseline(runs: Runs, tmp_path: Path) -> None:
    target = tmp_path / "pages" / "upgrade.html"
    assert run_cli("report", str(runs.candidate), "--baseline", str(runs.baseline), "-o", str(target)) == 0
    page = _page(target)
    rows = {row["name"]: row for row in _index(page)["rows"]}
    assert (rows["answering"]["baseline_status"], rows["answering"]["changed"]) == ("passed", True)
    assert (rows["ahoy"]["baseline_status"], rows["ahoy"]["changed"]) == ("passed", False)
    comparison = _scenario(page, "answering")["baseline"]
    assert '-          "content": "The directory is empty."' in comparison["diff"]
    assert '+          "content": "Nothing is here."' in comparison["diff"]
    assert _scenario(page, "ahoy")["baseline"]["diff"] == ""
    # The links point at the run's files from where the page was written.
    first = _scenario(page, "ahoy")["files"][0]
    assert first["path"].startswith("../../")
    assert first["href"] == first["path"]  # nothing to encode in these names
    assert (target.parent / first["path"]).is_file()


def test_report_of_a_folder_without_report_json_exits_2(tmp_path: Path) -> None:
    assert run_cli("report", str(tmp_path)) == 2
    assert run_cli("report", str(tmp_path / "missing")) == 2


def test_report_with_a_baseline_that_is_no_run_exits_2(runs: Runs, tmp_path: Path) -> None:
    assert run_cli("report", str(runs.candidate), "--baseline", str(tmp_path), "-o", str(tmp_path / "x.html")) == 2
    assert not (tmp_path / "x.html").exists()


def test_merge_writes_the_page_of_the_merged_run(runs: Runs, tmp_path: Path) -> None:
    for shard in (1, 2):
        code = run_cli("run", str(runs.scenarios), "--shard", f"{shard}/2", "--out", str(tmp_path / str(shard)), "-q")
        assert code in (0, 1)
    assert run_cli("merge", str(tmp_path / "1"), str(tmp_path / "2"), "--out", str(tmp_path / "all")) == 1
    page = _page(tmp_path / "all" / "report.html")
    assert sorted(row["name"] for row in _index(page)["rows"]) == ["ahoy", "answering", "hostile-prompt"]
    assert _scenario(page, "answering")["messages"], "the merged folders' histories are read"


def test_matrix_writes_compatibility_html_with_each_version_side_by_side(runs: Runs, tmp_path: Path) -> None:
    out = tmp_path / "matrix"
    for version, source in (("2.38.0", runs.baseline), ("2.68.0", runs.candidate)):
        shutil.copytree(source, out / version)
    outputs = [load_version_output(v, out / v, exit_code=0) for v in ("2.38.0", "2.68.0")]
    build_report(outputs, python_version="3.11", paths=["scenarios"], out=out)
    page = _page(out / "compatibility.html")
    index = _index(page)
    assert index["kind"] == "matrix"
    assert index["versions"] == ["2.38.0", "2.68.0"]
    assert set(index["links"]) == {"2.38.0", "2.68.0"}
    data = _scenario(page, "answering")
    assert data["versions"]["2.38.0"]["status"] == "passed"
    assert next(check["name"] for check in data["versions"]["2.68.0"]["checks"]) == "turn 1: output.equals"
    assert any('+          "content": "Nothing is here."' in diff["text"] for diff in data["diffs"])
    # `agentrig report` on the matrix folder writes the same page again.
    (out / "compatibility.html").unlink()
    assert run_cli("report", str(out)) == 0
    assert _index(_page(out / "compatibility.html"))["rows"] == index["rows"]


def test_a_sub_agent_run_nests_under_the_call_whose_arguments_its_prompt_quotes(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios" / "delegate"
    (folder / "subagents").mkdir(parents=True)
    call = {"part_kind": "tool-call", "tool_call_id": "tc_9", "tool_name": "extract", "args": {"text": "flight AK456"}}
    history = {
        "format": "agentrig.history/1",
        "messages": [
            {"kind": "request", "parts": [{"part_kind": "text", "content": "Find my flight."}]},
            {"kind": "response", "parts": [call]},
        ],
    }
    sub = {
        "format": "agentrig.history/1",
        "messages": [{"kind": "request", "parts": [{"part_kind": "text", "content": "Extract from: flight AK456"}]}],
    }
    (folder / "history.json").write_bytes(embed_json(history))
    (folder / "subagents" / "app.extractor.run1.history.json").write_bytes(embed_json(sub))
    (folder / "subagents" / "app.other.run2.history.json").write_bytes(embed_json({**sub, "messages": []}))
    entry = {"id": "x::delegate", "name": "delegate", "output_dir": "scenarios/delegate"}
    runs_seen = scenario_payload(tmp_path, entry, "")["subagents"]
    assert [(run["spec"], run["run"], run["call_id"]) for run in runs_seen] == [
        ("app.extractor", 1, "tc_9"),
        ("app.other", 2, None),
    ]


def test_an_unreadable_file_is_named_on_the_page_not_fatal(runs: Runs, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(runs.candidate, run_dir)
    (run_dir / "scenarios" / "ahoy" / "history.json").write_text("{not json", encoding="utf-8")
    write_run_html(run_dir, run_dir / "report.html")
    problems = _scenario(_page(run_dir / "report.html"), "ahoy")["problems"]
    assert len(problems) == 1
    assert problems[0].startswith("history.json: ")
