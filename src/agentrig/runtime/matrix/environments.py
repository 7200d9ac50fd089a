"""`agentrig matrix`: run a scenario suite on several pydantic-ai versions, one environment per version.

    result = run_matrix(MatrixOptions(paths=(Path("scenarios"),), versions=("2.38.0", "2.68.0"), out=Path("m")))

For each version an environment `.agentrig/matrix/py<X.Y>-<version>/` is built, or reused when it already holds
that pin, with one resolver call that installs the user's project (editable), agentrig from the same source as the
running one, and `pydantic-ai-slim==V pydantic-graph==V`. uv builds it when it can be found, else `python -m venv`
and pip; with it go the optional extras the scenarios need (`matrix.extras`: the UI adapters, pydantic-ai-harness).
Each environment then runs `python -m agentrig run PATHS --out OUT/<version>` in a subprocess, and
`matrix_compare` compares the outputs and `matrix_report` writes the report. This module never imports pydantic-ai:
the versions under test live only in the subprocesses.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentrig.errors import EXIT_USAGE, AgentrigError, InfrastructureError, UsageError
from agentrig.runtime.history import jsonio
from agentrig.runtime.history.owned_folder import Layout, OwnedFolder, verify_folder
from agentrig.runtime.matrix.compare import VersionOutput, load_version_output
from agentrig.runtime.matrix.extras import pin_requirements, scenario_extras
from agentrig.runtime.matrix.report import MatrixReport, build_report
from agentrig.runtime.reports.render import COMPATIBILITY_HTML
from agentrig.runtime.reports.report_files import RUN_LAYOUT

__all__ = [
    "EnvironmentSpec",
    "MatrixOptions",
    "agentrig_install_args",
    "claim_matrix_out",
    "ensure_environment",
    "environment_spec",
    "find_uv",
    "run_matrix",
    "run_side_by_side",
]

VERSION_PATTERN = re.compile(r"[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?(\.post[0-9]+|\.dev[0-9]+)?")
"""A release number as pip pins it (2.38.0, 2.61.0b1, 2.60.0.post1); anything else is a usage error."""
MARKER_FILE = "agentrig-matrix.json"
MARKER_FORMAT = "agentrig.matrix-env/1"
LOG_TAIL_LINES = 20
INSTALLED_VERSION_SCRIPT = "import importlib.metadata as m; print(m.version('pydantic-ai-slim'))"
# The real path behind a virtualenv's python symlink: environments built from any venv of one base Python are the same.
PYTHON_PROBE_SCRIPT = "import os, sys; print(os.path.realpath(sys.executable)); print('%d.%d' % sys.version_info[:2])"

Progress = Callable[[str], None]
_T = TypeVar("_T")

MATRIX_LAYOUT = Layout(
    kind="matrix",
    files=frozenset({"compatibility.json", "compatibility.md", COMPATIBILITY_HTML}),
    trees=frozenset({"logs", "diffs"}),
)
"""What `agentrig matrix` writes in OUT itself; OUT/<version>/ are the versions' own run folders (`RUN_LAYOUT`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MatrixOptions:
    """What `agentrig matrix` was asked to do."""

    paths: tuple[Path, ...]
    """Scenario files or directories, passed unchanged to `agentrig run` in each environment."""
    versions: tuple[str, ...]
    """pydantic-ai versions to run, the first being the baseline every other version is compared with."""
    out: Path
    """Output directory: `<version>/` run outputs, `compatibility.json`, `compatibility.md`, `diffs/`."""
    project: Path | None = None
    """The user's project, installed editable in every environment; None installs no project."""
    python: str = sys.executable
    """The interpreter each environment is built from (a path or a name on PATH)."""
    jobs: int = 1
    """How many versions build and run at the same time."""
    env_root: Path = Path(".agentrig/matrix")
    """Where the per-version environments live."""
    rebuild: bool = False
    """Build every environment afresh instead of reusing it."""
    run_args: tuple[str, ...] = ()
    """Extra `agentrig run` arguments (for example `-k retry`), the same for every version."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentSpec:
    """One environment to build: where, from which interpreter, and what to install."""

    version: str
    """The pinned pydantic-ai version."""
    python: str
    """Absolute path of the base interpreter."""
    location: Path
    """The environment directory."""
    install_args: tuple[str, ...]
    """Arguments of the single install call (requirements and `-e DIR` entries)."""

    @property
    def env_python(self) -> Path:
        """The environment's own interpreter."""
        return self.location / "bin" / "python"


