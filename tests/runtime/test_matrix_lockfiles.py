"""`agentrig matrix --lock FILE`: uv.lock, poetry.lock, pylock.toml and requirements files read (tomllib and text,
offline; the win32-only packages in them are left out, as on the Linux machines these tests run on), their one-line
refusals, and an environment built from one by a stand-in uv that records what it is asked
(the real build, from PyPI, is the slow test at the end)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from agentrig.errors import InputError
from agentrig.runtime.matrix import environments as matrix_module
from agentrig.runtime.matrix.builds import RESOLVED, ensure_environment, environment_spec, probe_python
from agentrig.runtime.matrix.environments import MatrixOptions, run_matrix
from agentrig.runtime.matrix.lockfiles import read_lock
from tests.cli.cli_helpers import run_main
from tests.runtime.test_matrix import FAKE_PYTHON, REPO_ROOT, executable, no_real_builds

__all__ = ["no_real_builds"]  # the autouse fixture applies here too

PYTHON = "3.11.9"

UV_LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "myapp"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "pydantic-ai-slim", extra = ["ag-ui"] },
    { name = "colorama", marker = "sys_platform == 'win32'" },
    { name = "mylib" },
]

[package.dev-dependencies]
dev = [{ name = "pytest" }]

[[package]]
name = "pydantic-ai-slim"
version = "2.68.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "pydantic-graph" }, { name = "griffe" }]

[package.optional-dependencies]
ag-ui = [{ name = "ag-ui-protocol" }]

[[package]]
name = "pydantic-graph"
version = "2.68.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "griffe"
version = "1.7.3"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "ag-ui-protocol"
version = "0.1.22"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "colorama"
version = "0.4.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "mylib"
version = "1.0.0"
source = { git = "https://example.com/mylib.git?rev=abc#abc" }

[[package]]
name = "pytest"
version = "8.3.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "unreachable"
version = "9.0.0"
source = { registry = "https://pypi.org/simple" }
"""

POETRY_LOCK = """\
[[package]]
name = "pydantic-ai-slim"
version = "2.68.0"
description = ""
optional = false
python-versions = ">=3.10"
groups = ["main"]

[[package]]
name = "ag-ui-protocol"
version = "0.1.22"
optional = false
python-versions = ">=3.9"
groups = ["main"]

[[package]]
name = "pywin32"
version = "306"
optional = false
python-versions = "*"
groups = ["main"]
markers = "sys_platform == \\"win32\\""

[[package]]
name = "extra-only"
version = "1.0"
optional = true
python-versions = "*"

[metadata]
lock-version = "2.1"
"""

PYLOCK = """\
lock-version = "1.0"
created-by = "uv"

[[packages]]
name = "pydantic-ai"
version = "2.68.0"
wheels = [{ name = "pydantic_ai-2.68.0-py3-none-any.whl", url = "https://x/y.whl", hashes = { sha256 = "00" } }]

[[packages]]
name = "pydantic-ai-slim"
version = "2.68.0"
wheels = [{ name = "pydantic_ai_slim-2.68.0-py3-none-any.whl", url = "https://x/z.whl", hashes = { sha256 = "00" } }]

[[packages]]
name = "ag_ui.protocol"
version = "0.1.22"
marker = "python_version >= '3.9'"
sdist = { name = "ag_ui_protocol-0.1.22.tar.gz", url = "https://x/a.tar.gz", hashes = { sha256 = "00" } }

[[packages]]
name = "myapp"
directory = { path = "." }
"""

