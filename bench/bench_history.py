"""Benchmark: canonical history save/load against pydantic-ai's ModelMessagesTypeAdapter.

Two questions, on a generated 10,000-message history, files written and read on both sides:

- canonical only (an agentrig history in hand): save >= 5x faster than `ModelMessagesTypeAdapter.dump_json`,
  load >= 5x faster than `validate_json`;
- a pydantic-ai user (pydantic-ai messages in hand): save including `to_canonical` and load including
  `to_pydantic_ai` at least as fast as pydantic-ai's own serializer (>= 1x).

Run:

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_history.py [--messages 10000] [--repeat 7]

Prints median CPU times of interleaved rounds and the ratios (min-max). A script, not a test: timings never
gate the test suite.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentrig.runtime.history.canonical import Message, TextPart, ThoughtPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.pydantic_ai_dicts import to_pydantic_ai_dicts
from agentrig.runtime.history.wire import dumps_history, loads_history

TARGET_RATIO = 5.0


def generate_history(message_count: int) -> list[Message]:
    """A realistic coding-agent history: prompt, thinking + tool calls, tool returns, final text, repeated."""
    messages: list[Message] = []
    step = 0
    while len(messages) < message_count:
        messages.append(
            Message.request(TextPart(content=f"Step {step}: look at the build failure in module {step % 17}."))
        )
        messages.append(
            Message.response(
                ThoughtPart(content="I should list the files first, then read the failing test. " * 3, signature=None),
                ToolCallPart(tool_call_id=f"call_{step}_a", tool_name="bash", args={"command": f"ls -la src/m{step}"}),
                ToolCallPart(
                    tool_call_id=f"call_{step}_b",
                    tool_name="read_file",
                    args={"path": f"tests/test_m{step}.py", "start": 1, "end": 200},
                ),
            )
        )
        messages.append(
            Message.request(
                ToolReturnPart(tool_call_id=f"call_{step}_a", tool_name="bash", content="a.py\nb.py\nc.py\n" * 8),
                ToolReturnPart(
                    tool_call_id=f"call_{step}_b",
                    tool_name="read_file",
                    content="def test_x():\n    assert f(1) == 2\n" * 20,
                ),
            )
        )
        messages.append(
            Message.response(TextPart(content=f"The test in module {step % 17} fails because f is off by one."))
        )
        step += 1
    return messages[:message_count]


def interleaved_cpu(actions: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """CPU times of `rounds` rounds, each running every action once in order (A, B, C, A, B, C, ...).

    CPU time of this process, not wall time: on a shared machine (2 cores, many jobs) wall time mostly
    measures the scheduler. Both sides are single-threaded, so CPU time compares them fairly. The result
    is freed after the clock stops: freeing is not part of saving or loading, on either side.

    Each action is charged the garbage collection it causes (a collection after it, inside the clock): the
    collector runs when allocations pile up, so otherwise one action's garbage is scanned during the next. The
    bench's own long-lived data is frozen out of the collector first, so every action scans only its own objects.
    """
    gc.collect()
    gc.freeze()
    samples: dict[str, list[float]] = {label: [] for label in actions}
    for _ in range(rounds):
        for label, action in actions.items():
            start = time.process_time()
            result = action()
            gc.collect()
            samples[label].append(time.process_time() - start)
            del result
    gc.unfreeze()
    return samples


def speedup(slow: list[float], fast: list[float]) -> tuple[float, float, float]:
    """median, min, max of the per-round ratios slow / fast (above 1: `fast` is faster)."""
    ratios = [a / b for a, b in zip(slow, fast, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds")
    options = parser.parse_args()

    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    from importlib.metadata import version

    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from agentrig.runtime.models.conversion import to_canonical, to_pydantic_ai

    history = generate_history(options.messages)
    native = ModelMessagesTypeAdapter.validate_python(to_pydantic_ai_dicts(history, retry_shape="retried"))
    with tempfile.TemporaryDirectory() as temp:
        canonical_file, native_file = Path(temp) / "canonical.json", Path(temp) / "native.json"
        canonical_file.write_bytes(dumps_history(history))
        native_file.write_bytes(ModelMessagesTypeAdapter.dump_json(native))
        assert loads_history(canonical_file.read_bytes()) == history
        samples = interleaved_cpu(
            {
                "canonical: dumps_history + write": lambda: canonical_file.write_bytes(dumps_history(history)),
                "pydantic-ai user: to_canonical + dumps_history + write": lambda: canonical_file.write_bytes(
                    dumps_history(to_canonical(native))
                ),
                "pydantic-ai: dump_json + write": lambda: native_file.write_bytes(
                    ModelMessagesTypeAdapter.dump_json(native)
                ),
                "canonical: read + loads_history": lambda: loads_history(canonical_file.read_bytes()),
                "pydantic-ai user: read + loads_history + to_pydantic_ai": lambda: to_pydantic_ai(
                    loads_history(canonical_file.read_bytes())
                ),
                "pydantic-ai: read + validate_json": lambda: ModelMessagesTypeAdapter.validate_json(
                    native_file.read_bytes()
                ),
            },
            options.repeat,
        )
        sizes = canonical_file.stat().st_size, native_file.stat().st_size
    header = f"pydantic-ai-slim {version('pydantic-ai-slim')}, {len(history)} messages"
    print(f"{header}, median CPU time of {options.repeat} interleaved rounds")
    print(f"  canonical file {sizes[0]:,} bytes, pydantic-ai dump {sizes[1]:,} bytes")
    for name, seconds in samples.items():
        print(f"  {name:<58}{statistics.median(seconds) * 1000:9.2f} ms")
    for side, native_label in (
        ("save", "pydantic-ai: dump_json + write"),
        ("load", "pydantic-ai: read + validate_json"),
    ):
        for who, target in (("canonical", TARGET_RATIO), ("pydantic-ai user", 1.0)):
            label = next(name for name in samples if name.startswith(f"{who}:") and _is_side(name, side))
            median, low, high = speedup(samples[native_label], samples[label])
            verdict = "ok" if median >= target else f"BELOW the {target:g}x target"
            print(f"  {side} speed-up, {who:<17}{median:5.2f}x ({low:.2f}-{high:.2f}) ({verdict})")


def _is_side(label: str, side: str) -> bool:
    return ("write" in label) == (side == "save")


if __name__ == "__main__":
    main()
