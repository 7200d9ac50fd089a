"""Property: a conversation holding the scenario language's newer vocabulary, in either file form an agentrig run
writes (its `session.json` and its `pydantic_ai_dump.json`), is scaffolded without `--agent` into a scenario that
replays to exactly the same history (`agentrig diff -q` against the source: no difference).

The conversations are real runs: a generated scenario (a self-contained YAML agent) is run by agentrig's runner,
and its run folder is the source. Each has one to three turns; a turn's user message may carry attachments (inline
bytes, image and document URLs); its steps may hold a thought with what its provider attached, then calls whose
results end `success`, `failed` or `denied`, a tool's retry or arguments the tool's schema rejects; the turn ends
with a text answer or by the output tool (after an output its schema rejects, or one the output validator sends
back), or goes wrong: a tool fails the turn, a tool is cancelled (`[INTERRUPTED]`), the provider fails.
"""

from __future__ import annotations

import base64
import itertools
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrig.runtime.checks.history_checks import canonical_golden_bytes
from agentrig.runtime.history.sessions import load_history_file
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from tests.scaffold.replay import failures, run_scenario, scaffold_to

FORMS = ("session.json", "pydantic_ai_dump.json")
_NAME = "generated"
_words = st.sampled_from(["go on", "done", "ok then", "why not", "let me see", "über", "日本"])
_values = st.one_of(st.integers(-5, 5), _words, st.booleans(), st.lists(st.integers(0, 9), max_size=3))

_LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": "integer", "maximum": 10}},
    "required": ["q"],
    "additionalProperties": False,
}
_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["answer", "score"],
}
_CONTINUING = ("return", "failed", "denied", "retry", "invalid")
_ENDINGS = ("answer", "tool_failed", "aborted", "server_error", "cut")


