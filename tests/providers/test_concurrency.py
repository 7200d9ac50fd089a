"""Provider-bound scenarios run side by side in one event loop, `--max-concurrency` requests in flight per provider
across every `-j` worker, and at the provider's rate limits with `--rpm` / `--tpm`: against the loopback server,
through pydantic-ai's real OpenAI and Anthropic clients. Counts are asserted, never durations."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agentrig.runtime.models.provider_options import provider_modules
from agentrig.runtime.suite.options import RunOptions
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import (
    LoopbackServer,
    ReceivedRequest,
    Reply,
    ServerLimits,
    ToolCallReply,
    text,
    tool_calls,
)
from tests.providers.suites import report, run_agentrig, scenario_file, write_suite

pytestmark = pytest.mark.providers
pytest_plugins = ["pytester"]


def _model(server: LoopbackServer, api: str = "openai") -> list[str]:
    if api == "anthropic":
        return ["--model", "anthropic:claude-loopback-test", "--base-url", server.anthropic_base_url]
    return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_scenarios_run_side_by_side_up_to_max_concurrency(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"), latency_s=0.4)
    suite = write_suite(tmp_path / "suite", 8, turns=2)
    out = tmp_path / "out"
    code, stdout, _ = run_main(
        capsys, "run", str(suite), "--out", str(out), "--max-concurrency", "3", *_model(server, api)
    )
    assert code == 0, stdout
    assert len(server.requests) == 16
    assert 2 <= server.peak_in_flight <= 3  # side by side, and never past the bound
    assert [entry["status"] for entry in report(out)["scenarios"]] == ["passed"] * 8


def test_max_concurrency_one_sends_one_request_at_a_time(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"), latency_s=0.1)
    suite = write_suite(tmp_path / "suite", 4)
    code, stdout, _ = run_main(
        capsys, "run", str(suite), "--out", str(tmp_path / "out"), "--max-concurrency", "1", *_model(server)
    )
    assert code == 0, stdout
    assert server.peak_in_flight == 1


@pytest.mark.process
def test_the_bound_holds_across_worker_processes(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("Hello!"), latency_s=0.4)
    suite = write_suite(tmp_path / "suite", 12)
    out = tmp_path / "out"
    finished = run_agentrig(
        "run", str(suite), "--out", str(out), "-j", "2", "--max-concurrency", "3", *_model(server)
    )  # fmt: skip
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert len(server.requests) == 12
    assert 2 <= server.peak_in_flight <= 3  # one limiter for the run, not one per worker (that would allow 6)


def test_scripted_runs_keep_running_one_scenario_at_a_time() -> None:
    assert RunOptions().width == 1
    assert RunOptions(model="openai:gpt-4o", replay_dir=Path("recordings")).width == 1  # a replay is offline
    assert RunOptions(model="openai:gpt-4o").width == 8


def test_rpm_keeps_a_run_within_the_providers_limit(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"), limits=ServerLimits(requests=10, window_s=5.0))  # 120 per minute
    suite = write_suite(tmp_path / "suite", 12)
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "run", str(suite), "--out", str(out), "--rpm", "120", *_model(server))
    assert code == 0, stdout
    assert server.rejected == 0  # no 429 at all
    assert all(entry["attempts"]["retries"] == 0 for entry in report(out)["scenarios"])


def test_without_rpm_the_same_run_meets_429s_and_retries_them_visibly(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    server = loopback(default=text("Hello!"), limits=ServerLimits(requests=4, window_s=2.0))
    suite = write_suite(tmp_path / "suite", 10)
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "run", str(suite), "--out", str(out), "--max-attempts", "10", *_model(server))
    assert code == 0, stdout
    assert server.rejected > 0
    entries = report(out)["scenarios"]
    assert sum(entry["attempts"]["failed"].get("429", 0) for entry in entries) == server.rejected
    assert sum(entry["attempts"]["attempts"] for entry in entries) == len(server.requests)


def test_tpm_keeps_a_run_within_the_providers_token_limit(
    loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Each answer is 16 tokens; the provider allows 48 in any 2 s (1440 a minute).
    server = loopback(default=text("Hello!"), limits=ServerLimits(tokens=48, window_s=2.0))
    suite = write_suite(tmp_path / "suite", 8)
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "run", str(suite), "--out", str(out), "--tpm", "1440", *_model(server))
    assert code == 0, stdout
    assert server.rejected == 0
    assert len(server.requests) == 8


@pytest.mark.process
def test_rpm_holds_across_worker_processes(loopback: ServerFactory, tmp_path: Path) -> None:
    server = loopback(default=text("Hello!"), limits=ServerLimits(requests=10, window_s=5.0))  # 120 per minute
    suite = write_suite(tmp_path / "suite", 14)
    out = tmp_path / "out"
    finished = run_agentrig("run", str(suite), "--out", str(out), "-j", "2", "--rpm", "120", *_model(server))
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert server.rejected == 0
    assert scenario_file(out, "s000", "usage.json")["attempts"]["attempts"] == 1


@pytest.mark.process
def test_the_plugin_bounds_requests_across_xdist_workers(pytester: pytest.Pytester, loopback: ServerFactory) -> None:
    server = loopback(default=text("Hello!"), latency_s=0.3)
    write_suite(pytester.path / "scenarios", 6)
    # Two workers show it as well as three would: a limiter of each worker's own would let two requests in flight.
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--agentrig-model", "openai:gpt-4o",
        "--agentrig-base-url", server.openai_base_url, "--agentrig-max-concurrency", "1",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    assert len(server.requests) == 6
    assert server.peak_in_flight == 1  # two workers, one request in flight: the controller's limiter


@pytest.mark.parametrize("model", ["openai:gpt-4o", "openai-responses:gpt-4o", "anthropic:claude-sonnet-4-5"])
def test_workers_fork_with_the_providers_client_imported(model: str) -> None:
    # The forkserver imports these before it forks a worker (an import that fails there is skipped silently, so
    # each name must be a module that exists).
    modules = provider_modules(model)
    assert "agentrig.runtime.models.providers" in modules
    assert any(name.startswith("pydantic_ai.models.") for name in modules)
    assert all(importlib.util.find_spec(name) is not None for name in modules)
    assert provider_modules(None) == ()


_BLOCKING_AGENT = """\
import time

