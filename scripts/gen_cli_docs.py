"""Generate docs/cli.md from the `--help` of every agentrig command, so the CLI reference never drifts.

    python scripts/gen_cli_docs.py           # rewrite docs/cli.md
    python scripts/gen_cli_docs.py --check   # exit 1 (and say so) when docs/cli.md is out of date

tests/cli/test_run.py runs the check. Every verb registered on the root app appears automatically.
The help is rendered at a fixed width without colour, so the output is the same on every machine.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# What `agentrig --help` prints: the CLI defaults typer to plain text, and typer reads this once, at import.
os.environ["TYPER_USE_RICH"] = "0"

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "cli.md"
WIDTH = "100"

HEADER = """# Command-line reference

Generated from `agentrig COMMAND --help` by `scripts/gen_cli_docs.py`; do not edit by hand
(run `python scripts/gen_cli_docs.py` after changing a command's help).

Exit codes are the same for every command: see [exit-codes.md](exit-codes.md).
"""


def _help(args: list[str]) -> str:
    from typer.testing import CliRunner

    from agentrig.cli import app

    environment = {"COLUMNS": WIDTH, "TERMINAL_WIDTH": WIDTH, "NO_COLOR": "1", "TERM": "dumb", "FORCE_COLOR": None}
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="agentrig", env=environment)
    if result.exit_code != 0:
        raise SystemExit(f"agentrig {' '.join(args)} --help failed:\n{result.output}")
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def command_names() -> list[str]:
    """The verbs, in the order the root app lists them."""
    from typer.main import get_command

    from agentrig.cli import app

    commands: dict[str, object] = getattr(get_command(app), "commands", {})
    return list(commands)


def render() -> str:
    """The whole of docs/cli.md."""
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    sections = [HEADER, "## agentrig\n\n```text\n" + _help([]) + "\n```\n"]
    names = command_names()
    sections.append("Commands: " + ", ".join(f"[`{name}`](#agentrig-{name})" for name in names) + "\n")
    sections += [f"## agentrig {name}\n\n```text\n{_help([name])}\n```\n" for name in names]
    return "\n".join(sections)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
