"""The one list of pinned pydantic-ai versions (`[tool.agentrig] pydantic-ai-versions`) and everything that copies
it: the dependency floor, tox.toml, the noxfile's sessions, the packaged list, and the CI entry point."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.versions import PYDANTIC_AI_VERSIONS, SUPPORTED_FLOOR

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PINNED: list[str] = PYPROJECT["tool"]["agentrig"]["pydantic-ai-versions"]


def version_key(version: str) -> tuple[int, ...]:
    """(2, 38, 0) for "2.38.0"."""
    return tuple(int(part) for part in version.split("."))


def test_the_pinned_list_runs_from_the_floor_to_the_newest_and_includes_the_retry_change() -> None:
    assert sorted(PINNED, key=version_key) == PINNED, "oldest first, newest last"
    assert len(set(PINNED)) == len(PINNED)
    assert PINNED[0] == "2.38.0"
    assert "2.60.0" in PINNED, "2.60 changed the retry parts; it must stay in the matrix"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in PINNED)


@pytest.mark.parametrize("requirement_list", ["dependencies", "providers", "dev"])
def test_every_pydantic_ai_requirement_has_the_floor_as_its_lower_bound(requirement_list: str) -> None:
    project = PYPROJECT["project"]
    requirements = (
        project["dependencies"]
        if requirement_list == "dependencies"
        else project["optional-dependencies"][requirement_list]
    )
    pydantic = [item for item in requirements if re.match(r"pydantic-(ai-slim|graph)\b", item)]
    assert pydantic, f"no pydantic-ai requirement in {requirement_list}"
    for requirement in pydantic:
        assert f">={PINNED[0]}," in requirement, requirement
        assert requirement.endswith(",<3"), requirement


def test_the_packaged_list_matches_pyproject() -> None:
    assert list(PYDANTIC_AI_VERSIONS) == PINNED
    assert PINNED[0] == SUPPORTED_FLOOR


def test_tox_has_one_env_per_pin_installing_exactly_that_pin() -> None:
    tox = tomllib.loads((ROOT / "tox.toml").read_text(encoding="utf-8"))
    assert tox["env_list"] == [f"py-pai{version}" for version in PINNED]
    assert set(tox["env"]) == {f"py-pai{version}" for version in PINNED}
    for version in PINNED:
        deps = tox["env"][f"py-pai{version}"]["deps"]
        assert deps[:2] == [f"pydantic-ai-slim[openai,anthropic,ag-ui,ui]=={version}", f"pydantic-graph=={version}"]
        assert deps == load_noxfile().pins(version), "tox installs what the nox compat session installs"
    assert tox["env_run_base"]["runner"] == "uv-venv-runner"
    assert tox["env_run_base"]["set_env"]["UV_PYTHON_DOWNLOADS"] == "never"


@functools.cache
def load_noxfile() -> Any:
    """noxfile.py as a module (its pins() is the per-version requirement list); loaded once, as nox registers its
    sessions globally and warns about a second registration."""
    pytest.importorskip("nox")
    spec = importlib.util.spec_from_file_location("agentrig_noxfile", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_versions_before_the_retry_change_keep_anthropic_below_2() -> None:
    noxfile = load_noxfile()
    for version in PINNED:
        before_2_60 = version_key(version) < (2, 60, 0)
        assert ("anthropic<2" in noxfile.pins(version)) == before_2_60, version


def nox_sessions(*selection: str) -> list[dict[str, Any]]:
    """`nox --json -l`: the sessions CI builds its matrix from (the default ones, or those `selection` names)."""
    pytest.importorskip("nox")
    completed = subprocess.run(
        [sys.executable, "-m", "nox", "--json", "-l", "-f", str(ROOT / "noxfile.py"), *selection],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(completed.stdout)


def test_nox_lists_one_readable_compat_session_per_pin_and_tags_floor_and_newest_for_ci() -> None:
    sessions = nox_sessions()
    compat = [session for session in sessions if session["name"] == "compat"]
    assert [session["session"] for session in compat] == [f"compat({version})" for version in PINNED]
    assert [session["call_spec"] for session in compat] == [{"pydantic_ai": version} for version in PINNED]
    ci = [session["session"] for session in compat if "ci" in session["tags"]]
    assert ci == [f"compat({PINNED[0]})", f"compat({PINNED[-1]})"]
    names = {session["name"] for session in sessions}
    assert {"tests", "suite", "lint", "typecheck"} <= names
    assert all(session["description"] for session in sessions)


def test_the_ci_tag_runs_every_gate() -> None:
    # The README's test command is `nox -t ci`: a gate left out of the tag lets its regressions land green (issue 20,
    # item 25: lint, typecheck and the pydantic-ai-examples run had drifted out, and the examples run had broken).
    tagged = {session["name"] for session in nox_sessions("-t", "ci")}
    assert tagged >= {"compat", "matrix_smoke", "lint", "typecheck", "examples", "removal", "tunacode"}


def readme_commands() -> list[str]:
    """The commands in the README's quick start (the fenced bash blocks under '## Quick start')."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", quick_start, flags=re.DOTALL)]


def test_the_readme_quick_start_has_two_commands_and_ci_runs_the_test_command_literally() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    main_job, tests = commands
    assert main_job.endswith("python -m nox -s suite")
    assert tests.endswith("python -m nox -t ci")
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # Literally the README's command; its exit status is kept while a closing summary line is printed.
    assert f"{tests} || status=$?" in ci_script.splitlines()
    assert ci_script.rstrip().endswith('exit "$status"')


def test_ci_workflow_builds_its_compat_matrix_from_nox() -> None:
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert "python -m nox --json -l" in workflow
    assert "fromJSON(needs.sessions.outputs.compat)" in workflow
    for python in ("3.11", "3.12", "3.13"):
        assert f'"{python}"' in workflow


def test_the_suite_sessions_install_every_extra_the_scenarios_need_and_never_skip_one() -> None:
    # A scenario whose extra is missing is skipped by default (issue 44): the project's own gate installs them all,
    # and passes --require-extras so an install gone wrong is an error, not a quiet skip.
    from agentrig.runtime.matrix.extras import pin_requirements, scenario_extras

    noxfile = load_noxfile()
    runs: list[tuple[str, ...]] = []

    class Session:
        def run(self, *args: str, **_: object) -> None:
            runs.append(args)

    noxfile.run_suite(Session(), "out/suite")
    assert [args[:3] for args in runs] == [("agentrig", "run", "scenarios/")] * 2
    assert all("--require-extras" in args for args in runs)
    needed = pin_requirements(PINNED[-1], scenario_extras([ROOT / "scenarios"]))
    installed = noxfile.pins(PINNED[-1])

    def slim_extras(requirements: list[str]) -> set[str]:
        (slim,) = [item for item in requirements if item.startswith("pydantic-ai-slim")]
        return set(slim.partition("[")[2].partition("]")[0].split(",")) - {""}

    assert slim_extras(needed) == {"ag-ui", "ui"}  # the shipped UI scenarios'
    assert slim_extras(needed) <= slim_extras(installed)
    assert "pydantic-ai-harness" in needed
    assert {item for item in needed if not item.startswith("pydantic-")} <= set(installed)