def find_uv() -> str | None:
    """The uv executable: on PATH, or shipped by the `uv` Python package; None when neither exists."""
    on_path = shutil.which("uv")
    if on_path:
        return on_path
    try:
        module = importlib.import_module("uv")
        return str(module.find_uv_bin())
    except (ImportError, FileNotFoundError, AttributeError):
        return None


def probe_python(python: str) -> tuple[str, str]:
    """(absolute executable path, "X.Y") of an interpreter; a missing one is a usage error."""
    executable = shutil.which(python) or (python if Path(python).is_file() else None)
    if executable is None:
        raise UsageError(f"--python {python}: no such interpreter")
    try:
        completed = subprocess.run(
            [executable, "-c", PYTHON_PROBE_SCRIPT], capture_output=True, text=True, check=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise UsageError(f"--python {python}: cannot run it ({error})") from None
    path, version = completed.stdout.split()
    return path, version


def agentrig_install_args() -> tuple[str, ...]:
    """How to install the agentrig that is running now: its local source (editable if it is) or the same release."""
    try:
        distribution = importlib.metadata.distribution("agentrig")
    except importlib.metadata.PackageNotFoundError:
        distribution = None
    if distribution is not None:
        # PEP 610: pip and uv record where a distribution came from; editable and local installs are file:// URLs.
        direct_url = distribution.read_text("direct_url.json")
        if direct_url:
            data = json.loads(direct_url)
            url = str(data.get("url", ""))
            if url.startswith("file://"):
                path = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
                editable = bool(data.get("dir_info", {}).get("editable"))
                return ("-e", path) if editable else (path,)
        return (f"agentrig=={distribution.version}",)
    source = Path(__file__).resolve().parents[3]
    if (source / "pyproject.toml").is_file():
        return ("-e", str(source))
    raise InfrastructureError("cannot tell where the running agentrig was installed from; install it with pip first")


def environment_spec(
    version: str,
    *,
    python: str,
    python_version: str,
    env_root: Path,
    project: Path | None,
    extras: Sequence[str] = (),
) -> EnvironmentSpec:
    """The environment for one pydantic-ai version: project + agentrig + the pin (with the `extras` the scenarios
    need, `matrix.extras`), in one install call."""
    agentrig_args = agentrig_install_args()
    install: list[str] = []
    if project is not None:
        project_path = str(project.resolve())
        agentrig_path = agentrig_args[-1]
        # agentrig's own repository is its own "project": install it once.
        if not (Path(agentrig_path).exists() and Path(agentrig_path).resolve() == Path(project_path)):
            install += ["-e", project_path]
    install += [*agentrig_args, *pin_requirements(version, extras)]
    return EnvironmentSpec(
        version=version,
        python=python,
        location=(env_root / f"py{python_version}-{version}").absolute(),
        install_args=tuple(install),
    )


def environment_marker(spec: EnvironmentSpec) -> dict[str, object]:
    return {
        "format": MARKER_FORMAT,
        "pydantic_ai_version": spec.version,
        "python": spec.python,
        "install": list(spec.install_args),
    }


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    # uv must use the interpreter it is given, never download one (CI machines reach only PyPI).
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.setdefault("UV_NATIVE_TLS", "1")  # the system certificate store, as pip uses (TLS-inspecting proxies)
    env["PYDANTIC_AI_NO_BANNER"] = "1"
    env.pop("VIRTUAL_ENV", None)  # uv and pip would otherwise prefer the caller's activated environment
    return env


def version_run_env() -> dict[str, str]:
    """The environment of one version's `agentrig run`: without GITHUB_STEP_SUMMARY, so a CI job summary gets the
    matrix's one comparison instead of every version's own run summary."""
    env = _subprocess_env()
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def installed_version(env_python: Path) -> str | None:
    """The pydantic-ai-slim version installed in an environment, or None when it has none (or is broken)."""
    if not env_python.is_file():
        return None
    completed = subprocess.run(
        [str(env_python), "-c", INSTALLED_VERSION_SCRIPT], capture_output=True, text=True, env=_subprocess_env()
    )
    return completed.stdout.strip() if completed.returncode == 0 else None


def _is_reusable(spec: EnvironmentSpec) -> bool:
    marker_path = spec.location / MARKER_FILE
    if not marker_path.is_file():
        return False
    try:
        marker = jsonio.read_json_file(marker_path)
    except AgentrigError:  # a damaged marker only means "build it again"
        return False
    return marker == environment_marker(spec) and installed_version(spec.env_python) == spec.version


def _remove_environment(spec: EnvironmentSpec) -> None:
    location = spec.location
    if not location.exists():
        return
    # Only ever delete what looks like a virtual environment (or an empty directory): never a user's files.
    if (location / "pyvenv.cfg").is_file() or (location.is_dir() and not any(location.iterdir())):
        shutil.rmtree(location)
        return
    raise InfrastructureError(
        f"pydantic-ai {spec.version}: cannot build the environment: {location} exists and is not a virtual environment"
    )


def _run_step(spec: EnvironmentSpec, command: Sequence[str]) -> None:
    completed = subprocess.run(list(command), capture_output=True, text=True, env=_subprocess_env())
    if completed.returncode != 0:
        reason = last_line(completed.stderr or completed.stdout)
        raise InfrastructureError(f"pydantic-ai {spec.version}: cannot build the environment {spec.location}: {reason}")


def ensure_environment(spec: EnvironmentSpec, *, uv: str | None, rebuild: bool = False) -> bool:
    """Build the environment unless it already holds the pin; True when it was reused. Raises InfrastructureError."""
    if not rebuild and _is_reusable(spec):
        return True
    _remove_environment(spec)
    spec.location.parent.mkdir(parents=True, exist_ok=True)
    python = str(spec.env_python)
    if uv is not None:
        _run_step(spec, [uv, "venv", "--quiet", "--python", spec.python, str(spec.location)])
        _run_step(spec, [uv, "pip", "install", "--quiet", "--python", python, *spec.install_args])
    else:
        _run_step(spec, [spec.python, "-m", "venv", str(spec.location)])
        _run_step(spec, [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *spec.install_args])
    found = installed_version(spec.env_python)
    if found != spec.version:
        raise InfrastructureError(
            f"pydantic-ai {spec.version}: cannot build the environment {spec.location}: "
            f"it resolved pydantic-ai-slim {found or 'nothing'} instead"
        )
    jsonio.write_atomic(spec.location / MARKER_FILE, jsonio.dumps(environment_marker(spec), pretty=True))
    return False


def run_command(spec: EnvironmentSpec, options: MatrixOptions) -> tuple[str, ...]:
    """The `agentrig run` command line executed inside one environment."""
    out = options.out / spec.version
    return (
        str(spec.env_python),
        "-m",
        "agentrig",
        "run",
        *map(str, options.paths),
        "--out",
        str(out),
        *options.run_args,
    )


def _display_path(argument: str) -> str:
    """An argument as a reader would type it: paths under the working directory made relative."""
    path = Path(argument)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return str(path.relative_to(Path.cwd()))
    return argument


def _status_counts(output: VersionOutput) -> str:
    if output.error is not None:
        return f"agentrig run failed (exit {output.exit_code}): {last_line(output.error)}"
    counts = Counter(output.statuses.values())
    parts = [f"{counts['passed']} passed"]
    parts += [f"{counts[name]} {name}" for name in ("failed", "error", "skipped") if counts[name]]
    return ", ".join(parts)


def run_side_by_side(run: Callable[[int, Progress], _T], count: int, *, jobs: int, progress: Progress) -> list[_T]:
    """`run(index, progress)` for index 1..count on up to `jobs` threads, their progress lines one at a time; the
    results in order once every run has ended (then the first failure in that order is raised)."""
    lock = threading.Lock()

    def locked_progress(line: str) -> None:
        with lock:
            progress(line)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run, index, locked_progress) for index in range(1, count + 1)]
    return [future.result() for future in futures]


