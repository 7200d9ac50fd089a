"""How faithfully `agentrig scaffold` turns real run folders back into scenarios (docs/scaffold.md, "Measured").

The material: `suite/`, 68 scenarios over 25 agents of the public pydantic-ai-examples package (nobody here
wrote the agents; `suite/heldout_deps.py` builds their deps as a test of each would). The measurement, as a
user would do it:

1. `agentrig run suite/ --out RUNS` writes a run folder per scenario (`RUNS/scenarios/NAME/`);
2. each `session.json` and each `pydantic_ai_dump.json` is scaffolded twice: with `--agent` (and `--deps` when
   the run had deps), and without (YAML tools answering as recorded);
3. every scaffolded scenario is replayed (`agentrig run`), and the replay's file of the same kind is compared
   with the source by `agentrig diff -q`.

A source is *exact* when the replay passes and the diff is empty, *differs* otherwise, *refused* when scaffold
refused it (counted by reason). Needs pydantic-ai-examples 2.62.0 installed without its dependencies plus the
few the agents import (`python -m nox -s scaffold_fidelity` installs them); skipped otherwise. No timings.

    python bench/scaffold_fidelity/measure.py [--keep DIR] [--json FILE]
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
}

# The gap each refusal names, from the start of its reason (docs/scaffold.md lists them).
REASONS = (
    ("decided by the host", "an approval (a YAML tool cannot ask for one)"),
    ("have no recorded result (a tool raised", "with --agent, a dump's failed tool (its error is not recorded)"),
    ("went on without `[INTERRUPTED]`", "a cancelled run resumed by pydantic-ai"),
    ("a union of output types", "two output tools (a YAML agent's output has one)"),
    ("does not reproduce", "validation errors no inferred schema reproduces"),
    ("an output retry with validation errors after a text answer", "a native or prompted output rejected"),
    ("with a retry", "a host's retry of a deferred call"),
)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    form: str
    mode: str
    outcome: str  # exact | differs | refused
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


def _scenario_specs() -> dict[str, tuple[str, str | None]]:
    """Each scenario's agent and deps, as the suite names them."""
    from agentrig.scenarios.loader import iter_scenarios

    return {
        loaded.scenario.name: (str(loaded.scenario.agent), loaded.scenario.deps) for loaded in iter_scenarios([SUITE])
    }


def _reason(message: str) -> str:
    for marker, label in REASONS:
        if marker in message:
            return label
    return re.sub(r"^.*?messages\[\d+\]: ", "", message)[:90]


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


def measure(keep: Path | None) -> list[Case]:
    work = keep or Path(tempfile.mkdtemp(prefix="scaffold-fidelity-"))
    runs = work / "runs"
    done = _agentrig("run", str(SUITE), "--out", str(runs), "-j", "2", cwd=SUITE)
    if done.returncode != 0:
        raise SystemExit(
            f"the suite itself failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    sys.path.insert(0, str(SUITE))  # heldout_deps, as the scenarios import it
    os.chdir(SUITE)
    specs = _scenario_specs()
    refused = _scaffold_all(runs, work, specs)
    cases: list[Case] = []
    for form in FORMS:
        for mode in MODES:
            folder = work / f"{mode}-{form.removesuffix('.json')}"
            replays = work / f"replay-{mode}-{form.removesuffix('.json')}"
            if any(folder.glob("*.yaml")):
                _agentrig("run", str(folder), "--out", str(replays), "-j", "2", cwd=SUITE)
            report = json.loads((replays / "report.json").read_text()) if (replays / "report.json").exists() else {}
            status = {item["name"]: item["status"] for item in report.get("scenarios", [])}
            for name in sorted(specs):
                if (name, form, mode) in refused:
                    cases.append(Case(name, form, mode, "refused", _reason(refused[(name, form, mode)])))
                    continue
                replayed = replays / "scenarios" / name / form
                source = runs / "scenarios" / name / form
                diff = _agentrig("diff", "-q", str(source), str(replayed), cwd=SUITE) if replayed.exists() else None
                same = diff is not None and diff.returncode == 0
                passed = status.get(name) == "passed"
                outcome = "exact" if same and passed else "differs"
                history = "the same history" if same else "another history"
                detail = "" if outcome == "exact" else f"replay {status.get(name, 'missing')}, {history}"
                cases.append(Case(name, form, mode, outcome, detail))
    return cases


def report(cases: list[Case]) -> str:
    lines = [f"{len({c.name for c in cases})} run folders of {SUITE.name}/ (pydantic-ai-examples agents)", ""]
    for mode in MODES:
        for form in FORMS:
            mine = [c for c in cases if c.mode == mode and c.form == form]
            counts = Counter(c.outcome for c in mine)
            label = "with --agent" if mode == "agent" else "without --agent"
            lines.append(
                f"{form:<22} {label:<16} exact {counts['exact']:>2}/{len(mine)}  differs {counts['differs']:>2}"
                f"  refused {counts['refused']:>2}"
            )
            for reason, number in Counter(c.detail for c in mine if c.outcome == "refused").most_common():
                lines.append(f"    refused {number:>2}: {reason}")
            for case in mine:
                if case.outcome == "differs":
                    lines.append(f"    differs: {case.name} ({case.detail})")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="How faithfully agentrig scaffold replays real run folders.")
    parser.add_argument("--keep", type=Path, help="write the runs, scenarios and replays here (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="also write the cases as JSON")
    arguments = parser.parse_args()
    if importlib.util.find_spec("pydantic_ai_examples") is None:
        print("skipped: pydantic-ai-examples is not installed (python -m nox -s scaffold_fidelity installs it)")
        return
    cases = measure(arguments.keep.resolve() if arguments.keep else None)
    sys.stdout.write(report(cases))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(c) for c in cases], indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
