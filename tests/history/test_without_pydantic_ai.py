"""The canonical commands and the tinyagent engine run where pydantic-ai cannot be imported.

Each command runs in a fresh interpreter in which importing pydantic-ai (or pydantic-graph) fails, as it
would where it is not installed. `nox -s removal` does the same in an environment without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "tests" / "history" / "tinyagent_data" / "tunacode_session.json"
GOLDEN = REPO / "scenarios" / "golden" / "tool-roundtrip.json"

_BLOCKED = (
    "import sys\n"
    "for name in ('pydantic_ai', 'pydantic_graph'):\n"
    "    sys.modules[name] = None  # import fails with ImportError\n"
    "from agentrig.cli import main\n"
    "main(sys.argv[1:])\n"
)


def _agentrig(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYDANTIC_AI_NO_BANNER": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_the_block_works(tmp_path: Path) -> None:
    # `convert --to pydantic-ai` needs pydantic-ai: it must fail here, or the other tests prove nothing.
    result = _agentrig("convert", str(GOLDEN), "--to", "pydantic-ai", cwd=tmp_path)
    assert result.returncode != 0
    assert "pydantic_ai" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["check", str(SESSION), str(GOLDEN)],
        ["convert", str(SESSION)],
        ["convert", str(SESSION), "--to", "tinyagent"],
        ["convert", str(GOLDEN), "--to", "tinyagent", "--session"],
        ["validate", str(REPO / "scenarios")],
        ["schema"],
        ["diff", str(GOLDEN), str(GOLDEN)],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("/"))[:40],
)
def test_canonical_commands_need_no_pydantic_ai(args: list[str], tmp_path: Path) -> None:
    result = _agentrig(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_the_tinyagent_engine_needs_no_pydantic_ai(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _agentrig("run", "scenarios/tool_retry.yaml", "--engine", "tinyagent", "--out", str(out), cwd=REPO)
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.splitlines()[-1] == "1 passed, 0 failed, 0 skipped"
    merged = _agentrig("merge", str(out), "--out", str(tmp_path / "merged"), cwd=REPO)
    assert merged.returncode == 0, merged.stderr
