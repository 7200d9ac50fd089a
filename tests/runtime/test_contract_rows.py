"""The compatibility contract's rows (runtime/matrix/contract.py) against the shipped scenarios: every row that
claims scenarios has them, the rows without one say why, and the page names what scenarios state per version."""

from __future__ import annotations

from pathlib import Path

from agentrig.runtime.matrix.compare import ScenarioComparison
from agentrig.runtime.matrix.contract import CONTRACT_ROWS, contract_section, version_notes
from agentrig.scenarios.loader import load_paths

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


def shipped_tags() -> dict[str, set[str]]:
    return {item.scenario.name: set(item.scenario.tags) for item in load_paths([SCENARIOS])}


def test_every_row_has_a_shipped_scenario_or_says_why_not() -> None:
    tags = shipped_tags()
    for row in CONTRACT_ROWS:
        covering = [name for name, scenario_tags in tags.items() if scenario_tags & set(row.tags)]
        if row.without_scenario:
            assert not covering, f"{row.area}: has scenarios {covering}; drop its without_scenario"
        else:
            assert covering, f"{row.area}: no shipped scenario carries {row.tags} and no reason is given"


def test_the_ui_harness_and_cleanup_rows_are_proven_by_their_scenarios() -> None:
    tags = shipped_tags()
    rows = {row.area: row for row in CONTRACT_ROWS}
    expected = {
        "UI protocols": {
            "ui-agui-frontend-tool",
            "ui-agui-tool-results",
            "ui-agui-refusals",
            "ui-vercel-tool-round-trip",
        },
        "Harness compaction / memory": {"harness-tool-output-limits"},
        "Model-input history cleanup": {"history-cleanup-continuation", "history-cleanup-public"},
    }
    for area, names in expected.items():
        covering = {name for name, scenario_tags in tags.items() if scenario_tags & set(rows[area].tags)}
        assert covering == names, area


def _comparison(name: str, tags: tuple[str, ...], statuses: dict[str, str]) -> ScenarioComparison:
    return ScenarioComparison(name=name, tags=tags, statuses=statuses, canonical_differs=(), raw_differs=(),
                              raw_changes={}, diffs=())  # fmt: skip


def test_the_page_counts_each_rows_scenarios_and_names_what_they_cannot_prove() -> None:
    versions = ("2.38.0", "2.68.0")
    scenarios = [
        _comparison("ui-agui-refusals", ("ag-ui",), {"2.38.0": "passed", "2.68.0": "passed"}),
        _comparison("ui-vercel-tool-round-trip", ("vercel-ai",), {"2.38.0": "passed", "2.68.0": "error"}),
    ]
    lines = contract_section(scenarios, versions, version_notes([SCENARIOS / "compatibility"]))
    (ui_row,) = [line for line in lines if line.startswith("| UI protocols |")]
    assert ui_row.endswith("| 2/2 | 1/2 |")
    assert any(line.startswith("- UI protocols: pydantic-ai's adapters answer no 501") for line in lines)
    assert any(line.startswith("- Harness compaction / memory: harness compaction") for line in lines)
    notes = "\n".join(lines)
    assert "`ui-agui-refusals`, turn 3: UI status: `>=2.44`: 415; `<2.44`: 422" in notes
    assert "`ui-agui-frontend-tool`, UI event fields: `pydantic-ai >=2.63, ag-ui-protocol >=1.0`:" in notes
    assert "`steering-from-tool`, turn 1: steering" in notes  # the earlier stated difference is still listed
