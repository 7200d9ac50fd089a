"""The CI workflows in examples/ci/: the copies in docs/ci.md, the action inputs they use, the upgrade pin reader."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from tests.ci.action_runner import PINNED_USES, ROOT, load_action

pytestmark = pytest.mark.process

EXAMPLES = ROOT / "examples" / "ci"
DOC = ROOT / "docs" / "ci.md"
EMBEDDED = re.compile(r"<!-- (examples/ci/[\w.-]+\.yml) -->\n```yaml\n(.*?)```\n", re.DOTALL)
ACTION_PLACEHOLDER = "OWNER/agentrig@0000000000000000000000000000000000000000"


def workflow(name: str) -> dict[str, Any]:
    return cast(dict[str, Any], yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8")))


def all_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = cast(dict[str, dict[str, Any]], document["jobs"])
    return [step for job in jobs.values() for step in cast(list[dict[str, Any]], job["steps"])]


def test_every_example_workflow_is_in_docs_ci_md_word_for_word() -> None:
    embedded = dict(EMBEDDED.findall(DOC.read_text(encoding="utf-8")))
    files = {f"examples/ci/{path.name}": path.read_text(encoding="utf-8") for path in sorted(EXAMPLES.glob("*.yml"))}

    assert sorted(embedded) == sorted(files)
    for name, text in files.items():
        assert embedded[name] == text, f"docs/ci.md's copy of {name} differs from the file"


@pytest.mark.parametrize("name", sorted(path.name for path in EXAMPLES.glob("*.yml")))
def test_examples_pin_every_action_and_give_the_agentrig_action_only_inputs_it_declares(name: str) -> None:
    declared = set(cast(dict[str, Any], load_action()["inputs"]))
    uses_agentrig = False
    for step in all_steps(workflow(name)):
        if "uses" not in step:
            assert "${{" not in step["run"], f"{name}: expression inside run: {step['run']!r}"
            continue
        assert PINNED_USES.match(step["uses"]), f"{name}: not pinned to a commit: {step['uses']}"
        if step["uses"] == ACTION_PLACEHOLDER:
            uses_agentrig = True
            assert set(step.get("with", {})) <= declared, f"{name}: inputs action.yml does not declare"
    assert uses_agentrig


UV_LOCK = """\
[[package]]
name = "pydantic-ai-slim"
version = "{version}"
source = {{ registry = "https://pypi.org/simple" }}
"""


def read_pins(tmp_path: Path, base: dict[str, str], head: dict[str, str]) -> tuple[int, dict[str, str], str]:
    """Run the upgrade workflow's `versions` step in a workspace holding `head` and `.agentrig-base/` holding `base`."""
    for root, files in ((tmp_path, head), (tmp_path / ".agentrig-base", base)):
        root.mkdir(exist_ok=True)
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
    [step] = [step for step in all_steps(workflow("pydantic-ai-upgrade.yml")) if step.get("id") == "versions"]
    outputs, summary = tmp_path / "outputs", tmp_path / "summary"
    outputs.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env={key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
        | {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
        },
        check=False,
    )
    lines = outputs.read_text(encoding="utf-8").splitlines()
    return completed.returncode, dict(line.split("=", 1) for line in lines), summary.read_text(encoding="utf-8")


def test_the_upgrade_workflow_reads_the_old_and_new_pin_from_uv_lock(tmp_path: Path) -> None:
    code, outputs, summary = read_pins(
        tmp_path,
        base={"uv.lock": UV_LOCK.format(version="2.60.0"), "pyproject.toml": 'dependencies = ["pydantic-ai==1.0.0"]\n'},
        head={"uv.lock": UV_LOCK.format(version="2.68.0"), "requirements.txt": "pydantic-ai-slim==1.0.0\n"},
    )

    assert code == 0
    assert outputs == {"old": "2.60.0", "new": "2.68.0", "changed": "true"}
    assert summary == ""


def test_the_upgrade_workflow_reads_requirement_pins_and_skips_an_unchanged_one(tmp_path: Path) -> None:
    # One-line and one-per-line dependency lists both count.
    # A commented-out pin is not the pin.
    pyproject = '[project]\ndependencies = [\n    # pydantic-ai==1.0.0\n    "pydantic-ai[openai]==2.60.0",\n]\n'
    code, outputs, summary = read_pins(
        tmp_path,
        base={"pyproject.toml": 'dependencies = ["pydantic-ai-slim[openai]==2.60.0", "typer"]\n'},
        head={"pyproject.toml": pyproject},
    )

    assert code == 0
    assert outputs == {"old": "2.60.0", "new": "2.60.0", "changed": "false"}
    assert summary == "pydantic-ai 2.60.0 is unchanged by this pull request: nothing to compare.\n"


@pytest.mark.parametrize(
    "pyproject",
    ['dependencies = ["pydantic-ai-slim>=2.38"]\n', 'dependencies = ["pydantic-ai-slim==$(touch pwned)"]\n'],
    ids=["no-pin", "not-a-release"],
)
def test_the_upgrade_workflow_stops_without_a_pinned_release(tmp_path: Path, pyproject: str) -> None:
    code, outputs, _ = read_pins(
        tmp_path, base={"pyproject.toml": pyproject}, head={"uv.lock": UV_LOCK.format(version="2.68.0")}
    )

    assert code != 0
    assert outputs == {}
    assert not (tmp_path / "pwned").exists()