REQUIREMENTS = """\
# uv pip compile pyproject.toml -o requirements.txt
--index-url https://pypi.org/simple
-e file:///src/myapp
pydantic-ai-slim[ag-ui]==2.68.0 \\
    --hash=sha256:0000
ag-ui-protocol==0.1.22  # via pydantic-ai-slim
colorama==0.4.6 ; sys_platform == "win32"
griffe==1.7.3
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_uv_lock_pins_what_the_workspace_reaches_on_this_machine(tmp_path: Path) -> None:
    lock = read_lock(write(tmp_path, "uv.lock", UV_LOCK), python_version=PYTHON)
    assert lock.format == "uv.lock"
    assert lock.pydantic_ai == "2.68.0"
    assert not lock.full_pydantic_ai
    pins = lock.pins()
    # The extra's package, the dev group's, pydantic-ai's own; not the win32-only one nor the unreachable one.
    expected = {"ag-ui-protocol": "0.1.22", "griffe": "1.7.3", "pydantic-ai-slim": "2.68.0", "pydantic-graph": "2.68.0"}
    assert pins == {**expected, "pytest": "8.3.0"}
    assert lock.unpinned == ("mylib",)  # from git: the resolver chooses
    assert lock.preferences() == ["ag-ui-protocol==0.1.22", "griffe==1.7.3", "pytest==8.3.0"]
    assert lock.requirements() == ["ag-ui-protocol", "griffe", "pytest"]


def test_poetry_lock_skips_optional_packages_and_markers_that_fail_here(tmp_path: Path) -> None:
    lock = read_lock(write(tmp_path, "poetry.lock", POETRY_LOCK), python_version=PYTHON)
    assert lock.format == "poetry.lock"
    assert lock.pins() == {"ag-ui-protocol": "0.1.22", "pydantic-ai-slim": "2.68.0"}


def test_pylock_names_are_normalized_and_a_full_pydantic_ai_is_pinned_too(tmp_path: Path) -> None:
    lock = read_lock(write(tmp_path, "pylock.toml", PYLOCK), python_version=PYTHON)
    assert lock.format == "pylock.toml"
    assert lock.full_pydantic_ai
    assert lock.pins() == {"ag-ui-protocol": "0.1.22", "pydantic-ai": "2.68.0", "pydantic-ai-slim": "2.68.0"}
    assert lock.unpinned == ("myapp",)
    assert lock.requirements() == ["ag-ui-protocol ; python_version >= '3.9'"]
    spec = environment_spec(
        "2.78.0", python="/usr/bin/python3", python_version="3.11", env_root=tmp_path, project=None, lock=lock
    )
    assert "pydantic-ai==2.78.0" in spec.install_args
    assert spec.location.name == f"py3.11-2.78.0-lock-{lock.sha256[:12]}"


def test_a_requirements_file_of_pins_with_hashes_markers_and_continuations(tmp_path: Path) -> None:
    lock = read_lock(write(tmp_path, "requirements.txt", REQUIREMENTS), python_version=PYTHON)
    assert lock.format == "requirements"
    assert lock.pins() == {"ag-ui-protocol": "0.1.22", "griffe": "1.7.3", "pydantic-ai-slim": "2.68.0"}
    slim = next(package for package in lock.packages if package.name == "pydantic-ai-slim")
    assert (slim.extras, slim.line) == (("ag-ui",), 4)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("requirements.txt", "griffe==1.7.3\n", "requirements.txt: pins no pydantic-ai"),
        (
            "requirements.txt",
            "pydantic-ai-slim==2.68.0\ngriffe>=1.7\n",
            "requirements.txt:2: 'griffe>=1.7' is not a pin",
        ),
        ("requirements.txt", "pydantic-ai-slim==2.68.0\n-r base.txt\n", "requirements.txt:2: a nested requirements"),
        ("requirements.txt", "pydantic-ai-slim==2.68.0\nnot a requirement!\n", "requirements.txt:2: not a requirement"),
        ("requirements.txt", "pydantic-ai-slim==2.68.0\npydantic-ai-slim==2.78.0\n", ":2: pins pydantic-ai-slim twice"),
        ("uv.lock", 'version = 1\n[[package]\nname = "x"\n', "uv.lock:2: not valid TOML, so not a uv.lock"),
        ("uv.lock", "version = 1\n", "uv.lock: no [[package]] entries (not a uv.lock)"),
        ("poetry.lock", "[metadata]\n", "poetry.lock: no [[package]] entries"),
        ("pylock.toml", "[[packages]]\nname = 'x'\n", "pylock.toml: no lock-version and [[packages]]"),
        ("requirements.txt", "\udcff", "requirements.txt: cannot read it (not UTF-8 text)"),
    ],
    ids=[
        "no-pydantic-ai",
        "a-range",
        "nested",
        "garbage",
        "twice",
        "bad-toml",
        "no-packages",
        "poetry-empty",
        "pylock-shape",
        "not-utf8",
    ],
)
def test_a_lock_that_cannot_be_used_is_one_line_naming_the_file_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    with pytest.raises(InputError) as raised:
        read_lock(path, python_version=PYTHON)
    assert raised.value.exit_code == 2
    assert "\n" not in raised.value.message
    assert raised.value.message.startswith(f"--lock {path}")
    assert message in raised.value.message


def test_cli_a_lock_without_pydantic_ai_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    write(tmp_path, "requirements.txt", "griffe==1.7.3\n")
    code, _, err = run_main(capsys, "matrix", "--lock", "requirements.txt")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("agentrig: error: --lock requirements.txt: pins no pydantic-ai")


FAKE_UV = """\
#!{python}
# A stand-in uv: `venv` makes an environment whose python plays agentrig (FAKE_PYTHON); `pip compile` records its
# input and the output file it was handed (the preferences) and writes a resolution; `pip install` records its call.
import json, pathlib, sys
RECORD = pathlib.Path({record!r})
PYTHON_TEXT = {python_text!r}
args = sys.argv[1:]
calls = json.loads(RECORD.read_text()) if RECORD.exists() else []
entry = {{"args": args}}
if args[0] == "venv":
    location = pathlib.Path(args[-1])
    (location / "bin").mkdir(parents=True, exist_ok=True)
    (location / "pyvenv.cfg").write_text("home = /usr/bin\\n")
    python = location / "bin" / "python"
    python.write_text(PYTHON_TEXT)
    python.chmod(0o755)
