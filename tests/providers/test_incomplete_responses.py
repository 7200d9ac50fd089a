"""A response the provider ended early (issue 41): a stream whose body closes cleanly before its last event
(Anthropic: no `message_delta` / `message_stop`; OpenAI chat completions: no finish chunk, no `[DONE]`) fails the
turn with `incomplete_response` in `prompt`, `run`, the pytest plugin and recordings, is not retried, and keeps the
text that arrived as `[INTERRUPTED] ...`. 2.78 marks Anthropic's such a stream `incomplete` itself; the same tests
on 2.68 and 2.38 prove the detection from the stop reason that never came."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml  # noqa: F401  # pyright: ignore[reportUnusedImport]  # shared by pytester's inner sessions (tests/pytest_plugin/conftest.py)
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import agentrig.runtime.suite.single  # pyright: ignore[reportUnusedImport]
import agentrig.scenarios.loader  # noqa: F401  # pyright: ignore[reportUnusedImport]
from agentrig.runtime.history.per_run import message_json_without_per_run_values
from agentrig.runtime.history.sessions import load_session
from agentrig.runtime.models.providers import RetryingModel
from agentrig.runtime.models.retrying import IncompleteResponseError
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, ended_early, text

pytestmark = pytest.mark.providers
pytest_plugins = ["pytester"]

APIS = ("openai", "anthropic")
PIECES = ("Partial answer", " that never", " ends")
ARRIVED = "Partial answer that never"  # the first two pieces: the server ends the stream after them


def _model(server: LoopbackServer, api: str) -> list[str]:
    if api == "openai":
        return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    return ["--model", "anthropic:claude-loopback-test", "--base-url", server.anthropic_base_url]


def _cut(api: str) -> Reply:
    return ended_early(api, *PIECES, sent=2)


@pytest.mark.parametrize("api", APIS)
def test_prompt_fails_a_stream_the_provider_ended_early_and_says_the_text_is_partial(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([_cut(api)])
    session = tmp_path / "session.json"
    code, out, err = run_main(capsys, "prompt", "Tell me.", "--stream", "--session", str(session), *_model(server, api))
    assert code == 3
    assert out == f"{ARRIVED}\n"  # what arrived, as it arrived; the error line says it is not the answer
    (line,) = err.splitlines()
    assert line.startswith(f"agentrig: error: {api}: the response to request 1 from ")
    assert "ended early" in line
    assert "after 25 characters of text; the answer is incomplete" in line
    messages = load_session(session).messages
    assert [m.kind for m in messages] == ["request", "response"]
    assert messages[-1].text == f"[INTERRUPTED] {ARRIVED}"


@pytest.mark.parametrize("api", APIS)
def test_prompt_json_names_the_incomplete_response(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([_cut(api)])
    code, out, _ = run_main(capsys, "prompt", "Tell me.", "--stream", "--json", *_model(server, api))
    assert code == 3
    record = jsonio.loads(out)
    assert record["error"]["kind"] == "incomplete_response"
    assert record["output"] is None
    assert record["messages"][-1]["parts"][0]["content"] == f"[INTERRUPTED] {ARRIVED}"


@pytest.mark.parametrize("api", APIS)
def test_a_stream_that_ends_after_its_stop_reason_is_a_whole_answer(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # Anthropic's `message_stop` and OpenAI's usage chunk and `[DONE]` are missing, but the stop reason came
    # (`message_delta`, the finish chunk): the answer is whole (pydantic-ai 2.78 takes Anthropic's the same way).
    events_before_stop_reason = 2 + len(PIECES) + 1 if api == "anthropic" else 1 + len(PIECES)
    reply = Reply(text="".join(PIECES), text_deltas=PIECES, end_after_events=events_before_stop_reason + 1)
    server = loopback([reply])
    code, out, err = run_main(capsys, "prompt", "Tell me.", "--stream", *_model(server, api))
    assert (code, out, err) == (0, "Partial answer that never ends\n", "")


SCENARIO = """\
name: cut-real
turns:
  - user: Tell me.
    expect:
      output: {contains: Partial}
