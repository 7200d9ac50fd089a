"""No file `agentrig run` writes contains an API key, whatever a tool or the model echoed."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrig.cli import app
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.reports.runs import readable_text

SECRET = "sk-agentrig-test-0123456789abcdef"

_SCENARIO = f"""\
name: leaky-tool
tools:
  env:
    results:
      - return: "OPENAI_API_KEY={SECRET}"
turns:
  - user: Show me the environment.
    model:
      - tool_calls: [{{id: tc_1, name: env, args: {{}}}}]
        usage: {{input_tokens: 10, output_tokens: 2}}
      - text: "The key is {SECRET}."
        usage: {{input_tokens: 20, output_tokens: 8}}
"""


def test_run_outputs_never_contain_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "leaky.yaml").write_text(_SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "leaky.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = [path for path in out.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {"report.json", "report.html", "junit.xml", "summary.md", "history.json"}
    for path in written:
        assert SECRET not in readable_text(path), path
    assert "[REDACTED]" in (out / "scenarios" / "leaky-tool" / "history.json").read_text(encoding="utf-8")
    assert SECRET not in result.output


# A code snippet in a prompt, a tool's arguments and an answer: JSON escapes its quotes (`api_key=\"...`), so a
# redaction of serialized bytes ate the backslash and ended the string early.
_QUOTED_KEYS = """\
name: quoted-keys
tools:
  configure:
    results:
      - return: 'headers = {"Authorization": "Bearer x"}'
turns:
  - user: 'Fix this: client = Client(api_key="YOUR_KEY")'
    model:
      - tool_calls: [{id: tc_1, name: configure, args: {snippet: 'api_key="YOUR_KEY"'}}]
      - text: 'Send the header Authorization: "Bearer x" and api_key="YOUR_KEY".'
    expect:
      output:
        equals: 'not the answer: api_key="YOUR_KEY"'
"""


def test_quoted_keys_in_prompts_and_answers_leave_every_file_valid_json(tmp_path: Path) -> None:
    (tmp_path / "quoted.yaml").write_text(_QUOTED_KEYS, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "quoted.yaml"), "--out", str(out)])
    assert result.exit_code == 1, result.output  # the deliberately wrong `equals` fails; nothing else does
    written = sorted(out.rglob("*.json"))
    assert {path.name for path in written} == {
        "report.json",
        "history.json",
        "session.json",
        "usage.json",
        "pydantic_ai_dump.json",
    }
    for path in written:
        document = jsonio.read_json_file(path)  # raises on invalid JSON
        assert "YOUR_KEY" not in jsonio.dumps(document).decode(), path
    history = (out / "scenarios" / "quoted-keys" / "history.json").read_text(encoding="utf-8")
    assert 'api_key=\\"[REDACTED]\\"' in history
    ElementTree.parse(out / "junit.xml")
    assert "YOUR_KEY" not in (out / "junit.xml").read_text(encoding="utf-8")


# A PEM key in a secret variable: a unified diff puts each of its lines on a line of its own (behind `+`), and a
# golden file's diff quotes it as JSON text (`\n` escaped); neither holds the value as it is in the environment.
_PEM = (
    "-----BEGIN TEST PRIVATE KEY-----\n"
    "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
    "KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm\n"
    "Q9x2=\n"
    "-----END TEST PRIVATE KEY-----"
)


def _pem_scenario(golden: Path) -> str:
    answer = jsonio.dumps(f"The key:\n{_PEM}\nKeep it safe.").decode()
    return (
        "name: pem-echo\n"
        "turns:\n"
        "  - user: Show the signing key.\n"
        "    model:\n"
        f"      - text: {answer}\n"
        "    expect:\n"
        "      output: {equals: 'I cannot show keys.'}\n"
        "expect:\n"
        f"  golden: {golden.name}\n"
    )


def test_a_multi_line_secret_split_by_a_diff_reaches_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SIGNING_SECRET", _PEM)
    golden = tmp_path / "pem.golden.json"
    golden.write_text('{"format": "agentrig.history/1", "messages": []}\n', encoding="utf-8")
    (tmp_path / "pem.yaml").write_text(_pem_scenario(golden), encoding="utf-8")
    out = tmp_path / "out"

    code, stdout, stderr = run_main(capsys, "run", str(tmp_path / "pem.yaml"), "--out", str(out))

    assert code == 1, stdout + stderr  # the output and the golden differ: both diffs are shown
    outputs = {
        "stdout": stdout + stderr,
        **{path.name: path.read_text(encoding="utf-8") for path in (out / "report.json", out / "junit.xml")},
        "summary.md": (out / "summary.md").read_text(encoding="utf-8"),
    }
    checks = jsonio.read_json_file(out / "report.json")["scenarios"][0]["checks"]
    details = {check["name"]: check["detail"] for check in checks}
    assert "+[REDACTED]" in details["turn 1: output.equals"]  # the diff is there, with the key redacted whole
    assert "[REDACTED]" in details["scenario: golden"]
    lines = [line for line in _PEM.splitlines() if line]
    assert "Q9x2=" in lines  # the short line, too short to be a secret alone, goes with the rest
    leaks = {name: [line for line in lines if line in text] for name, text in outputs.items()}
    assert leaks == {name: [] for name in outputs}
