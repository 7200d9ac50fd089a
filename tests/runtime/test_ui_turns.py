"""UI turns run for real on the installed pydantic-ai and its adapters (CI runs this file on every pinned version):
agentrig's answer is the adapter's own, what the checks catch when the adapter or the runtime misbehaves (a frontend
tool's result dropped, a refusal nobody expected, a field a version does not state), a missing extra refused at the
turn, and `settings.prepare_history: false` proving pydantic-ai's cleanup rather than agentrig's. Needs the UI
adapter extras, as the shipped scenarios do (every nox session installs them: `pins()`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.checks.ui_checks import ui_golden_checks, ui_turn_checks
from agentrig.runtime.engine.orchestrator import RequestOrchestrator
from agentrig.runtime.engine.pydantic_ai_engine import composition
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentCache, agent_for_scenario
from agentrig.runtime.engine.pydantic_ai_engine.scenario_execution import scripted_model_for
from agentrig.runtime.engine.pydantic_ai_engine.ui_adapters import adapter_class, decode_event
from agentrig.runtime.history.run_records import ScenarioResult, TurnRecord
from agentrig.runtime.history.ui_exchange import UiExchange, masked_events
from agentrig.runtime.history.usage import Usage
from agentrig.runtime.suite.runner import RunOptions, run_suite
from agentrig.scenarios.loader import load_scenario_file
from agentrig.scenarios.ui_model import UiAnswerExpectation, UiEventFields, UiEventsGolden

REPO = Path(__file__).resolve().parents[2]
COMPAT = REPO / "scenarios" / "compatibility"
FRONTEND_TOOL = COMPAT / "ui_agui_frontend_tool.yaml"


def run(path: Path, *, out: Path | None = None) -> ScenarioResult:
    (result,) = run_suite(RunOptions(paths=(path,), out_dir=out)).results
    return result


def failing(result: ScenarioResult) -> dict[str, str]:
    return {check.name: check.detail for check in result.checks if not check.passed}


@pytest.fixture(autouse=True)
def from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


async def adapter_answer(path: Path, turn: int) -> list[Any]:
    """What pydantic-ai's own `AGUIAdapter.run_stream` streams for a turn's request, with the scenario's agent and
    script: the pipeline agentrig composes from `build_run_input` and `transform_stream`, run by pydantic-ai itself."""
    (loaded,) = load_scenario_file(path)
    request = loaded.scenario.turns[turn].ui
    assert request is not None
    assert request.input is not None
    handle = agent_for_scenario(loaded, cache=AgentCache(), offline=True)
    script = scripted_model_for(loaded)
    script.begin_turn(turn)
    cls = adapter_class(request.protocol)
    adapter = cls(handle.agent, run_input=cls.build_run_input(json.dumps(request.input).encode()))
    events: list[Any] = []
    async for event in adapter.run_stream(model=script, deps=handle.deps):
        events.extend(decode_event(adapter.build_event_stream().encode_event(event)))
    return events


def test_a_ui_turn_answers_what_the_adapter_itself_streams(tmp_path: Path) -> None:
    result = run(FRONTEND_TOOL.relative_to(REPO), out=tmp_path)
    assert result.status == "passed", failing(result)
    answers = json.loads((tmp_path / "scenarios" / result.name / "ui_answers.json").read_text(encoding="utf-8"))
    assert [answer["status"] for answer in answers] == [200, 200]
    ours = masked_events("ag-ui", answers[0]["events"])
    assert ours == masked_events("ag-ui", asyncio.run(adapter_answer(FRONTEND_TOOL, 0)))
    assert ours[-1]["type"] == "RUN_FINISHED"


def test_a_frontend_tool_result_the_adapter_drops_fails_the_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = adapter_class("ag-ui")
    original = cls.sanitize_messages

    def without_tool_results(self: Any, messages: Any, **kwargs: Any) -> Any:
        kept = original(self, messages, **kwargs)
        return [m for m in kept if not any(p.part_kind == "tool-return" and p.tool_call_id == "tc_1" for p in m.parts)]

    monkeypatch.setattr(cls, "sanitize_messages", without_tool_results)
    result = run(FRONTEND_TOOL.relative_to(REPO))
    problems = failing(result)
    assert result.status == "failed"
    assert "turn 2, step 1: input.contains_text" in problems or "turn 2: error" in problems, problems
    assert "scenario: golden" in problems


def test_a_refusal_nobody_expected_fails_and_an_expected_one_passes() -> None:
    refused = UiExchange(
        protocol="ag-ui", status=422, body='[{"loc": ["threadId"]}]', versions=(("pydantic-ai", "2.68.0"),)
    )
    turn = TurnRecord(index=0, request_id="abcd1234", prompt=None, output=None, new_messages=(), tool_calls=(),
                      tool_statuses=(), usage=Usage(), ui=refused)  # fmt: skip
    (status,) = ui_turn_checks(None, turn, "turn 1")
    assert (status.passed, status.expected, status.actual) == (False, 200, 422)
    assert "threadId" in status.detail
    checks = ui_turn_checks(UiAnswerExpectation(status=422, body_contains="threadId"), turn, "turn 1")
    assert all(check.passed for check in checks)
    (plain,) = ui_turn_checks(UiAnswerExpectation(status=200), TurnRecord(
        index=0, request_id="abcd1234", prompt="hi", output=None, new_messages=(), tool_calls=(), tool_statuses=(),
        usage=Usage()), "turn 1")  # fmt: skip
    assert not plain.passed  # `expect.ui` on a turn that is not a UI request


def _exchange(pydantic_ai: str, ag_ui: str, **started: Any) -> UiExchange:
    events = ({"type": "RUN_STARTED", "threadId": "t", **started}, {"type": "TEXT_MESSAGE_START", "messageId": "m-9"})
    return UiExchange(protocol="ag-ui", status=200, events=events,
                      versions=(("pydantic-ai", pydantic_ai), ("ag-ui-protocol", ag_ui)))  # fmt: skip


def test_version_fields_are_held_to_the_matching_variant(tmp_path: Path) -> None:
    golden = UiEventsGolden(
        golden="g.json",
        versions=(
            UiEventFields(when_pydantic_ai=">=2.63", fields={"RUN_STARTED": {"protocolVersion": "1.0"}}),
            UiEventFields(when_pydantic_ai="<2.63", fields={}),
        ),
    )
    path = tmp_path / "g.json"

    def checks(exchange: UiExchange, *, update: bool = False) -> dict[str, bool]:
        turn = TurnRecord(index=0, request_id="abcd1234", prompt=None, output=None, new_messages=(), tool_calls=(),
                          tool_statuses=(), usage=Usage(), ui=exchange)  # fmt: skip
        return {check.name: check.passed for check in ui_golden_checks(golden, [turn], path, update=update)}

    assert checks(_exchange("2.68.0", "1.0.0", protocolVersion="1.0"), update=True)["scenario: ui_events golden"]
    assert '"protocolVersion"' not in path.read_text(encoding="utf-8")  # stated fields stay out of the golden
    assert '"<id-1>"' in path.read_text(encoding="utf-8")
    assert all(checks(_exchange("2.68.0", "1.0.0", protocolVersion="1.0")).values())
    assert all(checks(_exchange("2.38.0", "1.0.0")).values())  # the same golden on the other side of the boundary
    assert not checks(_exchange("2.38.0", "1.0.0", protocolVersion="1.0"))["turn 1: ui_events.versions"]
    assert not checks(_exchange("2.68.0", "1.0.0"))["turn 1: ui_events.versions"]
    assert not checks(_exchange("2.68.0", "1.0.0", protocolVersion="2.0"))["turn 1: ui_events.versions"]
    no_variant = UiEventsGolden(golden="g.json", versions=(UiEventFields(when_ag_ui_protocol="<1.0"),))
    turn = TurnRecord(index=0, request_id="abcd1234", prompt=None, output=None, new_messages=(), tool_calls=(),
                      tool_statuses=(), usage=Usage(), ui=_exchange("2.68.0", "1.0.0"))  # fmt: skip
    (_, version_check) = ui_golden_checks(no_variant, [turn], path, update=False)
    assert (version_check.passed, version_check.expected) == (False, "a variant for these versions")


def test_a_ui_turn_without_its_extra_is_refused_at_the_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(composition.EXTRAS, "vercel-ai", (("agentrig_no_such_module",), "pip install it"))
    path = tmp_path / "needs.yaml"
    path.write_text("name: needs-ui\nturns:\n  - ui: {protocol: vercel-ai, body: '{}'}\n", encoding="utf-8")
    (skipped,) = run_suite(RunOptions(paths=(path,), out_dir=None)).results
    assert skipped.status == "skipped"  # as one whose `requires` lists the extra: it cannot run here
    assert [check.skipped_reason for check in skipped.checks] == ["requires vercel-ai: pip install it"]
    suite = run_suite(RunOptions(paths=(path,), out_dir=None, require_extras=True))
    (result,) = suite.results
    assert (result.status, suite.exit_code) == ("error", 3)
    assert result.error is not None
    assert result.error.message == (
        f"{path}:3: turns[0].ui.protocol: the vercel-ai extra is not installed (agentrig_no_such_module missing):"
        " pip install it"
    )
    assert result.error.kind == "unsupported"


def test_agentrigs_own_preparation_would_hide_pydantic_ais_cleanup(monkeypatch: pytest.MonkeyPatch) -> None:
    # history-cleanup-public proves pydantic-ai's cleanup because agentrig's is off: turn it back on and the model
    # no longer sees a call pydantic-ai closed itself (agentrig removed it first), so the scenario fails.
    original = RequestOrchestrator._prepared_history  # pyright: ignore[reportPrivateUsage]

    def always_prepared(self: RequestOrchestrator, *, resume: bool) -> Any:
        self.settings = self.settings.model_copy(update={"prepare_history": True})
        return original(self, resume=resume)

    monkeypatch.setattr(RequestOrchestrator, "_prepared_history", always_prepared)
    result = run(Path("scenarios/compatibility/history_cleanup_public.yaml"))
    problems = failing(result)
    assert "turn 1, step 1: input.synthesized_returns" in problems
    assert "scenario: golden" in problems


def test_every_answer_is_plain_data() -> None:
    # Starlette's HTTPException and Response carry `HTTPStatus` members: an enum in a check's value cannot travel to
    # pytest-xdist's controller (execnet serializes plain data only), so an answer holds plain ints and JSON.
    result = run(Path("scenarios/compatibility/ui_agui_refusals.yaml"))
    assert result.status == "passed", failing(result)
    statuses = [turn.ui.status for turn in result.turns if turn.ui is not None]
    assert len(statuses) == 4
    assert all(type(status) is int for status in statuses), [type(status) for status in statuses]