def _run_version(
    index: int, spec: EnvironmentSpec, options: MatrixOptions, uv: str | None, progress: Progress, folder: OwnedFolder
) -> VersionOutput:
    prefix = f"[{index}/{len(options.versions)}] pydantic-ai {spec.version}"
    reused = ensure_environment(spec, uv=uv, rebuild=options.rebuild)
    progress(f"{prefix}: environment ready ({'reused' if reused else 'built'})")
    # OUT/<version> is that run's own output folder: `agentrig run --out` replaces an earlier run's there (its
    # manifest, checked before the matrix started), so no stale scenario leaks into the comparison.
    run_dir = options.out / spec.version
    command = run_command(spec, options)
    completed = subprocess.run(list(command), capture_output=True, text=True, env=version_run_env())
    log = options.out / "logs" / f"{spec.version}.log"
    jsonio.write_atomic(log, (completed.stdout + completed.stderr).encode(), before_replace=folder.record_replaced)
    output = load_version_output(
        spec.version,
        run_dir,
        exit_code=completed.returncode,
        stderr_tail=log_tail(completed.stderr),
        environment=spec.location,
        reused=reused,
        command=tuple(_display_path(part) for part in command),
    )
    progress(f"{prefix}: {_status_counts(output)}")
    return output


def _ignore_in_git(env_root: Path) -> None:
    """Keep the environments out of the user's repository, as pytest and ruff do with their caches."""
    env_root.mkdir(parents=True, exist_ok=True)
    ignore = env_root / ".gitignore"
    if not ignore.exists():
        ignore.write_text(
            "# Created by agentrig matrix: per-version environments, safe to delete.\n*\n", encoding="utf-8"
        )


