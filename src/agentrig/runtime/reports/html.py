"""report.html: one self-contained page of a run, streamed one scenario at a time.

    <html><head><style>(report.css)</style></head><body>
    <script type="application/octet-stream" id="ar-c0">base64(gzip(scenario 0 JSON \n ... \n scenario 31 JSON))</script>
    ...                                           one block per CHUNK scenarios (each scenario's JSON: scenario_data)
    <script type="application/json" id="ar-index">{"head", "rows", "totals", "baseline", "chunk_size"}</script>
    <script>(dom.js, diff.js, checks.js, attachments.js, conversation.js, list.js, matrix.js, report.js)</script>
    </body></html>

The page makes no network request (no CDN, no web font; a Content-Security-Policy of `default-src 'none'` says so
to the browser too) and opens from `file://`. The policy allows the page's own style and script by their SHA-256
hashes, computed here from the text the page embeds: no other script runs, not even a `javascript:` link. The
script draws the table from the small index and decompresses a chunk (the browser's `DecompressionStream`) only
when one of its scenarios is opened or the conversations are searched: the scenarios' data is most of the page,
and compressed together, CHUNK at a time, the keys, checks and instructions they repeat are stored about once a
chunk (a third of the bytes or less: docs/performance.md). Every scenario's JSON is redacted
(`redaction.dumps_redacted`) and escaped so no string can close a `<script>` (`<` is written `\\u003c`; base64 has
no `<` at all); a scenario's JSON holds no raw newline, so a chunk is their lines. The writer holds at most one
chunk's data plus a row of a few numbers per scenario: memory stays flat.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import html
import shlex
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import IO, Any

from agentrig.runtime.history.redaction import dumps_redacted, redact_json
from agentrig.runtime.reports.baseline import Baseline
from agentrig.runtime.reports.scenario_data import scenario_payload
from agentrig.runtime.reports.totals import accounting_lines, describe_cost

__all__ = [
    "CHUNK",
    "REPORT_HTML",
    "Baseline",
    "HtmlReport",
    "asset_text",
    "content_security_policy",
    "embed_json",
    "page_end",
    "page_script",
    "page_start",
    "scenario_chunk",
]

REPORT_HTML = "report.html"

CHUNK = 32
"""Scenarios compressed together in one block: enough that what they repeat is stored about once (64 gain a few
per cent more), few enough that opening one decompresses ~150 kB."""

_USAGE_KEYS = ("requests", "tool_calls", "input_tokens", "output_tokens", "total_tokens")

_SCRIPTS = ("dom.js", "diff.js", "checks.js", "attachments.js", "conversation.js", "list.js", "matrix.js", "report.js")
"""The page's script, in order: one strict function scope over all of them."""


def asset_text(name: str) -> str:
    """A file of the page (report.css, report.js, page.html), shipped as package data."""
    return resources.files("agentrig.runtime.reports").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(value: Any) -> bytes:
    """`value` as JSON that is safe inside `<script type="application/json">`: redacted, and with every `<`
    written `\\u003c` (valid JSON, the same string), so no `</script>` or `<!--` can end or bend the block."""
    return dumps_redacted(value).replace(b"<", b"\\u003c")


def data_block(block_id: str, value: Any) -> bytes:
    return f'<script type="application/json" id="{block_id}">'.encode() + embed_json(value) + b"</script>\n"


def scenario_chunk(number: int, blocks: list[bytes]) -> bytes:
    """Chunk `number`: the scenarios' `embed_json` texts, one a line, gzipped (mtime 0: the same run writes the same
    bytes) and base64-encoded, which no `</script>` can be written in."""
    packed = base64.b64encode(gzip.compress(b"\n".join(blocks), compresslevel=6, mtime=0))
    return f'<script type="application/octet-stream" id="ar-c{number}">'.encode() + packed + b"</script>\n"


@functools.cache
def page_script() -> str:
    """The text of the page's one script element (its files in one strict function scope)."""
    script = '(function () {\n"use strict";\n' + "\n".join(asset_text(name) for name in _SCRIPTS) + "})();\n"
    # A literal `</script` cannot occur inside the script element; the files are written without one.
    assert "</script" not in script.lower()
    return script


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@functools.cache
def content_security_policy() -> str:
    """Nothing from the network, and only the page's own style and script (by hash): no inline handler, no
    `javascript:` URL, no script a string could smuggle in runs, and nothing is fetched."""
    style, script = _sha256_source(asset_text("report.css")), _sha256_source(page_script())
    sources = f"style-src {style}; script-src {script}; img-src data:"
    return f"default-src 'none'; {sources}; base-uri 'none'; form-action 'none'"


def page_start(title: str) -> bytes:
    """Everything before the data blocks: the document head with its style."""
    template = asset_text("page.html")
    start = template.split("<!--DATA-->", 1)[0]
    start = start.replace("<!--CSP-->", content_security_policy())
    return start.replace("<!--TITLE-->", html.escape(title)).replace("/*CSS*/", asset_text("report.css")).encode()


def page_end() -> bytes:
    """Everything after the data blocks: the script and the closing tags."""
    end = asset_text("page.html").split("<!--DATA-->", 1)[1]
    return end.replace("/*JS*/", page_script()).encode()


def rerun_command(entry: Mapping[str, Any], head: Mapping[str, Any], engine: str | None) -> str:
    """The command that runs this scenario again as the run did (its file, its name, the run's model and engine),
    quoted for a POSIX shell."""
    words = ["agentrig", "run", str(entry.get("path") or ""), "-k", str(entry["name"])]
    if head.get("model"):
        words += ["--model", str(head["model"])]
    if engine and engine != "pydantic-ai":
        words += ["--engine", engine]
    return shlex.join(words)