class _Draft:
    """The scenario being generated: its tools' rules and its turns."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.rules: list[dict[str, Any]] = []

    def call(self, draw: st.DrawFn, outcome: str) -> dict[str, Any]:
        number = next(self.ids)
        call_id = f"c{number}"
        if outcome == "invalid":  # the schema rejects it: pydantic-ai's retry prompt, the rules never see it
            bad = draw(st.sampled_from([{"n": 1}, {"q": "x", "n": 11}, {"q": 3}, {"q": "x", "extra": True}]))
            return {"id": call_id, "name": "lookup", "args": bad}
        args: dict[str, Any] = {"q": f"v{number}"}
        if draw(st.booleans()):
            args["n"] = draw(st.integers(0, 10))
        rule: dict[str, Any] = {"when": {"q": args["q"]}}
        if outcome == "return":
            rule["return"] = draw(_values)
        elif outcome in ("failed", "denied"):
            rule.update({"return": f"{outcome}: {draw(_words)}", "outcome": outcome})
        elif outcome == "retry":
            rule["retry"] = f"try again: {draw(_words)}"
        elif outcome == "tool_failed":
            rule["fail"] = f"broken: {draw(_words)}"
        else:  # aborted
            rule["abort"] = True
        self.rules.append(rule)
        return {"id": call_id, "name": "lookup", "args": args}


def _thought(draw: st.DrawFn) -> Any:
    content = f"thinking: {draw(_words)}"
    if not draw(st.booleans()):
        return content
    extras = {"signature": f"sig-{draw(st.integers(0, 99))}", "provider_name": "anthropic", "id": "rs_1"}
    return {"content": content, **{key: value for key, value in extras.items() if draw(st.booleans())}}


def _user(draw: st.DrawFn, turn: int) -> Any:
    text = f"turn {turn}: {draw(_words)}"
    attachments: list[dict[str, Any]] = []
    if draw(st.booleans()):
        attachments.append({"data": base64.b64encode(draw(st.binary(max_size=12))).decode(), "media_type": "image/png"})
    if draw(st.booleans()):
        attachments.append({"image_url": "https://example.com/photo.jpg"})
    if draw(st.booleans()):
        attachments.append({"document_url": "https://example.com/contract", "media_type": "application/pdf"})
    return [text, *attachments] if attachments else text


def _final(draw: st.DrawFn, draft: _Draft, output: str, steps: list[dict[str, Any]]) -> None:
    """The steps that end the turn with its answer: a text, or the output tool (rejected or sent back first)."""
    thought = {"thought": _thought(draw)} if draw(st.booleans()) else {}
    if output != "structured":
        if output == "validated text" and draw(st.booleans()):  # the output validator sends it back
            steps.append({"text": "send me back"})
        steps.append({**thought, "text": f"answer: {draw(_words)}"})
        return
    if draw(st.booleans()):  # the schema rejects it: a retry prompt with pydantic's errors
        steps.append({"tool_calls": [{"id": f"c{next(draft.ids)}", "name": "final_result", "args": {"score": 1}}]})
    if draw(st.booleans()):  # the output validator sends it back
        args = {"answer": "send me back", "score": 0}
        steps.append({"tool_calls": [{"id": f"c{next(draft.ids)}", "name": "final_result", "args": args}]})
    args = {"answer": draw(_words), "score": draw(st.integers(-3, 3))}
    steps.append({**thought, "tool_calls": [{"id": f"c{next(draft.ids)}", "name": "final_result", "args": args}]})


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    draft = _Draft()
    output = draw(st.sampled_from(["text", "validated text", "structured"]))
    turns: list[dict[str, Any]] = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        steps: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(0, 2))):
            outcomes = draw(st.lists(st.sampled_from(_CONTINUING), min_size=1, max_size=3))
            step: dict[str, Any] = {"thought": _thought(draw)} if draw(st.booleans()) else {}
            step["tool_calls"] = [draft.call(draw, outcome) for outcome in outcomes]
            steps.append(step)
        ending = draw(st.sampled_from(_ENDINGS))
        turn: dict[str, Any] = {"user": _user(draw, number), "model": steps}
        if ending == "answer":
            _final(draw, draft, output, steps)
        elif ending == "server_error":
            steps.append({"error": {"kind": "server_error", "message": "upstream said no"}})
            turn["expect"] = {"error": {"kind": "server_error"}}
        elif ending == "cut":  # cancelled while the model answered: the partial text is kept
            steps.append({"text": f"partial: {draw(_words)}", "abort": True})
            turn["expect"] = {"interrupted": True}
        else:  # the ending call, with calls of the same response before and after it
            before = draw(st.lists(st.sampled_from(("return", "failed", "retry")), max_size=2))
            after = draw(st.lists(st.sampled_from(("return", "denied")), max_size=2))
            calls = [draft.call(draw, outcome) for outcome in (*before, ending, *after)]
            steps.append({"tool_calls": calls})
            turn["expect"] = {"error": {"kind": "tool_failed"}} if ending == "tool_failed" else {"interrupted": True}
        turns.append(turn)
    document: dict[str, Any] = {
        "name": _NAME,
        "system_prompt": "You look things up.",
        "tools": {"lookup": {"parameters": _LOOKUP_SCHEMA, "results": draft.rules or [{"return": "nothing"}]}},
        "settings": {"tool_retries": 10, "output_retries": 10},
        "turns": turns,
    }
    if output == "validated text":
        document["output"] = {"validators": [{"contains": "send me back", "retry": "Not that answer."}]}
    if output == "structured":
        validators = [{"when": {"answer": "send me back"}, "retry": "Not that answer."}]
        document["output"] = {"schema": _OUTPUT_SCHEMA, "mode": "tool", "validators": validators}
    return document


def _history_bytes(path: Path) -> bytes:
    """What `agentrig diff` compares: the canonical history as a golden file holds it."""
    return canonical_golden_bytes(load_history_file(path))


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(document=scenarios())
def test_a_generated_run_replays_exactly_from_either_file(document: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "source.yaml").write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
        (source_run,) = run_suite(RunOptions(paths=(root / "source.yaml",), out_dir=root / "runs")).results
        assert source_run.status == "passed", failures(source_run)  # the source is the conversation generated
        for form in FORMS:
            source = root / "runs" / "scenarios" / _NAME / form
            written = scaffold_to(source, root / f"scaffolded-{form}", name=_NAME)
            replay = root / f"replay-{form}"
            result = run_scenario(written.scenario_path, out=replay)
            assert result.status == "passed", (form, failures(result))
            assert _history_bytes(replay / "scenarios" / _NAME / form) == _history_bytes(source), form
