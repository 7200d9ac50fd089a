"""`agentrig run`: run scenarios, write histories, sessions, usage and reports, exit with the documented code.

Imports only typer and the standard library at module level; the runner (and pydantic-ai) load inside
the command, so `agentrig --help` stays fast.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from agentrig.cli import provider_flags as flags

if TYPE_CHECKING:
    from agentrig.runtime.history.run_records import ScenarioResult
    from agentrig.runtime.suite.options import RunOptions

HELP = """Run scenarios and check their expectations.

Writes OUT/report.json, OUT/junit.xml and OUT/summary.md, and per scenario
OUT/scenarios/NAME/ with history.json, session.json (its messages by reference to
history.json), usage.json, pydantic_ai_dump.json and events.jsonl; each scenario's checks are
in report.json. The last line printed is always `N passed, N failed, N skipped`
(`, N errors` is added when there are any).

Examples:

\b
    agentrig run                        # every scenario under scenarios/
    agentrig run scenarios -k 'retry and not slow'
    agentrig run -j 4 --shard 2/4 --out out/2   # one CI shard (see agentrig merge)
    agentrig run --shard 2/4 --durations last/report.json   # shards balanced by time
    agentrig run --update-golden        # accept new golden histories
    agentrig run --stream               # the same scenarios, streamed: same goldens
    agentrig run --model openai:gpt-4o -k smoke # script-only checks are skipped
    agentrig run --model openai:gpt-4o --record recordings/   # record real answers once
    agentrig run --model openai:gpt-4o --max-concurrency 16 --rpm 500 --timeout 120
    agentrig run --replay recordings/   # then replay them offline, for ever after
    agentrig run --model openai:gpt-4o --record-mode new_episodes --record recordings/
    agentrig run --model openai:gpt-4o --max-cost 2.50    # stop starting scenarios past $2.50
    agentrig run --model openai:gpt-4o --repeat 10 --pass-rate 0.8   # pass fractions
    agentrig run --deps myapp.testing:deps  # deps for scenarios that name none
    agentrig run --require-extras       # CI gate: a scenario's extra not installed is an error
    agentrig run --json --quiet > report.json

Each run replaces what an earlier run wrote in --out and nothing else: the folder must be new,
empty or an agentrig output folder whose files are all still as agentrig wrote them (its
manifest, .agentrig-manifest.jsonl), else the run stops before touching it (exit 2).

A scenario whose `requires:` extras are not installed is skipped: its SKIP line names the
pip command that installs them.

