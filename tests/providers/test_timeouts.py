"""A provider that does not answer is one error class, `provider_timeout` (exit 3), naming the request and the wait,
in `run`, `prompt` and the pytest plugin; messages name the flag the user passed. Every run here ends: the server's
hung requests are released when the test is over."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml  # noqa: F401  # pyright: ignore[reportUnusedImport]  # shared by pytester's inner sessions

import agentrig.runtime.suite.single  # pyright: ignore[reportUnusedImport]
import agentrig.scenarios.loader  # noqa: F401  # pyright: ignore[reportUnusedImport]
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply, text
from tests.providers.suites import events, report, write_suite

pytestmark = pytest.mark.providers
pytest_plugins = ["pytester"]


@pytest.fixture
def hang() -> Iterator[Reply]:
    """A reply the server sends only when the test is over: a provider that does not answer."""
    release = threading.Event()
    yield Reply(text="too late", hold=release)
    release.set()


def _model(server: LoopbackServer) -> list[str]:
    return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


def test_a_request_that_gets_no_answer_is_retried_then_a_provider_timeout(
    loopback: ServerFactory, hang: Reply, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=hang)
    out = tmp_path / "out"
    suite = write_suite(tmp_path / "suite", 1)
    code, stdout, _ = run_main(
        capsys, "run", str(suite), "--out", str(out), "--request-timeout", "0.3", "--max-attempts", "2", *_model(server)
    )
    assert code == 3, stdout
    entry = report(out)["scenarios"][0]
    assert entry["status"] == "error"
    assert entry["error"] == {
        "kind": "provider_timeout",
        "message": "openai: request 1 to gpt-4o got no answer within 0.3s (--request-timeout) (after 2 attempts)",
    }
    assert entry["attempts"]["failed"] == {"timeout": 2}
    assert len(server.requests) == 2
    [retry] = [event for event in events(out, "s000") if event["type"] == "request_retry"]
    assert (retry["kind"], retry["status"]) == ("provider_timeout", None)
    assert "error provider_timeout (provider error): openai: request 1 to gpt-4o got no answer within 0.3s" in stdout


def test_a_scenarios_request_timeout_is_named_as_its_setting(
    loopback: ServerFactory, hang: Reply, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=hang)
    out = tmp_path / "out"
    suite = write_suite(tmp_path / "suite", 1, settings="  provider: {request_timeout: 0.2, max_attempts: 1}\n")
    code, _, _ = run_main(capsys, "run", str(suite), "--out", str(out), *_model(server))
    assert code == 3
    message = report(out)["scenarios"][0]["error"]["message"]
    assert message == "openai: request 1 to gpt-4o got no answer within 0.2s (settings.provider.request_timeout)"


def test_the_turns_timeout_running_out_on_a_request_is_a_provider_timeout_naming_the_flag(
    loopback: ServerFactory, hang: Reply, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=hang)
    out = tmp_path / "out"
    suite = write_suite(tmp_path / "suite", 1)
    code, _, _ = run_main(capsys, "run", str(suite), "--out", str(out), "--timeout", "1.5", *_model(server))
    assert code == 3
    error = report(out)["scenarios"][0]["error"]
    assert error["kind"] == "provider_timeout"
    assert error["message"].startswith("openai: request 1 to gpt-4o had not been answered after ")
    assert error["message"].endswith("s when the turn's --timeout 1.5s ran out")
    assert "settings.timeout" not in error["message"]


def test_a_turn_that_outlives_timeout_in_a_tool_is_the_agents_timeout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "slow.yaml").write_text(
        "name: slow\n"
        "tools:\n"
        "  wait:\n"
        "    description: Waits.\n"
        "    results:\n"
        "      - {return: done, delay: 30}\n"
        "turns:\n"
        "  - user: go\n"
        "    model:\n"
        "      - tool_calls: [{id: c1, name: wait, args: {}}]\n"
        "      - text: done\n"
    )
    out = tmp_path / "out"
    code, _, _ = run_main(capsys, "run", str(tmp_path / "slow.yaml"), "--out", str(out), "--timeout", "0.3")
    assert code == 1  # the agent's own time: a failure, not a provider error
    entry = report(out)["scenarios"][0]
    assert entry["error"] == {"kind": "timeout", "message": "the turn exceeded --timeout 0.3s"}
    assert entry["attempts"] is None  # a scripted run sends nothing to a provider


def test_prompt_names_its_timeout_flag(
    loopback: ServerFactory, hang: Reply, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback(default=hang)
    code, _, err = run_main(capsys, "prompt", "hi", "--timeout", "1.5", *_model(server))
    assert code == 3
    assert err.startswith("agentrig: error: openai: request 1 to gpt-4o had not been answered after ")
    assert err.rstrip().endswith("when the turn's --timeout 1.5s ran out")


def test_prompt_request_timeout(loopback: ServerFactory, hang: Reply, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback(default=hang)
    code, _, err = run_main(
        capsys, "prompt", "hi", "--request-timeout", "0.2", "--max-attempts", "1", "--json", *_model(server)
    )
    assert code == 3
    assert err == "agentrig: error: openai: request 1 to gpt-4o got no answer within 0.2s (--request-timeout)\n"


def test_the_plugin_reports_a_provider_that_does_not_answer_as_a_provider_error(
    pytester: pytest.Pytester, loopback: ServerFactory, hang: Reply
) -> None:
    server = loopback(default=hang)
    write_suite(pytester.path / "scenarios", 1)
    result = pytester.runpytest_inprocess(
        "--agentrig-model", "openai:gpt-4o", "--agentrig-base-url", server.openai_base_url,
        "--agentrig-request-timeout", "0.2", "--agentrig-max-attempts", "1",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*error provider_timeout (provider error): openai: request 1 to gpt-4o got no answer within 0.2s "
            "(--agentrig-request-timeout)*"
        ]
    )


def test_the_plugin_names_its_own_timeout_option(
    pytester: pytest.Pytester, loopback: ServerFactory, hang: Reply
) -> None:
    server = loopback(default=hang)
    write_suite(pytester.path / "scenarios", 1)
    result = pytester.runpytest_inprocess(
        "--agentrig-model", "openai:gpt-4o", "--agentrig-base-url", server.openai_base_url,
        "--agentrig-timeout", "1.5",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*error provider_timeout (provider error): *when the turn's --agentrig-timeout 1.5s ran out"]
    )


def test_a_stream_that_stalls_past_the_request_timeout_ends_as_a_provider_timeout(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    release = threading.Event()
    server = loopback([Reply(text="Partial answer that stalls", stall_after_events=2, hold=release)])
    out = tmp_path / "out"
    try:
        code, _, _ = run_main(
            capsys, "run", str(write_suite(tmp_path / "suite", 1)), "--out", str(out), "--stream",
            "--request-timeout", "0.3", *_model(server),
        )  # fmt: skip
    finally:
        release.set()
    assert code == 3
    error = report(out)["scenarios"][0]["error"]
    assert error["kind"] == "provider_timeout"
    assert "stopped answering for 0.3s mid-stream (--request-timeout)" in error["message"]
    assert len(server.requests) == 1  # a response that began is never sent again


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_request_timeout_reaches_the_sdk_client_and_not_the_request_body(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"))
    if api == "openai":
        model = _model(server)
    else:
        model = ["--model", "anthropic:claude-loopback-test", "--base-url", server.anthropic_base_url]
    code, _, _ = run_main(
        capsys, "run", str(write_suite(tmp_path / "suite", 1)), "--out", str(tmp_path / "out"),
        "--request-timeout", "42", *model,
    )  # fmt: skip
    assert code == 0
    [request] = server.requests
    assert float(request.headers["x-stainless-read-timeout"]) == 42  # what the SDK client was told for this request
    assert "timeout" not in request.body
