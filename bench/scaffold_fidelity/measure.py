"""How faithfully `agentrig scaffold` turns real run folders back into scenarios (docs/scaffold.md, "Measured").

The material: a suite of scenarios over the agents of the public pydantic-ai-examples package (nobody here wrote
the agents): `suite/` (the default; `suite/heldout_deps.py` builds their deps) or another given by `--suite`, such as
`heldout/` (68 scenarios written from the docs alone, without reading the scaffold code; `heldout/heldout_fixtures.py`
builds their deps). The measurement, as a user would do it:

1. `agentrig run suite/ --out RUNS` writes a run folder per scenario (`RUNS/scenarios/NAME/`);
2. each `session.json` and each `pydantic_ai_dump.json` is scaffolded twice: with `--agent` (and `--deps` when
   the run had deps), and without (YAML tools answering as recorded);
3. every scaffolded scenario is replayed (`agentrig run`), and the replay's file of the same kind is compared
   with the source by `agentrig diff -q`.

A source is *exact* when the replay passes and the diff is empty, *exact but failing* when the diff is empty but
the replay fails its own scaffolded expectations, *differs* when the diff is not empty, *refused* when scaffold
refused it; every case but an exact one carries a one-line reason (scaffold's refusal, the replay's first failed
check, or the diff's first line).

`foreign/` holds real dumps and sessions written elsewhere (README.md there names each file's source): each is
scaffolded without `--agent` and replayed; it is *exact* when the replay passes (its golden check compares the
replay's history with the source's, up to scaffold's documented normalizations), and the detail says whether the
replay's history is also `agentrig diff`-identical to the source itself.

Needs pydantic-ai-examples 2.62.0 installed without its dependencies plus the few the agents import
(`python -m nox -s scaffold_fidelity` installs them); skipped otherwise. No timings.

    python bench/scaffold_fidelity/measure.py [--suite DIR] [--no-foreign] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = HERE / "suite"
FOREIGN = HERE / "foreign"
FORMS = ("session.json", "pydantic_ai_dump.json")
MODES = ("agent", "yaml")
OFFLINE = {
    "OPENAI_API_KEY": "",
    "GROQ_API_KEY": "",
    "GEMINI_API_KEY": "",
    "GOOGLE_API_KEY": "",
    "LOGFIRE_CONSOLE": "false",
    "LOGFIRE_SEND_TO_LOGFIRE": "false",
    "PYDANTIC_AI_NO_BANNER": "1",
    "HF_HUB_OFFLINE": "1",  # data_analyst imports `datasets`; nothing here may reach the hub
}


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    form: str
    mode: str
    outcome: str  # exact | exact-but-failing | differs | refused
    detail: str = ""


def _agentrig(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentrig", *args],
        cwd=cwd,
        env={**os.environ, **OFFLINE},
        capture_output=True,
        text=True,
        check=False,
    )


def _scenario_specs(suite: Path) -> dict[str, tuple[str, str | None]]:
    """Each scenario's agent and deps, as the suite names them."""
    from agentrig.scenarios.loader import iter_scenarios

    return {
        loaded.scenario.name: (str(loaded.scenario.agent), loaded.scenario.deps) for loaded in iter_scenarios([suite])
    }