Exit codes: 0 all passed (or skipped), 1 a scenario failed, 2 usage or scenario file error, or an
--out holding files agentrig did not write, 3 provider or infrastructure error (takes precedence
over 1; a full disk too; an extra not installed under --require-extras), 130 interrupted by
Ctrl-C, 143 stopped by SIGTERM (partial reports are written either way).
With --repeat N a scenario passes when its pass fraction meets its rate.
"""

_STATUS_WORD = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


class _Progress:
    """Per-scenario lines: a live, overwritten line on a terminal; plain lines in CI or when piped."""

    def __init__(self, stream: TextIO, *, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.live = stream.isatty() and not os.environ.get("CI")
        self.width = 0

    def __call__(self, done: int, total: int, result: ScenarioResult) -> None:
        if self.quiet:
            return
        line = f"[{done}/{total}] {result.name} ... {_STATUS_WORD[result.status]}"
        if self.live and result.status in ("passed", "skipped"):
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(("\r" + " " * self.width + "\r" if self.width else "") + line + "\n")
            self.width = 0
        self.stream.flush()

    def finish(self) -> None:
        if self.width:
            self.stream.write("\n")
            self.width = 0


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    from agentrig.runtime.suite.runner import parse_shard

    return parse_shard(value)


def register(app: typer.Typer) -> None:
    """Add this verb to the root app."""

    @app.command("run", help=HELP)
    def run(  # pyright: ignore[reportUnusedFunction]
        paths: Annotated[
            list[Path] | None,
            typer.Argument(metavar="PATH", help="Scenario files or directories.", show_default="scenarios/"),
        ] = None,
        keyword: Annotated[
            str | None,
            typer.Option(
                "-k",
                metavar="EXPR",
                help="Select scenarios: a word matches a name substring or a tag; combine with and, or, not, ( ).",
            ),
        ] = None,
        jobs: Annotated[
            int,
            typer.Option(
                "-j", "--jobs", metavar="N", help="Worker processes (at most 4 per CPU; more are capped).", min=1
            ),
        ] = 1,
        shard: Annotated[
            str | None,
            typer.Option(
                "--shard", metavar="K/N", help="Run shard K of N (K/N, 1-based); balanced and stable for a fixed suite."
            ),
        ] = None,
        durations: Annotated[
            Path | None,
            typer.Option(
                "--durations",
                metavar="REPORT",
                help="Balance --shard by the scenario durations in an earlier run's report.json (or its output "
                "directory); a missing, corrupt or stale file falls back to count with a note.",
            ),
        ] = None,
        fail_fast: Annotated[bool, typer.Option("-x", "--exitfirst", help="Stop after the first failure.")] = False,
        out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")] = Path("agentrig-out"),
        model: Annotated[
            str | None,
            typer.Option(
                "--model", metavar="MODEL", help="Run against a real model (provider:name); scripts are ignored."
            ),
        ] = None,
        base_url: Annotated[
            str | None,
            typer.Option("--base-url", metavar="URL", help="Base URL of an OpenAI- or Anthropic-compatible server."),
        ] = None,
        record: Annotated[
            Path | None,
            typer.Option(
                "--record", metavar="DIR", help="Record the real model's answers per scenario into DIR (needs --model)."
            ),
        ] = None,
        replay: Annotated[
            Path | None,
            typer.Option(
                "--replay", metavar="DIR", help="Answer offline from the recordings in DIR; a changed request fails."
            ),
        ] = None,
        deps: Annotated[
            str | None,
            typer.Option(
                "--deps",
                metavar="MODULE:ATTR",
                help="module:attribute building the deps of scenarios that name no `deps` of their own.",
            ),
        ] = None,
        stream: Annotated[
            bool, typer.Option("--stream", help="Run every scenario streamed (as if it said `stream: true`).")
        ] = False,
        update_golden: Annotated[
            bool, typer.Option("--update-golden", help="Write this run's histories into the golden files.")
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print report.json to stdout (human lines go to stderr).")
        ] = False,
        quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only the final summary line.")] = False,
        engine: Annotated[
            str,
            typer.Option(
                "--engine",
                metavar="pydantic-ai|tinyagent",
                help="pydantic-ai, or tinyagent: run the scripts through tinyagent's Agent (the scenario's tools or "
                "your own tinyagent agent; docs/tinyagent.md); a scenario naming pydantic-ai's own objects is an "
                "error naming them.",
            ),
        ] = "pydantic-ai",
        html: Annotated[
            bool,
            typer.Option(
                "--html/--no-html", help="Write report.html, the run in one self-contained page (docs/report.md)."
            ),
        ] = True,
        record_mode: Annotated[
            str | None,
            typer.Option(
                "--record-mode",
                metavar="none|once|new_episodes|all",
                help="none | once | new_episodes | all (pytest-recording's meanings, docs/providers.md) with --model; "
                "the recordings go in --record DIR (default recordings/).",
            ),
        ] = None,
        prices: Annotated[
            Path | None,
            typer.Option(
                "--prices",
                metavar="FILE",
                help="YAML file of USD per million tokens for models genai-prices does not know, e.g. "
                "`openai:my-model: {input: 0.3, output: 1.2}`.",
            ),
        ] = None,
        max_cost: Annotated[
            float | None,
            typer.Option(
                "--max-cost",
                metavar="USD",
                help="US dollars: no scenario starts and no request is sent once the run has spent this much (at "
                "most one request's price over per request in flight; the rest are skipped, with the reason).",
            ),
        ] = None,
        repeat: Annotated[
            int, typer.Option("--repeat", metavar="N", help="Run each scenario N times and judge its pass fraction.")
        ] = 1,
        pass_rate: Annotated[
            float | None,
            typer.Option(
                "--pass-rate",
                metavar="RATE",
                help="Fraction (0-1) of its --repeat runs a scenario must pass when its settings.pass_rate says none "
                "(default 1).",
            ),
        ] = None,
        baseline: Annotated[
            Path | None,
            typer.Option(
                "--baseline",
                metavar="DIR",
                help="An earlier run's output folder: with --repeat, each scenario's pass rate and score are "
                "compared with it (deltas, and whether the 95% intervals overlap).",
            ),
        ] = None,
        require_extras: Annotated[
            bool,
            typer.Option(
                "--require-extras",
                help="Make a scenario whose `requires:` extras are not installed an error (exit 3) instead of "
                "skipping it with the command that installs them: for a gate that must run every scenario.",
            ),
        ] = False,
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
        from agentrig.runtime.suite.options import JOBS_PER_CPU, RunOptions, max_jobs
        from agentrig.runtime.suite.processes.pool import started_pool

        human = sys.stderr if as_json else sys.stdout
        if jobs > max_jobs():
            sys.stderr.write(f"agentrig: note: -j {jobs} capped at {max_jobs()} ({JOBS_PER_CPU} per CPU)\n")
            jobs = max_jobs()
        options = RunOptions(
            paths=tuple(paths or [Path("scenarios")]),
            keyword=keyword,
            jobs=jobs,
            shard=_parse_shard(shard),
            durations=durations,
            fail_fast=fail_fast,
            out_dir=out,
            update_golden=update_golden,
            model=model,
            base_url=base_url,
            record_dir=record,
            replay_dir=replay,
            default_deps=deps,
            stream=stream,
            html_report=html,
            engine=engine,
            record_mode=record_mode,
            prices=prices,
            max_cost=max_cost,
            repeat=repeat,
            pass_rate=pass_rate,
            baseline=baseline,
            timeout=timeout,
            require_extras=require_extras,
            show_warnings=False,  # the reports hold them, and the last lines count them: not Python's two lines each
            provider=flags.provider_options(
                max_concurrency=max_concurrency,
                adaptive_concurrency=adaptive_concurrency,
                rpm=rpm,
                tpm=tpm,
                max_attempts=max_attempts,
                max_retry_wait=max_retry_wait,
                retry_budget=retry_budget,
                request_timeout=request_timeout,
            ),
        )
        execute = _engine(engine, options)
        # -j N: the workers' forkserver starts importing pydantic-ai now, while this process imports the runner
        # and reads the scenario files (the runner itself would start it 0.2-0.3 s later).
        pool = started_pool(jobs, user_modules_later=True) if jobs > 1 else None
        from agentrig.runtime.reports.report_files import describe_check, summary_line
        from agentrig.runtime.reports.totals import accounting_lines
        from agentrig.runtime.suite.outputs.reports import append_step_summary, report_entries
        from agentrig.runtime.suite.runner import run_suite

        progress = _Progress(human, quiet=quiet)
        suite = run_suite(options, progress=progress, execute=execute, pool=pool, note=_note)
        progress.finish()
        if not quiet:
            # What report.json says of them (redacted), read one scenario at a time: a run is never held whole.
            if suite.counts["failed"] or suite.counts["error"]:
                problems = report_entries(suite, statuses=("failed", "error"))
                human.writelines(line + "\n" for line in _failure_lines(problems, describe_check))
            if suite.counts["skipped"]:
                human.writelines(line + "\n" for line in _unmet_lines(report_entries(suite, statuses=("skipped",))))
            if suite.interrupted:
                human.write("interrupted: unfinished scenarios are reported as skipped\n")
            if update_golden:
                human.writelines(line + "\n" for line in _golden_lines(report_entries(suite)))
            human.writelines(line + "\n" for line in accounting_lines(suite.totals, suite.repeats))
            files = "report.html, report.json" if html else "report.json"
            human.write(f"reports: {out}/ ({files}, junit.xml, summary.md; per scenario scenarios/NAME/)\n")
        append_step_summary(out)
        if as_json:
            sys.stdout.flush()
            with open(out / "report.json", "rb") as report:
                shutil.copyfileobj(report, sys.stdout.buffer)
            sys.stdout.flush()
        human.write(summary_line(suite.counts) + "\n")
        human.flush()
        raise typer.Exit(code=suite.exit_code)


def _note(text: str) -> None:
    sys.stderr.write(f"agentrig: note: {text}\n")


_REAL_MODEL_FLAGS = {
    "--model": "model",
    "--record": "record_dir",
    "--replay": "replay_dir",
    "--record-mode": "record_mode",
    "--max-cost": "max_cost",
}
"""What `--engine tinyagent` cannot do: it runs scripts, never a real model or its recordings (docs/tinyagent.md)."""


def _engine(name: str, options: RunOptions) -> Any:
    """The runner's `execute` for `--engine` (None: the default, pydantic-ai)."""
    if name == "pydantic-ai":
        return None
    if name == "tinyagent":
        given = [flag for flag, value in _REAL_MODEL_FLAGS.items() if getattr(options, value) is not None]
        if given:  # said once, before the run, not as an error of every scenario
            from agentrig.errors import UsageError

            raise UsageError(f"--engine tinyagent runs the scenarios' scripts only; drop {' and '.join(given)}")
        from agentrig.runtime.engine.tinyagent_engine.execution import execute_scenario_tinyagent

        return execute_scenario_tinyagent
    raise typer.BadParameter(f"unknown engine {name!r} (known: pydantic-ai, tinyagent)", param_hint="--engine")


