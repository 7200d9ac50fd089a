"""Every command's help names what each argument and option takes, as a word for the user, never as a Python type.

The rule, for `agentrig --help`, each `agentrig VERB --help` and the generated docs/cli.md:

- every argument and every option that takes a value declares its name (`metavar=`): an UPPERCASE word for what the
  user writes (`PATH...`, `DIR`, `FILE`, `N`, `MODEL`, `VERSIONS`, `SECONDS`), words joined by `:` or `/`
  (`MODULE:ATTR`, `K/N`), or the literal choices joined by `|` (`none|once|new_episodes|all`);
- the help shows exactly that name (`PATH...` for an argument taking many) and nothing beside it: no `<...>`
  placeholder (Typer 0.29's `<list[Path]>`, `<str>`, `<int range>`, `<path>`, and its `<a|b>` for choices: choices are
  given as the metavar, without brackets);
- none of Typer's or click's own type names is used as a name (TEXT, INTEGER, FLOAT, BOOLEAN, UUID, FILENAME,
  DIRECTORY, `INTEGER RANGE`), which a Typer release prints for a parameter that declares no name. PATH is allowed:
  only as a name a parameter declared on purpose, which the first rule makes every name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import app  # first: it sets plain help text (TYPER_USE_RICH=0) before typer is imported
from tests.cli.cli_helpers import run_main

REPO = Path(__file__).parents[2]
NAME = re.compile(r"[A-Z][A-Z0-9_]*(?:[:/][A-Z][A-Z0-9_]*)*|[a-z0-9_.-]+(?:\|[a-z0-9_.-]+)+")
"""A metavar: an UPPERCASE word (or words joined by `:` or `/`), or the choices joined by `|`."""
TYPE_NAMES = frozenset({"TEXT", "INTEGER", "FLOAT", "BOOLEAN", "UUID", "FILENAME", "DIRECTORY", "RANGE"})
"""Typer's and click's names for a parameter's type: never a name of what the user writes."""
ANGLE = re.compile(r"<[^<>]*>")


def _commands() -> list[tuple[str, Any]]:
    from typer.main import get_command

    root = get_command(app)
    commands: dict[str, Any] = getattr(root, "commands", {})
    return [("agentrig", root), *((f"agentrig {name}", command) for name, command in commands.items())]


def _takes_a_value(param: Any) -> bool:
    if param.param_type_name == "argument":
        return True
    return not (param.is_flag or param.count or param.hidden)


def _value_params() -> list[tuple[str, Any]]:
    return [(command, param) for command, click in _commands() for param in click.params if _takes_a_value(param)]


def test_every_argument_and_option_taking_a_value_declares_a_name() -> None:
    params = _value_params()
    assert len(params) > 50  # every verb's parameters were found
    unnamed = [f"{command} {param.opts[0]}" for command, param in params if param.metavar is None]
    assert not unnamed, f"no metavar= (the help would show a type): {unnamed}"
    for command, param in params:
        where = f"{command} {param.opts[0]}: metavar {param.metavar!r}"
        assert NAME.fullmatch(param.metavar), where
        assert not TYPE_NAMES & set(re.split(r"[^A-Z]+", param.metavar)), where


def _name_columns(text: str) -> list[str]:
    """The first column of the Arguments and Options sections: what each entry is listed as (`--out DIR`)."""
    names: list[str] = []
    section = False
    for line in text.splitlines():
        if line.rstrip() in ("Arguments:", "Options:"):
            section = True
        elif line and not line.startswith(" "):
            section = False
        elif section and re.match(r"  \S", line):
            names.append(re.split(r"\s{2,}", line.strip(), maxsplit=1)[0])
    return names


def _check_names(text: str, where: str) -> None:
    names = _name_columns(text)
    assert names, f"{where}: no Arguments or Options section found"
    for name in names:
        assert not ANGLE.search(name), f"{where}: {name!r} shows a type placeholder"
        words = set(re.findall(r"[A-Z]+", name.replace("...", "")))
        assert not TYPE_NAMES & words, f"{where}: {name!r} names a type"


@pytest.mark.parametrize("command", [name for name, _ in _commands()])
def test_each_help_lists_its_parameters_by_their_names(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = command.split()[1:]
    code, text, _ = run_main(capsys, *args, "--help")
    assert code == 0
    _check_names(text, command)
    params = [param for name, param in _value_params() if name == command]
    for param in params:  # each is listed by exactly its metavar: the argument alone, the option after its flags
        shown = f"{param.metavar}..." if param.param_type_name == "argument" and param.nargs != 1 else param.metavar
        listed = [name for name in _name_columns(text) if name == shown or name.endswith(f" {shown}")]
        assert listed, f"{command}: {param.opts[0]} is not listed as {shown!r}"


def test_the_generated_reference_lists_parameters_by_their_names() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^## (agentrig[\w ]*)\n\n```text\n(.*?)\n```", text, flags=re.MULTILINE | re.DOTALL)
    assert {title for title, _ in blocks} == {name for name, _ in _commands()}
    for title, block in blocks:
        _check_names(block, f"docs/cli.md, {title}")
