"""How fast pydantic-ai <-> canonical conversion is, and what reading objects directly saves over pydantic's dump.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_convert.py

Prints per-message times and ratios (no assertions: timings belong here, not in tests). `to_canonical` reads the
common parts off the objects and hands dicts to `wire.history_from_json`; `through_pydantic_dump` is the simple
route via `ModelMessagesTypeAdapter.dump_python(mode="json")` (slow on 2.6x), kept here as the baseline.
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for `tests.runtime`

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from tests.runtime.history_scenarios import run_tools_and_retries

from agentrig.runtime.history import canonical
from agentrig.runtime.history.wire import dumps_history, history_from_json, loads_history
from agentrig.runtime.models.conversion import (
    dump_pydantic_ai_json,
    load_pydantic_ai_json,
    to_canonical,
    to_pydantic_ai,
)


def through_pydantic_dump(messages: list[ModelMessage]) -> list[canonical.Message]:
    """The simple route `to_canonical` replaces: pydantic-ai's own JSON-mode dump, then the canonical reader."""
    return history_from_json(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def per_message_us(function: Any, count: int, repeat: int = 5, number: int = 20) -> float:
    return min(timeit.repeat(function, repeat=repeat, number=number)) / number / count * 1e6


def main() -> None:
    _, history = run_tools_and_retries()
    messages = history * 25  # 200 messages
    count = len(messages)
    history_canonical = to_canonical(messages)
    stored = dumps_history(history_canonical)
    native_dump = ModelMessagesTypeAdapter.dump_json(messages)
    timings = {
        "to_canonical (direct read + history_from_json)": per_message_us(lambda: to_canonical(messages), count),
        "dump_python(mode=json) + history_from_json (baseline)": per_message_us(
            lambda: through_pydantic_dump(messages), count
        ),
        "to_pydantic_ai (to_pydantic_ai_dicts + validate_python)": per_message_us(
            lambda: to_pydantic_ai(history_canonical), count
        ),
        "dumps_history + loads_history (canonical JSON)": per_message_us(
            lambda: loads_history(dumps_history(history_canonical)), count
        ),
        "pydantic-ai dump_python + validate_python (native in-memory round trip)": per_message_us(
            lambda: ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages)), count
        ),
        "pydantic-ai dump_json + validate_json (native JSON round trip)": per_message_us(
            lambda: ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)), count
        ),
        "to_canonical + dumps + loads + to_pydantic_ai (JSON round trip via canonical)": per_message_us(
            lambda: to_pydantic_ai(loads_history(dumps_history(to_canonical(messages)))), count
        ),
        "dump_pydantic_ai_json": per_message_us(lambda: dump_pydantic_ai_json(history_canonical), count),
        "load_pydantic_ai_json (native dump)": per_message_us(lambda: load_pydantic_ai_json(native_dump), count),
        "load_pydantic_ai_json (canonical document)": per_message_us(lambda: load_pydantic_ai_json(stored), count),
    }
    for name, microseconds in timings.items():
        print(f"{microseconds:8.1f} us/message  {name}")
    baseline = timings["dump_python(mode=json) + history_from_json (baseline)"]
    direct = timings["to_canonical (direct read + history_from_json)"]
    print(f"ratio baseline / to_canonical: {baseline / direct:.1f}x")
    # Like against like: objects -> objects in memory on both sides, and objects -> JSON -> objects on both sides.
    native_memory = timings["pydantic-ai dump_python + validate_python (native in-memory round trip)"]
    round_trip = direct + timings["to_pydantic_ai (to_pydantic_ai_dicts + validate_python)"]
    print(f"ratio in-memory round trip via canonical / native in-memory round trip: {round_trip / native_memory:.2f}")
    native_json = timings["pydantic-ai dump_json + validate_json (native JSON round trip)"]
    canonical_json = timings["to_canonical + dumps + loads + to_pydantic_ai (JSON round trip via canonical)"]
    print(f"ratio JSON round trip via canonical / native JSON round trip: {canonical_json / native_json:.2f}")


if __name__ == "__main__":
    main()
