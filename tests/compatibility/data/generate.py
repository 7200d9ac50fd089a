"""Write the stored-history fixture of the installed pydantic-ai version (and, with --golden, the canonical golden).

Run it once per pinned version, each in its own throwaway venv (see docs/compatibility-cases.md):

    UV_PYTHON_DOWNLOADS=never uv venv /tmp/v2380 -p python3.11
    UV_PYTHON_DOWNLOADS=never uv pip install -p /tmp/v2380/bin/python -e . \\
        'pydantic-ai-slim==2.38.0' 'pydantic-graph==2.38.0'
    /tmp/v2380/bin/python tests/compatibility/data/generate.py

It writes `history-<version>.json`: pydantic-ai's own `ModelMessagesTypeAdapter` dump of the conversation in
`tests/compatibility/conversation.py`, exactly as that version stores it. `--golden` also writes
`conversation.canonical.json`, agentrig's canonical form, which every fixture must match on every version.
"""

from __future__ import annotations

import asyncio
import os
import sys
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

DATA = Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parents[2]))  # the repository root, so `tests.compatibility` imports

from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: E402
from tests.compatibility.conversation import run_conversation  # noqa: E402


def main() -> None:
    messages = asyncio.run(run_conversation())
    installed = version("pydantic_ai_slim")
    target = DATA / f"history-{installed}.json"
    target.write_bytes(ModelMessagesTypeAdapter.dump_json(messages, indent=2) + b"\n")
    print(f"wrote {target.relative_to(DATA.parents[2])} ({len(messages)} messages, pydantic-ai {installed})")
    if "--golden" in sys.argv[1:]:
        from agentrig.runtime.history.wire import dumps_history
        from agentrig.runtime.models.conversion import to_canonical

        golden = DATA / "conversation.canonical.json"
        golden.write_bytes(dumps_history(to_canonical(messages), pretty=True) + b"\n")
        print(f"wrote {golden.relative_to(DATA.parents[2])}")


if __name__ == "__main__":
    main()
