"""YAML tools whose results are what the source recorded, matched by the call's arguments.

A tool whose schema the source recorded validates its arguments against it, as the real tool did. Without one, a
tool whose arguments the real schema rejected (a retry with validation errors) gets a schema inferred from the
calls (`schema_inference`: it rejects exactly those calls with exactly those errors); any other tool's schema is
guessed from the arguments seen and validates nothing (`validate_args: false`). Each tool gets one rule per distinct
argument object (`when`: the whole object, so a call with a changed argument matches no rule and the run fails
naming the call), answering as the source did: `return` the recorded content (ended `failed` or `denied` as
recorded), or `retry` with the recorded message, or `defer` a call the host answered later (the host's turn gives
its result), `ask_approval` a call the host denied (the host's turn denies it), or what a turn that went wrong
needs (`fail`, `abort`: `endings.py`). When the same arguments were
answered differently over the conversation, each of those calls gets its own rule, pinned by its ordinal
(`call`). Calls whose arguments are not a JSON object need no rule: pydantic-ai answers them with validation errors
itself. Rules with an ordinal come first, then the more specific ones (more keys), as rules match by subset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentrig.runtime.history.canonical import RetryPromptPart
from agentrig.runtime.scaffold.endings import FAILED_CALL_NUMBER
from agentrig.runtime.scaffold.schema_inference import Rejection, infer_schema
from agentrig.runtime.scaffold.turns import AGENT_HINT, Answer, Refuse, ScriptTurn, is_output_tool_call

__all__ = ["yaml_tools"]


def _outcome(answer: Answer) -> dict[str, Any]:
    if isinstance(answer, RetryPromptPart):
        return {"retry": answer.content}
    if answer.outcome in ("failed", "denied"):
        return {"return": answer.content, "outcome": answer.outcome}
    return {"return": answer.content}


def yaml_tools(turns: Sequence[ScriptTurn], schemas: Mapping[str, Mapping[str, Any]], refuse: Refuse) -> dict[str, Any]:
    """The scenario's `tools` mapping: every function tool the model called, in order of first call (output tools
    are the scenario's `output:`)."""
    order: list[str] = []
    recorded: dict[str, list[tuple[int, dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    rejections: dict[str, list[Rejection]] = defaultdict(list)
    ordinals: dict[str, int] = defaultdict(int)
    for turn in turns:
        answers = {id(call): answer for call, answer in turn.answers}
        deferred = turn.deferred_calls
        for call in turn.calls:
            if is_output_tool_call(call):
                continue
            if call.tool_name not in order:
                order.append(call.tool_name)
            answer = answers.get(id(call))
            rule = turn.rules.get(call.tool_call_id)
            errors = answer.content if isinstance(answer, RetryPromptPart) else None
            if isinstance(call.args, dict) and isinstance(errors, list) and rule is None:
                # the real schema rejected it: the tool never saw the call
                rejections[call.tool_name].append(Rejection(call.args, errors))
                continue
            unanswered = answer is None and rule is None and call.tool_call_id not in deferred
            if not isinstance(call.args, dict) or unanswered:
                continue  # never reaches the tool: pydantic-ai rejects the arguments before calling it
            ordinals[call.tool_name] += 1
            if rule is not None:
                outcome = {key: value for key, value in rule.items() if key != FAILED_CALL_NUMBER}
                number = rule.get(FAILED_CALL_NUMBER)
                if number is not None and number != ordinals[call.tool_name]:
                    raise refuse(
                        f"call {call.tool_call_id!r} ({call.tool_name}) failed as the YAML tool's call #{number},"
                        f" which is call #{ordinals[call.tool_name]} of the replay (--last-turns leaves the calls"
                        " before uncounted)",
                        hint="scaffold without --last-turns, or with a larger --last-turns",
                    )
            elif call.tool_call_id in deferred:
                outcome = {"defer": True}
            elif call.tool_call_id in turn.approval_calls:
                outcome = {"ask_approval": True}  # denied: the tool never runs
            else:
                assert answer is not None
                outcome = _outcome(answer)
            recorded[call.tool_name].append((ordinals[call.tool_name], call.args, outcome))
    tools: dict[str, Any] = {}
    for name in order:
        tools[name] = _spec(name, turns, schemas.get(name), recorded[name], rejections[name], refuse)
    return tools


def _spec(
    name: str,
    turns: Sequence[ScriptTurn],
    schema: Mapping[str, Any] | None,
    recorded: list[tuple[int, dict[str, Any], dict[str, Any]]],
    rejections: list[Rejection],
    refuse: Refuse,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if schema:
        spec["parameters"] = dict(schema)
    elif rejections:
        inferred = infer_schema([args for _, args, _ in recorded], rejections)
        if inferred is None:
            raise refuse(
                f"tool {name!r} rejected arguments with validation errors that a schema inferred from its calls"
                " does not reproduce; the source records no schema",
                hint=AGENT_HINT,
            )
        spec["parameters"] = inferred
    else:
        # A schema guessed from the arguments seen says nothing of what the real tool accepted: validating
        # against it would answer a call the source ran with a retry: the recorded calls reach the rules as made.
        spec["parameters"] = _inferred_schema(turns, name)
        spec["validate_args"] = False
    spec["results"] = _rules(recorded)
    return spec


def _rules(calls: list[tuple[int, dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    by_args: dict[bytes, list[tuple[int, dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for entry in calls:
        by_args[_key(entry[1])].append(entry)
    pinned: list[dict[str, Any]] = []
    general: list[dict[str, Any]] = []
    for entries in by_args.values():
        outcomes = {_key(outcome) for _, _, outcome in entries}
        if len(outcomes) == 1:
            general.append({"when": entries[0][1], **entries[0][2]})
        else:
            pinned.extend({"when": args, "call": ordinal, **outcome} for ordinal, args, outcome in entries)
    general.sort(key=lambda rule: -len(rule["when"]))
    return [*pinned, *general]


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))


def _inferred_schema(turns: Sequence[ScriptTurn], name: str) -> dict[str, Any]:
    """A schema from the arguments seen (the source recorded none): each key, typed by its first value."""
    properties: dict[str, Any] = {}
    for turn in turns:
        for call in turn.calls:
            if call.tool_name != name or not isinstance(call.args, dict):
                continue
            for key, value in call.args.items():
                if key not in properties:
                    kind = next((label for cls, label in _JSON_TYPES if isinstance(value, cls)), "object")
                    properties[key] = {} if value is None else {"type": kind}
    return {"type": "object", "properties": properties}


def _key(value: Any) -> bytes:
    """A value's identity as JSON with sorted keys (equal arguments written in another key order are equal)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