from pydantic_ai import Agent

agent = Agent(instructions="Use the block tool.")


@agent.tool_plain
async def block() -> str:
    \"\"\"Blocks the event loop (a sync call in an async tool).\"\"\"
    time.sleep(30)
    return "done"
"""


def _answer_by_prompt(request: ReceivedRequest) -> Reply | None:
    said = json.dumps(request.body)
    if "block now" in said and '"role": "tool"' not in said:
        return tool_calls(ToolCallReply(id="call_block", name="block"))
    return text("Hello!", delay_s=0.5)


@pytest.mark.process
def test_a_scenario_that_blocks_the_shared_loop_is_abandoned_and_the_others_run_again(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback(responder=_answer_by_prompt)
    suite = write_suite(tmp_path / "suite", 3)
    (tmp_path / "suite" / "blocking_agent.py").write_text(_BLOCKING_AGENT)
    (tmp_path / "suite" / "blocker.yaml").write_text(
        "name: blocker\nagent: blocking_agent:agent\nsettings: {timeout: 1}\nturns:\n  - user: block now\n"
    )
    out = tmp_path / "out"
    finished = run_agentrig("run", str(suite), "--out", str(out), *_model(server))
    assert finished.returncode == 1, finished.stdout + finished.stderr  # the blocker failed; nothing errored
    entries = {entry["name"]: entry for entry in report(out)["scenarios"]}
    blocker = entries.pop("blocker")
    assert blocker["error"]["kind"] == "timeout"
    assert "was abandoned: something in it blocks" in blocker["error"]["message"]
    assert [entry["status"] for entry in entries.values()] == ["passed"] * 3
