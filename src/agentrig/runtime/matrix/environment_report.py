"""What the matrix report says about each version's environment, beside its results: how the versions were chosen,
which packages differ from the baseline's (and from the lock), environments that could not be built, fields the
canonical form does not carry, and warnings new on a version. `report` puts these in compatibility.json and
compatibility.md; compatibility.html draws them from the JSON (`reports/assets/matrix.js`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentrig.runtime.matrix.compare import Regression, ScenarioComparison, VersionOutput
from agentrig.runtime.matrix.field_inventory import FieldEntry, FieldInventory, new_fields_not_carried
from agentrig.runtime.matrix.lockfiles import LockFile
from agentrig.runtime.matrix.packages import PackageChange, also_changed_sentence, package_changes
from agentrig.runtime.matrix.run_warnings import SeenWarning
from agentrig.runtime.matrix.version_selection import Resolution

__all__ = [
    "environment_markdown",
    "lock_json",
    "new_fields",
    "package_changes_of",
    "regression_json",
    "regression_lines",
    "resolution_json",
    "resolution_lines",
    "version_json",
    "warnings_of",
]

NO_INVENTORY = FieldInventory()


def package_changes_of(output: VersionOutput, baseline: VersionOutput) -> tuple[PackageChange, ...] | None:
    """How a version's packages differ from the baseline's; None when either list is unknown (not built, or not
    readable), or for the baseline itself."""
    if output is baseline or output.build_error or baseline.build_error or output.packages_error:
        return None
    if baseline.packages_error or not output.packages or not baseline.packages:
        return None
    return package_changes(baseline.packages, output.packages)


def _lock_changes(output: VersionOutput, lock: LockFile | None) -> tuple[PackageChange, ...] | None:
    if lock is None or not output.packages:
        return None
    pins = lock.pins()
    return tuple(change for change in package_changes(pins, output.packages) if change.before is not None)


def new_fields(output: VersionOutput, baseline: VersionOutput) -> tuple[tuple[FieldEntry, ...], tuple[FieldEntry, ...]]:
    """(fields not carried that the baseline's inventory lacks, fields on neither list) of one version."""
    inventory = output.field_inventory or NO_INVENTORY
    if inventory.error is not None or output.field_inventory is None:
        return (), ()
    base = baseline.field_inventory or NO_INVENTORY
    fresh = (
        () if output is baseline else new_fields_not_carried(base if base.error is None else NO_INVENTORY, inventory)
    )
    return fresh, inventory.unknown


def warnings_of(version: str, scenarios: Sequence[ScenarioComparison]) -> list[tuple[SeenWarning, list[str]]]:
    """The warnings new on `version`, each with the scenarios that showed it."""
    grouped: dict[tuple[str, str, str], tuple[SeenWarning, list[str]]] = {}
    for scenario in scenarios:
        for warning in scenario.new_warnings.get(version, ()):
            grouped.setdefault(warning.key, (warning, []))[1].append(scenario.name)
    return [grouped[key] for key in sorted(grouped)]


def _changes_json(changes: Sequence[PackageChange] | None) -> list[dict[str, str | None]] | None:
    return None if changes is None else [change.to_json() for change in changes]


def version_json(
    output: VersionOutput, baseline: VersionOutput, scenarios: Sequence[ScenarioComparison], lock: LockFile | None
) -> dict[str, Any]:
    """The environment's keys of one `versions` entry of compatibility.json."""
    changes = package_changes_of(output, baseline)
    fresh, unknown = new_fields(output, baseline)
    inventory = output.field_inventory
    return {
        "build_error": output.build_error,
        "build_log_tail": output.build_log or None,
        "build_log": f"logs/{output.version}.build.log" if output.build_error or output.build_log else None,
        "packages": dict(sorted(output.packages.items())),
        "packages_error": output.packages_error,
        "package_changes": _changes_json(changes),
        "also_changed": also_changed_sentence(changes) if changes else None,
        "lock_changes": _changes_json(_lock_changes(output, lock)),
        "fields": None
        if inventory is None
        else {
            "error": inventory.error,
            "pydantic_ai": inventory.pydantic_ai,
            "new_not_carried": [entry.to_json() for entry in fresh],
            "unknown": [{"owner": entry.owner, "class": entry.class_name, "field": entry.field} for entry in unknown],
        },
        "new_warnings": [
            {**warning.to_json(), "scenarios": names} for warning, names in warnings_of(output.version, scenarios)
        ],
    }


def resolution_json(resolution: Resolution | None) -> dict[str, Any] | None:
    if resolution is None:
        return None
    return {
        "requested": list(resolution.requested),
        "versions": list(resolution.versions),
        "notes": list(resolution.notes),
        "left_out": list(resolution.left_out),
        "index": resolution.index,
    }


def lock_json(lock: LockFile | None) -> dict[str, Any] | None:
    if lock is None:
        return None
    return {
        "file": str(lock.path),
        "format": lock.format,
        "sha256": lock.sha256,
        "pydantic_ai": lock.pydantic_ai,
        "packages": len(lock.packages),
        "unpinned": list(lock.unpinned),
    }


def regression_json(item: Regression, outputs: Mapping[str, VersionOutput], baseline: VersionOutput) -> dict[str, Any]:
    """One `regressions` entry: the scenario, the version, and the packages that differ from the baseline there."""
    changes = package_changes_of(outputs[item.version], baseline)
    return {
        "scenario": item.scenario,
        "version": item.version,
        "status": item.status,
        "package_changes": _changes_json(changes),
        "also_changed": also_changed_sentence(changes) if changes else None,
    }


def regression_lines(item: Regression, outputs: Mapping[str, VersionOutput], baseline: VersionOutput) -> list[str]:
    """The markdown of one regression: the line, then what else changed in its environment."""
    lines = [f"- `{item.scenario}` on {item.version}: {item.status}"]
    changes = package_changes_of(outputs[item.version], baseline)
    if changes is None:
        return lines
    named = ", ".join(change.text() for change in changes) or "none"
    lines.append(f"  - packages that differ from {baseline.version}: {named}")
    sentence = also_changed_sentence(changes)
    if sentence:
        lines.append(f"  - **{sentence}**")
    return lines


def resolution_lines(resolution: Resolution | None, lock: LockFile | None) -> list[str]:
    """How the versions were chosen (only when something needed resolving) and the lock they were built from."""
    lines: list[str] = []
    if resolution is not None:
        asked = ",".join(resolution.requested)
        lines.append(f"`--versions {asked}` came to **{', '.join(resolution.versions)}**:")
        lines += [f"- {note}" for note in resolution.notes]
        lines.append("")
    if lock is not None:
        unpinned = f"; not pinned (git, URL or path): {', '.join(lock.unpinned)}" if lock.unpinned else ""
        lines += [
            f"Every environment was built from `{lock.path}` ({lock.format}, sha256 {lock.sha256[:12]}…, "
            f"{len(lock.packages)} packages, pydantic-ai {lock.pydantic_ai}): the lock's version of every package "
            f"unless the version under test forces another{unpinned}.",
            "",
        ]
    return lines


def _packages_lines(outputs: Sequence[VersionOutput], lock: LockFile | None) -> list[str]:
    baseline = outputs[0]
    lines: list[str] = []
    for output in outputs:
        if output.build_error:
            continue
        if output.packages_error:
            lines.append(f"- **{output.version}**: packages unknown ({output.packages_error}).")
            continue
        count = f"{len(output.packages)} packages"
        changes = package_changes_of(output, baseline)
        if output is baseline:
            lines.append(f"- **{output.version}** (baseline): {count}.")
        elif changes is not None:
            named = ", ".join(change.text() for change in changes) or "none"
            lines.append(f"- **{output.version}**: {count}; differ from {baseline.version}: {named}.")
            sentence = also_changed_sentence(changes)
            if sentence:
                lines.append(f"  - {sentence.replace('the regression may be theirs', 'a difference may be theirs')}")
        else:
            lines.append(f"- **{output.version}**: {count}.")
        drifted = _lock_changes(output, lock)
        if drifted:
            lines.append(f"  - moved from the lock: {', '.join(change.text() for change in drifted)}")
    return lines


def _fields_lines(outputs: Sequence[VersionOutput]) -> list[str]:
    baseline = outputs[0]
    lines: list[str] = []
    for output in outputs:
        inventory = output.field_inventory
        if output.build_error or inventory is None:
            continue
        if inventory.error is not None:
            lines.append(f"- **{output.version}**: no field inventory ({inventory.error}).")
            continue
        fresh, unknown = new_fields(output, baseline)
        parts: list[str] = []
        if fresh:
            parts.append(
                f"new fields not carried (absent on {baseline.version}): "
                + ", ".join(f"`{entry.text()}`" for entry in fresh)
            )
        if unknown:
            parts.append("fields on neither of agentrig's lists: " + ", ".join(f"`{e.name()}`" for e in unknown))
        lines.append(f"- **{output.version}**: " + ("; ".join(parts) if parts else "none") + ".")
    return lines


def environment_markdown(
    outputs: Sequence[VersionOutput], scenarios: Sequence[ScenarioComparison], lock: LockFile | None
) -> list[str]:
    """The sections of compatibility.md about the environments: packages, builds that failed, fields, warnings."""
    lines: list[str] = []
    failed = [output for output in outputs if output.build_error]
    if failed:
        lines += ["## Environments that could not be built", ""]
        for output in failed:
            lines += [f"**{output.version}**: {output.build_error}", ""]
            if output.build_log:
                lines += [f"The end of `logs/{output.version}.build.log`:", "", "```", output.build_log, "```", ""]
    packages = _packages_lines(outputs, lock)
    if packages:
        lines += ["## Packages", "", "Every package each environment resolved is in compatibility.json.", ""]
        lines += [*packages, ""]
    fields = _fields_lines(outputs)
    if fields:
        lines += [
            "## Fields the canonical form does not carry",
            "",
            "From agentrig's field inventory of `pydantic_ai.messages` inside each environment: the fields a version "
            "adds that canonical histories drop, and fields agentrig has not classified yet.",
            "",
            *fields,
            "",
        ]
    warned = [(output.version, warnings_of(output.version, scenarios)) for output in outputs[1:]]
    if any(found for _, found in warned):
        lines += [
            "## New warnings",
            "",
            f"Warnings a scenario showed on a version and not on {outputs[0].version}.",
            "",
        ]
        for version, found in warned:
            for warning, names in found:
                where = ", ".join(f"`{name}`" for name in names)
                lines.append(f"- **{version}**: `{warning.category}` ({warning.module}): {warning.message} in {where}")
        lines.append("")
    return lines
