"""`agentrig matrix --versions`: `latest`, `locked` and PEP 440 ranges, resolved from a package index the test serves
(a PEP 503 directory behind file://, and PEP 691 JSON from a loopback HTTP server), offline."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentrig.errors import InfrastructureError, UsageError
from agentrig.runtime.matrix.environments import MatrixOptions, run_matrix
from agentrig.runtime.matrix.package_index import IndexReleases, display_url, index_url, read_releases
from agentrig.runtime.matrix.version_selection import resolve_versions, split_versions
from tests.cli.cli_helpers import run_main
from tests.cli.test_matrix import cli_spec
from tests.runtime.test_matrix import fake_environment, no_real_builds, spec_for

__all__ = ["no_real_builds"]  # the autouse fixture applies here too

PYTHON = "3.11.9"

# (version, yanked, requires-python) of each release the test index lists, one wheel and one sdist each.
RELEASES: list[tuple[str, bool, str | None]] = [
    ("2.38.0", False, ">=3.10"),
    ("2.40.0", False, ">=3.10"),
    ("2.59.0", False, None),
    ("2.60.0", False, None),
    ("2.68.0", False, ">=3.10"),
    ("2.68.1", False, ">=3.10"),
    ("2.78.0", False, ">=3.10"),
    ("2.79.0b1", False, ">=3.10"),  # a pre-release: skipped unless asked for
    ("2.80.0", True, ">=3.10"),  # yanked
    ("2.81.0", False, ">=3.14"),  # not for the environments' Python
]


def _files(version: str) -> list[str]:
    return [f"pydantic_ai_slim-{version}-py3-none-any.whl", f"pydantic_ai_slim-{version}.tar.gz"]


def simple_directory(root: Path) -> Path:
    """A PEP 503 index as pip reads it from file://: ROOT/pydantic-ai-slim/index.html."""
    page = root / "pydantic-ai-slim" / "index.html"
    page.parent.mkdir(parents=True)
    anchors: list[str] = []
    for version, yanked, requires in RELEASES:
        for name in _files(version):
            attributes = f' data-requires-python="{requires.replace(">", "&gt;")}"' if requires else ""
            attributes += ' data-yanked=""' if yanked else ""
            anchors.append(f'<a href="../../files/{name}#sha256=00"{attributes}>{name}</a><br/>')
    page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(anchors) + "\n</body></html>\n", encoding="utf-8")
    return root


def pep691_page() -> bytes:
    files = [
        {"filename": name, "url": f"/files/{name}", "hashes": {}, "requires-python": requires, "yanked": yanked}
        for version, yanked, requires in RELEASES
        for name in _files(version)
    ]
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "pydantic-ai-slim", "files": files}).encode()


@pytest.fixture
def json_index() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A loopback PEP 691 index (basic auth user:secret); yields its URL with credentials and the requests seen."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({"path": self.path, **dict(self.headers.items())})
            expected = "Basic " + base64.b64encode(b"user:secret").decode()
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.end_headers()
                return
            if self.path.rstrip("/") != "/simple/pydantic-ai-slim":
                self.send_response(404)
                self.end_headers()
                return
            body = pep691_page()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://user:secret@127.0.0.1:{server.server_address[1]}/simple", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_range_is_one_item_of_the_comma_separated_list() -> None:
    assert split_versions("2.68.0,latest") == ("2.68.0", "latest")
    assert split_versions(">=2.68,<3") == (">=2.68,<3",)
    assert split_versions("2.60.0, >=2.68 ,<3,latest,~=2.40.0") == ("2.60.0", ">=2.68,<3", "latest", "~=2.40.0")
    assert split_versions(" , ") == ()


def test_a_pep_503_directory_gives_the_usable_releases(tmp_path: Path) -> None:
    index = simple_directory(tmp_path / "simple").as_uri()
    found = read_releases(index, python_version=PYTHON)
    assert [str(v) for v in found.releases] == [
        "2.38.0",
        "2.40.0",
        "2.59.0",
        "2.60.0",
        "2.68.0",
        "2.68.1",
        "2.78.0",
        "2.79.0b1",
    ]
    assert [str(v) for v in found.unusable] == ["2.80.0", "2.81.0"]  # yanked; needs Python 3.14
    assert found.index == index


