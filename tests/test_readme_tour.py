"""The README tour works when typed in order: no `run` replaces the output a later line reads."""

from __future__ import annotations

import shlex
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def _tour_commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    block = text.split("## A short tour", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands: list[list[str]] = []
    for line in block.strip().splitlines():
        command = line.split("#", 1)[0].split("|")[-1].strip()
        if command.startswith("agentrig "):
            commands.append(shlex.split(command)[1:])
    return commands


def _out_dir(args: list[str]) -> str:
    return args[args.index("--out") + 1].rstrip("/") if "--out" in args else "agentrig-out"


def test_no_run_replaces_an_output_a_later_line_reads() -> None:
    commands = _tour_commands()
    assert commands, "the tour block was not found"
    last_run: dict[str, list[str]] = {}  # out dir -> the run that last wrote it
    for args in commands:
        if args[0] == "run":
            last_run[_out_dir(args)] = args
            continue
        for path in (a for a in args[1:] if "/scenarios/" in a):
            out_dir = path.split("/scenarios/", 1)[0]
            writer = last_run.get(out_dir)
            assert writer is not None, f"{path}: no earlier run writes {out_dir}"
            selective = {"-k", "--shard"} & set(writer)
            assert not selective, f"{path} is read after `agentrig {' '.join(writer)}` replaced {out_dir}"
