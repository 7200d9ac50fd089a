"""Provider-bound runs: side by side under `--max-concurrency`, and within a provider's rate limit with `--rpm`.

Offline, against the loopback OpenAI-compatible server of tests/providers (in a process of its own, so it does not
compete for the run's GIL), through `agentrig run` as a user runs it (a subprocess: start-up included).

1. Concurrency: SCENARIOS scenarios of 2 one-request turns, every answer after LATENCY_S. `-j 1 --max-concurrency 16`
   against `--max-concurrency 1`; target: at most 0.3x the time. The server counts the requests it answered at once.
2. Rate limit: the server allows 20 requests in any 10 s and answers the 21st with 429 and Retry-After (as the
   issue's provider did). RATE_SCENARIOS scenarios of 2 requests with `--rpm 120` (its limit), at `-j 1` and at
   `-j 4` (the limiter shared by the workers); target: 0 errors and 0 429s. The same `-j 4` run without `--rpm`
   shows what the limit does (429s, retries).
3. The limiter's own cost: an acquire and release in this process (`LocalLimiter`) and from another process over
   the socket (`RemoteLimiter`), ROUND_TRIPS each; and what a scenario now does before it runs (its attempt log and
   context variables), which a scripted run pays too.

Run: .venv/bin/python bench/bench_providers_concurrency.py [--scenarios 100] [--rate-scenarios 40] [--skip-rate]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.providers.suites import write_suite  # noqa: E402

from agentrig.runtime.models.attempt_log import AttemptLog, recording_attempts  # noqa: E402
from agentrig.runtime.models.limiter import LimiterCore, LocalLimiter  # noqa: E402
from agentrig.runtime.models.limiter_service import LimiterAddress, LimiterService, RemoteLimiter  # noqa: E402
from agentrig.runtime.models.provider_options import ProviderOptions  # noqa: E402
from agentrig.runtime.models.request_policy import using_scenario_settings  # noqa: E402
from agentrig.runtime.models.timeouts import timeout_flag  # noqa: E402

LATENCY_S = 0.3
ROUND_TRIPS = 2000
KEY = "openai@bench"

_SERVER_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.providers.loopback import LoopbackServer, ServerLimits, text
limits = ServerLimits(requests=int(sys.argv[3]), window_s=float(sys.argv[4])) if sys.argv[3] != "0" else None
with LoopbackServer(default=text("Hello!"), latency_s=float(sys.argv[2]), limits=limits, max_lifetime_s=1800) as server:
    print(server.openai_base_url, flush=True)
    sys.stdin.read()  # serve until the benchmark closes our stdin
    print(json.dumps({"requests": len(server.requests), "rejected": server.rejected,
                      "peak_in_flight": server.peak_in_flight}), flush=True)
"""


@contextlib.contextmanager
def _server(latency_s: float, limit: tuple[int, float] | None = None) -> Generator[tuple[str, dict[str, int]]]:
    """The loopback server in a child process: (its base URL, its counts, filled in when it stops)."""
    requests, window = limit or (0, 0.0)
    command = [sys.executable, "-c", _SERVER_SCRIPT, str(ROOT), str(latency_s), str(requests), str(window)]
    counts: dict[str, int] = {}
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdout is not None
        assert server.stdin is not None
        try:
            base_url = server.stdout.readline().strip()
            if not base_url.startswith("http://127.0.0.1:"):
                raise RuntimeError("the loopback server did not start")
            yield base_url, counts
        finally:
            server.stdin.close()
            counts.update(json.loads(server.stdout.readline() or "{}"))
            server.wait(timeout=60)


def _run(suite: Path, base_url: str, *flags: str) -> tuple[float, dict[str, int]]:
    """Seconds `agentrig run` took, and its scenarios' statuses (and `cpu_ms`: the CPU time its processes used)."""
    out = Path(tempfile.mkdtemp(prefix="agentrig-bench-out-"))
    command = [sys.executable, "-m", "agentrig", "run", str(suite), "--out", str(out), "--no-html", "-q"]
    command += ["--model", "openai:gpt-4o", "--base-url", base_url, *flags]
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    elapsed = time.perf_counter() - started
    cpu_s = _children_cpu_s() - cpu_before
    report = json.loads((out / "report.json").read_text())
    statuses: dict[str, int] = {}
    retries = 0
    for entry in report["scenarios"]:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
        retries += (entry.get("attempts") or {}).get("retries", 0)
    statuses["retries"] = retries
    statuses["cpu_ms"] = round(cpu_s * 1000)
    return elapsed, statuses


