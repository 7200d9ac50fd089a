"""The releases of pydantic-ai-slim a package index has, read through the simple repository API (PEP 503 and 691).

    releases = read_releases(index_url(None, os.environ), python_version="3.11.9")

The index is the one pip and uv would use: `--index-url`, else `UV_DEFAULT_INDEX`, `UV_INDEX_URL` or
`PIP_INDEX_URL`, else PyPI (index settings in pip.conf or uv.toml files are not read: give `--index-url`). An
`http(s)://` index is asked for PEP 691 JSON and may answer PEP 503 HTML; a `file://` index is a directory holding
`<project>/index.html` (what pip reads there) or `<project>/index.json`. A release counts when one of its files is
not yanked and admits the Python the environments are built from (`requires-python`), as pip and uv choose.
Credentials in the URL are sent as basic auth and never shown (`display_url`).
"""

from __future__ import annotations

import base64
import html.parser
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentrig.errors import InfrastructureError

__all__ = [
    "DEFAULT_INDEX",
    "PROJECT",
    "IndexReleases",
    "display_url",
    "index_url",
    "parse_simple_page",
    "read_releases",
]

PROJECT = "pydantic-ai-slim"
DEFAULT_INDEX = "https://pypi.org/simple"
INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")
"""The environment variables that name the index, in the order they are read (uv's first: uv builds by default)."""
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{SIMPLE_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
MAX_PAGE_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexReleases:
    """What the index offers of the project."""

    index: str
    """The index, as shown (credentials removed)."""
    releases: tuple[Version, ...]
    """Every release with a usable file, oldest first."""
    unusable: tuple[Version, ...] = ()
    """Releases whose every file is yanked or needs another Python, oldest first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _File:
    filename: str
    yanked: bool
    requires_python: str | None


def index_url(flag: str | None, environ: Mapping[str, str]) -> str:
    """The index to read: the flag, else the first index variable set, else PyPI."""
    if flag:
        return flag
    return next((environ[name] for name in INDEX_VARIABLES if environ.get(name)), DEFAULT_INDEX)


def display_url(url: str) -> str:
    """The URL without user name or password."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.files: list[_File] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        values = dict(attrs)
        href = values.get("href") or ""
        filename = urllib.parse.unquote(urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1])
        self.files.append(
            _File(
                filename=filename,
                yanked="data-yanked" in values,
                requires_python=values.get("data-requires-python"),
            )
        )


def _json_files(data: Any, where: str) -> list[_File]:
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ValueError(f"{where}: no `files` list (not a PEP 691 project page)")
    files: list[_File] = []
    for item in data["files"]:
        if isinstance(item, dict) and isinstance(item.get("filename"), str):
            requires = item.get("requires-python")
            files.append(
                _File(
                    filename=item["filename"],
                    yanked=bool(item.get("yanked")),
                    requires_python=requires if isinstance(requires, str) else None,
                )
            )
    return files


def parse_simple_page(body: bytes, content_type: str, where: str) -> list[tuple[str, bool, str | None]]:
    """(filename, yanked, requires-python) of each file a project page lists; a ValueError for a page that is neither
    PEP 691 JSON nor PEP 503 HTML."""
    if "json" in content_type:
        try:
            data = json.loads(body)
        except ValueError as error:
            raise ValueError(f"{where}: not JSON ({error})") from None
        files = _json_files(data, where)
    else:
        parser = _Anchors()
        parser.feed(body.decode("utf-8", errors="replace"))
        files = parser.files
    return [(item.filename, item.yanked, item.requires_python) for item in files]


def _file_version(filename: str, project: str) -> Version | None:
    name = re.escape(project).replace(r"\-", "[-_.]")
    if filename.endswith(".whl"):
        match = re.fullmatch(rf"(?i){name}-([^-]+)-.+\.whl", filename)
    else:
        match = re.fullmatch(rf"(?i){name}-(.+?)(?:\.tar\.gz|\.zip|\.tar\.bz2|\.tgz)", filename)
    if match is None:
        return None
    try:
        return Version(match.group(1))
    except InvalidVersion:
        return None


def _admits(requires_python: str | None, python: Version) -> bool:
    if not requires_python:
        return True
    try:
        return SpecifierSet(requires_python).contains(python, prereleases=True)
    except InvalidSpecifier:
        return True  # pip ignores a requires-python it cannot read


def _request(url: str) -> urllib.request.Request:
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": ACCEPT, "User-Agent": "agentrig-matrix"}
    if parts.username is not None:
        token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
    return urllib.request.Request(display_url(url), headers=headers)


def _fetch(index: str, project: str) -> tuple[bytes, str]:
    """The project page's bytes and content type."""
    if index.startswith("file:"):
        folder = Path(urllib.request.url2pathname(urllib.parse.urlsplit(index).path)) / project
        for name, content_type in (("index.json", SIMPLE_JSON), ("index.html", "text/html")):
            if (folder / name).is_file():
                return (folder / name).read_bytes()[:MAX_PAGE_BYTES], content_type
        raise OSError(f"no {project}/index.html there")
    url = index.rstrip("/") + f"/{project}/"
    with urllib.request.urlopen(_request(url), timeout=TIMEOUT_SECONDS) as response:
        body = response.read(MAX_PAGE_BYTES + 1)
        if len(body) > MAX_PAGE_BYTES:
            raise OSError(f"the page is over {MAX_PAGE_BYTES // (1024 * 1024)} MiB")
        return body, str(response.headers.get("Content-Type") or "text/html")


def read_releases(index: str, *, python_version: str, project: str = PROJECT) -> IndexReleases:
    """The project's releases on `index` usable on `python_version` (X.Y.Z); an index that cannot be read is an
    InfrastructureError (exit 3) naming it."""
    shown = display_url(index)
    try:
        body, content_type = _fetch(index, project)
        files = parse_simple_page(body, content_type, f"{shown}/{project}/")
    except urllib.error.HTTPError as error:
        error.close()  # its response holds the connection
        raise InfrastructureError(f"cannot read the package index {shown}: {project}: HTTP {error.code}") from None
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise InfrastructureError(f"cannot read the package index {shown}: {reason}") from None
    python = Version(python_version)
    usable: set[Version] = set()
    seen: set[Version] = set()
    for filename, yanked, requires_python in files:
        version = _file_version(filename, project)
        if version is None:
            continue
        seen.add(version)
        if not yanked and _admits(requires_python, python):
            usable.add(version)
    return IndexReleases(index=shown, releases=tuple(sorted(usable)), unusable=tuple(sorted(seen - usable)))


def newest(versions: Iterable[Version]) -> Version | None:
    """The highest of `versions`, None when there is none."""
    return max(versions, default=None)