class HtmlReport:
    """report.html of a run: `add` each report.json entry (redacted), then `finish`."""

    def __init__(
        self,
        handle: IO[bytes],
        head: Mapping[str, Any],
        *,
        run_dir: Path,
        files_base: str = "",
        engine: str | None = None,
        baseline: Baseline | None = None,
        label: str | None = None,
    ) -> None:
        self._handle = handle
        self._head: dict[str, Any] = redact_json(dict(head))
        self._run_dir = run_dir
        self._files_base = files_base
        self._engine = engine
        self._baseline = baseline
        self._label = label or str(run_dir)
        self._rows: list[dict[str, Any]] = []
        self._chunk: list[bytes] = []  # the scenarios not yet written: their `embed_json` texts
        self._chunks = 0
        self._keys: set[str] = set()
        self._totals = dict.fromkeys(_USAGE_KEYS, 0)
        # Over the scenarios in both runs: the baseline's and this run's time and tokens.
        self._compared = {"duration_s": 0.0, "now_duration_s": 0.0, "tokens": 0, "now_tokens": 0}
        summary = self._head.get("summary") or {}
        title = f"agentrig: {summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed"
        handle.write(page_start(title))

    def add(self, entry: Mapping[str, Any], *, folder: str | None = None) -> None:
        """One scenario: `entry` is its report.json entry (redacted); `folder` the folder its files are in, relative
        to the run, when that is not the entry's `output_dir` (redaction changed the name it is written under)."""
        number = len(self._rows)
        payload = scenario_payload(self._run_dir, entry, self._files_base, source=folder)
        usage = entry.get("usage") or {}
        for key in _USAGE_KEYS:
            self._totals[key] += int(usage.get(key) or 0)
        row: dict[str, Any] = {
            "i": number,
            "id": entry["id"],
            "name": entry["name"],
            "path": entry.get("path"),
            "status": entry["status"],
            "duration_s": entry.get("duration_s"),
            "requests": usage.get("requests", 0),
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "cost": describe_cost(entry.get("cost")),
            "cost_usd": (entry.get("cost") or {}).get("usd"),
            "tags": entry.get("tags") or [],
            "failed_checks": sum(1 for check in entry.get("checks") or () if not check.get("passed")),
            "error": (entry.get("error") or {}).get("kind"),
            # What made a failed scenario fail when a turn ended in error (a tool raised, a timeout): its cause,
            # not an error (status `error` is for what the run could not judge: docs/exit-codes.md).
            "cause": (entry.get("error") or {}).get("kind") if entry["status"] == "failed" else None,
            "streamed": payload["events"] is not None,
            # Shown as often as each warning was (`report.json`'s `warnings` on the entry; the page draws each).
            "warnings": sum(int(record.get("count") or 1) for record in entry.get("warnings") or ()),
            "key": self._key(str(entry["name"]), number),
        }
        payload["rerun"] = rerun_command(entry, self._head, self._engine)
        if self._baseline is not None:
            comparison = self._baseline.compare(self._run_dir, entry, self._label)
            payload["baseline"] = comparison
            row["baseline_status"] = comparison["status"]
            row["changed"] = bool(comparison["diff"]) or comparison["status"] != entry["status"]
            if not comparison["missing"]:
                before = comparison["usage"] or {}
                row["baseline_duration_s"] = comparison["duration_s"]
                row["baseline_tokens"] = int(before.get("input_tokens") or 0) + int(before.get("output_tokens") or 0)
                self._compared["duration_s"] += float(comparison["duration_s"] or 0)
                self._compared["now_duration_s"] += float(entry.get("duration_s") or 0)
                self._compared["tokens"] += row["baseline_tokens"]
                self._compared["now_tokens"] += int(row["input_tokens"] or 0) + int(row["output_tokens"] or 0)
        block = embed_json(payload)
        assert b"\n" not in block  # compact JSON: a newline inside a string is written `\n`
        self._chunk.append(block)
        if len(self._chunk) == CHUNK:
            self._write_chunk()
        self._rows.append(row)

    def _write_chunk(self) -> None:
        if self._chunk:
            self._handle.write(scenario_chunk(self._chunks, self._chunk))
            self._chunks += 1
            self._chunk = []

    def _key(self, name: str, number: int) -> str:
        """The row's permalink (`report.html#KEY`): its name, unless another row has it (a report written before
        redacted names were kept apart), then the name and its position."""
        key = name if name not in self._keys else f"{name}~{number + 1}"
        self._keys.add(key)
        return key

    def finish(self) -> None:
        self._write_chunk()
        index: dict[str, Any] = {
            "kind": "run",
            "chunk_size": CHUNK,
            "head": self._head,
            "engine": self._engine,
            "label": self._label,
            "totals": self._totals,
            "rows": self._rows,
            "baseline": None,
        }
        repeats = self._head.get("repeats")
        if isinstance(repeats, Mapping):
            index["repeat_lines"] = accounting_lines(None, repeats)  # pyright: ignore[reportUnknownArgumentType]
        if self._baseline is not None:
            index["baseline"] = {
                "label": self._baseline.label,
                "head": redact_json(self._baseline.head),
                "only_in_baseline": self._baseline.unseen(),
            }
            index["baseline_totals"] = {key: round(value, 4) for key, value in self._compared.items()}
        self._handle.write(data_block("ar-index", index))
        self._handle.write(page_end())
