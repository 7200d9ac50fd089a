"""Provider path benchmark, offline: the loopback OpenAI-compatible server from tests/providers.

1. Throughput: 200 one-turn prompts through `RequestOrchestrator` and the real OpenAI client, the
   server answering each after 100 ms, `run_many` keeping CONCURRENCY in flight. Ideal wall time is
   200 / CONCURRENCY x 0.1 s plus the start-up of one request; target: within 1.5x of that.
2. Start-up: `agentrig prompt` as a subprocess against a server with no latency, against a bare
   pydantic-ai script making the same call (medians of RUNS runs each).

Run: .venv/bin/python bench/bench_providers.py [--prompts 200] [--concurrency 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai.models import override_allow_model_requests  # noqa: E402

from agentrig.runtime.agents import agent_for_prompt  # noqa: E402
from agentrig.runtime.orchestrator import RequestOrchestrator  # noqa: E402
from agentrig.runtime.providers import build_model, run_many  # noqa: E402
from agentrig.runtime.sessions import new_session  # noqa: E402
from tests.providers.loopback import LoopbackServer, text  # noqa: E402

LATENCY_S = 0.1

_BARE_SCRIPT = """
import asyncio, sys
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=sys.argv[1], api_key="bench"))
print(asyncio.run(Agent(model).run("hi")).output)
"""


async def _throughput(base_url: str, prompts: int, concurrency: int) -> tuple[float, float]:
    """(seconds for one prompt from a cold model, seconds for all prompts)."""
    model = build_model("openai:gpt-4o", base_url=base_url, api_key="bench")
    handle = agent_for_prompt("Be terse.")

    async def one(number: int) -> str | None:
        orchestrator = RequestOrchestrator(handle, new_session(current_model="openai:gpt-4o"), model=model)
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

    with LoopbackServer(default=text("ok"), latency_s=LATENCY_S, max_lifetime_s=900) as server:
        with override_allow_model_requests(True):
            first, total = asyncio.run(_throughput(server.openai_base_url, arguments.prompts, arguments.concurrency))
        ideal = arguments.prompts / arguments.concurrency * LATENCY_S + first
        print(
            f"throughput: {arguments.prompts} prompts, concurrency {arguments.concurrency}, {LATENCY_S * 1000:.0f} ms latency"
        )
        print(f"  first prompt (cold) {first:.2f} s; all prompts {total:.2f} s; ideal {ideal:.2f} s")
        print(f"  ratio wall/ideal = {total / ideal:.2f} (target <= 1.5)")

        server.latency_s = 0.0
        agentrig = [sys.executable, "-m", "agentrig", "prompt", "hi", "-q", "--model", "openai:gpt-4o"]
        agentrig += ["--base-url", server.openai_base_url]
        bare = [sys.executable, "-c", _BARE_SCRIPT, server.openai_base_url]
        bare_s = _median_seconds(bare, arguments.runs)
        agentrig_s = _median_seconds(agentrig, arguments.runs)
        print(f"start-up: median of {arguments.runs} subprocess runs, one request each")
        print(f"  bare pydantic-ai script {bare_s:.2f} s; agentrig prompt {agentrig_s:.2f} s")
        print(f"  ratio agentrig/bare = {agentrig_s / bare_s:.2f} (overhead {agentrig_s - bare_s:+.2f} s)")


if __name__ == "__main__":
    main()
