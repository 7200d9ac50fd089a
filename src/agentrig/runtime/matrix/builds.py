"""One pydantic-ai version's environment: what it installs (`environment_spec`) and building it (`ensure_environment`).

An environment `.agentrig/matrix/py<X.Y>-<version>/` holds the user's project (editable), agentrig from the same
source as the running one, and `pydantic-ai-slim==V pydantic-graph==V` with the extras the scenarios need
(`extras`), installed in one resolver call: uv when it can be found, else `python -m venv` and pip. It is reused
while its marker file says it holds that pin.

With `--lock FILE` (`lockfiles`) the environment is `py<X.Y>-<version>-lock-<digest>/` and is built by uv from the
lock: `uv pip compile` resolves the project, agentrig, the pin and every locked package, preferring the lock's
version of each (uv keeps the versions of an existing output file unless the requirements force another), so only
pydantic-ai and what the new pydantic-ai forces move; `uv pip install` then installs exactly that.

Every step's output is kept (`transcript`): the build log the report shows the end of when a build fails.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentrig.errors import AgentrigError, InfrastructureError, UsageError
from agentrig.runtime.matrix.extras import pin_requirements
from agentrig.runtime.matrix.lockfiles import LockFile
from agentrig.runtime.runfolder import jsonio

__all__ = [
    "MARKER_FILE",
    "EnvironmentSpec",
    "agentrig_install_args",
    "build_env",
    "ensure_environment",
    "environment_marker",
    "environment_spec",
    "find_uv",
    "installed_version",
    "last_line",
    "log_tail",
    "probe_python",
    "probe_python_release",
    "version_run_env",
]

MARKER_FILE = "agentrig-matrix.json"
MARKER_FORMAT = "agentrig.matrix-env/1"
LOG_TAIL_LINES = 20
INSTALLED_VERSION_SCRIPT = "import importlib.metadata as m; print(m.version('pydantic-ai-slim'))"
# The real path behind a virtualenv's python symlink: environments built from any venv of one base Python are the same.
PYTHON_PROBE_SCRIPT = (
    "import os, platform, sys; print(os.path.realpath(sys.executable)); print('%d.%d' % sys.version_info[:2]); "
    "print(platform.python_version())"
)
REQUIREMENTS_IN = "agentrig-requirements.in"
"""With --lock: what the environment asks for, one requirement a line."""
RESOLVED = "agentrig-requirements.txt"
"""With --lock: seeded with the lock's pins (the resolver's preferences), then uv's resolution, installed as is."""


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
    lock: LockFile | None = None
    """The user's lock file the environment is built from (`--lock`); None resolves afresh."""

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


def _probe(python: str) -> tuple[str, str, str]:
    executable = shutil.which(python) or (python if Path(python).is_file() else None)
    if executable is None:
        raise UsageError(f"--python {python}: no such interpreter")
    try:
        completed = subprocess.run(
            [executable, "-c", PYTHON_PROBE_SCRIPT], capture_output=True, text=True, check=True, timeout=60
        )
        path, version, release = completed.stdout.split()
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        raise UsageError(f"--python {python}: cannot run it ({error})") from None
    return path, version, release


def probe_python(python: str) -> tuple[str, str]:
    """(absolute executable path, "X.Y") of an interpreter; a missing one is a usage error."""
    path, version, _ = _probe(python)
    return path, version


def probe_python_release(python: str) -> str:
    """The interpreter's full version ("3.11.9"): what the index's `requires-python` and lock markers are judged for."""
    return _probe(python)[2]


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
    lock: LockFile | None = None,
) -> EnvironmentSpec:
    """The environment for one pydantic-ai version: project + agentrig + the pin (with the `extras` the scenarios
    need, `matrix.extras`; with `lock`, every package it pins, unpinned: the lock's versions are preferences), in
    one install call."""
    agentrig_args = agentrig_install_args()
    install: list[str] = []
    if project is not None:
        project_path = str(project.resolve())
        agentrig_path = agentrig_args[-1]
        # agentrig's own repository is its own "project": install it once.
        if not (Path(agentrig_path).exists() and Path(agentrig_path).resolve() == Path(project_path)):
            install += ["-e", project_path]
    install += [*agentrig_args, *pin_requirements(version, extras)]
    name = f"py{python_version}-{version}"
    if lock is not None:
        if lock.full_pydantic_ai:
            install.append(f"pydantic-ai=={version}")
        install += lock.requirements()
        name += f"-lock-{lock.sha256[:12]}"
    return EnvironmentSpec(
        version=version,
        python=python,
        location=(env_root / name).absolute(),
        install_args=tuple(install),
        lock=lock,
    )


