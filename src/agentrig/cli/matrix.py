"""`agentrig matrix [PATHS]`: run the scenarios on several pydantic-ai versions and compare the results.

Only typer and the standard library are imported here; the engine is imported inside the command.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from agentrig.cli import provider_flags as flags

HELP = (
    "Run the scenarios on several pydantic-ai versions, one environment per version, and compare them.\n\n"
    "Each version gets an environment in .agentrig/matrix/py<X.Y>-<version>/ (reused when it already holds the pin) "
    "with your project (--project, installed editable), this agentrig and pydantic-ai-slim==VERSION, installed in one "
    "resolver call by uv when available, else by pip. The scenarios then run in each with "
    "`agentrig run PATHS --out OUT/<version>`.\n\n"
    "--versions takes exact versions, `latest` (the newest pydantic-ai-slim release on the package index, read now), "
    "`locked` (the version --lock pins) and PEP 440 ranges, each release in the range or each minor's newest "
    "(--each minor), at most --max-versions in all (the oldest a range matched are left out, and named):\n\n"
    "  agentrig matrix --versions 2.68.0,latest\n\n"
    "  agentrig matrix --versions '>=2.60,<3' --each minor --max-versions 4\n\n"
    "  agentrig matrix --lock uv.lock --versions locked,latest\n\n"
    "The index is --index-url, else UV_DEFAULT_INDEX, UV_INDEX_URL or PIP_INDEX_URL, else PyPI (a file:// index is a "
    "PEP 503 directory). With --lock FILE (uv.lock, poetry.lock, pylock.toml, or a requirements file of pins) every "
    "environment is that lock with only pydantic-ai moved, and what the new pydantic-ai forces (built by uv).\n\n"
    "Each environment's packages are recorded; beside a regression the page names every package that differs from "
    "the baseline's environment, and says so when one other than pydantic-ai changed. It also names the fields of "
    "pydantic-ai's messages a version adds that the canonical form does not carry, and warnings new on a version "
    "(docs/matrix.md).\n\n"
    "OUT/compatibility.md and OUT/compatibility.json give scenario x version results, whether the canonical histories "
    "are identical on every version, how the raw pydantic-ai dumps differ, and the commands that reproduce it; "
    "OUT/diffs/<scenario>/ holds unified diffs against the first (baseline) version; OUT/compatibility.html shows "
    "it all in a browser, one column per version (docs/report.md).\n\n"
    "With --models A,B the columns are models instead: the same suite runs with `agentrig run --model M` for each, in "
    "this environment, live or from each model's recordings (--record-mode, --recordings DIR/<model>/), and the page "
    "shows status, tokens, cost and latency per model and how the histories changed (docs/providers.md).\n\n"
    "OUT is replaced only if agentrig can prove every file there its own (its manifest, as `agentrig run --out`); "
    "each OUT/<version>/ (or OUT/<model>/) is that run's folder, checked before anything runs.\n\n"
    "Exit codes: 0 no regression; 1 a version (or model) fails a scenario that passes on the baseline; 2 usage error "
    "(a range no release matches, a lock file that cannot be read or pins no pydantic-ai), or an OUT holding files "
    "agentrig did not write; 3 an environment could not be built (the page is still written, with its error and build "
    "log), the package index cannot be read, the baseline's run left no report, or the disk is full."
)

DEFAULT_PATHS = [Path("scenarios")]
# Not inside agentrig-out/: `agentrig run` refuses an --out directory holding files its manifest does not list.
DEFAULT_OUT = Path("agentrig-matrix")


def _command_line(
    paths: list[Path],
    versions: tuple[str, ...],
    out: Path,
    python: str | None,
    project: Path | None,
    jobs: int,
    keyword: str | None,
    stream: bool = False,
    provider_arguments: tuple[str, ...] = (),
    version_arguments: tuple[str, ...] = (),
) -> str:
    """The `agentrig matrix` command that reproduces this run (written into the report)."""
    argv = ["agentrig", "matrix", *map(str, paths), "--versions", ",".join(versions), *version_arguments]
    argv += ["--out", str(out)]
    if keyword is not None:
        argv += ["-k", keyword]
    if stream:
        argv += ["--stream"]
    if project is not None:
        argv += ["--project", str(project)]
    if python is not None:
        argv += ["--python", python]
    if jobs != 1:
        argv += ["--jobs", str(jobs)]
    return shlex.join([*argv, *provider_arguments])


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("matrix", help=HELP, short_help="Run the scenarios across pinned pydantic-ai versions and compare.")
    def matrix(  # pyright: ignore[reportUnusedFunction]
        paths: Annotated[
            list[Path] | None,
            typer.Argument(metavar="PATH", help="Scenario files or directories. (default: scenarios)"),
        ] = None,
        versions: Annotated[
            str | None,
            typer.Option(
                "--versions",
                metavar="VERSIONS",
                help="Comma-separated, baseline first: versions (2.68.0), latest, locked (with --lock), PEP 440 ranges "
                "('>=2.68,<3'). (default: the pinned list; with --lock: locked,latest)",
            ),
        ] = None,
        each: Annotated[
            str | None,
            typer.Option(
                "--each",
                metavar="release|minor",
                help="What a range runs: each release in it, or each minor's newest release. (default: release)",
            ),
        ] = None,
        max_versions: Annotated[
            int | None,
            typer.Option(
                "--max-versions",
                metavar="N",
                help="At most N versions when ranges add some; the oldest a range matched are left out. (default: 8)",
            ),
        ] = None,
        pre: Annotated[
            bool, typer.Option("--pre", help="Let latest and ranges choose pre-releases (skipped otherwise).")
        ] = False,
        index_url: Annotated[
            str | None,
            typer.Option(
                "--index-url",
                metavar="URL",
                help="The package index latest and ranges are read from and the environments install from. "
                "(default: UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL, else PyPI)",
            ),
        ] = None,
        lock: Annotated[
            Path | None,
            typer.Option(
                "--lock",
                metavar="FILE",
                help="Build every environment from this lock file (uv.lock, poetry.lock, pylock.toml, requirements "
                "of pins), only pydantic-ai moved. Needs uv.",
            ),
        ] = None,
        project: Annotated[
            Path | None,
            typer.Option(
                "--project",
                metavar="DIR",
                help="Your project, installed editable in every environment. (default: the current directory if it "
                "has a pyproject.toml)",
            ),
        ] = None,
        out: Annotated[
            Path, typer.Option("--out", metavar="DIR", help="Where the runs, report and diffs go.")
        ] = DEFAULT_OUT,
        python: Annotated[
            str | None,
            typer.Option(
                "--python", metavar="PYTHON", help="Build the environments from this interpreter. (default: this one)"
            ),
        ] = None,
        jobs: Annotated[
            int, typer.Option("--jobs", "-j", metavar="N", min=1, help="Versions built and run at the same time.")
        ] = 1,
        rebuild: Annotated[bool, typer.Option("--rebuild", help="Build every environment afresh.")] = False,
        keyword: Annotated[
            str | None,
            typer.Option("-k", metavar="EXPR", help="Select scenarios, as `agentrig run -k` does, in every version."),
        ] = None,
        stream: Annotated[
            bool, typer.Option("--stream", help="Run every scenario streamed, as `agentrig run --stream` does.")
        ] = False,
        models: Annotated[
            str | None,
            typer.Option(
                "--models",
                metavar="MODELS",
                help="Comma-separated provider:name models, baseline first: compare models instead of versions.",
            ),
        ] = None,
        base_url: Annotated[
            str | None,
            typer.Option("--base-url", metavar="URL", help="With --models: an OpenAI- or Anthropic-compatible server."),
        ] = None,
        record_mode: Annotated[
            str | None,
            typer.Option(
                "--record-mode",
                metavar="none|once|new_episodes|all",
                help="With --models: none (replay each model's recordings offline), once, new_episodes or all.",
            ),
        ] = None,
        recordings: Annotated[
            Path | None,
            typer.Option(
                "--recordings", metavar="DIR", help="With --record-mode: each model's recordings are DIR/<model>/."
            ),
        ] = None,
        prices: Annotated[
            Path | None,
            typer.Option(
                "--prices", metavar="FILE", help="With --models: prices for models genai-prices does not know."
            ),
        ] = None,
        max_cost: Annotated[
            float | None,
            typer.Option("--max-cost", metavar="USD", help="With --models: the budget of each model's run, in USD."),
        ] = None,
        repeat: Annotated[
            int | None,
            typer.Option(
                "--repeat",
                metavar="N",
                help="With --models: run each scenario N times per model (pass rates with their intervals, and each "
                "judged check's scores).",
            ),
        ] = None,
        pass_rate: Annotated[
            float | None,
            typer.Option(
                "--pass-rate", metavar="RATE", help="With --models and --repeat: the pass rate a scenario needs."
            ),
        ] = None,
        timeout: flags.TurnTimeout = None,
        max_concurrency: flags.MaxConcurrency = 8,
        adaptive_concurrency: flags.AdaptiveConcurrency = None,
        rpm: flags.Rpm = None,
        tpm: flags.Tpm = None,
        max_attempts: flags.MaxAttempts = None,
        max_retry_wait: flags.MaxRetryWait = None,
        retry_budget: flags.RetryBudget = None,
        request_timeout: flags.RequestTimeout = None,
    ) -> None:
        import sys

        from agentrig.errors import UsageError
        from agentrig.runtime.matrix.environments import MatrixOptions, run_matrix
        from agentrig.runtime.matrix.version_selection import DEFAULT_MAX_VERSIONS, EACH_CHOICES, split_versions
        from agentrig.runtime.models.provider_options import check_positive_seconds
        from agentrig.runtime.versions import PYDANTIC_AI_VERSIONS

        check_positive_seconds(timeout, "--timeout")
        provider = flags.provider_options(
            max_concurrency=max_concurrency,
            adaptive_concurrency=adaptive_concurrency,
            rpm=rpm,
            tpm=tpm,
            max_attempts=max_attempts,
            max_retry_wait=max_retry_wait,
            retry_budget=retry_budget,
            request_timeout=request_timeout,
        )
        # Passed on to `agentrig run` in every environment (each run has its own limiter: with --jobs > 1, versions
        # running at the same time each get the bounds).
        provider_arguments = flags.as_arguments(provider, timeout=timeout)
        model_flags: dict[str, object] = {
            "--base-url": base_url,
            "--record-mode": record_mode,
            "--recordings": recordings,
        }
        model_flags |= {"--prices": prices, "--max-cost": max_cost, "--repeat": repeat, "--pass-rate": pass_rate}
        version_flags = {
            "--each": each,
            "--max-versions": max_versions,
            "--pre": pre or None,
            "--index-url": index_url,
            "--lock": lock,
        }
        if models is not None:
            if any(value is not None for value in version_flags.values()):
                named = ", ".join(flag for flag, value in version_flags.items() if value is not None)
                raise UsageError(f"{named}: only without --models (they choose the pydantic-ai versions)")
            _run_models(
                paths or DEFAULT_PATHS, models, out, jobs, keyword, stream, model_flags, versions, provider_arguments
            )
        given = [flag for flag, value in model_flags.items() if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: only with --models (the version matrix runs the scripts)")

        default = ("locked", "latest") if lock is not None else PYDANTIC_AI_VERSIONS
        chosen = split_versions(versions) if versions is not None else default
        if not chosen:
            raise UsageError("--versions: give at least one pydantic-ai version, e.g. --versions 2.38.0,2.68.0")
        if each is not None and each not in EACH_CHOICES:
            raise UsageError(f"--each {each}: give {' or '.join(EACH_CHOICES)}")
        if max_versions is not None and max_versions < 1:
            raise UsageError(f"--max-versions {max_versions}: give at least 1")
        version_arguments = (
            *(("--each", each) if each is not None else ()),
            *(("--max-versions", str(max_versions)) if max_versions is not None else ()),
            *(("--pre",) if pre else ()),
            *(("--index-url", index_url) if index_url is not None else ()),
            *(("--lock", str(lock)) if lock is not None else ()),
        )
        scenario_paths = paths or DEFAULT_PATHS
        for path in scenario_paths:
            if not path.exists():
                raise UsageError(f"{path}: no such file or directory")
        if project is not None and not (project / "pyproject.toml").is_file() and not (project / "setup.py").is_file():
            raise UsageError(f"--project {project}: no pyproject.toml or setup.py there")
        installed_project = (
            project if project is not None else (Path.cwd() if Path("pyproject.toml").is_file() else None)
        )
        options = MatrixOptions(
            paths=tuple(scenario_paths),
            versions=chosen,
            out=out,
            project=installed_project,
            python=python or sys.executable,
            jobs=jobs,
            rebuild=rebuild,
            run_args=(
                *(("-k", keyword) if keyword is not None else ()),
                *(("--stream",) if stream else ()),
                *provider_arguments,
            ),
            each="minor" if each == "minor" else "release",
            max_versions=max_versions if max_versions is not None else DEFAULT_MAX_VERSIONS,
            pre=pre,
            index_url=index_url,
            lock=lock,
        )
        command_line = _command_line(
            scenario_paths, chosen, out, python, project, jobs, keyword, stream, provider_arguments, version_arguments
        )
        report = run_matrix(options, command_line=command_line, progress=lambda line: typer.echo(line, err=True))
        canonical_changed = sum(1 for item in report.scenarios if item.canonical_differs)
        raw_changed = sum(1 for item in report.scenarios if item.raw_differs)
        typer.echo(
            f"{len(report.scenarios)} scenarios x {len(report.versions)} versions: {len(report.regressions)} "
            f"regression(s); canonical histories differ in {canonical_changed}, raw pydantic-ai dumps in {raw_changed}"
        )
        typer.echo(f"wrote {out / 'compatibility.md'}, {out / 'compatibility.json'} and {out / 'compatibility.html'}")
        for regression in report.regressions:
            typer.echo(f"regression: {regression.scenario} {regression.status} on pydantic-ai {regression.version}")
        for output in report.not_built:  # the page has the build log; the error line is the command's
            typer.echo(f"agentrig: error: {output.build_error}", err=True)
        # SystemExit, not typer.Exit: `main()` runs click with standalone_mode=False, which returns (drops) a
        # typer.Exit code instead of exiting with it.
        raise SystemExit(report.exit_code)


def _run_models(
    paths: list[Path],
    models: str,
    out: Path,
    jobs: int,
    keyword: str | None,
    stream: bool,
    flags: dict[str, object],
    versions: str | None,
    provider_arguments: tuple[str, ...] = (),
) -> None:
    """`agentrig matrix --models`: the same suite on each model, side by side; exits with the report's code.
    `provider_arguments`: the provider layer's flags (`--max-concurrency`, `--rpm`, ...) for each model's run."""
    from agentrig.errors import UsageError
    from agentrig.runtime.matrix.models import ModelMatrixOptions, parse_models, run_model_matrix

    if versions is not None:
        raise UsageError("--models compares models in this environment; drop --versions (or run the two separately)")
    chosen = parse_models(models)
    record_mode = flags.pop("--record-mode")
    recordings = flags.pop("--recordings")
    if recordings is not None and record_mode is None:
        raise UsageError("--recordings needs --record-mode (none replays each model's recordings)")
    run_args = [
        *(("-k", keyword) if keyword is not None else ()),
        *(("--stream",) if stream else ()),
        *provider_arguments,
    ]
    for flag, value in flags.items():
        if value is not None:
            run_args += [flag, str(value)]
    options = ModelMatrixOptions(
        paths=tuple(paths),
        models=chosen,
        out=out,
        jobs=jobs,
        run_args=tuple(run_args),
        recordings=Path(str(recordings)) if recordings is not None else None,
        record_mode=str(record_mode) if record_mode is not None else None,
    )
    argv = ["agentrig", "matrix", *map(str, paths), "--models", ",".join(chosen), "--out", str(out)]
    if record_mode is not None:
        argv += ["--record-mode", str(record_mode), "--recordings", str(recordings or "recordings")]
    command_line = shlex.join([*argv, *run_args])
    report = run_model_matrix(options, command_line=command_line, progress=lambda line: typer.echo(line, err=True))
    changed = sum(1 for item in report.scenarios if item.canonical_differs)
    typer.echo(
        f"{len(report.scenarios)} scenarios x {len(chosen)} models: {len(report.regressions)} regression(s); "
        f"canonical histories differ from {chosen[0]} in {changed}"
    )
    typer.echo(f"wrote {out / 'compatibility.md'}, {out / 'compatibility.json'} and {out / 'compatibility.html'}")
    for regression in report.regressions:
        typer.echo(f"regression: {regression.scenario} {regression.status} on {regression.version}")
    raise SystemExit(report.exit_code)
