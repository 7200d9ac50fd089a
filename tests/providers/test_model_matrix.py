"""`agentrig matrix --models A,B` against the loopback provider: the same suite on each model, side by side (status,
tokens, cost, latency), regressions against the baseline model, and the same comparison from recordings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import text

pytestmark = pytest.mark.providers

_MODELS = "openai:gpt-4o,openai:gpt-4o-mini"


def _write(tmp_path: Path) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "greet.yaml").write_text(
        "name: greet\nturns:\n  - user: Say hello.\n    expect:\n      output: {contains: hello}\n", encoding="utf-8"
    )
    return directory


def _matrix(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    try:
        main(["matrix", *args])
        code: Any = 0
    except SystemExit as exited:
        code = exited.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 1), captured.out + captured.err


def test_models_side_by_side_with_a_regression(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("hello", input_tokens=1000, output_tokens=100), text("goodbye", output_tokens=7)])
    out = tmp_path / "m"
    args = [str(_write(tmp_path)), "--models", _MODELS, "--out", str(out), "--base-url", server.openai_base_url]
    code, output = _matrix(capsys, *args)
    assert code == 1, output  # the baseline passes, gpt-4o-mini fails: a regression
    assert "regression: greet failed on openai:gpt-4o-mini" in output

    document = jsonio.read_json_file(out / "compatibility.json")
    assert document["axis"] == "model"
    assert [version["version"] for version in document["versions"]] == ["openai:gpt-4o", "openai:gpt-4o-mini"]
    (scenario,) = document["scenarios"]
    assert scenario["statuses"] == {"openai:gpt-4o": "passed", "openai:gpt-4o-mini": "failed"}
    assert scenario["canonical_differs"] == ["openai:gpt-4o-mini"]  # what changed: the answer
    baseline = scenario["metrics"]["openai:gpt-4o"]
    assert (baseline["input_tokens"], baseline["output_tokens"]) == (1000, 100)
    assert baseline["cost_usd"] > 0
    assert document["versions"][1]["totals"]["output_tokens"] == 7
    page = (out / "compatibility.md").read_text(encoding="utf-8")
    assert page.startswith("# Model compatibility")
    assert "| `openai:gpt-4o` (baseline) | 1 | 0 | 0 | 0 | 1 | 1,000 / 100 | $" in page
    assert "pass · 1,100 tok · $" in page
    diff = (out / scenario["diffs"][0]).read_text(encoding="utf-8")
    assert "goodbye" in diff
    assert (out / "compatibility.html").is_file()


def test_models_compared_from_their_recordings_offline(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback(default=text("hello"))
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    base = [str(scenarios), "--models", _MODELS, "--recordings", str(recordings)]
    live = [*base, "--out", str(tmp_path / "live"), "--base-url", server.openai_base_url, "--record-mode", "all"]
    assert _matrix(capsys, *live)[0] == 0
    assert len(server.requests) == 2
    assert (recordings / "openai:gpt-4o-mini" / "greet.json").is_file()

    code, output = _matrix(capsys, *base, "--out", str(tmp_path / "replayed"), "--record-mode", "none")
    assert code == 0, output
    assert len(server.requests) == 2  # offline, and without a key
    document = jsonio.read_json_file(tmp_path / "replayed" / "compatibility.json")
    assert document["scenarios"][0]["statuses"] == {"openai:gpt-4o": "passed", "openai:gpt-4o-mini": "passed"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "gpt-4o"], "--models: 'gpt-4o' is not provider:name"),
        (["--models", "openai:a,openai:a"], "a model is listed twice"),
        (["--models", "openai:a", "--versions", "2.38.0"], "drop --versions"),
        (["--base-url", "http://127.0.0.1:9"], "--base-url: only with --models"),
        (["--models", "openai:a", "--recordings", "r"], "--recordings needs --record-mode"),
    ],
)
def test_bad_model_matrix_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, output = _matrix(capsys, str(_write(tmp_path)), "--out", str(tmp_path / "m"), *args)
    assert code == 2, output
    assert message in output
    assert len(output.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("shape", ["project root", "foreign run folder"])
def test_models_never_replace_a_folder_agentrig_did_not_write(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    """--out of a model matrix is claimed as the version matrix's is: a project root, or a model's run folder holding
    a foreign report.json, is refused before any model runs, with every file left as it was."""
    server = loopback(default=text("hello"))
    scenarios = _write(tmp_path)
    out = tmp_path / "out"
    (out / "openai:gpt-4o").mkdir(parents=True)
    sentinels = {
        out / "openai:gpt-4o" / "report.json": '{"mine": true}\n',  # e.g. `agentrig run --json > report.json`
        out / "openai:gpt-4o" / "keep.txt": "keep\n",
    }
    if shape == "project root":
        sentinels[out / "README.md"] = "mine\n"
    for path, content in sentinels.items():
        path.write_text(content, encoding="utf-8")
    args = [str(scenarios), "--models", _MODELS, "--out", str(out), "--base-url", server.openai_base_url]
    code, output = _matrix(capsys, *args)
    assert code == 2, output
    assert "touched nothing" in output
    if shape == "foreign run folder":
        assert "openai:gpt-4o" in output
    assert {path: path.read_text(encoding="utf-8") for path in sentinels} == sentinels
    assert server.requests == []  # refused before any model ran


def test_a_model_matrix_replaces_its_own_folder(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One model: what is replaced (OUT's own files, and OUT/<model> as each model's run replaces it) is the same for
    # one model as for two, and each model is an `agentrig run` process of its own (about 2 s each here).
    server = loopback(default=text("hello"))
    scenarios, out = _write(tmp_path), tmp_path / "m"
    for _ in range(2):
        args = [str(scenarios), "--models", "openai:gpt-4o", "--out", str(out), "--base-url", server.openai_base_url]
        code, output = _matrix(capsys, *args)
        assert code == 0, output
        assert jsonio.read_json_file(out / "openai:gpt-4o" / "report.json")["scenarios"][0]["status"] == "passed"
    assert (out / ".agentrig-manifest.jsonl").is_file()
    assert len(server.requests) == 2  # the second matrix ran its model again, in the folder the first one wrote
