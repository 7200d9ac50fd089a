"""A run's report files, written in one pass over its scenarios: report.json, junit.xml, summary.md and report.html.

    with report_files(out_dir, head) as add:    # head: the report without "scenarios" (its summary included)
        for entry in entries:
            add(entry)                         # one scenario's report.json entry: redacted, written, dropped

A run never holds its whole report: each scenario's entry goes to the three files as it comes, so 10,000 scenarios
cost the memory of one (summary.md keeps the details of failed scenarios for its failures section, and only those,
and one row per distinct warning for its last).
report.html (`agentrig.runtime.reports.html`) reads each scenario's folder as its entry comes, so the folders must
be written first (they are). The files are written atomically, together, when the block ends: all are replaced,
or none (when the block raises, or the disk fills up).

JUnit and markdown are rendered from report entries (JSON data), never from live objects, so `merge` renders
exactly what a single run would have; `render_junit` and `render_summary` render a whole report in memory.
"""

from __future__ import annotations

import contextlib
import io
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.run_records import PROVIDER_ERROR_KINDS
from agentrig.runtime.history.warning_records import describe_warning
from agentrig.runtime.reports import markdown_text as md
from agentrig.runtime.reports.distinct_names import DistinctNames
from agentrig.runtime.reports.html import REPORT_HTML, HtmlReport
from agentrig.runtime.reports.merge_checks import describe_partial
from agentrig.runtime.reports.totals import accounting_lines, describe_cost, totals_properties
from agentrig.runtime.runfolder.jsonio import dumps, open_atomic_files
from agentrig.runtime.runfolder.owned_folder import Layout, OwnedFolder

__all__ = [
    "RUN_LAYOUT",
    "HtmlOptions",
    "describe_check",
    "describe_error",
    "render_junit",
    "render_summary",
    "report_files",
    "summary_line",
]

RUN_LAYOUT = Layout(
    kind="run", files=frozenset({"report.json", "junit.xml", "summary.md", REPORT_HTML}), trees=frozenset({"scenarios"})
)
"""What `agentrig run`, `merge` and the pytest plugin's --agentrig-out write in their output folder (`OUT/scenarios/`
whole: one folder per scenario, `suite/outputs/scenario_files`)."""

AddEntry = Callable[[Mapping[str, Any]], dict[str, Any]]
"""Writes one scenario's entry to the report files; returns it as written (redacted)."""


@contextlib.contextmanager
def report_files(
    out_dir: Path,
    head: Mapping[str, Any],
    *,
    html: HtmlOptions | None = None,
    owner: OwnedFolder | None = None,
    kept: str = "none was replaced",
) -> Generator[AddEntry]:
    """Write report.json, junit.xml and summary.md of `head` plus the entries added in the block, and report.html
    unless `html` is None.

    `owner`: the output folder's claim (`runfolder.owned_folder`), which records the files before they replace
    anything; with `html` None it removes an earlier report.html (it would show another run) if that is provably
    agentrig's. `kept` says what a full disk leaves of the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # Redacted as data, before rendering: junit.xml and summary.md show what report.json holds.
    redacted_head: dict[str, Any] = redact_json(dict(head))
    # All replaced or none (`open_atomic_files`): a disk that fills up while summary.md is written must not leave a
    # new junit.xml beside the old report.json. report.json goes last, it is what marks the folder a run's.
    names = ["summary.md", "junit.xml", *([REPORT_HTML] if html is not None else []), "report.json"]
    if html is None and owner is not None:
        owner.remove(REPORT_HTML)  # it would show another run
    recorder = owner.record_replaced if owner is not None else None
    with open_atomic_files(*(out_dir / name for name in names), kept=kept, before_replace=recorder) as handles:
        summary, junit, *pages, report = handles
        writers: list[_ReportJson | _JUnit | _Markdown | HtmlReport] = [
            _ReportJson(report, redacted_head),
            _JUnit(junit, redacted_head),
            _Markdown(summary, redacted_head),
        ]
        if html is not None:
            writers.extend(HtmlReport(page, redacted_head, run_dir=out_dir, engine=html.engine) for page in pages)

        distinct = DistinctNames()

        def add(entry: Mapping[str, Any]) -> dict[str, Any]:
            redacted: dict[str, Any] = distinct.apply(entry, redact_json(dict(entry)))
            for writer in writers:
                if isinstance(writer, HtmlReport):  # the folder on disk has the name redaction changed
                    writer.add(redacted, folder=entry.get("output_dir"))
                else:
                    writer.add(redacted)
            return redacted

        yield add
        for writer in writers:
            writer.finish()


@dataclass(frozen=True, slots=True)
class HtmlOptions:
    """report.html is written (`agentrig run --no-html` turns it off), with what report.json does not say."""

    engine: str | None = None
    """The engine that ran the scenarios (`--engine`), shown in the page's header."""


