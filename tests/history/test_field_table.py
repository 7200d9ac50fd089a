"""docs/canonical-format.md's table of every pydantic-ai field is the one `history/field_inventory.py` holds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gen_field_table.py"


def test_the_field_table_in_the_docs_is_current() -> None:
    spec = importlib.util.spec_from_file_location("gen_field_table", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = module.DOCS_PATH.read_text(encoding="utf-8")
    assert module.render(current) == current, "run: python scripts/gen_field_table.py"
    assert "| `tool-return` | `ui_visibility` | 2.78+ | carried:" in current