def _children_cpu_s() -> float:
    """User and system CPU seconds of the finished child processes so far (the run and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _concurrency(scenarios: int) -> None:
    suite = write_suite(Path(tempfile.mkdtemp(prefix="agentrig-bench-")), scenarios, turns=2)
    print(f"1. concurrency: {scenarios} scenarios x 2 requests, {LATENCY_S * 1000:.0f} ms latency, -j 1")
    timings: dict[str, float] = {}
    for concurrency in ("1", "16"):
        with _server(LATENCY_S) as (base_url, counts):
            elapsed, statuses = _run(suite, base_url, "--max-concurrency", concurrency)
        timings[concurrency] = elapsed
        print(f"   --max-concurrency {concurrency:>2}: {elapsed:6.2f} s  {statuses}  server: {counts}")
    ratio = timings["16"] / timings["1"]
    print(f"   ratio 16/1 = {ratio:.3f} (target <= 0.3: {'met' if ratio <= 0.3 else 'MISSED'})")
    network = scenarios * 2 * LATENCY_S
    print(f"   (the network's share: {network:.0f} s one at a time, {network / 16:.2f} s 16 at a time)")


def _rate(scenarios: int) -> None:
    suite = write_suite(Path(tempfile.mkdtemp(prefix="agentrig-bench-")), scenarios, turns=2)
    print(f"2. rate limit: {scenarios} scenarios x 2 requests; the server allows 20 requests per 10 s")
    for flags in (["--rpm", "120"], ["-j", "4", "--rpm", "120"], ["-j", "4"]):
        with _server(0.05, (20, 10.0)) as (base_url, counts):
            elapsed, statuses = _run(suite, base_url, *flags, "--max-attempts", "10")
        errors = statuses.get("error", 0)
        print(f"   {' '.join(flags):<18} {elapsed:6.2f} s  {statuses}  server: {counts}  errors: {errors}")


def _hold(address: LimiterAddress, count: int, results: multiprocessing.Queue[float]) -> None:  # pyright: ignore[reportUnknownParameterType]
    async def go() -> float:
        limiter = RemoteLimiter(address)
        started = time.perf_counter()
        for _ in range(count):
            limiter.release(await limiter.acquire(KEY))
        return (time.perf_counter() - started) / count

    results.put(asyncio.run(go()))


def _overhead() -> None:
    core = LimiterCore(ProviderOptions(max_concurrency=16))

    async def local() -> float:
        limiter = LocalLimiter(core)
        started = time.perf_counter()
        for _ in range(ROUND_TRIPS):
            limiter.release(await limiter.acquire(KEY))
        return (time.perf_counter() - started) / ROUND_TRIPS

    local_s = asyncio.run(local())
    service = LimiterService(core)
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue[float] = context.Queue()
    worker = context.Process(target=_hold, args=(service.address, ROUND_TRIPS, results))
    worker.start()
    remote_s = results.get(timeout=300)
    worker.join(60)
    service.close()

    started = time.perf_counter()
    for _ in range(ROUND_TRIPS * 10):
        log = AttemptLog()
        with recording_attempts(log), using_scenario_settings(None), timeout_flag(None):
            pass
        log.snapshot()
    per_scenario = (time.perf_counter() - started) / (ROUND_TRIPS * 10)
    print("3. the limiter's own cost, per request (an acquire and a release):")
    print(f"   in this process {local_s * 1e6:7.1f} us; from a worker over the socket {remote_s * 1e6:7.1f} us")
    print(f"   a scenario's attempt log and context variables (scripted runs too): {per_scenario * 1e6:.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=100)
    parser.add_argument("--rate-scenarios", type=int, default=40)
    parser.add_argument("--skip-rate", action="store_true")
    arguments = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    _concurrency(arguments.scenarios)
    if not arguments.skip_rate:
        _rate(arguments.rate_scenarios)
    _overhead()


if __name__ == "__main__":
    main()
