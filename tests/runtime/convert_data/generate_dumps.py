"""Write the pydantic-ai JSON dumps the cross-version conversion tests load.

Run it with the Python of each version whose dumps the tests should cover, from the repository root:

    PYDANTIC_AI_NO_BANNER=1 /tmp/v238/bin/python tests/runtime/convert_data/generate_dumps.py
    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python tests/runtime/convert_data/generate_dumps.py

Each run writes `<history>-<pydantic-ai version>.json` beside this file: `ModelMessagesTypeAdapter.dump_json`
of a real agent run (tests/runtime/history_scenarios.py), exactly as an application would have stored it.
"""

from __future__ import annotations

import asyncio
import sys
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root, for `tests.runtime`

from pydantic_ai.messages import ModelMessagesTypeAdapter
from tests.runtime.history_scenarios import (
    deferred_agent,
    deferred_results,
    run_tools_and_retries,
    run_validation_errors,
)


def main() -> None:
    here = Path(__file__).parent
    installed = version("pydantic_ai_slim")
    _, tools_history = run_tools_and_retries()
    agent = deferred_agent()
    first = asyncio.run(agent.run("do stuff"))
    resumed = asyncio.run(agent.run(message_history=first.all_messages(), deferred_tool_results=deferred_results()))
    histories = {
        "tools-and-retries": tools_history,
        "deferred": resumed.all_messages(),
        "validation-errors": run_validation_errors(),
    }
    for name, history in histories.items():
        target = here / f"{name}-{installed}.json"
        target.write_bytes(ModelMessagesTypeAdapter.dump_json(history, indent=1) + b"\n")
        print(target)


if __name__ == "__main__":
    main()
