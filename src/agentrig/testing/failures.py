"""A failed or errored scenario as text, the way `agentrig run` prints it: for a pytest item's failure and for
`ScenarioRun.assert_passed()`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["failure_text"]


def failure_text(entry: Mapping[str, Any]) -> str:
    """A failed or errored scenario as `agentrig run` prints it: what errored, then each failed check."""
    from agentrig.runtime.reports.report_files import describe_check, describe_error

    status = entry["status"]
    lines = [f"{'ERROR' if status == 'error' else 'FAIL'} {entry['name']} ({entry['path']})"]
    error = entry.get("error")
    if error:
        lines.append(f"  {describe_error(entry)}")
    for check in entry["checks"]:
        if not check["passed"]:
            lines.extend("  " + line for line in describe_check(check).splitlines())
    return "\n".join(lines)