def test_a_pep_691_index_over_http_is_read_with_basic_auth_and_never_shows_the_password(
    json_index: tuple[str, list[dict[str, str]]],
) -> None:
    url, seen = json_index
    found = read_releases(url, python_version=PYTHON)
    assert str(max(found.releases)) == "2.79.0b1"
    assert "secret" not in found.index
    assert found.index.endswith("/simple")
    assert seen[0]["path"] == "/simple/pydantic-ai-slim/"
    assert seen[0]["Accept"].startswith("application/vnd.pypi.simple.v1+json")


def test_an_index_that_cannot_be_read_is_exit_3_naming_it_without_credentials(
    tmp_path: Path, json_index: tuple[str, list[dict[str, str]]]
) -> None:
    url, _ = json_index
    with pytest.raises(InfrastructureError) as raised:
        read_releases(url.replace("secret", "wrong"), python_version=PYTHON)
    assert raised.value.exit_code == 3
    assert raised.value.message.endswith(": pydantic-ai-slim: HTTP 401")
    assert "wrong" not in raised.value.message
    with pytest.raises(InfrastructureError, match=r"cannot read the package index file://.*: no pydantic-ai-slim/"):
        read_releases((tmp_path / "empty").as_uri(), python_version=PYTHON)


def test_the_index_is_the_flag_then_uvs_then_pips_then_pypi() -> None:
    assert index_url("https://a/simple", {"UV_INDEX_URL": "https://b"}) == "https://a/simple"
    assert index_url(None, {"PIP_INDEX_URL": "https://p", "UV_INDEX_URL": "https://u"}) == "https://u"
    assert index_url(None, {"UV_DEFAULT_INDEX": "https://d", "UV_INDEX_URL": "https://u"}) == "https://d"
    assert index_url(None, {"PIP_INDEX_URL": "https://p"}) == "https://p"
    assert index_url(None, {}) == "https://pypi.org/simple"
    assert display_url("https://me:tok@host:8080/simple") == "https://host:8080/simple"


def _releases(tmp_path: Path) -> IndexReleases:
    return read_releases(simple_directory(tmp_path / "simple").as_uri(), python_version=PYTHON)


def test_latest_is_the_newest_final_release_and_pre_takes_a_pre_release(tmp_path: Path) -> None:
    releases = _releases(tmp_path)
    resolved = resolve_versions(("2.68.0", "latest"), releases=lambda: releases)
    assert resolved.versions == ("2.68.0", "2.78.0")
    assert resolved.notes[0].startswith("latest = 2.78.0 (the newest pydantic-ai-slim release on file://")
    assert resolve_versions(("latest",), releases=lambda: releases, pre=True).versions == ("2.79.0b1",)


def test_exact_versions_never_read_the_index() -> None:
    def unreachable() -> IndexReleases:
        raise AssertionError("the index was read")

    resolved = resolve_versions(("2.38.0", "2.68.0"), releases=unreachable)
    assert resolved.versions == ("2.38.0", "2.68.0")
    assert resolved.index is None
    assert not resolved.resolved


def test_a_range_runs_each_release_or_each_minors_newest_oldest_first(tmp_path: Path) -> None:
    releases = _releases(tmp_path)
    every = resolve_versions((">=2.60,<3",), releases=lambda: releases)
    assert every.versions == ("2.60.0", "2.68.0", "2.68.1", "2.78.0")  # no pre-release, nothing yanked
    minors = resolve_versions((">=2.60,<3",), releases=lambda: releases, each="minor")
    assert minors.versions == ("2.60.0", "2.68.1", "2.78.0")
    assert minors.notes == (">=2.60,<3 (each minor's newest release) = 2.60.0, 2.68.1, 2.78.0",)
    named = resolve_versions((">=2.79.0b1",), releases=lambda: releases)  # a range naming a pre-release admits it
    assert named.versions == ("2.79.0b1",)


def test_the_cap_leaves_out_a_ranges_oldest_and_keeps_exact_versions_and_latest(tmp_path: Path) -> None:
    releases = _releases(tmp_path)
    resolved = resolve_versions(("2.38.0", ">=2.40,<3", "latest"), releases=lambda: releases, max_versions=4)
    assert resolved.versions == ("2.38.0", "2.68.0", "2.68.1", "2.78.0")
    assert resolved.left_out == ("2.40.0", "2.59.0", "2.60.0")
    assert resolved.notes[-1].startswith("--max-versions 4: left out 2.40.0, 2.59.0, 2.60.0 (the oldest a range")
    # latest names the range's newest release too: a cap of 2 still runs it (and the exact 2.38.0).
    tight = resolve_versions(("2.38.0", ">=2.40,<3", "latest"), releases=lambda: releases, max_versions=1)
    assert tight.versions == ("2.38.0", "2.78.0")