def _one_line(text: str, limit: int = 160) -> str:
    # A refusal starts with the source's path, which says nothing the case's name does not.
    line = re.sub(r"^\S+\.json: ", "", " ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _failure(item: dict[str, object] | None) -> str:
    """The replay's reason for failing: its error, else its first failed check (name and what was seen)."""
    if item is None:
        return "no replay"
    error = item.get("error")
    if isinstance(error, dict) and error.get("message"):
        return _one_line(f"{error.get('kind')}: {error.get('message')}")
    checks = item.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and check.get("passed") is False:
            seen = check.get("detail") or json.dumps(check.get("actual"), ensure_ascii=False)
            return _one_line(f"{check.get('name')}: {seen}")
    return str(item.get("status"))


def _diff_line(source: Path, replayed: Path, cwd: Path) -> str:
    """The first changed lines of `agentrig diff` between the two (source `-`, replay `+`), as one line."""
    shown = _agentrig("diff", str(source), str(replayed), cwd=cwd)
    # The changed lines say what differs; the file names and hunk headers do not.
    lines = (shown.stdout or shown.stderr).splitlines()
    changed = [line.strip() for line in lines if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    return _one_line("diff: " + " | ".join(changed[:4]) if changed else shown.stdout or shown.stderr, 200)


def _scaffold_all(runs: Path, work: Path, specs: dict[str, tuple[str, str | None]]) -> dict[tuple[str, str, str], str]:
    """Scaffold every source both ways, in this process; the refusals by (name, form, mode)."""
    from agentrig.errors import AgentrigError
    from agentrig.runtime.scaffold import ScaffoldOptions, scaffold

    refused: dict[tuple[str, str, str], str] = {}
    os.environ.update(OFFLINE)
    for folder in sorted((runs / "scenarios").iterdir()):
        agent, deps = specs[folder.name]
        for form in FORMS:
            for mode in MODES:
                target = work / f"{mode}-{form.removesuffix('.json')}" / f"{folder.name}.yaml"
                options = ScaffoldOptions(
                    source=folder / form,
                    output=target,
                    name=folder.name,
                    agent=agent if mode == "agent" else None,
                    deps=deps if mode == "agent" else None,
                )
                try:
                    scaffold(options)
                except AgentrigError as error:
                    refused[(folder.name, form, mode)] = error.message
    return refused


def _replay(folder: Path, out: Path, cwd: Path) -> dict[str, dict[str, object]]:
    """Run every scaffolded scenario of `folder` into `out`; report.json's scenarios by name."""
    if any(folder.glob("*.yaml")):
        _agentrig("run", str(folder), "--out", str(out), "-j", "2", cwd=cwd)
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return {item["name"]: item for item in report.get("scenarios", [])}


def measure(suite: Path, keep: Path | None) -> list[Case]:
    work = keep or Path(tempfile.mkdtemp(prefix="scaffold-fidelity-"))
    runs = work / "runs"
    done = _agentrig("run", str(suite), "--out", str(runs), "-j", "2", cwd=suite)
    if done.returncode != 0:
        raise SystemExit(
            f"the suite itself failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    sys.path.insert(0, str(suite))  # the suite's deps module, as the scenarios import it
    os.chdir(suite)
    specs = _scenario_specs(suite)
    refused = _scaffold_all(runs, work, specs)
    cases: list[Case] = []
    for form in FORMS:
        for mode in MODES:
            folder = work / f"{mode}-{form.removesuffix('.json')}"
            replays = work / f"replay-{mode}-{form.removesuffix('.json')}"
            items = _replay(folder, replays, suite)
            for name in sorted(specs):
                if (name, form, mode) in refused:
                    cases.append(Case(name, form, mode, "refused", _one_line(refused[(name, form, mode)], 200)))
                    continue
                replayed = replays / "scenarios" / name / form
                source = runs / "scenarios" / name / form
                diff = _agentrig("diff", "-q", str(source), str(replayed), cwd=suite) if replayed.exists() else None
                same = diff is not None and diff.returncode == 0
                passed = items.get(name, {}).get("status") == "passed"
                if same and passed:
                    cases.append(Case(name, form, mode, "exact"))
                elif same:
                    cases.append(Case(name, form, mode, "exact-but-failing", _failure(items.get(name))))
                else:
                    reason = _diff_line(source, replayed, suite) if replayed.exists() else _failure(items.get(name))
                    cases.append(Case(name, form, mode, "differs", reason))
    return cases


def measure_foreign(work: Path) -> list[Case]:
    """Scaffold each file of foreign/ without --agent, replay it, compare with the source."""
    from agentrig.errors import AgentrigError
    from agentrig.runtime.scaffold import ScaffoldOptions, scaffold

    sources = sorted(p for p in FOREIGN.iterdir() if p.is_file() and p.suffix == ".json") if FOREIGN.is_dir() else []
    folder, replays = work / "foreign", work / "replay-foreign"
    cases: list[Case] = []
    refused: dict[str, str] = {}
    for source in sources:
        try:
            scaffold(ScaffoldOptions(source=source, output=folder / f"{source.stem}.yaml", name=source.stem))
        except AgentrigError as error:
            refused[source.stem] = error.message
    items = _replay(folder, replays, FOREIGN)
    for source in sources:
        name = source.stem
        if name in refused:
            cases.append(Case(name, source.name, "foreign", "refused", _one_line(refused[name], 200)))
            continue
        replayed = replays / "scenarios" / name / "history.json"
        passed = items.get(name, {}).get("status") == "passed"
        same = replayed.exists() and _agentrig("diff", "-q", str(source), str(replayed), cwd=FOREIGN).returncode == 0
        if passed:
            detail = "" if same else "equal to the source up to scaffold's normalizations (golden check)"
            cases.append(Case(name, source.name, "foreign", "exact", detail))
        else:
            cases.append(Case(name, source.name, "foreign", "differs", _failure(items.get(name))))
    return cases


OUTCOMES = ("exact", "exact-but-failing", "differs", "refused")


def _counts(mine: list[Case]) -> str:
    counts = Counter(c.outcome for c in mine)
    return "  ".join(f"{outcome} {counts[outcome]:>2}" for outcome in OUTCOMES)


def report(cases: list[Case], suite: Path) -> str:
    ours = [c for c in cases if c.mode != "foreign"]
    lines = [f"{len({c.name for c in ours})} run folders of {suite.name}/ (pydantic-ai-examples agents)", ""]
    for mode in MODES:
        for form in FORMS:
            mine = [c for c in ours if c.mode == mode and c.form == form]
            label = "with --agent" if mode == "agent" else "without --agent"
            lines.append(f"{form:<22} {label:<16} {len(mine):>2} sources: {_counts(mine)}")
            for case in mine:
                if case.outcome != "exact":
                    lines.append(f"    {case.outcome}: {case.name}: {case.detail}")
    foreign = [c for c in cases if c.mode == "foreign"]
    if foreign:
        lines += ["", f"{len(foreign)} real dumps and sessions of {FOREIGN.name}/, without --agent: {_counts(foreign)}"]
        for case in foreign:
            lines.append(f"    {case.outcome}: {case.form}" + (f": {case.detail}" if case.detail else ""))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="How faithfully agentrig scaffold replays real run folders.")
    parser.add_argument("--suite", type=Path, default=SUITE, help="the suite of scenarios to run (default: suite/)")
    parser.add_argument("--no-foreign", action="store_true", help="do not measure the files of foreign/")
    parser.add_argument("--keep", type=Path, help="write the runs, scenarios and replays here (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="also write the cases as JSON")
    arguments = parser.parse_args()
    if importlib.util.find_spec("pydantic_ai_examples") is None:
        print("skipped: pydantic-ai-examples is not installed (python -m nox -s scaffold_fidelity installs it)")
        return
    suite = arguments.suite.resolve()
    json_path = arguments.json.resolve() if arguments.json else None
    work = arguments.keep.resolve() if arguments.keep else Path(tempfile.mkdtemp(prefix="scaffold-fidelity-"))
    cases = measure(suite, work)
    if not arguments.no_foreign:
        cases += measure_foreign(work)
    sys.stdout.write(report(cases, suite))
    if json_path:
        json_path.write_text(json.dumps([asdict(c) for c in cases], indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