def _require_baseline_report(baseline: VersionOutput) -> None:
    """Without the baseline's report nothing can be compared: a bad scenario file is the user's (exit 2), else 3."""
    if baseline.error is None:
        return
    reason = last_line(baseline.error).removeprefix("agentrig: error: ")
    message = (
        f"pydantic-ai {baseline.version} (baseline): agentrig run left no report (exit {baseline.exit_code}): {reason}"
    )
    if baseline.exit_code == EXIT_USAGE:
        raise UsageError(message)
    raise InfrastructureError(message)


def claim_matrix_out(out: Path, run_folders: Sequence[str]) -> OwnedFolder:
    """Check every folder a matrix writes before anything is built or written: each run folder `OUT/<name>` (its
    `agentrig run` would refuse it only after an environment was built), then OUT itself, claimed. Its writes are
    then recorded through `OwnedFolder.record_replaced`, and `finish` removes what an earlier matrix left."""
    for name in run_folders:
        verify_folder(out / name, label=f"--out {out / name}", layout=RUN_LAYOUT)
    return OwnedFolder.claim(out, label=f"--out {out}", layout=MATRIX_LAYOUT)


def run_matrix(options: MatrixOptions, *, command_line: str = "", progress: Progress = print) -> MatrixReport:
    """Build or reuse one environment per version, run the suite in each, write and return the comparison."""
    if not options.versions:
        raise UsageError("--versions: give at least one pydantic-ai version")
    for version in options.versions:
        if not VERSION_PATTERN.fullmatch(version):
            raise UsageError(f"--versions: {version!r} is not a version number (like 2.38.0)")
    if len(set(options.versions)) != len(options.versions):
        raise UsageError(f"--versions {','.join(options.versions)}: a version is listed twice")
    python, python_version = probe_python(options.python)
    uv = find_uv()
    extras = scenario_extras(options.paths)
    specs = [
        environment_spec(
            version,
            python=python,
            python_version=python_version,
            env_root=options.env_root,
            project=options.project,
            extras=extras,
        )
        for version in options.versions
    ]
    folder = claim_matrix_out(options.out, options.versions)
    _ignore_in_git(options.env_root)
    outputs = run_side_by_side(
        lambda index, report: _run_version(index, specs[index - 1], options, uv, report, folder),
        len(specs),
        jobs=options.jobs,
        progress=progress,
    )
    _require_baseline_report(outputs[0])
    report = build_report(
        outputs,
        python_version=python_version,
        paths=options.paths,
        out=options.out,
        command=command_line,
        record=folder.record_replaced,
    )
    folder.finish()  # the diffs and logs of an earlier matrix this one did not write again
    return report
