"""`agentrig matrix`: run a scenario suite on several pydantic-ai versions, one environment per version.

    result = run_matrix(MatrixOptions(paths=(Path("scenarios"),), versions=("2.68.0", "latest"), out=Path("m")))

`--versions` is resolved first (`version_selection`: exact pins, `latest`, `locked`, PEP 440 ranges, read from
the package index at run time: `package_index`), and `--lock FILE` read (`lockfiles`). For each version an
environment is built, or reused when it already holds that pin (`builds`); its packages and its field inventory
are read from inside it (`packages`, `field_inventory`), and it runs `python -m agentrig run PATHS --out
OUT/<version>` in a subprocess. An environment that cannot be built leaves its error and the end of its build log
(`OUT/logs/<version>.build.log`) for the report, and the others still run (the exit code is then 3). `compare`
compares the outputs and `report` writes the report. This module never imports pydantic-ai: the versions under
test live only in the subprocesses.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from agentrig.errors import EXIT_PROVIDER, EXIT_USAGE, InfrastructureError, UsageError
from agentrig.runtime.matrix.builds import (
    MARKER_FILE,
    EnvironmentSpec,
    agentrig_install_args,
    ensure_environment,
    environment_marker,
    environment_spec,
    find_uv,
    installed_version,
    last_line,
    log_tail,
    probe_python,
    probe_python_release,
    version_run_env,
)
from agentrig.runtime.matrix.compare import VersionOutput, load_version_output
from agentrig.runtime.matrix.extras import scenario_extras
from agentrig.runtime.matrix.field_inventory import read_inventory
from agentrig.runtime.matrix.lockfiles import LockFile, read_lock
from agentrig.runtime.matrix.package_index import index_url, read_releases
from agentrig.runtime.matrix.packages import read_packages
from agentrig.runtime.matrix.report import MatrixReport, build_report
from agentrig.runtime.matrix.version_selection import (
    DEFAULT_MAX_VERSIONS,
    Each,
    Resolution,
    resolve_versions,
)
from agentrig.runtime.reports.render import COMPATIBILITY_HTML
from agentrig.runtime.reports.report_files import RUN_LAYOUT
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.owned_folder import Layout, OwnedFolder, verify_folder

__all__ = [
    "MARKER_FILE",
    "EnvironmentSpec",
    "MatrixOptions",
    "agentrig_install_args",
    "claim_matrix_out",
    "ensure_environment",
    "environment_marker",
    "environment_spec",
    "find_uv",
    "installed_version",
    "last_line",
    "log_tail",
    "probe_python",
    "resolve_matrix_versions",
    "run_matrix",
    "run_side_by_side",
    "version_run_env",
]

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
    """What `--versions` lists, the first being the baseline every other version is compared with: exact versions,
    `latest`, `locked`, PEP 440 ranges (`version_selection`)."""
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
    each: Each = "release"
    """What a range runs: each `release` in it, or each `minor`'s newest release."""
    max_versions: int = DEFAULT_MAX_VERSIONS
    """At most this many versions when ranges add some (the oldest a range matched are left out)."""
    pre: bool = False
    """Let `latest` and ranges choose pre-releases."""
    index_url: str | None = None
    """The package index `latest` and ranges are read from and the environments install from (`--index-url`);
    None: UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL or PyPI for the versions, the resolvers' own settings for
    the installs."""
    lock: Path | None = None
    """The user's lock file every environment is built from (`--lock`), with only pydantic-ai moved."""


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
        # Every environment installs the extras its scenarios name (`extras.py`): one that is missing there is a
        # failed install, to show as an error, not a scenario skipped as on a plain install.
        "--require-extras",
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


def _build_failed(
    spec: EnvironmentSpec, options: MatrixOptions, error: InfrastructureError, transcript: str
) -> VersionOutput:
    """The output of a version whose environment could not be built: its error and the end of its build log."""
    return VersionOutput(
        version=spec.version,
        directory=options.out / spec.version,
        exit_code=EXIT_PROVIDER,
        error=error.message,
        build_error=error.message,
        build_log=log_tail(transcript),
        environment=spec.location,
    )


