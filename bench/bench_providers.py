"""Provider path benchmark, offline: the loopback OpenAI-compatible server from tests/providers.

1. Throughput: 200 one-turn prompts through `RequestOrchestrator` and the real OpenAI client, the
   server (in its own process, so it does not compete for this one's GIL) answering each after 100 ms,
   `run_many` keeping CONCURRENCY in flight. Ideal wall time is 200 / CONCURRENCY x 0.1 s plus the
   start-up of one request; target: within 1.5x of that. The same prompts through a bare pydantic-ai
   `Agent.run` show how much of the time is pydantic-ai's and the client's own CPU work.
2. Start-up: `agentrig prompt` as a subprocess against a server with no latency, against a bare
   pydantic-ai script making the same call (medians of RUNS runs each).

Run: .venv/bin/python bench/bench_providers.py [--prompts 200] [--concurrency 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai.models import override_allow_model_requests

from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import agent_for_prompt
from agentrig.runtime.engine.pydantic_ai_engine.plain import PydanticAIEngine
from agentrig.runtime.history.sessions import new_session
from agentrig.runtime.models.providers import build_model, run_many

LATENCY_S = 0.1

_SERVER_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.providers.loopback import LoopbackServer, text
with LoopbackServer(default=text("ok"), latency_s=float(sys.argv[2]), max_lifetime_s=900) as server:
    print(server.openai_base_url, flush=True)
    sys.stdin.read()  # serve until the benchmark closes our stdin
"""

_BARE_SCRIPT = """
import asyncio, sys
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=sys.argv[1], api_key="bench"))
print(asyncio.run(Agent(model).run("hi")).output)
"""


async def _throughput(base_url: str, prompts: int, concurrency: int, *, bare: bool) -> tuple[float, float]:
    """(seconds for one prompt from a cold model, seconds for all prompts)."""
    model = build_model("openai:gpt-4o", base_url=base_url, api_key="bench")
    handle = agent_for_prompt("Be terse.")

    async def one(number: int) -> str | None:
        if bare:
            return (await handle.agent.run(f"prompt {number}", model=model)).output
        orchestrator = RequestOrchestrator(
            PydanticAIEngine(handle, model=model), new_session(current_model="openai:gpt-4o")
        )
        record = await orchestrator.run(f"prompt {number}")
        if record.error is not None:
            raise RuntimeError(record.error.message)
        return record.output

    try:
        started = time.perf_counter()
        await one(-1)
        first = time.perf_counter() - started
        started = time.perf_counter()
        outputs = await run_many([lambda n=n: one(n) for n in range(prompts)], concurrency)
        total = time.perf_counter() - started
    finally:
        await model.aclose()
    assert outputs == ["ok"] * prompts
    return first, total


def _median_seconds(command: list[str], runs: int) -> float:
    timings: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYDANTIC_AI_NO_BANNER": "1"})
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()

    with _server_process(LATENCY_S) as base_url, override_allow_model_requests(True):
        _, bare_total = asyncio.run(_throughput(base_url, arguments.prompts, arguments.concurrency, bare=True))
        first, total = asyncio.run(_throughput(base_url, arguments.prompts, arguments.concurrency, bare=False))
    ideal = arguments.prompts / arguments.concurrency * LATENCY_S + first
    latency_ms = LATENCY_S * 1000
    print(f"throughput: {arguments.prompts} prompts, concurrency {arguments.concurrency}, {latency_ms:.0f} ms latency")
    print(f"  first prompt (cold) {first:.2f} s; all prompts {total:.2f} s; ideal {ideal:.2f} s")
    print(f"  bare pydantic-ai Agent.run, same prompts and concurrency: {bare_total:.2f} s")
    print(f"  ratio wall/ideal = {total / ideal:.2f} (target <= 1.5); ratio agentrig/bare = {total / bare_total:.2f}")

    with _server_process(0.0) as base_url:
        agentrig = [sys.executable, "-m", "agentrig", "prompt", "hi", "-q", "--model", "openai:gpt-4o"]
        agentrig += ["--base-url", base_url]
        bare = [sys.executable, "-c", _BARE_SCRIPT, base_url]
        bare_s = _median_seconds(bare, arguments.runs)
        agentrig_s = _median_seconds(agentrig, arguments.runs)
    print(f"start-up: median of {arguments.runs} subprocess runs, one request each")
    print(f"  bare pydantic-ai script {bare_s:.2f} s; agentrig prompt {agentrig_s:.2f} s")
    print(f"  ratio agentrig/bare = {agentrig_s / bare_s:.2f} (overhead {agentrig_s - bare_s:+.2f} s)")


@contextlib.contextmanager
def _server_process(latency_s: float) -> Generator[str, None, None]:
    """The loopback server in a child process; yields its OpenAI base URL."""
    root = str(Path(__file__).resolve().parents[1])
    command = [sys.executable, "-c", _SERVER_SCRIPT, root, str(latency_s)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdout is not None
        assert server.stdin is not None
        try:
            base_url = server.stdout.readline().strip()
            if not base_url.startswith("http://127.0.0.1:"):
                raise RuntimeError("the loopback server did not start")
            yield base_url
        finally:
            server.stdin.close()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
