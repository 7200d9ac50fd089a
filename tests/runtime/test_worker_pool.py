"""The `-j N` pool: startable before anything heavy is imported, and its workers start warm."""

from __future__ import annotations

import subprocess
import sys

from agentrig.runtime.suite.processes.pool import started_pool


def _message_adapter_state() -> str:
    """In a worker: whether pydantic-ai's message serializer is built yet (a mock until first use)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return type(ModelMessagesTypeAdapter.serializer).__name__


def test_workers_start_with_the_message_serializer_built() -> None:
    pool = started_pool(1)
    try:
        assert pool.submit(_message_adapter_state).result(timeout=60) == "SchemaSerializer"
    finally:
        pool.shutdown()


def test_the_pool_module_imports_the_standard_library_only() -> None:
    probe = (
        "import sys; import agentrig.runtime.suite.processes.pool; "
        "print(sorted(m for m in ('pydantic', 'pydantic_ai', 'yaml', 'typer') if m in sys.modules))"
    )
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "[]"
