"""Comparing `agentrig run` outputs across pydantic-ai versions: the data behind `agentrig matrix`'s report.

Each version's output is an `agentrig run --out DIR` directory (`report.json`, `scenarios/<name>/history.json`,
`scenarios/<name>/pydantic_ai_dump.json`). Every scenario's canonical history and raw pydantic-ai dump is compared
with the baseline's (the first version) after masking per-run values (`masking`: clocks, durations, ids, whatever
has their shape); differences are written as unified diffs to `OUT/diffs/<scenario>/<version>.<file>.diff` and
summed up as part kinds, keys that appear or go, and values that changed by key (`value_changes`). A scenario's
warnings new on a version are named too (`run_warnings`). Pure file work: no pydantic-ai import, no subprocess, so
it is tested on fabricated directories.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentrig.errors import AgentrigError
from agentrig.runtime.history.user_content import elide_base64_data
from agentrig.runtime.matrix.field_inventory import FieldInventory
from agentrig.runtime.matrix.judged_scores import judged_scores
from agentrig.runtime.matrix.masking import MASK, NAMED_PER_RUN_KEYS, mask
from agentrig.runtime.matrix.run_warnings import SeenWarning, new_warnings, scenario_warnings
from agentrig.runtime.matrix.value_changes import ValueChange, value_changes
from agentrig.runtime.reports.merge_checks import SCENARIO_NAME
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.jsonio import BeforeReplace

__all__ = [
    "COMPARED_FILES",
    "FAILING_STATUSES",
    "MASK",
    "MISSING",
    "VOLATILE_KEYS",
    "DumpChange",
    "Regression",
    "ScenarioComparison",
    "VersionOutput",
    "compare_dumps",
    "compare_outputs",
    "load_version_output",
    "normalized_json_text",
    "scenario_metrics",
    "summarize_change",
]
COMPARED_FILES = ("history.json", "pydantic_ai_dump.json")
"""The canonical history (must be identical on every version) and the raw pydantic-ai dump (may differ)."""
MISSING = "missing"
"""The status of a scenario a version's run did not report (its run crashed, or the scenario is new)."""
FAILING_STATUSES = frozenset({"failed", "error", MISSING})
VOLATILE_KEYS = NAMED_PER_RUN_KEYS
"""Keys whose values differ between any two runs, even on one version; masked before comparing (with the other
rules of `masking`: key names of clocks and durations, values shaped like them or like ids)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionOutput:
    """One version's `agentrig run` output, as far as the comparison needs it."""

    version: str
    """The pinned pydantic-ai version."""
    directory: Path
    """The `agentrig run --out` directory."""
    exit_code: int
    """The exit code of `agentrig run` in that version's environment."""
    statuses: Mapping[str, str] = field(default_factory=dict[str, str])
    """Scenario name -> passed / failed / error / skipped, from `report.json`."""
    tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Scenario name -> its tags (the areas the scenario covers)."""
    error: str | None = None
    """Set when the run left no readable report: the end of its stderr."""
    resolved_version: str | None = None
    """`pydantic_ai_version` as the run reported it (must equal `version`)."""
    environment: Path | None = None
    """The environment the run used."""
    reused: bool = False
    """True when the environment was reused rather than built."""
    command: tuple[str, ...] = ()
    """The command that produced the output."""
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    """Scenario name -> what its run cost: requests, input and output tokens, `cost_usd` (None: no price), seconds."""
    totals: Mapping[str, Any] | None = None
    """The run's report.json `totals` (requests, tokens, cost), when it has them."""
    warnings: Mapping[str, tuple[SeenWarning, ...]] = field(default_factory=dict[str, tuple[SeenWarning, ...]])
    """Scenario name -> the warnings it showed (report.json's `warnings`; none when a report has no such key)."""
    packages: Mapping[str, str] = field(default_factory=dict[str, str])
    """Every package the environment resolved: normalized name -> version (`packages.read_packages`)."""
    packages_error: str | None = None
    """Set when the environment's packages could not be listed: why."""
    field_inventory: FieldInventory | None = None
    """The environment's field inventory (`field_inventory`); None when none was taken (a model matrix)."""
    build_error: str | None = None
    """Set when the environment could not be built: the one-line error (then nothing ran on this version)."""
    build_log: str = ""
    """The end of the environment's build log (the resolver's output), when it was built."""
    judged: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    """Scenario name -> each judged check's score and pass rate on this run (`judged_scores`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DumpChange:
    """How one raw pydantic-ai dump differs from the baseline's, in terms a reader can scan."""

    part_kinds: Mapping[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    """Part kind -> (count in the baseline, count here), only where the counts differ."""
    new_keys: tuple[str, ...] = ()
    """JSON keys that appear here and nowhere in the baseline's dump."""
    removed_keys: tuple[str, ...] = ()
    """JSON keys of the baseline's dump that appear nowhere here."""
    changed_values: tuple[ValueChange, ...] = ()
    """Values that differ under a key both dumps have (`tool_kind: null → "output"`), the most frequent first."""

    def summary(self) -> str:
        """One line: part kind counts, keys that appear or disappear, values that changed ("values differ" when
        none of those)."""
        notes: list[str] = []
        if self.part_kinds:
            notes.append("part kinds " + ", ".join(f"{k} {a}→{b}" for k, (a, b) in self.part_kinds.items()))
        if self.new_keys:
            notes.append("new keys " + ", ".join(f"`{key}`" for key in self.new_keys))
        if self.removed_keys:
            notes.append("keys gone " + ", ".join(f"`{key}`" for key in self.removed_keys))
        if self.changed_values:
            notes.append("changed values " + ", ".join(f"`{change.text()}`" for change in self.changed_values[:5]))
        return "; ".join(notes) or "values differ"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioComparison:
    """One scenario across the versions."""

    name: str
    """The scenario name."""
    tags: tuple[str, ...]
    """Its tags."""
    statuses: Mapping[str, str]
    """Version -> status (`missing` when that version's run did not report it)."""
    canonical_differs: tuple[str, ...]
    """Versions whose canonical history differs from the baseline's."""
    raw_differs: tuple[str, ...]
    """Versions whose raw pydantic-ai dump differs from the baseline's."""
    raw_changes: Mapping[str, DumpChange]
    """Version -> how its raw dump differs from the baseline's."""
    diffs: tuple[str, ...]
    """Diff files written for this scenario, relative to the report directory."""
    new_warnings: Mapping[str, tuple[SeenWarning, ...]] = field(default_factory=dict[str, tuple[SeenWarning, ...]])
    """Version -> the warnings the scenario showed there and not on the baseline (only versions with some)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """A scenario that passes on the baseline and fails on another version."""

    scenario: str
    """The scenario name."""
    version: str
    """The version it fails on."""
    status: str
    """Its status there."""


def load_version_output(
    version: str,
    directory: Path,
    *,
    exit_code: int,
    stderr_tail: str = "",
    environment: Path | None = None,
    reused: bool = False,
    command: Sequence[str] = (),
) -> VersionOutput:
    """Read a run's `report.json`; a missing or unreadable one becomes a `VersionOutput` with `error` set."""
    common: dict[str, Any] = {
        "version": version,
        "directory": directory,
        "exit_code": exit_code,
        "environment": environment,
        "reused": reused,
        "command": tuple(command),
    }
    try:
        report = jsonio.read_json_file(directory / "report.json")
        scenarios = report["scenarios"]
        statuses = {str(item["name"]): str(item["status"]) for item in scenarios}
        tags = {str(item["name"]): tuple(str(tag) for tag in item.get("tags", ())) for item in scenarios}
        metrics = {str(item["name"]): scenario_metrics(item) for item in scenarios}
        warnings = {str(item["name"]): scenario_warnings(item) for item in scenarios}
        # A name becomes a folder of diffs/ (diffs/NAME/...): a report that names one a run never writes is refused.
        for name in statuses:
            if not SCENARIO_NAME.fullmatch(name):
                raise ValueError(f"{directory / 'report.json'}: scenarios: name {name[:120]!r} is not a scenario name")
    except (AgentrigError, KeyError, TypeError, ValueError) as error:
        reason = stderr_tail.strip() or str(error)
        return VersionOutput(error=reason, **common)
    resolved = report.get("pydantic_ai_version")
    totals = report.get("totals") if isinstance(report.get("totals"), dict) else None
    return VersionOutput(
        statuses=statuses,
        tags=tags,
        resolved_version=str(resolved) if resolved else None,
        metrics=metrics,
        totals=totals,
        warnings=warnings,
        judged=judged_scores(report),
        **common,
    )


def scenario_metrics(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What one scenario's run cost, from its report.json entry: requests, tokens, money, seconds."""
    raw_usage, raw_cost = entry.get("usage"), entry.get("cost")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    cost: Mapping[str, Any] = raw_cost if isinstance(raw_cost, dict) else {}
    return {
        "requests": usage.get("requests", 0),
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "cost_usd": cost.get("usd"),
        "cost_note": cost.get("note"),
        "duration_s": entry.get("duration_s"),
    }


def normalized_json_text(path: Path, masked_keys: set[str] | None = None) -> str | None:
    """The file's JSON with per-run values masked (`masking.mask`; the keys it masked added to `masked_keys`), keys
    sorted, two-space indent; None when absent or unreadable."""
    try:
        data = jsonio.read_json_file(path)
    except AgentrigError:
        return None
    return orjson.dumps(mask(data, masked_keys), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _shape(data: Any) -> tuple[Counter[str], set[str]]:
    objects = list(_walk(data))
    kinds = Counter(str(obj["part_kind"]) for obj in objects if "part_kind" in obj)
    keys = {key for obj in objects for key in obj}
    return kinds, keys


def compare_dumps(baseline_text: str, other_text: str) -> DumpChange:
    """Part kind counts, key sets and values by key of two JSON documents, compared."""
    baseline, other = orjson.loads(baseline_text), orjson.loads(other_text)
    base_kinds, base_keys = _shape(baseline)
    kinds, keys = _shape(other)
    changed = sorted(kind for kind in base_kinds | kinds if base_kinds[kind] != kinds[kind])
    return DumpChange(
        part_kinds={kind: (base_kinds[kind], kinds[kind]) for kind in changed},
        new_keys=tuple(sorted(keys - base_keys)),
        removed_keys=tuple(sorted(base_keys - keys)),
        changed_values=value_changes(baseline, other),
    )


def summarize_change(baseline_text: str, other_text: str) -> str:
    """One line on how a JSON document differs: part kind counts and keys that appear or disappear."""
    return compare_dumps(baseline_text, other_text).summary()


def _diff_scenario(
    name: str,
    baseline: VersionOutput,
    others: Sequence[VersionOutput],
    out: Path,
    record: BeforeReplace | None,
    masked_keys: set[str],
) -> tuple[list[str], list[str], dict[str, DumpChange], list[str]]:
    canonical_differs: list[str] = []
    raw_differs: list[str] = []
    raw_changes: dict[str, DumpChange] = {}
    diffs: list[str] = []
    if baseline.build_error is not None:  # nothing to compare with (its folder may hold an earlier matrix's run)
        return canonical_differs, raw_differs, raw_changes, diffs
    for file_name in COMPARED_FILES:
        base_text = normalized_json_text(baseline.directory / "scenarios" / name / file_name, masked_keys)
        if base_text is None:
            continue
        for other in others:
            if other.build_error is not None:  # nothing ran there; its folder may hold an earlier matrix's run
                continue
            text = normalized_json_text(other.directory / "scenarios" / name / file_name, masked_keys)
            if text is None or text == base_text:
                continue
            lines = difflib.unified_diff(  # an attachment's base64 as its size and hash: one line, still compared
                elide_base64_data(base_text).splitlines(keepends=True),
                elide_base64_data(text).splitlines(keepends=True),
                fromfile=f"{baseline.version}/scenarios/{name}/{file_name}",
                tofile=f"{other.version}/scenarios/{name}/{file_name}",
            )
            relative = f"diffs/{name}/{_file_safe(other.version)}.{file_name.removesuffix('.json')}.diff"
            jsonio.write_atomic(out / relative, "".join(lines).encode(), before_replace=record)
            diffs.append(relative)
            if file_name == "history.json":
                canonical_differs.append(other.version)
            else:
                raw_differs.append(other.version)
                raw_changes[other.version] = compare_dumps(base_text, text)
    return canonical_differs, raw_differs, raw_changes, diffs


def _file_safe(label: str) -> str:
    """A column's label as part of a file name (a model's `provider:name` keeps its colon, loses any slash)."""
    return label.replace("/", "~")


def compare_outputs(
    outputs: Sequence[VersionOutput],
    out: Path,
    *,
    record: BeforeReplace | None = None,
    masked_keys: set[str] | None = None,
) -> tuple[tuple[ScenarioComparison, ...], tuple[Regression, ...]]:
    """Compare every scenario across versions with the first, writing diff files under `out/diffs/` (each told to
    `record` before it replaces anything: the matrix folder's manifest); the keys masked go into `masked_keys`.
    A version whose environment could not be built has no regression: it has no result (the exit code is 3)."""
    baseline, others = outputs[0], list(outputs[1:])
    masked: set[str] = masked_keys if masked_keys is not None else set()
    names = sorted({name for output in outputs for name in output.statuses})
    comparisons: list[ScenarioComparison] = []
    regressions: list[Regression] = []
    for name in names:
        statuses = {output.version: output.statuses.get(name, MISSING) for output in outputs}
        tags = next((output.tags[name] for output in outputs if output.tags.get(name)), ())
        canonical, raw, raw_changes, diffs = _diff_scenario(name, baseline, others, out, record, masked)
        base_warnings = baseline.warnings.get(name, ())
        fresh = {other.version: new_warnings(base_warnings, other.warnings.get(name, ())) for other in others}
        comparisons.append(
            ScenarioComparison(
                name=name,
                tags=tags,
                statuses=statuses,
                canonical_differs=tuple(canonical),
                raw_differs=tuple(raw),
                raw_changes=raw_changes,
                diffs=tuple(diffs),
                new_warnings={version: found for version, found in fresh.items() if found},
            )
        )
        if statuses[baseline.version] == "passed":
            regressions += [
                Regression(scenario=name, version=other.version, status=statuses[other.version])
                for other in others
                if statuses[other.version] in FAILING_STATUSES and other.build_error is None
            ]
    return tuple(comparisons), tuple(regressions)