"""


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "cut_real.yaml"
    path.write_text(SCENARIO)
    return path


def _scenario_files(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """report.json's one entry, the history's messages without their per-run ids, and usage.json's total."""
    (entry,) = jsonio.read_json_file(out / "report.json")["scenarios"]
    folder = out / "scenarios" / "cut-real"
    messages = [
        message_json_without_per_run_values(m) for m in jsonio.read_json_file(folder / "history.json")["messages"]
    ]
    return entry, messages, jsonio.read_json_file(folder / "usage.json")["total"]


@pytest.mark.parametrize("api", APIS)
def test_run_errors_a_scenario_whose_stream_the_provider_ended_early_without_retrying_it(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback([_cut(api), text("Partial answer, then the rest.")])
    out = tmp_path / "out"
    command = ["run", str(_scenario(tmp_path)), "--stream", "--max-attempts", "3", "--out", str(out)]
    code, stdout, _ = run_main(capsys, *command, *_model(server, api))
    assert code == 3, stdout
    assert "ERROR cut-real" in stdout
    assert f"error incomplete_response (provider error): {api}: the response to request 1 from " in stdout
    assert len(server.requests) == 1  # not retried: its deltas were handed on already
    entry, messages, usage = _scenario_files(out)
    assert entry["status"] == "error"
    assert entry["error"]["kind"] == "incomplete_response"
    assert messages[-1]["parts"] == [{"part_kind": "text", "content": f"[INTERRUPTED] {ARRIVED}"}]
    assert usage["requests"] == 1
    junit = (out / "junit.xml").read_text()
    assert 'type="incomplete_response"' in junit
    assert "<error " in junit


@pytest.mark.parametrize("api", APIS)
def test_a_recording_of_a_cut_response_replays_cut_streamed_and_plain(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario, recordings = str(_scenario(tmp_path)), str(tmp_path / "recordings")
    server = loopback([_cut(api)])
    live = ["run", scenario, "--stream", "--record", recordings, "--out", str(tmp_path / "live"), *_model(server, api)]
    assert run_main(capsys, *live)[0] == 3
    (recording,) = (tmp_path / "recordings").iterdir()
    (exchange,) = jsonio.read_json_file(recording)["exchanges"]
    assert exchange["error"]["kind"] == "incomplete_response"
    assert exchange["error"]["partial"]["parts"] == [{"part_kind": "text", "content": ARRIVED}]

    recorded = _scenario_files(tmp_path / "live")
    for mode in ("streamed", "plain"):
        replay = ["run", scenario, "--replay", recordings, "--out", str(tmp_path / mode)]
        code, stdout, _ = run_main(capsys, *replay, *(["--stream"] if mode == "streamed" else []))
        assert code == 3, stdout
        entry, messages, usage = _scenario_files(tmp_path / mode)
        assert entry["error"] == recorded[0]["error"]
        assert messages == recorded[1]
        assert usage == recorded[2]
    assert len(server.requests) == 1  # the replays sent nothing


def test_the_pytest_plugin_fails_the_item_with_the_incomplete_response(
    pytester: pytest.Pytester, loopback: ServerFactory
) -> None:
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "cut_real.yaml").write_text(SCENARIO, encoding="utf-8")
    server = loopback([_cut("anthropic")])
    real = ["--agentrig-model", "anthropic:claude-loopback-test", "--agentrig-base-url", server.anthropic_base_url]

    result = pytester.runpytest_inprocess(*real, "--agentrig-stream", "--agentrig-out", "out")

    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "incomplete_response" in output, output
    assert "the answer is incomplete" in output, output
    (entry,) = jsonio.read_json_file(pytester.path / "out" / "report.json")["scenarios"]
    assert (entry["status"], entry["error"]["kind"]) == ("error", "incomplete_response")


def test_a_plain_request_answered_incomplete_fails_without_a_retry() -> None:
    # 2.78 marks a response `incomplete` that a plain (non-streamed) request gets, e.g. a Responses API answer still
    # `in_progress`; a FunctionModel stands in for the provider model under the provider layer.
    calls: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[TextPart(content="Half an ans")], state="incomplete")

    model = RetryingModel(FunctionModel(answer, model_name="half"))
    with pytest.raises(IncompleteResponseError) as raised:
        asyncio.run(Agent(model).run("Tell me."))  # not run_sync: it leaves its event loop open
    assert raised.value.kind == "incomplete_response"
    assert raised.value.partial_text == "Half an ans"
    assert "after 11 characters of text; the answer is incomplete" in raised.value.message
    assert calls == [1]
