"""A failed or errored scenario as text, the way `agentrig run` prints it: for a pytest item's failure and for
`ScenarioRun.assert_passed()`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PYTEST_UPDATE_GOLDEN", "RUN_UPDATE_GOLDEN", "failure_text"]

PYTEST_UPDATE_GOLDEN = "--agentrig-update-golden"
"""The plugin's name for `--update-golden` (scenario items and the `agentrig_scenario` fixture)."""


RUN_UPDATE_GOLDEN = "--update-golden"
"""How `agentrig run`'s messages name the option that writes goldens; `failure_text` says it as its caller has it."""


def failure_text(entry: Mapping[str, Any], *, update_golden: str = RUN_UPDATE_GOLDEN) -> str:
    """A failed or errored scenario as `agentrig run` prints it: what errored, then each failed check.
    `update_golden` is how the caller's user writes goldens (`--agentrig-update-golden` under pytest)."""
    from agentrig.runtime.reports.report_files import describe_check, describe_error

    status = entry["status"]
    lines = [f"{'ERROR' if status == 'error' else 'FAIL'} {entry['name']} ({entry['path']})"]
    error = entry.get("error")
    if error:
        lines.append(f"  {describe_error(entry)}")
    for check in entry["checks"]:
        if not check["passed"]:
            lines.extend("  " + line for line in describe_check(check).splitlines())
    text = "\n".join(lines)
    return text.replace(RUN_UPDATE_GOLDEN, update_golden) if update_golden != RUN_UPDATE_GOLDEN else text