def render_junit(report: Mapping[str, Any]) -> bytes:
    """JUnit XML of a whole report: one testsuite, one testcase per scenario; failures carry expected and actual."""
    buffer = io.BytesIO()
    _render(_JUnit(buffer, report), report)
    return buffer.getvalue()


def render_summary(report: Mapping[str, Any]) -> str:
    """Markdown of a whole report: a headline, a table of every scenario, then the details of each failure."""
    buffer = io.BytesIO()
    _render(_Markdown(buffer, report), report)
    return buffer.getvalue().decode("utf-8")


def _render(writer: _ReportJson | _JUnit | _Markdown, report: Mapping[str, Any]) -> None:
    for entry in report["scenarios"]:
        writer.add(entry)
    writer.finish()


class _ReportJson:
    """report.json exactly as `dumps(report, pretty=True)` would write it, "scenarios" (the last key) streamed."""

    _INDENT = b"\n    "  # an entry sits two levels deep: the report, then its "scenarios" list

    def __init__(self, handle: IO[bytes], head: Mapping[str, Any]) -> None:
        self._handle = handle
        opening = dumps({**head, "scenarios": []}, pretty=True)
        closing = b"[]\n}\n"
        assert opening.endswith(closing), "scenarios must be the report's last key"
        handle.write(opening[: -len(closing)] + b"[")
        self._count = 0

    def add(self, entry: Mapping[str, Any]) -> None:
        # Newlines inside JSON strings are escaped, so every raw newline is indentation and can be deepened.
        text = dumps(entry, pretty=True)[:-1].replace(b"\n", self._INDENT)
        self._handle.write((b"," if self._count else b"") + self._INDENT + text)
        self._count += 1

    def finish(self) -> None:
        self._handle.write(b"\n  ]\n}\n" if self._count else b"]\n}\n")


def _start_tag(tag: str, attributes: dict[str, str]) -> str:
    """`<tag a="b">`, escaped by ElementTree itself (it writes an empty element as `<tag a="b" />`)."""
    return ElementTree.tostring(ElementTree.Element(tag, attributes), encoding="unicode")[: -len(" />")] + ">"


def _element_text(element: ElementTree.Element, level: int) -> str:
    """One element as ElementTree would write it `level` deep inside an indented document."""
    ElementTree.indent(element, space="  ", level=level)
    return "  " * level + ElementTree.tostring(element, encoding="unicode") + "\n"


