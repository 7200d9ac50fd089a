"""Write the table of every pydantic-ai message and part field, and what the canonical form does with it, into
docs/canonical-format.md (between its `field-table` markers), from `agentrig.runtime.history.field_inventory`.

    python scripts/gen_field_table.py            # rewrite the table
    python scripts/gen_field_table.py --check    # exit 1 if it is out of date

tests/history/test_field_table.py checks that the committed table equals this output.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentrig.runtime.history.field_inventory import FIELDS, OPEN_OWNERS, VERBATIM_PART_KINDS

DOCS_PATH = Path(__file__).resolve().parent.parent / "docs" / "canonical-format.md"
START = "<!-- field-table:start (scripts/gen_field_table.py writes this table) -->"
END = "<!-- field-table:end -->"

_HOW = {
    "carried": "carried",
    "derived": "derived",
    "per-run": "not kept (per run)",
    "not carried": "**not carried**",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table() -> str:
    """The markdown table, one row per field, owners in the module's order."""
    rows = ["| owner | field | in pydantic-ai | what the canonical form does |", "|---|---|---|---|"]
    for owner, rules in FIELDS.items():
        for field, rule in rules.items():
            how = _HOW[rule.how]
            rows.append(f"| `{owner}` | `{field}` | {rule.since}+ | {how}: {_cell(rule.note)} |")
        if owner in OPEN_OWNERS:
            rows.append(
                f"| `{owner}` | any other | 2.78+ | carried: in `data`, verbatim (the kind's own typed fields) |"
            )
    kinds = ", ".join(f"`{kind}`" for kind in sorted(VERBATIM_PART_KINDS))
    rows.append(f"| {kinds} | every field | | carried verbatim: an opaque part, written back as it was read |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """`text` with the table between the markers replaced by `table()`."""
    before, found, rest = text.partition(START)
    if not found or END not in rest:
        raise SystemExit(f"{DOCS_PATH}: the field-table markers are missing")
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{table()}{END}{after}"


def main(argv: list[str]) -> int:
    current = DOCS_PATH.read_text(encoding="utf-8")
    wanted = render(current)
    if "--check" in argv:
        if current != wanted:
            print(f"{DOCS_PATH} is out of date: run python scripts/gen_field_table.py", file=sys.stderr)
            return 1
        return 0
    DOCS_PATH.write_text(wanted, encoding="utf-8")
    print(f"wrote {DOCS_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