def _run_version(
    index: int,
    total: int,
    spec: EnvironmentSpec,
    options: MatrixOptions,
    uv: str | None,
    progress: Progress,
    folder: OwnedFolder,
) -> VersionOutput:
    prefix = f"[{index}/{total}] pydantic-ai {spec.version}"
    transcript: list[str] = []
    build_log = options.out / "logs" / f"{spec.version}.build.log"
    try:
        reused = ensure_environment(
            spec, uv=uv, rebuild=options.rebuild, transcript=transcript, index_url=options.index_url
        )
    except InfrastructureError as error:
        # The other versions still run: the page shows this one's error and build log, and the matrix exits 3.
        text = "".join(transcript) or error.message + "\n"
        jsonio.write_atomic(build_log, text.encode(), before_replace=folder.record_replaced)
        progress(f"{prefix}: environment not built: {error.message.removeprefix(f'pydantic-ai {spec.version}: ')}")
        return _build_failed(spec, options, error, text)
    if not reused:
        jsonio.write_atomic(build_log, "".join(transcript).encode(), before_replace=folder.record_replaced)
    progress(f"{prefix}: environment ready ({'reused' if reused else 'built'})")
    packages, packages_error = read_packages(spec.env_python, version_run_env())
    inventory = read_inventory(spec.env_python, version_run_env())
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
    return replace(output, packages=packages, packages_error=packages_error, field_inventory=inventory)


def _ignore_in_git(env_root: Path) -> None:
    """Keep the environments out of the user's repository, as pytest and ruff do with their caches."""
    env_root.mkdir(parents=True, exist_ok=True)
    ignore = env_root / ".gitignore"
    if not ignore.exists():
        ignore.write_text(
            "# Created by agentrig matrix: per-version environments, safe to delete.\n*\n", encoding="utf-8"
        )


def _require_baseline_report(baseline: VersionOutput) -> None:
    """Without the baseline's report nothing can be compared: a bad scenario file is the user's (exit 2), else 3.
    A baseline whose environment could not be built still gets its page (its error on it), and exits 3."""
    if baseline.error is None or baseline.build_error is not None:
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


def resolve_matrix_versions(options: MatrixOptions, python: str, lock: LockFile | None) -> Resolution:
    """`options.versions` resolved (the index read only when an item needs it, for the environments' Python)."""
    index = index_url(options.index_url, os.environ)
    return resolve_versions(
        options.versions,
        releases=lambda: read_releases(index, python_version=probe_python_release(python)),
        each=options.each,
        max_versions=options.max_versions,
        pre=options.pre,
        locked=lock.pydantic_ai if lock is not None else None,
    )


def run_matrix(options: MatrixOptions, *, command_line: str = "", progress: Progress = print) -> MatrixReport:
    """Resolve the versions, build or reuse one environment per version, run the suite in each, write and return
    the comparison."""
    python, python_version = probe_python(options.python)
    uv = find_uv()
    lock: LockFile | None = None
    if options.lock is not None:
        if uv is None:
            raise UsageError("--lock needs uv to build the environments from it (pip install uv)")
        lock = read_lock(options.lock, python_version=probe_python_release(python))
    resolution = resolve_matrix_versions(options, python, lock)
    for note in resolution.notes:
        progress(f"versions: {note}")
    extras = scenario_extras(options.paths)
    specs = [
        environment_spec(
            version,
            python=python,
            python_version=python_version,
            env_root=options.env_root,
            project=options.project,
            extras=extras,
            lock=lock,
        )
        for version in resolution.versions
    ]
    folder = claim_matrix_out(options.out, resolution.versions)
    _ignore_in_git(options.env_root)
    outputs = run_side_by_side(
        lambda index, report: _run_version(index, len(specs), specs[index - 1], options, uv, report, folder),
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
        resolution=resolution if resolution.resolved else None,
        lock=lock,
    )
    folder.finish()  # the diffs and logs of an earlier matrix this one did not write again
    return report