class _JUnit:
    """junit.xml as ElementTree writes the whole indented tree, one testcase at a time."""

    def __init__(self, handle: IO[bytes], head: Mapping[str, Any]) -> None:
        self._handle = handle
        summary = head["summary"]
        attributes = {
            "name": "agentrig",
            "tests": str(summary["total"]),
            "failures": str(summary["failed"]),
            "errors": str(summary["error"]),
            "skipped": str(summary["skipped"]),
            "time": f"{summary['duration_s']:.3f}",
        }
        properties = ElementTree.Element("properties")
        for key in ("agentrig_version", "pydantic_ai_version", "python_version", "model"):
            if head.get(key) is not None:
                ElementTree.SubElement(properties, "property", {"name": key, "value": str(head[key])})
        for name, value in totals_properties(head.get("totals"), head.get("repeats")):
            ElementTree.SubElement(properties, "property", {"name": name, "value": value})
        if head.get("partial"):
            ElementTree.SubElement(
                properties, "property", {"name": "partial", "value": describe_partial(head["partial"])}
            )
        self._write(
            "<?xml version='1.0' encoding='utf-8'?>\n"
            + _start_tag("testsuites", attributes)
            + "\n  "
            + _start_tag("testsuite", attributes)
            + "\n"
            + _element_text(properties, 2)
        )

    def _write(self, text: str) -> None:
        self._handle.write(text.encode("utf-8"))

    def add(self, scenario: Mapping[str, Any]) -> None:
        case = ElementTree.Element(
            "testcase",
            {
                "classname": _classname(scenario["path"]),
                "name": scenario["name"],
                "file": scenario["path"],
                "time": f"{scenario['duration_s']:.3f}",
            },
        )
        cost = scenario.get("cost") or {}
        properties = ElementTree.Element("properties")
        if cost.get("usd") is not None or cost.get("model") is not None:
            value = str(cost["usd"]) if cost.get("usd") is not None else str(cost.get("note") or "no price")
            ElementTree.SubElement(properties, "property", {"name": "cost_usd", "value": value})
        for name, value in score_properties(scenario):
            ElementTree.SubElement(properties, "property", {"name": name, "value": value})
        if len(properties):
            case.append(properties)
        status = scenario["status"]
        failed = _failed_checks(scenario)
        cause = scenario.get("error") if status == "failed" else None
        if cause:  # a turn ended in error (a tool raised, a timeout): that is why it failed, the checks follow
            text = "\n\n".join([describe_error(scenario), *(describe_check(check) for check in failed)])
            attributes = {"message": f"{cause['kind']}: {cause['message']}", "type": cause["kind"]}
            ElementTree.SubElement(case, "failure", attributes).text = text
        elif status == "failed":
            text = "\n\n".join(describe_check(check) for check in failed)
            message = f"{len(failed)} check(s) failed: {failed[0]['name']}" if failed else "failed"
            ElementTree.SubElement(case, "failure", {"message": message, "type": "expectation"}).text = text
        elif status == "error":
            error = scenario.get("error") or {"kind": "error", "message": "error"}
            element = ElementTree.SubElement(case, "error", {"message": error["message"], "type": error["kind"]})
            element.text = "\n\n".join(describe_check(check) for check in failed) or error["message"]
        elif status == "skipped":
            ElementTree.SubElement(case, "skipped", {"message": _skip_reason(scenario)})
        warned = scenario.get("warnings") or []
        if warned:  # what CI viewers show of a test case besides its verdict (Jenkins, GitLab: its output)
            lines = [f"warning: {describe_warning(record)}" for record in warned]
            ElementTree.SubElement(case, "system-err").text = "\n".join(lines) + "\n"
        self._write(_element_text(case, 2))

    def finish(self) -> None:
        self._write("  </testsuite>\n</testsuites>\n")


_STATUS_MARK = {"passed": "✅ passed", "failed": "❌ failed", "error": "💥 error", "skipped": "⏭️ skipped"}


