"""Warning records as files hold them: a merge keeps each scenario's and sums the totals, a report or a session file
with malformed records is refused in one line naming the field, and one written before warnings were recorded
still reads."""

from __future__ import annotations

import textwrap
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentrig.errors import HistoryFormatError, InputError
from agentrig.runtime.history.sessions import new_session, session_from_json, session_to_json
from agentrig.runtime.history.warning_records import WarningRecord, describe_warning, merge_warnings
from agentrig.runtime.reports.report_shape import check_report_shape
from agentrig.runtime.suite.outputs.reports import merge_reports
from agentrig.runtime.suite.runner import RunOptions, run_suite

_AGENT = textwrap.dedent(
    """
    import warnings
    from pydantic_ai import Agent

    agent = Agent(None)

    @agent.tool_plain
    def noisy() -> str:
        warnings.warn("noisy says so", UserWarning)
        return "ok"
    """
)


def test_a_merge_keeps_each_scenarios_warnings_and_sums_them(tmp_path: Path) -> None:
    module = f"merged_agent_{uuid.uuid4().hex[:12]}"
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / f"{module}.py").write_text(_AGENT, encoding="utf-8")
    for name in ("a", "b", "c", "d"):
        (suite / f"{name}.yaml").write_text(
            f"name: {name}\nagent: {module}:agent\nturns:\n  - user: hi\n    model:\n"
            "      - tool_calls: [{id: t1, name: noisy, args: {}}]\n      - text: done\n",
            encoding="utf-8",
        )
    shards = [tmp_path / f"shard-{index}" for index in (1, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for index, out in enumerate(shards, start=1):
            run_suite(RunOptions(paths=(suite,), out_dir=out, shard=(index, 2), show_warnings=False))

    merged = merge_reports(shards, tmp_path / "merged")

    record = {"category": "UserWarning", "message": "noisy says so", "module": module, "count": 1}
    assert [scenario["warnings"] for scenario in merged["scenarios"]] == [[record]] * 4
    assert (merged["totals"]["warnings"], merged["totals"]["scenarios_warned"]) == (4, 4)
    summary = (tmp_path / "merged" / "summary.md").read_text(encoding="utf-8")
    assert f"| `UserWarning`: noisy says so | `{module}` | 4 | `a`, `b`, `c`, `d` |" in summary


def _report(warned: Any) -> dict[str, Any]:
    entry = {"id": "s.yaml::s", "name": "s", "path": "s.yaml", "status": "passed", "output_dir": "scenarios/s"}
    entry |= {"checks": [], "usage": {}}
    if warned is not None:
        entry["warnings"] = warned
    return {"summary": {"duration_s": 0.1}, "scenarios": [entry]}


def test_a_report_without_warnings_still_reads_and_a_malformed_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    check_report_shape(_report(None), path)  # written before warnings were recorded
    check_report_shape(_report([{"category": "UserWarning", "message": "m", "module": "x", "count": 2}]), path)
    with pytest.raises(InputError) as refused:
        check_report_shape(_report([{"category": "UserWarning", "message": "m", "module": 3}]), path)
    assert refused.value.message == (
        f"{path}: scenarios[0]: warnings[0]: must be an object with a 'category', 'message' and 'module' (strings)"
        " and a 'count' (a whole number)"
    )
    with pytest.raises(InputError, match=r"scenarios\[0\]: 'warnings' must be a list"):
        check_report_shape(_report({"category": "UserWarning"}), path)


def test_a_session_holds_its_warnings_only_when_it_has_some() -> None:
    session = new_session(working_directory="/w")
    assert "warnings" not in session_to_json(session)
    records = merge_warnings(
        [WarningRecord(category="UserWarning", message="b", module="m")],
        [WarningRecord(category="DeprecatedModelWarning", message="a", module="pydantic_ai.models", count=2)],
        [WarningRecord(category="UserWarning", message="b", module="m")],
    )
    data = session_to_json(session_from_json({**session_to_json(session), "warnings": [r.to_json() for r in records]}))
    assert data["warnings"] == [
        {"category": "DeprecatedModelWarning", "message": "a", "module": "pydantic_ai.models", "count": 2},
        {"category": "UserWarning", "message": "b", "module": "m", "count": 2},
    ]
    assert list(data)[-1] == "warnings"  # after the contract's keys


def test_a_session_with_a_malformed_warning_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = {**session_to_json(new_session(working_directory="/w")), "warnings": [{"category": "C", "message": "m"}]}
    with pytest.raises(HistoryFormatError) as refused:
        session_from_json(data, source=tmp_path / "s.json")
    assert refused.value.field == "warnings[0].module"
    data["warnings"] = [{"category": "C", "message": "m", "module": "x", "count": 0}]
    with pytest.raises(HistoryFormatError, match="a count of at least 1"):
        session_from_json(data, source=tmp_path / "s.json")


def test_one_warning_as_one_line() -> None:
    record = {"category": "UserWarning", "message": "two\nlines", "module": "m", "count": 3}
    assert describe_warning(record) == "UserWarning: two lines (m; 3 times)"
    assert describe_warning({**record, "count": 1}) == "UserWarning: two lines (m)"
