"""Imported first by the `-j N` workers' forkserver (`pool`): no cyclic garbage collection while it imports.

Importing pydantic-ai, agentrig and the user's modules (pandas, DuckDB...) makes hundreds of thousands of objects
that all live as long as the process, and the collector's passes over them were a quarter of the import time
(2.0-2.6 s against 2.7-3.3 s for pydantic-ai and agentrig here). That time is the workers' start: nothing runs
before the forkserver has imported everything. `warm_up`, imported last, freezes what was imported (the workers'
collector then never scans it) and turns collection back on before any worker is forked.
"""

from __future__ import annotations

import gc

gc.disable()
