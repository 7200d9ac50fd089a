"""`agentrig matrix --models A,B`: a model upgrade checked like a library upgrade.

    report = run_model_matrix(ModelMatrixOptions(paths=(Path("scenarios"),), models=("openai:gpt-4o", "openai:gpt-4.1"),
                                                 out=Path("m")))

The same suite runs once per model, in this environment (one pydantic-ai version), as
`python -m agentrig run PATHS --out OUT/<model> --model MODEL [run arguments]`: live, or replayed from each
model's own recordings (`--recordings DIR --record-mode MODE`: `DIR/<model>/`). The runs are then compared as the
version matrix compares its versions (`compare`, `report`: the same compatibility.md, .json and .html), the first
model being the baseline, with each model's requests, tokens, cost and latency beside its statuses
(`model_tables`). A scenario that passes on the baseline and fails on another model is a regression (exit 1).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentrig.errors import EXIT_USAGE, InfrastructureError, UsageError
from agentrig.runtime.matrix.compare import VersionOutput, load_version_output
from agentrig.runtime.matrix.environments import (
    claim_matrix_out,
    last_line,
    log_tail,
    run_side_by_side,
    version_run_env,
)
from agentrig.runtime.matrix.report import MatrixReport, build_report
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.owned_folder import OwnedFolder

__all__ = ["ModelMatrixOptions", "model_label", "parse_models", "run_model_matrix"]

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelMatrixOptions:
    """What `agentrig matrix --models` was asked to do."""

    paths: tuple[Path, ...]
    """Scenario files or directories, passed unchanged to every `agentrig run`."""
    models: tuple[str, ...]
    """`provider:name` models, the first being the baseline."""
    out: Path
    """Output directory: `<model>/` run outputs, `compatibility.json`, `compatibility.md`, `diffs/`."""
    jobs: int = 1
    """How many models run at the same time."""
    run_args: tuple[str, ...] = ()
    """Extra `agentrig run` arguments, the same for every model (`-k`, `--base-url`, `--max-cost`, `--repeat` ...)."""
    recordings: Path | None = None
    """Each model's recordings are `recordings/<model>/` (with `record_mode`)."""
    record_mode: str | None = None
    """`agentrig run --record-mode` for every model (`none`: replay each model's recordings offline)."""


def model_label(model: str) -> str:
    """A model's column: its name, a slash made `~` (it names the model's run directory)."""
    return model.replace("/", "~")


def parse_models(text: str) -> tuple[str, ...]:
    """`A,B[,...]` -> the models; a usage error for none, a repeat, or one that is not `provider:name`."""
    models = tuple(item.strip() for item in text.split(",") if item.strip())
    if not models:
        raise UsageError("--models: give at least one provider:name, e.g. --models openai:gpt-4o,openai:gpt-4.1")
    for model in models:
        provider, _, name = model.partition(":")
        if not provider or not name or model_label(model) in (".", ".."):
            raise UsageError(f"--models: {model!r} is not provider:name (e.g. openai:gpt-4o)")
    if len({model_label(model) for model in models}) != len(models):
        raise UsageError(f"--models {text}: a model is listed twice")
    return models


def _run_command(model: str, options: ModelMatrixOptions) -> tuple[str, ...]:
    label = model_label(model)
    recording = ()
    if options.record_mode is not None:
        directory = (options.recordings or Path("recordings")) / label
        recording = ("--record-mode", options.record_mode, "--record", str(directory))
    run_dir = options.out / label
    paths = tuple(map(str, options.paths))
    run = (sys.executable, "-m", "agentrig", "run", *paths, "--out", str(run_dir), "--model", model)
    return (*run, *recording, *options.run_args)


def _run_model(
    index: int, model: str, options: ModelMatrixOptions, progress: Progress, folder: OwnedFolder
) -> VersionOutput:
    label = model_label(model)
    # OUT/<model> is that run's own output folder: `agentrig run --out` replaces an earlier run's there (its manifest,
    # checked before the matrix started), so no stale scenario leaks into the comparison.
    run_dir = options.out / label
    command = _run_command(model, options)
    completed = subprocess.run(list(command), capture_output=True, text=True, env=version_run_env())
    log = options.out / "logs" / f"{label}.log"
    jsonio.write_atomic(log, (completed.stdout + completed.stderr).encode(), before_replace=folder.record_replaced)
    output = load_version_output(
        label,
        run_dir,
        exit_code=completed.returncode,
        stderr_tail=log_tail(completed.stderr),
        command=("agentrig", *command[3:]),
    )
    summary = (
        f"agentrig run failed (exit {output.exit_code}): {last_line(output.error)}"
        if output.error is not None
        else ", ".join(f"{sum(1 for s in output.statuses.values() if s == n)} {n}" for n in ("passed", "failed"))
    )
    progress(f"[{index}/{len(options.models)}] {model}: {summary}")
    return output


def run_model_matrix(
    options: ModelMatrixOptions, *, command_line: str = "", progress: Progress = print
) -> MatrixReport:
    """Run the suite once per model, then write and return the side-by-side comparison."""
    if not options.models:
        raise UsageError("--models: give at least one provider:name")
    for path in options.paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    folder = claim_matrix_out(options.out, [model_label(model) for model in options.models])
    outputs = run_side_by_side(
        lambda index, report: _run_model(index, options.models[index - 1], options, report, folder),
        len(options.models),
        jobs=options.jobs,
        progress=progress,
    )
    baseline = outputs[0]
    if baseline.error is not None:  # nothing to compare with: a bad scenario file is the user's (exit 2), else 3
        reason = last_line(baseline.error).removeprefix("agentrig: error: ")
        message = f"{options.models[0]} (baseline): agentrig run left no report (exit {baseline.exit_code}): {reason}"
        raise UsageError(message) if baseline.exit_code == EXIT_USAGE else InfrastructureError(message)
    python_version = f"{sys.version_info.major}.{sys.version_info.minor}"
    report = build_report(
        outputs,
        python_version=python_version,
        paths=options.paths,
        out=options.out,
        command=command_line,
        axis="model",
        record=folder.record_replaced,
    )
    folder.finish()  # the diffs and logs of an earlier matrix this one did not write again
    return report
