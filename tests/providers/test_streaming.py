"""Real providers streamed (loopback SSE for OpenAI chat completions and Anthropic messages): `prompt --stream`
prints as text arrives, `run --model --stream` streams, a stream cut off mid-response is a clean error that
keeps the partial text as `[INTERRUPTED] <partial>`."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from agentrig.runtime.history.events import read_events
from agentrig.runtime.history.per_run import message_json_without_per_run_values, without_per_run_values
from agentrig.runtime.history.sessions import load_session
from agentrig.runtime.history.wire import loads_history
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, ToolCallReply, text, tool_calls

pytestmark = pytest.mark.providers

APIS = ("openai", "anthropic")


def _model(server: LoopbackServer, api: str) -> list[str]:
    if api == "openai":
        return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    return ["--model", "anthropic:claude-loopback-test", "--base-url", server.anthropic_base_url]


@pytest.mark.parametrize("api", APIS)
def test_prompt_stream_prints_the_answer_as_a_plain_prompt_does(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("The capital is Paris.")])
    code, out, err = run_main(capsys, "prompt", "Capital of France?", "--stream", *_model(server, api))
    assert (code, out, err) == (0, "The capital is Paris.\n", "")
    assert server.requests[0].body["stream"] is True


@pytest.mark.parametrize("api", APIS)
def test_prompt_stream_writes_each_delta_when_it_arrives(
    api: str, loopback: ServerFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    writes: list[str] = []
    real_write = sys.stdout.write

    def recording_write(piece: str) -> int:
        writes.append(piece)
        return real_write(piece)

    monkeypatch.setattr(sys.stdout, "write", recording_write)
    server = loopback([text("Sunny and warm today.")])
    code, _, _ = run_main(capsys, "prompt", "Weather?", "--stream", *_model(server, api))
    assert code == 0
    assert "".join(writes) == "Sunny and warm today.\n"
    assert writes[-1] == "\n"  # the text came before, in the deltas the provider sent
    assert len(writes) >= 2


def test_prompt_stream_json_record_is_unchanged(loopback: ServerFactory, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback(
        [text("Paris.", input_tokens=21, output_tokens=2), text("Paris.", input_tokens=21, output_tokens=2)]
    )
    _, plain, _ = run_main(capsys, "prompt", "Capital?", "--json", *_model(server, "openai"))
    _, streamed, _ = run_main(capsys, "prompt", "Capital?", "--json", "--stream", *_model(server, "openai"))
    plain_record, streamed_record = jsonio.loads(plain), jsonio.loads(streamed)
    for record in (plain_record, streamed_record):
        record.pop("duration_s")
        record["messages"] = [message_json_without_per_run_values(message) for message in record["messages"]]
    assert streamed_record == plain_record
    assert streamed_record["usage"]["input_tokens"] == 21


@pytest.mark.parametrize("api", APIS)
def test_a_stream_cut_off_mid_response_is_a_clean_error_and_keeps_the_partial_text(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # OpenAI: role chunk, then the first half of the text; Anthropic: message_start, block start, the text.
    cut = Reply(text="Partial answer that never ends", cut_after_events=2 if api == "openai" else 3)
    server = loopback([cut])
    session = tmp_path / "session.json"
    code, out, err = run_main(capsys, "prompt", "Tell me.", "--stream", "--session", str(session), *_model(server, api))
    assert code == 3
    assert out.startswith("Partial")
    assert out.endswith("\n")
    assert len(err.strip().splitlines()) == 1
    messages = load_session(session).messages
    assert [m.kind for m in messages] == ["request", "response"]  # the broken-off response is not kept twice
    last = messages[-1]
    assert last.text.startswith("[INTERRUPTED] Partial")
    assert last.text.removeprefix("[INTERRUPTED] ") == out.strip()


SCENARIO = """
name: streamed-real
tools:
  lookup:
    parameters: {type: object, properties: {key: {type: string}}}
    results:
      - return: found