class _Markdown:
    """summary.md: the headline and the table stream; the failures' details (the last section) wait for the end."""

    def __init__(self, handle: IO[bytes], head: Mapping[str, Any]) -> None:
        self._handle = handle
        self._failures: list[str] = []
        self._skipped: dict[str, _Warned] = {}
        """Each reason scenarios were skipped for (an extra not installed, Ctrl-C, --max-cost), and which ones."""
        self._warnings: dict[tuple[str, str, str], _Warned] = {}
        summary = head["summary"]
        versions = (md.inline(head.get("pydantic_ai_version") or "?"), md.inline(head.get("agentrig_version")))
        facts = [f"pydantic-ai {versions[0]}", f"agentrig {versions[1]}"]
        if head.get("model"):
            facts.append(f"model {md.code(head['model'])}")
        if head.get("shard"):
            facts.append(f"shard {head['shard']['index']}/{head['shard']['count']}")
        if head.get("merged_from"):
            facts.append(f"merged from {len(head['merged_from'])} outputs")
        if head.get("partial"):
            facts.append(f"**partial: {describe_partial(head['partial'])}**")
        if head.get("interrupted"):
            facts.append("**interrupted**")
        facts.append(f"{summary['duration_s']:.2f} s")
        accounting = accounting_lines(head.get("totals"), head.get("repeats"))
        self._write_lines(
            [
                f"## agentrig: {summary_line(summary)}",
                "",
                " · ".join(facts),
                *(["", *(f"{_indent(line)}- {line.strip()}" for line in accounting)] if accounting else []),
                "",
                "| Status | Scenario | File | Requests | Tokens in / out | Cost | Time |",
                "|---|---|---|---:|---:|---:|---:|",
            ]
        )

    def _write_lines(self, lines: list[str]) -> None:
        self._handle.write("".join(line + "\n" for line in lines).encode("utf-8"))

    def add(self, scenario: Mapping[str, Any]) -> None:
        usage = scenario["usage"]
        self._write_lines(
            [
                f"| {_STATUS_MARK[scenario['status']]} | {md.code(scenario['name'], in_table=True)} | "
                f"{md.inline(scenario['path'])} | "
                f"{usage['requests']} | {usage['input_tokens']} / {usage['output_tokens']} | "
                f"{describe_cost(scenario.get('cost'))} | {scenario['duration_s']:.2f} s |"
            ]
        )
        if scenario["status"] in ("failed", "error"):
            self._failures += _failure_section(scenario)
        if scenario["status"] == "skipped":
            self._skipped.setdefault(_skip_reason(scenario), _Warned()).add(scenario["name"], 1)
        for record in scenario.get("warnings") or ():
            key = (str(record.get("category")), str(record.get("message")), str(record.get("module")))
            self._warnings.setdefault(key, _Warned()).add(scenario["name"], record.get("count"))

    def finish(self) -> None:
        if self._failures:
            self._write_lines(["", "### Failures", *self._failures])
        if self._skipped:
            self._write_lines(["", "### Skipped", "", *_skipped_section(self._skipped)])
        if self._warnings:
            self._write_lines(["", "### Warnings", *_warnings_section(self._warnings)])


class _Warned:
    """One distinct warning (or reason for skipping) over the run, for summary.md: how often it was shown, and where
    (the first few)."""

    SHOWN_NAMES = 5

    def __init__(self) -> None:
        self.count = 0
        self.scenarios = 0
        self.names: list[str] = []

    def add(self, name: str, count: object) -> None:
        self.count += count if isinstance(count, int) and not isinstance(count, bool) else 1
        self.scenarios += 1
        if len(self.names) < self.SHOWN_NAMES:
            self.names.append(name)


def _warnings_section(warned: Mapping[tuple[str, str, str], _Warned]) -> list[str]:
    # One row per distinct warning, however many scenarios showed it: a deprecation every scenario hits is one row.
    lines = ["", "| Warning | Module | Shown | Scenarios |", "|---|---|---:|---|"]
    for (category, message, module), seen in sorted(warned.items()):
        names = ", ".join(md.code(name, in_table=True) for name in seen.names)
        more = f" and {seen.scenarios - len(seen.names)} more" if seen.scenarios > len(seen.names) else ""
        lines.append(
            f"| {md.code(category, in_table=True)}: {md.inline(message)} | {md.code(module, in_table=True)} | "
            f"{seen.count} | {names}{more} |"
        )
    return lines


def _skipped_section(skipped: Mapping[str, _Warned]) -> list[str]:
    # One line per reason: the scenarios an extra's absence skipped share its install command, and a Ctrl-C's or a
    # budget's skips (thousands, in a large run) are one line too.
    lines: list[str] = []
    for reason, seen in skipped.items():
        names = ", ".join(md.code(name) for name in seen.names)
        more = f" and {seen.scenarios - len(seen.names)} more" if seen.scenarios > len(seen.names) else ""
        lines.append(f"- {md.inline(reason)} ({seen.scenarios}): {names}{more}")
    return lines


