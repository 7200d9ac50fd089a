"""`main` parses with an app of the named verb alone (typer converts every command before it parses anything);
what a user sees must be what the whole app shows."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentrig import cli
from tests.cli.cli_helpers import run_main


@pytest.mark.parametrize("verb", sorted(cli._VERBS))  # pyright: ignore[reportPrivateUsage]
def test_each_verbs_help_and_usage_errors_are_the_whole_apps(verb: str) -> None:
    single = cli._app_for([verb])  # pyright: ignore[reportPrivateUsage]
    assert single is not cli.app
    for args in ([verb, "--help"], [verb, "--no-such-option"]):
        alone = CliRunner().invoke(single, args, prog_name="agentrig")
        whole = CliRunner().invoke(cli.app, args, prog_name="agentrig")
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)


def test_the_app_holds_only_the_verb_named() -> None:
    single = cli._app_for(["--debug", "validate", "scenarios"])  # pyright: ignore[reportPrivateUsage]
    assert [command.name for command in single.registered_commands] == ["validate"]
    assert cli._app_for(["--help"]) is cli.app  # pyright: ignore[reportPrivateUsage]
    assert cli._app_for(["nope"]) is cli.app  # pyright: ignore[reportPrivateUsage]


def test_root_options_and_unknown_verbs_answer_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "--help")
    assert code == 0
    assert all(verb in out for verb in cli._VERBS)  # pyright: ignore[reportPrivateUsage]
    code, _, err = run_main(capsys, "nope")
    assert code == 2
    assert "No such command 'nope'" in err
