"""How `--help` names what a command takes: each argument by the name it was given (`metavar=`), as options are.

Typer 0.29 shows an argument as `paths... <list[Path]>`, its Python type beside its name, even when it has a
`metavar` (an option with one shows only that: `--out DIR`). Every agentrig command is built with `NamedCommand`
(`named_command`, in `cli._register`), whose Arguments section shows `PATH...` alone; tests/cli/test_help_names.py
holds every command's help to the rule, which its docstring states.
"""

from __future__ import annotations

from typing import Any

from typer import core

__all__ = ["NamedCommand", "named_command"]


class NamedCommand(core.TyperCommand):
    """A Typer command whose help lists each argument by its `metavar` (`PATH...` for one taking many), no type."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        # Typer's own `format_options`, with the argument's name column replaced: its record is `name <type>`.
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                if param.metavar is not None:
                    record = (param.metavar + ("..." if param.nargs != 1 else ""), record[1])
                arguments.append(record)
            elif param.param_type_name == "option":
                options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def named_command(cls: type[core.TyperCommand] | None) -> type[core.TyperCommand]:
    """The class a registered command is built with: `NamedCommand` in place of Typer's default (`app.command()` says
    `TyperCommand` when given none), a class of the command's own left as it is."""
    return NamedCommand if cls is None or cls is core.TyperCommand else cls