def environment_marker(spec: EnvironmentSpec) -> dict[str, object]:
    marker: dict[str, object] = {
        "format": MARKER_FORMAT,
        "pydantic_ai_version": spec.version,
        "python": spec.python,
        "install": list(spec.install_args),
    }
    if spec.lock is not None:
        marker["lock"] = {"file": str(spec.lock.path), "sha256": spec.lock.sha256}
    return marker


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def build_env(index_url: str | None = None) -> dict[str, str]:
    """The environment of the resolver's and the environments' own processes (`index_url`: `--index-url`)."""
    env = dict(os.environ)
    # uv must use the interpreter it is given, never download one (CI machines reach only PyPI).
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env.setdefault("UV_NATIVE_TLS", "1")  # the system certificate store, as pip uses (TLS-inspecting proxies)
    env["PYDANTIC_AI_NO_BANNER"] = "1"
    env.pop("VIRTUAL_ENV", None)  # uv and pip would otherwise prefer the caller's activated environment
    if index_url is not None:  # the index the versions were read from is the one the environments install from
        env["UV_DEFAULT_INDEX"] = env["UV_INDEX_URL"] = env["PIP_INDEX_URL"] = index_url
    return env


def version_run_env() -> dict[str, str]:
    """The environment of one version's `agentrig run`: without GITHUB_STEP_SUMMARY, so a CI job summary gets the
    matrix's one comparison instead of every version's own run summary."""
    env = build_env()
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def installed_version(env_python: Path) -> str | None:
    """The pydantic-ai-slim version installed in an environment, or None when it has none (or is broken)."""
    if not env_python.is_file():
        return None
    completed = subprocess.run(
        [str(env_python), "-c", INSTALLED_VERSION_SCRIPT], capture_output=True, text=True, env=build_env()
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


def _run_step(spec: EnvironmentSpec, command: Sequence[str], transcript: list[str], env: dict[str, str]) -> None:
    transcript.append("$ " + " ".join(command) + "\n")
    try:
        completed = subprocess.run(list(command), capture_output=True, text=True, env=env)
    except OSError as error:
        transcript.append(f"{error}\n")
        raise InfrastructureError(
            f"pydantic-ai {spec.version}: cannot build the environment {spec.location}: {error}"
        ) from None
    transcript.append(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        reason = last_line(completed.stderr or completed.stdout)
        raise InfrastructureError(f"pydantic-ai {spec.version}: cannot build the environment {spec.location}: {reason}")


def _install_from_lock(spec: EnvironmentSpec, uv: str, transcript: list[str], env: dict[str, str]) -> None:
    assert spec.lock is not None
    python = str(spec.env_python)
    wanted, resolved = spec.location / REQUIREMENTS_IN, spec.location / RESOLVED
    lines: list[str] = []
    arguments = list(spec.install_args)
    while arguments:
        argument = arguments.pop(0)
        lines.append(f"-e {arguments.pop(0)}" if argument == "-e" and arguments else argument)
    wanted.write_text("\n".join(lines) + "\n", encoding="utf-8")
    resolved.write_text("\n".join(spec.lock.preferences()) + "\n", encoding="utf-8")
    _run_step(spec, [uv, "pip", "compile", str(wanted), "-o", str(resolved), "--python", python], transcript, env)
    _run_step(spec, [uv, "pip", "install", "--python", python, "-r", str(resolved)], transcript, env)


def ensure_environment(
    spec: EnvironmentSpec,
    *,
    uv: str | None,
    rebuild: bool = False,
    transcript: list[str] | None = None,
    index_url: str | None = None,
) -> bool:
    """Build the environment unless it already holds the pin; True when it was reused. Each step's command and
    output go to `transcript`. Raises InfrastructureError (exit 3) naming the version."""
    log: list[str] = transcript if transcript is not None else []
    if not rebuild and _is_reusable(spec):
        return True
    _remove_environment(spec)
    spec.location.parent.mkdir(parents=True, exist_ok=True)
    python = str(spec.env_python)
    env = build_env(index_url)
    if spec.lock is not None:
        if uv is None:  # run_matrix refuses --lock without uv first; this is the last guard
            raise InfrastructureError(f"pydantic-ai {spec.version}: --lock needs uv to build the environment")
        _run_step(spec, [uv, "venv", "--quiet", "--python", spec.python, str(spec.location)], log, env)
        _install_from_lock(spec, uv, log, env)
    elif uv is not None:
        _run_step(spec, [uv, "venv", "--quiet", "--python", spec.python, str(spec.location)], log, env)
        _run_step(spec, [uv, "pip", "install", "--python", python, *spec.install_args], log, env)
    else:
        _run_step(spec, [spec.python, "-m", "venv", str(spec.location)], log, env)
        pip = [python, "-m", "pip", "install", "--disable-pip-version-check", *spec.install_args]
        _run_step(spec, pip, log, env)
    found = installed_version(spec.env_python)
    if found != spec.version:
        raise InfrastructureError(
            f"pydantic-ai {spec.version}: cannot build the environment {spec.location}: "
            f"it resolved pydantic-ai-slim {found or 'nothing'} instead"
        )
    jsonio.write_atomic(spec.location / MARKER_FILE, jsonio.dumps(environment_marker(spec), pretty=True))
    return False