def _failure_section(scenario: Mapping[str, Any]) -> list[str]:
    # Everything a scenario's run or a report says is shown as text (`markdown_text`), never as markup of its own.
    lines = ["", f"#### {md.code(scenario['name'])} ({md.inline(scenario['path'])})", ""]
    if scenario.get("error"):
        word = "error" if scenario["status"] == "error" else "cause"
        lines.append(f"- **{word}** {md.code(scenario['error']['kind'])}: {md.inline(scenario['error']['message'])}")
    for check in _failed_checks(scenario):
        expected = f" expected {md.code(_short(check['expected'], 120))}" if check.get("expected") is not None else ""
        actual = f", got {md.code(_short(check['actual'], 120))}" if expected or check.get("actual") is not None else ""
        lines.append(f"- **{md.inline(check['name'])}**{expected}{actual}")
        if check.get("detail"):
            detail_lines = ["  " + line for line in check["detail"].rstrip("\n").splitlines()]
            fence = md.fence(detail_lines)
            language = "diff" if check["detail"].startswith("---") else "text"
            lines += ["", f"  {fence}{language}", *detail_lines, f"  {fence}"]
    return lines


def summary_line(summary: Mapping[str, Any]) -> str:
    """`N passed, N failed, N skipped` (+ `, N errors` when there are any): the line CI systems read."""
    line = f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped"
    if summary.get("error"):
        line += f", {summary['error']} error{'s' if summary['error'] != 1 else ''}"
    return line


def describe_error(entry: Mapping[str, Any]) -> str:
    """The turn error of a report entry as every front end prints it: `error KIND: message` when the scenario
    errored (the run could not judge it: exit code 3), `cause KIND: message` when that error made it fail (a tool
    raised, a turn timed out: the agent's own behaviour, exit code 1). docs/exit-codes.md says which is which."""
    error = entry.get("error") or {}
    kind, message = str(error.get("kind")), str(error.get("message"))
    if entry.get("status") != "error":
        return f"cause {kind}: {message}"
    if kind in PROVIDER_ERROR_KINDS:
        return f"error {kind} (provider error): {message}"
    if kind == "agent_error":
        return f"error {kind} (raised while running the scenario: the agent, its tools or its loading): {message}"
    if kind == "unsupported":
        return f"error {kind} (this engine or environment cannot run the scenario; nothing of yours raised): {message}"
    return f"error {kind}: {message}"


def describe_check(check: Mapping[str, Any]) -> str:
    """A failed check as text: name, expected, actual, then the detail (often a diff)."""
    lines = [check["name"]]
    if check.get("expected") is not None:
        lines.append(f"  expected: {_short(check['expected'])}")
    if check.get("actual") is not None or check.get("expected") is not None:
        lines.append(f"  actual:   {_short(check.get('actual'))}")
    if check.get("detail"):
        lines.append("  " + check["detail"].rstrip("\n").replace("\n", "\n  "))
    return "\n".join(lines)


def score_properties(scenario: Mapping[str, Any]) -> list[tuple[str, str]]:
    """junit.xml's properties of a scored scenario: its `score` (and `min_score`), then each judged check's score and
    reason beside its name (its detail: `score 0.9 >= 0.7, pass: ...`), passed or not."""
    score = scenario.get("score")
    if not isinstance(score, Mapping):
        return []
    properties = [("score", f"{score['value']:g}")]
    if score.get("threshold") is not None:
        properties.append(("min_score", f"{score['threshold']:g}"))
    judged: Mapping[str, Any] = score.get("judged") or {}
    properties += [
        (check["name"], str(check.get("detail") or "")) for check in scenario["checks"] if check["name"] in judged
    ]
    return properties


def _indent(line: str) -> str:
    """summary.md's nesting of an accounting line: two spaces of the terminal's per level."""
    return " " * (len(line) - len(line.lstrip(" ")))


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else dumps(value).decode("utf-8")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _failed_checks(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [check for check in scenario["checks"] if not check["passed"]]


def _skip_reason(scenario: Mapping[str, Any]) -> str:
    reasons = [check["skipped_reason"] for check in scenario["checks"] if check.get("skipped_reason")]
    return reasons[0] if reasons else "skipped"


def _classname(path: str) -> str:
    """`scenarios/tools/roundtrip.yaml` -> `scenarios.tools.roundtrip` (JUnit viewers group by it)."""
    stem = path.rsplit(".", 1)[0] if path.endswith((".yaml", ".yml")) else path
    return stem.strip("./").replace("/", ".")