turns:
  - user: Look it up.
    expect:
      output: {equals: Found it.}
"""


@pytest.mark.parametrize("api", APIS)
def test_run_model_stream_streams_and_writes_deltas(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "streamed_real.yaml"
    scenario.write_text(SCENARIO)
    server = loopback([tool_calls(ToolCallReply(id="call_1", name="lookup", args={"key": "k"})), text("Found it.")])
    out_dir = tmp_path / "out"
    code, out, _ = run_main(capsys, "run", str(scenario), "--stream", "--out", str(out_dir), *_model(server, api))
    assert code == 0, out
    assert all(request.body["stream"] is True for request in server.requests)
    events = read_events(out_dir / "scenarios" / "streamed-real" / "events.jsonl")
    text_deltas = [e.get("delta") for e in events if e.type == "message_update" and e.get("part_kind") == "text"]
    assert "".join(text_deltas) == "Found it."
    starts = [e for e in events if e.type == "tool_execution_start"]
    assert [(e.get("tool_call_id"), e.get("args")) for e in starts] == [("call_1", {"key": "k"})]
    ends = [e for e in events if e.type == "message_end"]
    assert ends[-1].get("usage")["input_tokens"] == 12


def test_a_streamed_recording_replays_streamed_offline(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "streamed_real.yaml"
    scenario.write_text(SCENARIO)
    server = loopback(
        [tool_calls(ToolCallReply(id="call_1", name="lookup", args={"key": "k"})), text("Found it.", output_tokens=7)]
    )
    recordings = tmp_path / "recordings"
    code, out, _ = run_main(
        capsys, "run", str(scenario), "--stream", "--record", str(recordings), "--out", str(tmp_path / "rec"),
        *_model(server, "openai"),
    )  # fmt: skip
    assert code == 0, out
    code, out, _ = run_main(
        capsys, "run", str(scenario), "--stream", "--replay", str(recordings), "--out", str(tmp_path / "rep")
    )
    assert code == 0, out
    recorded, replayed = (
        without_per_run_values(
            loads_history((tmp_path / run / "scenarios" / "streamed-real" / "history.json").read_bytes())
        )
        for run in ("rec", "rep")
    )
    assert replayed == recorded
    recorded_usage = jsonio.loads((tmp_path / "rec" / "scenarios" / "streamed-real" / "usage.json").read_bytes())
    replayed_usage = jsonio.loads((tmp_path / "rep" / "scenarios" / "streamed-real" / "usage.json").read_bytes())
    # The recorded usage, not FunctionModel's estimate of the stream; the replay sent nothing on the wire.
    assert recorded_usage.pop("attempts")["attempts"] == 2
    assert replayed_usage == recorded_usage
    assert replayed_usage["total"]["output_tokens"] > 7
    events = read_events(tmp_path / "rep" / "scenarios" / "streamed-real" / "events.jsonl")
    assert any(e.type == "message_update" for e in events)


@pytest.mark.parametrize("api", APIS)
def test_a_timeout_mid_stream_stores_one_interrupted_response_with_the_partial_text(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The stream sends the first text, then stalls until the turn's timeout cancels the run.
    release = threading.Event()
    stalled = Reply(text="Partial answer that stalls", stall_after_events=2 if api == "openai" else 3, hold=release)
    server = loopback([stalled])
    session = tmp_path / "session.json"
    try:
        code, out, _ = run_main(
            capsys, "prompt", "Tell me.", "--stream", "--timeout", "1", "--session", str(session), *_model(server, api)
        )
    finally:
        release.set()  # the server's handler thread stops waiting
    assert code == 3
    assert out.startswith("Partial")
    messages = load_session(session).messages
    assert [m.kind for m in messages] == ["request", "response"]  # one response: the [INTERRUPTED] one
    assert messages[-1].text == f"[INTERRUPTED] {out.strip()}"
