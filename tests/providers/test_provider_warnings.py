"""`agentrig prompt` says each distinct warning in one line of its own on stderr (not Python's two, with source text),
and its --json record and session file hold them, against the loopback server. Real processes: this suite's own
`filterwarnings = error` would turn every warning into an exception in-process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pydantic_ai
import pytest

from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, ToolCallReply, text, tool_calls

pytestmark = pytest.mark.providers

_AGENT = textwrap.dedent(
    """
    import warnings
    from pydantic_ai import Agent, PydanticAIDeprecationWarning

    warnings.warn("prompt_agent is imported", UserWarning)

    agent = Agent()

    @agent.tool_plain
    def legacy() -> str:  # sync: pydantic-ai runs it in a thread
        warnings.warn("legacy() is going away", PydanticAIDeprecationWarning)
        return "ok"

    @agent.tool_plain
    async def loud() -> str:
        warnings.warn("loud has something to say,\\nover two lines", UserWarning)
        return "ok"
    """
)


def _prompt(
    tmp_path: Path, server: LoopbackServer, *args: str, model: str = "openai:gpt-4o", warnings: str | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    environment.pop("PYTHONWARNINGS", None)
    if warnings is not None:
        environment["PYTHONWARNINGS"] = warnings
    command = [sys.executable, "-m", "agentrig", "prompt", *args, "--model", model, "--base-url"]
    return subprocess.run(
        [*command, server.openai_base_url], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )


def _calls() -> Any:
    return tool_calls(ToolCallReply(id="c1", name="legacy"), ToolCallReply(id="c2", name="loud"))


def _record(category: str, message: str, count: int, module: str = "prompt_agent") -> dict[str, Any]:
    return {"category": category, "message": message, "module": module, "count": count}


def test_each_warning_is_one_line_and_the_record_and_session_hold_them(tmp_path: Path, loopback: ServerFactory) -> None:
    (tmp_path / "prompt_agent.py").write_text(_AGENT, encoding="utf-8")
    server = loopback([_calls(), text("done"), _calls(), text("done again")])
    session = tmp_path / "session.json"
    args = ("go", "--agent", "prompt_agent:agent", "--session", str(session))

    first = _prompt(tmp_path, server, *args, "--json")

    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines() == [
        "agentrig: warning: PydanticAIDeprecationWarning: legacy() is going away (prompt_agent)",
        "agentrig: warning: UserWarning: loud has something to say, over two lines (prompt_agent)",
        "agentrig: warning: UserWarning: prompt_agent is imported (prompt_agent)",
    ]
    shown = [
        _record("PydanticAIDeprecationWarning", "legacy() is going away", 1),
        _record("UserWarning", "loud has something to say,\nover two lines", 1),
        _record("UserWarning", "prompt_agent is imported", 1),
    ]
    assert jsonio.loads(first.stdout)["warnings"] == shown
    assert jsonio.read_json_file(session)["warnings"] == shown

    second = _prompt(tmp_path, server, *args)  # the session's second prompt, in a process of its own

    assert second.returncode == 0, second.stderr
    assert second.stdout == "done again\n"
    assert len(second.stderr.splitlines()) == 3, second.stderr
    assert jsonio.read_json_file(session)["warnings"] == [{**record, "count": 2} for record in shown]


def test_filters_apply_and_an_error_filter_makes_the_warning_the_prompts_error(
    tmp_path: Path, loopback: ServerFactory
) -> None:
    (tmp_path / "prompt_agent.py").write_text(_AGENT, encoding="utf-8")
    server = loopback([_calls(), text("done"), _calls(), text("done")])
    args = ("go", "--agent", "prompt_agent:agent", "--json")

    quiet = _prompt(tmp_path, server, *args, warnings="ignore::UserWarning")

    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stderr, jsonio.loads(quiet.stdout)["warnings"]) == ("", [])

    failing = _prompt(tmp_path, server, *args, warnings="error::UserWarning:prompt_agent")

    assert failing.returncode == 2, failing.stderr  # the agent does not import: a usage error, nothing sent
    assert failing.stderr.splitlines() == [
        "agentrig: error: <input>: agent: importing 'prompt_agent' failed: UserWarning: prompt_agent is imported"
    ]


def test_pydantic_ais_deprecated_model_warning(tmp_path: Path, loopback: ServerFactory) -> None:
    if not hasattr(pydantic_ai, "DeprecatedModelWarning"):
        pytest.skip(f"pydantic-ai {pydantic_ai.__version__} has no DeprecatedModelWarning (2.78 added it)")
    server = loopback([text("Paris.")])

    finished = _prompt(tmp_path, server, "Capital of France?", "--json", model="openai:gpt-4o-2024-08-06")

    assert finished.returncode == 0, finished.stderr
    (record,) = jsonio.loads(finished.stdout)["warnings"]
    assert record["category"] == "DeprecatedModelWarning"
    assert record["module"] == "pydantic_ai.models"
    assert record["message"].startswith("Model 'openai:gpt-4o-2024-08-06' is deprecated by its provider")
    assert finished.stderr.splitlines() == [
        f"agentrig: warning: DeprecatedModelWarning: {record['message']} (pydantic_ai.models)"
    ]


_GREETING = """\
name: {name}
turns:
  - user: Say hello.
    model:
      - text: Hello!
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_side_by_side_records_the_deprecated_model_for_each_scenario(
    tmp_path: Path, loopback: ServerFactory, jobs: str
) -> None:
    if not hasattr(pydantic_ai, "DeprecatedModelWarning"):
        pytest.skip(f"pydantic-ai {pydantic_ai.__version__} has no DeprecatedModelWarning (2.78 added it)")
    names = ("first", "second", "third", "fourth")
    for name in names:
        (tmp_path / f"{name}.yaml").write_text(_GREETING.format(name=name), encoding="utf-8")
    # Replies held a little: the scenarios of a process run side by side (--max-concurrency 8), each request in
    # flight while the others prepare theirs at the same line of pydantic-ai.
    server = loopback(default=text("Hello!", delay_s=0.3))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "agentrig", "run", str(tmp_path), "--out", str(out), "-j", jobs]
    command += ["--model", "openai:gpt-4o-2024-08-06", "--base-url", server.openai_base_url]
    environment = {**os.environ, "PYDANTIC_AI_NO_BANNER": "1"}
    environment.pop("PYTHONWARNINGS", None)

    finished = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)

    assert finished.returncode == 0, finished.stdout + finished.stderr
    report = jsonio.read_json_file(out / "report.json")
    for scenario in report["scenarios"]:
        (record,) = scenario["warnings"]
        assert (record["category"], record["module"], record["count"]) == (
            "DeprecatedModelWarning",
            "pydantic_ai.models",
            1,
        ), scenario["name"]
    assert sorted(scenario["name"] for scenario in report["scenarios"]) == sorted(names)
    if jobs == "1":  # one lane starts all four before it awaits any (-j 2: however the workers took them)
        assert server.peak_in_flight > 1
    assert "warnings: 4 shown in 4 scenarios\n" in finished.stdout
    assert "DeprecatedModelWarning" not in finished.stderr
