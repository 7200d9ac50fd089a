"""Every real history among the test fixtures either replays exactly or is refused with the message and why.

"Replays exactly": the scaffolded scenario, run by the real runner, passes; its golden check compares the run's
whole canonical history byte for byte with the source's (after the documented normalizations), so a pass is the
proof. A new history fixture must be added to one of the two tables (the last test looks).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.checks.history_checks import canonical_golden_bytes
from agentrig.runtime.history.canonical import ToolReturnPart
from agentrig.runtime.history.sessions import load_history_file
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.scaffold import Unreplayable
from agentrig.runtime.scaffold.document import golden_history
from tests.scaffold.replay import REPO, failures, run_scenario, scaffold_to

_DUMPS_AGENT = "tests.runtime.data.make_pydantic_ai_dumps:agent"
_TOOLS_AGENT = "tests.runtime.history_scenarios:tools_and_retries_agent"
_VALIDATION_AGENT = "tests.runtime.history_scenarios:validation_errors_agent"

REPLAYED: dict[str, str | None] = {
    "scenarios/fixtures/session.json": None,
    "scenarios/fixtures/legacy-history.json": None,
    "scenarios/fixtures/compaction_session.json": None,
    "scenarios/fixtures/pydantic-ai-2.38-dump.json": None,
    "tests/runtime/data/pydantic_ai_2_38_dump.json": _DUMPS_AGENT,
    "tests/runtime/data/pydantic_ai_2_68_dump.json": _DUMPS_AGENT,
    "tests/scaffold/data/pydantic_ai_1.107.10_dump.json": _DUMPS_AGENT,
    "tests/runtime/convert_data/tools-and-retries-2.38.0.json": _TOOLS_AGENT,
    "tests/runtime/convert_data/tools-and-retries-2.68.0.json": _TOOLS_AGENT,
    "tests/runtime/convert_data/validation-errors-2.38.0.json": _VALIDATION_AGENT,
    "tests/runtime/convert_data/validation-errors-2.68.0.json": _VALIDATION_AGENT,
    "tests/history/tinyagent_data/tinyagent_messages.json": None,
    "tests/history/tinyagent_data/tunacode_session.json": None,
    "scenarios/fixtures/stored-with-system-prompt-and-dangling-call.json": None,
}
"""Fixtures that replay exactly, and the agent whose real tools they need (None: YAML tools)."""

CLOSED_BY_THE_LOOP = {"scenarios/fixtures/stored-with-system-prompt-and-dangling-call.json": [("old_2", "failed")]}
"""Fixtures with a call left without a result, and how the replay's history closes it."""

REPLAYED_WITHOUT_AGENT = (
    "tests/runtime/data/pydantic_ai_2_38_dump.json",
    "tests/runtime/data/pydantic_ai_2_68_dump.json",
    "tests/scaffold/data/pydantic_ai_1.107.10_dump.json",
    "tests/runtime/convert_data/validation-errors-2.38.0.json",
    "tests/runtime/convert_data/validation-errors-2.68.0.json",
    "tests/runtime/convert_data/tools-and-retries-2.68.0.json",
)
"""Fixtures of a real agent that replay exactly without it too: its output validator as rules, its argument
schema inferred from the validation errors."""

_RESUMED_AFTER_CANCEL = "messages[10]: call 'hotel_2' (hotel_b) ended 'interrupted'"
_DEFERRED_AGENT = "tests.runtime.history_scenarios:deferred_agent"
_HOST_RETRY = "messages[3]: the host answered call 'job_1' (long_job) with a retry"

REFUSED: dict[str, tuple[str | None, str]] = {
    **{
        f"tests/compatibility/data/{name}": (_DUMPS_AGENT, _RESUMED_AFTER_CANCEL)
        for name in (
            "conversation.canonical.json",
            "history-2.38.0.json",
            "history-2.40.0.json",
            "history-2.59.0.json",
            "history-2.60.0.json",
            "history-2.68.0.json",
            "history-2.78.0.json",
        )
    },
    # The host's approvals and deferred results replay as turns; a host's *retry* has no scenario form yet.
    "tests/runtime/convert_data/deferred-2.38.0.json": (_DEFERRED_AGENT, _HOST_RETRY),
    "tests/runtime/convert_data/deferred-2.68.0.json": (_DEFERRED_AGENT, _HOST_RETRY),
    "scenarios/fixtures/canonical-all-part-kinds.json": (
        None,
        "messages[2]: call 'call_2' (bash) has arguments that are not a JSON object",
    ),
    # A dump does not record a failed tool's error: with the agent the replay's history holds the real one.
    "scenarios/fixtures/stored-with-system-prompt-and-dangling-call.json": (
        _DUMPS_AGENT,
        "messages[3]: tool call(s) 'old_2' have no recorded result (a tool raised",
    ),
}
"""Fixtures a scenario cannot replay (with this agent), and the start of the reason given."""


@pytest.mark.parametrize("fixture", sorted(REPLAYED))
def test_the_scenario_reproduces_the_source_history(fixture: str, tmp_path: Path) -> None:
    source = REPO / fixture
    written = scaffold_to(source, tmp_path, agent=REPLAYED[fixture])
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)
    # The golden the run matched is the source's own history, normalized (not something the run wrote); a call the
    # source left without a result (its tool raised) is closed as agentrig's loop closes it, nothing else added.
    assert written.golden_path is not None
    golden = load_history_file(written.golden_path)
    if fixture in CLOSED_BY_THE_LOOP:
        closures = [p for m in golden for p in m.parts if isinstance(p, ToolReturnPart) and p.outcome != "success"]
        assert [(p.tool_call_id, p.outcome) for p in closures] == CLOSED_BY_THE_LOOP[fixture]
        golden = [m.with_parts(p for p in m.parts if p not in closures) for m in golden]
    expected = canonical_golden_bytes(golden_history(load_history_file(source), "keep"))
    assert canonical_golden_bytes(golden_history(golden, "keep")) == expected


@pytest.mark.parametrize("fixture", REPLAYED_WITHOUT_AGENT)
def test_a_real_agents_fixture_replays_without_the_agent(fixture: str, tmp_path: Path) -> None:
    written = scaffold_to(REPO / fixture, tmp_path)
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)


@pytest.mark.parametrize("fixture", sorted(REFUSED))
def test_what_cannot_be_replayed_is_refused_naming_the_message(fixture: str, tmp_path: Path) -> None:
    agent, reason = REFUSED[fixture]
    with pytest.raises(Unreplayable) as refused:
        scaffold_to(REPO / fixture, tmp_path, agent=agent)
    assert refused.value.message.startswith(f"{REPO / fixture}: {reason}"), refused.value.message
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_every_history_fixture_is_classified() -> None:
    patterns = (
        "scenarios/fixtures/*.json",
        "tests/compatibility/data/*.json",
        "tests/runtime/convert_data/*.json",
        "tests/runtime/data/*.json",
        "tests/history/tinyagent_data/*.json",
        "tests/scaffold/data/*.json",
    )
    found = {str(path.relative_to(REPO)) for pattern in patterns for path in REPO.glob(pattern)}
    found -= {str(path.relative_to(REPO)) for path in REPO.glob("tests/scaffold/data/heldout/*.json")}
    assert found, "no fixtures found"
    assert found - set(REPLAYED) - set(REFUSED) == set()
    for fixture in found:
        jsonio.read_json_file(REPO / fixture)  # each is a file agentrig reads, not a stray
