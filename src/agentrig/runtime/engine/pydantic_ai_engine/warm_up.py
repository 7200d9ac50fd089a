"""Imported by the `-j N` workers' forkserver only: builds, once, what every scenario's run builds on first use.

pydantic-ai builds its messages' validator and serializer (`ModelMessagesTypeAdapter`) the first time either is
used, 40-60 ms; every scenario's run uses the serializer for `pydantic_ai_dump.json`. Built here, in the process
the workers fork from, each worker starts with it instead of building its own. `-j 1` builds it during its first
scenario, as any process would.
"""

from __future__ import annotations

from pydantic_ai.messages import ModelMessagesTypeAdapter

ModelMessagesTypeAdapter.dump_json([])
ModelMessagesTypeAdapter.validate_python([])
