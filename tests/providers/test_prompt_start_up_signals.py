"""Ctrl-C and SIGTERM that land inside an import of `agentrig prompt`'s start-up, for certain: the process ends with
130 (143), one line on stderr, nothing sent to the provider and the session file as it was, also when CPython
swallows the KeyboardInterrupt (a weakref callback, importlib's module lock callback).

The hook in tests/start_up_hook/ holds one import where the test wants it and says when the process is there; the
test sends the signal then, and lets the import go on (`tests/start_up_signals.py`). Before agentrig recorded the
signal (`stop_signals.guard_start_up`), a swallowed KeyboardInterrupt let the prompt go on to the provider, and one
raised in importlib's module lock callback also left the import lock held, so another thread's import waited for
ever (`module_lock`: the hook's thread says `imported` only once its own import is done).

Where the import is held is checked from the process's stack: the CLI's import (`agentrig.cli.run`, before the
prompt command starts), pydantic-ai's (the command's imports), and inside the prompt's event loop the provider's SDK
(`openai`) and the user's agent module (`--agent`), where asyncio's handler takes the signal.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, text
from tests.start_up_signals import HOWS, Ended, held

pytestmark = [pytest.mark.providers, pytest.mark.process]

SIGNALS = pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"]
)
AGENT = "from pydantic_ai import Agent\n\nagent = Agent(instructions='Answer briefly.')\n"


def _model(server: LoopbackServer) -> list[str]:
    return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]


def _session_of_two_turns(server: LoopbackServer, session: Path, capsys: pytest.CaptureFixture[str]) -> bytes:
    server.add(text("first answer"), text("second answer"))
    for prompt in ("first question", "second question"):
        code, _, err = run_main(capsys, "prompt", prompt, "--session", str(session), *_model(server))
        assert code == 0, err
    return session.read_bytes()


def _interrupted_prompt(
    server: LoopbackServer, tmp_path: Path, *, module: str, how: str, signum: int, extra: tuple[str, ...] = ()
) -> tuple[str, Ended]:
    """`agentrig prompt` with its import of `module` held: the signal sent there, then the import let go. The stack
    where it was held, and how the process ended."""
    server.add(text("an answer the interrupted prompt must never get"))
    command = [sys.executable, "-m", "agentrig", "prompt", "third question", "--session", "session.json"]
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1", "OPENAI_API_KEY": "sk-test"}
    with held([*command, *_model(server), *extra], module=module, how=how, cwd=tmp_path, environment=environment) as p:
        stack = p.wait_inside()
        p.send(signum)
        p.let_go()
        return stack, p.finish()


@SIGNALS
@pytest.mark.parametrize("how", HOWS)
def test_a_signal_while_pydantic_ai_is_imported_ends_the_prompt(
    how: str, signum: int, code: int, loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback()
    before = _session_of_two_turns(server, tmp_path / "session.json", capsys)

    stack, ended = _interrupted_prompt(server, tmp_path, module="pydantic_ai", how=how, signum=signum)

    assert "_prompt" in stack.split(","), stack  # the prompt command's own imports, before its event loop
    assert "_run_prompt" not in stack.split(","), stack
    assert ended.returncode == code, ended.stderr
    assert ended.stderr == "agentrig: interrupted\n"
    assert len(server.requests) == 2  # the two earlier turns' only: the third prompt sent nothing
    assert (tmp_path / "session.json").read_bytes() == before
    if how == "module_lock":
        assert ended.notes == ("imported",), f"another thread's import waited: the import lock was kept ({stack})"


def test_ctrl_c_while_the_cli_is_imported_ends_the_prompt(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before typer has parsed anything (`agentrig.__main__` imports the CLI): SIGTERM there is Python's default,
    which kills the process, so only Ctrl-C is agentrig's to handle."""
    server = loopback()
    before = _session_of_two_turns(server, tmp_path / "session.json", capsys)

    stack, ended = _interrupted_prompt(
        server, tmp_path, module="agentrig.cli.run", how="callback", signum=signal.SIGINT
    )

    assert "prompt" not in stack.split(","), stack
    assert ended.returncode == 130, ended.stderr
    assert ended.stderr == "agentrig: interrupted\n"
    assert len(server.requests) == 2
    assert (tmp_path / "session.json").read_bytes() == before


@SIGNALS
@pytest.mark.parametrize("module", ["openai", "held_agent"], ids=["provider-sdk", "agent-module"])
def test_a_signal_while_the_prompt_loop_imports_leaves_the_session_as_it_was(
    module: str,
    signum: int,
    code: int,
    loopback: ServerFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Inside the prompt's event loop asyncio's handler takes the signal (it asks the run to stop) and the import
    goes on; the prompt then stops before its turn begins, instead of saving the session with an `[INTERRUPTED]`
    turn that was never sent."""
    server = loopback()
    before = _session_of_two_turns(server, tmp_path / "session.json", capsys)
    (tmp_path / "held_agent.py").write_text(AGENT, encoding="utf-8")

    stack, ended = _interrupted_prompt(
        server, tmp_path, module=module, how="plain", signum=signum, extra=("--agent", "held_agent:agent")
    )

    assert "_run_prompt" in stack.split(","), stack
    assert ended.returncode == code, ended.stderr
    assert ended.stderr == "agentrig: error: interrupted; session.json keeps its earlier turns\n"
    assert len(server.requests) == 2
    assert (tmp_path / "session.json").read_bytes() == before


def test_ctrl_c_while_the_agent_module_is_imported_leaves_no_new_session_file(
    loopback: ServerFactory, tmp_path: Path
) -> None:
    server = loopback()
    (tmp_path / "held_agent.py").write_text(AGENT, encoding="utf-8")

    _, ended = _interrupted_prompt(
        server, tmp_path, module="held_agent", how="plain", signum=signal.SIGINT, extra=("--agent", "held_agent:agent")
    )

    assert ended.returncode == 130, ended.stderr
    assert ended.stderr == "agentrig: error: interrupted; session.json keeps its earlier turns\n"
    assert server.requests == []
    assert not (tmp_path / "session.json").exists()  # the empty file made to lock it is gone again
