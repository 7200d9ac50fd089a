"""Run the composite action in action.yml the way the runner does, minus the `uses:` steps (recorded, not run).

Only the expressions action.yml needs are understood (`inputs.X`, `steps.ID.outputs.Y`, `==`/`!=` against a string
literal, `&&`, `!cancelled()`); anything else raises, so a new expression in action.yml has to be taught here first
instead of being silently mis-evaluated.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

ROOT = Path(__file__).parents[2]
ACTION_FILE = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMPARISON = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")
PINNED_USES = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


@dataclass(slots=True, kw_only=True)
class ActionRun:
    """What running the action produced: its status, each step's outputs, and the `uses:` steps it reached."""

    exit_code: int = 0
    outputs: dict[str, str] = field(default_factory=dict[str, str])
    step_outputs: dict[str, dict[str, str]] = field(default_factory=dict[str, dict[str, str]])
    uses: list[tuple[str, dict[str, str]]] = field(default_factory=list[tuple[str, dict[str, str]]])
    ran: list[str] = field(default_factory=list[str])


def load_action() -> dict[str, Any]:
    """action.yml as parsed YAML."""
    return cast(dict[str, Any], yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8")))


def steps_of(action: dict[str, Any]) -> list[dict[str, Any]]:
    """The composite action's steps."""
    return cast(list[dict[str, Any]], action["runs"]["steps"])


def _reference(name: str, inputs: dict[str, str], run: ActionRun) -> str:
    parts = name.split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        return inputs[parts[1]]
    if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
        return run.step_outputs.get(parts[1], {}).get(parts[3], "")
    raise ValueError(f"expression not understood by this test: {name}")


def _substitute(text: str, inputs: dict[str, str], run: ActionRun) -> str:
    return EXPRESSION.sub(lambda match: _reference(match.group(1), inputs, run), text)


def _condition(text: str, inputs: dict[str, str], run: ActionRun) -> bool:
    expression = text.strip()
    if expression.startswith("${{"):
        expression = expression.removeprefix("${{").removesuffix("}}").strip()
    result = True
    for term in (part.strip() for part in expression.split("&&")):
        if term == "!cancelled()":
            continue
        comparison = COMPARISON.match(term)
        if comparison is None:
            raise ValueError(f"condition not understood by this test: {term}")
        left, operator, literal = comparison.groups()
        equal = _reference(left, inputs, run) == literal
        result = result and (equal if operator == "==" else not equal)
    return result


def _read_outputs(path: Path) -> dict[str, str]:
    outputs: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, separator, value = line.partition("=")
        if separator:
            outputs[key] = value
    return outputs


def run_action(
    given: dict[str, str], *, workspace: Path, step_summary: Path, path_prefix: list[Path], temp: Path
) -> ActionRun:
    """Run action.yml's steps with `given` inputs over the defaults, from `workspace`, as GitHub would."""
    action = load_action()
    declared = cast(dict[str, dict[str, Any]], action["inputs"])
    unknown = set(given) - set(declared)
    if unknown:
        raise ValueError(f"action.yml declares no input {sorted(unknown)}")
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()} | given
    run = ActionRun()
    failed = False
    for index, step in enumerate(steps_of(action)):
        condition = step.get("if")
        if condition is None:
            if failed:  # GitHub's implicit success(): skipped once a step has failed
                continue
        elif not _condition(str(condition), inputs, run):
            continue
        if "uses" in step:
            with_values = cast(dict[str, Any], step.get("with", {}))
            resolved = {key: _substitute(str(value), inputs, run) for key, value in with_values.items()}
            run.uses.append((str(step["uses"]), resolved))
            continue
        assert step.get("shell") == "bash", f"step {index}: the test runs bash steps only"
        script = str(step["run"])
        outputs_file = temp / f"step-{index}-outputs"
        outputs_file.write_text("", encoding="utf-8")
        script_file = temp / f"step-{index}.sh"
        script_file.write_text(script, encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "INPUT_"))}
        env |= {key: _substitute(str(value), inputs, run) for key, value in step.get("env", {}).items()}
        env |= {
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_OUTPUT": str(outputs_file),
            "GITHUB_STEP_SUMMARY": str(step_summary),
            "PATH": os.pathsep.join([*map(str, path_prefix), env.get("PATH", "")]),
        }
        working_directory = workspace / _substitute(str(step.get("working-directory", ".")), inputs, run)
        # The command line GitHub uses for `shell: bash`.
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=working_directory,
            env=env,
            check=False,
        )
        run.ran.append(str(step.get("name", index)))
        if "id" in step:
            run.step_outputs[str(step["id"])] = _read_outputs(outputs_file)
        if completed.returncode != 0:
            failed = True
            run.exit_code = completed.returncode
    declared_outputs = cast(dict[str, dict[str, Any]], action.get("outputs", {}))
    run.outputs = {name: _substitute(str(spec["value"]), inputs, run) for name, spec in declared_outputs.items()}
    return run