elif args[:2] == ["pip", "compile"]:
    wanted, out = pathlib.Path(args[2]), pathlib.Path(args[args.index("-o") + 1])
    entry["in"], entry["preferences"] = wanted.read_text(), out.read_text()
    out.write_text(out.read_text() + "pydantic-ai-slim==2.78.0\\n")
RECORD.write_text(json.dumps(calls + [entry]))
"""


def test_an_environment_from_a_lock_is_resolved_with_the_locks_pins_as_preferences(tmp_path: Path) -> None:
    lock = read_lock(write(tmp_path, "uv.lock", UV_LOCK), python_version=PYTHON)
    python, python_version = probe_python(sys.executable)
    spec = environment_spec(
        "2.78.0", python=python, python_version=python_version, env_root=tmp_path / "envs", project=None, lock=lock
    )
    record = tmp_path / "uv-calls.json"
    python_text = textwrap.dedent(FAKE_PYTHON).format(
        python=sys.executable, version="2.78.0", statuses={}, packages={}, inventory=None, history={}
    )
    uv = executable(
        tmp_path / "bin" / "uv", FAKE_UV.format(python=sys.executable, record=str(record), python_text=python_text)
    )
    transcript: list[str] = []

    assert ensure_environment(spec, uv=str(uv), transcript=transcript) is False

    calls = json.loads(record.read_text(encoding="utf-8"))
    assert [call["args"][:2] for call in calls] == [["venv", "--quiet"], ["pip", "compile"], ["pip", "install"]]
    compile_call = calls[1]
    # The lock's versions are the resolver's preferences, pydantic-ai's own left out; the input asks for them
    # unpinned, beside the pin under test and this agentrig.
    assert compile_call["preferences"].splitlines() == ["ag-ui-protocol==0.1.22", "griffe==1.7.3", "pytest==8.3.0"]
    wanted = compile_call["in"].splitlines()
    assert "pydantic-ai-slim==2.78.0" in wanted
    assert "pydantic-graph==2.78.0" in wanted
    assert wanted[-3:] == ["ag-ui-protocol", "griffe", "pytest"]
    assert calls[2]["args"][-2:] == ["-r", str(spec.location / RESOLVED)]
    assert "$ " + str(uv) + " pip compile" in "".join(transcript)
    marker = json.loads((spec.location / "agentrig-matrix.json").read_text(encoding="utf-8"))
    assert marker["lock"]["sha256"] == lock.sha256
    assert ensure_environment(spec, uv=str(uv)) is True  # reused while the lock is unchanged


def test_lock_without_uv_is_refused_before_anything_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matrix_module, "find_uv", lambda: None)
    options = MatrixOptions(
        paths=(Path("s"),),
        versions=("locked",),
        out=tmp_path / "out",
        env_root=tmp_path / "envs",
        lock=write(tmp_path, "uv.lock", UV_LOCK),
    )
    with pytest.raises(Exception, match=r"--lock needs uv to build the environments from it \(pip install uv\)"):
        run_matrix(options, progress=lambda line: None)
    assert not (tmp_path / "out").exists()


# --- a real environment from a lock (slow; PyPI or a warm uv cache) -------------------------------------------


@pytest.mark.slow
def test_real_environment_from_a_lock_moves_only_pydantic_ai_and_what_it_forces(tmp_path: Path) -> None:
    # The lock pins pydantic-ai 2.68.0, griffelib 2.3.0 (both pydantic-ai releases accept it; a fresh resolution
    # would take a newer one) and genai-prices 0.2.3 (2.68.0 accepts it; 2.78.0 needs >=0.2.4). The 2.78.0
    # environment keeps griffelib at the lock's version and moves genai-prices, as the new pydantic-ai forces.
    lock_path = write(
        tmp_path,
        "requirements.txt",
        "pydantic-ai-slim==2.68.0\npydantic-graph==2.68.0\ngriffelib==2.3.0\ngenai-prices==0.2.3\n",
    )
    chosen = REPO_ROOT / "scenarios" / "tool_roundtrip.yaml"
    options = MatrixOptions(
        paths=(chosen,),
        versions=("locked", "2.78.0"),
        out=tmp_path / "out",
        env_root=tmp_path / "envs",
        lock=lock_path,
    )
    report = run_matrix(options, progress=lambda line: None)

    assert report.exit_code == 0, [output.build_error or output.error for output in report.versions]
    baseline, upgraded = report.versions
    assert (baseline.packages["pydantic-ai-slim"], upgraded.packages["pydantic-ai-slim"]) == ("2.68.0", "2.78.0")
    assert baseline.packages["griffelib"] == upgraded.packages["griffelib"] == "2.3.0"
    assert baseline.packages["genai-prices"] == "0.2.3"
    assert upgraded.packages["genai-prices"] != "0.2.3"
    document = json.loads((tmp_path / "out" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["lock"]["pydantic_ai"] == "2.68.0"
    assert document["versions"][0]["lock_changes"] == []
    moved = {change["name"] for change in document["versions"][1]["lock_changes"]}
    assert moved == {"pydantic-ai-slim", "pydantic-graph", "genai-prices"}
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert "  - moved from the lock: " in markdown