def _golden_lines(scenarios: Iterable[Mapping[str, Any]]) -> list[str]:
    """`golden written: PATH` / `golden updated: PATH` per golden file this run wrote, and how many were current."""
    lines: list[str] = []
    unchanged = 0
    for scenario in scenarios:
        for check in scenario["checks"]:
            if check["name"] not in ("scenario: golden", "scenario: ui_events golden") or not check["passed"]:
                continue
            detail = str(check.get("detail") or "")
            if detail.startswith(("golden written", "golden updated")):
                lines.append(detail)
            else:
                unchanged += 1
    lines.append(f"golden files: {len(lines)} written or updated, {unchanged} unchanged")
    return lines


def _unmet_lines(scenarios: Iterable[Mapping[str, Any]]) -> list[str]:
    """`SKIP NAME (PATH): requires EXTRA: INSTALL COMMAND` for each scenario skipped for an extra that is not
    installed, then what to do about them (the other skips, Ctrl-C's or --max-cost's, say why in their own lines)."""
    from agentrig.runtime.suite.scenario_run import REQUIRES_CHECK

    lines: list[str] = []
    for scenario in scenarios:
        for check in scenario["checks"]:
            if check["name"] == REQUIRES_CHECK and check.get("skipped_reason"):
                lines.append(f"SKIP {scenario['name']} ({scenario['path']}): {check['skipped_reason']}")
    if lines:
        lines.append(
            f"skipped {len(lines)}: extras not installed (install them to run these; --require-extras makes them "
            "errors)"
        )
    return lines


def _failure_lines(scenarios: Iterable[Mapping[str, Any]], describe: Any) -> list[str]:
    from agentrig.runtime.reports.report_files import describe_error  # imported where used: the CLI starts light

    lines: list[str] = []
    for scenario in scenarios:
        if scenario["status"] not in ("failed", "error"):
            continue
        lines.append("")
        lines.append(f"{_STATUS_WORD[scenario['status']]} {scenario['name']} ({scenario['path']})")
        if scenario.get("error"):
            lines.append(f"  {describe_error(scenario)}")
        for check in scenario["checks"]:
            if not check["passed"]:
                lines.extend("  " + line for line in describe(check).splitlines())
    if lines:
        lines.append("")
    return lines