def test_a_range_that_matches_nothing_and_locked_without_a_lock_are_usage_errors(tmp_path: Path) -> None:
    releases = _releases(tmp_path)
    with pytest.raises(UsageError, match=r"--versions '>=3': no pydantic-ai-slim release on file://\S+ matches it; "):
        resolve_versions((">=3",), releases=lambda: releases)
    with pytest.raises(UsageError, match="--versions locked: give --lock FILE"):
        resolve_versions(("locked",), releases=lambda: releases)
    assert resolve_versions(("locked", "latest"), releases=lambda: releases, locked="2.68.0").versions == (
        "2.68.0",
        "2.78.0",
    )


def test_run_matrix_with_latest_runs_the_resolved_release_and_the_page_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_INDEX_URL", simple_directory(tmp_path / "simple").as_uri())
    monkeypatch.delenv("UV_DEFAULT_INDEX", raising=False)
    fake_environment(spec_for(tmp_path, "2.68.0"), {"a": "passed"})
    fake_environment(spec_for(tmp_path, "2.78.0"), {"a": "passed"})
    lines: list[str] = []
    options = MatrixOptions(
        paths=(Path("s"),), versions=("2.68.0", "latest"), out=tmp_path / "out", env_root=tmp_path / "envs"
    )

    report = run_matrix(options, progress=lines.append)

    assert [output.version for output in report.versions] == ["2.68.0", "2.78.0"]
    assert lines[0].startswith("versions: latest = 2.78.0")
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert "`--versions 2.68.0,latest` came to **2.68.0, 2.78.0**:" in markdown
    document = json.loads((tmp_path / "out" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["resolution"]["versions"] == ["2.68.0", "2.78.0"]
    assert document["resolution"]["index"].startswith("file://")


def test_the_page_names_the_versions_the_cap_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_DEFAULT_INDEX", simple_directory(tmp_path / "simple").as_uri())
    for version in ("2.68.1", "2.78.0"):
        fake_environment(spec_for(tmp_path, version), {"a": "passed"})
    options = MatrixOptions(
        paths=(Path("s"),),
        versions=(">=2.60,<3",),
        each="minor",
        max_versions=2,
        out=tmp_path / "out",
        env_root=tmp_path / "envs",
    )
    report = run_matrix(options, progress=lambda line: None)
    assert [output.version for output in report.versions] == ["2.68.1", "2.78.0"]
    markdown = (tmp_path / "out" / "compatibility.md").read_text(encoding="utf-8")
    assert "- --max-versions 2: left out 2.60.0 (the oldest a range matched;" in markdown
    document = json.loads((tmp_path / "out" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["resolution"]["left_out"] == ["2.60.0"]


def test_cli_latest_from_an_unreadable_index_exits_3_and_a_range_matching_nothing_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    index = simple_directory(tmp_path / "simple").as_uri()
    code, _, err = run_main(capsys, "matrix", "--versions", "latest", "--index-url", (tmp_path / "none").as_uri())
    assert code == 3, err
    (line,) = err.strip().splitlines()
    assert line.startswith("agentrig: error: cannot read the package index file://")
    code, _, err = run_main(capsys, "matrix", "--versions", ">=4", "--index-url", index)
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert f"--versions '>=4': no pydantic-ai-slim release on {index} matches it" in line


def test_cli_records_the_version_options_in_the_command_it_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scenarios").mkdir()
    index = simple_directory(tmp_path / "simple").as_uri()
    fake_environment(cli_spec("2.78.0"), {"a": "passed"})
    code, _, err = run_main(
        capsys, "matrix", "--versions", "latest", "--index-url", index, "--each", "minor", "--max-versions", "3"
    )
    assert code == 0, err
    document = json.loads((tmp_path / "agentrig-matrix" / "compatibility.json").read_text(encoding="utf-8"))
    assert document["command"] == (
        f"agentrig matrix scenarios --versions latest --each minor --max-versions 3 --index-url {index} "
        "--out agentrig-matrix"
    )
