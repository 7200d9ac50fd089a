"""A YAML agent's `output:` from what the source shows: the output tool that ended its turns (with the schema the
source recorded, else one inferred from the outputs), whether a text answer ended a turn too, and the output
validator's retries as rules.

- The output tool: pydantic-ai's `final_result`, or the name the run called (`ToolOutput(..., name=...)`, or
  `final_result_<Type>` for a member of a union of output types); a conversation that called several becomes
  `tools:`, one entry per tool, named as called (pydantic-ai keeps a given name as it is, so the replay's agent
  has exactly the source's names). A tool's schema is the recording's (`tools`), else inferred from that tool's
  outputs (`schema_inference`): typed by the outputs the run took, and checked to reject each output the real
  schema rejected with exactly the errors the model was sent. An output that was always `{response: ...}` is
  pydantic-ai's wrapping of a non-object type: the schema is the value's.
- `allow_text`: a text answer ended a turn beside the output tool (`output_type=[..., str]`).
- `validators`: each output the validator asked again (a retry whose content is a message) becomes a rule
  `{call: N, retry: message}`, N counting the outputs the validator judged over the scenario, as the rule counts.

Native and prompted outputs answer in text: their turns replay as text answers, and an output whose JSON the
schema rejected (a retry with validation errors after a text answer) needs the agent's own schema (`--agent`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic_core import ValidationError

from agentrig.runtime.history.canonical import ToolCallPart
from agentrig.runtime.scaffold.schema_inference import Rejection, infer_schema, seen_types_schema
from agentrig.runtime.scaffold.turns import AGENT_HINT, OutputEvent, Refuse, ScriptTurn, is_output_tool_call
from agentrig.scenarios.json_schema_validation import schema_validator

__all__ = ["output_section", "output_value"]


def output_section(
    turns: Sequence[ScriptTurn], schemas: Mapping[str, Mapping[str, Any]], refuse: Refuse
) -> dict[str, Any] | None:
    """The scenario's `output:` for a YAML agent, or None for a plain text output nobody judged."""
    events = [event for turn in turns for event in turn.outputs]
    names = list(dict.fromkeys(call.tool_name for turn in turns for call in turn.calls if is_output_tool_call(call)))
    section: dict[str, Any]
    if reads_text_as_json(events):
        section = _auto_section(names, events, schemas, refuse)
        judges_text = True
    else:
        allow_text = bool(names) and any(e.kind == "text" and e.verdict == "accepted" for e in events)
        judges_text = not names or allow_text
        if not names:
            validators = _validator_rules(events, judges_text=judges_text)
            return {"validators": validators} if validators else None
        if len(names) > 1:  # a union of output types: each tool judged its own outputs
            tools = [
                {"name": name, "schema": _schema(name, _events_of(name, events), schemas, refuse)} for name in names
            ]
            section = {"tools": tools}
        else:
            section = {"schema": _schema(names[0], events, schemas, refuse), "mode": "tool"}
            if names[0] != "final_result":
                section["name"] = names[0]
        if allow_text:
            section["allow_text"] = True
    validators = _validator_rules(_judged(turns, section), judges_text=judges_text)
    if validators:
        section["validators"] = validators
    return section


EXHAUSTED_RETRY = "Rejected: the source's run ran out of output retries at this output."
"""The retry a validator rule gives the output a run ran out of output retries at, where the schema accepts it: the
run ends there, so no model reads it."""


def _judged(turns: Sequence[ScriptTurn], section: Mapping[str, Any]) -> list[OutputEvent]:
    """The outputs in the order the run judged them, with the one each turn that ran out of output retries was
    rejected at last. That one's errors never reached the history, so no schema was inferred from it; where the
    schema accepts it, the source's agent rejected it all the same (its own schema, a validator, a check no
    inference sees), and a validator rule rejects it in the replay, which then gives up at the same call."""
    events: list[OutputEvent] = []
    for turn in turns:
        events += turn.outputs
        call = turn.exhausted_output
        if call is not None and _accepts(section, call):
            events.append(OutputEvent(kind="tool", verdict="retry", call=call, message=EXHAUSTED_RETRY))
    return events


def _accepts(section: Mapping[str, Any], call: ToolCallPart) -> bool:
    """Whether the output's schema for `call`'s tool takes its arguments."""
    schema = section.get("schema")
    for tool in section.get("tools", ()):
        if tool["name"] == call.tool_name:
            schema = tool["schema"]
    if not isinstance(schema, Mapping):
        return True
    value = output_value(call.tool_name, call.args, section)
    try:
        schema_validator(cast(Mapping[str, Any], schema)).validate_python(value)
    except (ValidationError, ValueError):
        return False
    return True


def _events_of(name: str, events: Sequence[OutputEvent]) -> list[OutputEvent]:
    """The outputs the output tool `name` judged."""
    return [event for event in events if event.call is not None and event.call.tool_name == name]


def reads_text_as_json(events: Sequence[OutputEvent]) -> bool:
    """Whether the run validated a text answer against the output's schema (a retry of validation errors after
    it): pydantic-ai's default mode for a bare output type (`mode: auto`), or a native or prompted output, which a
    scripted replay cannot tell apart from it (the request's output mode is not in the history)."""
    return any(event.kind == "text" and event.verdict == "invalid" for event in events)


def _auto_section(
    names: Sequence[str], events: Sequence[OutputEvent], schemas: Mapping[str, Mapping[str, Any]], refuse: Refuse
) -> dict[str, Any]:
    """`mode: auto`: the output tool `final_result` and every text answer judged by one schema, inferred from the
    outputs of both (a text's JSON is the output's value) and checked to reject each rejected one with exactly the
    errors the model was sent; so each retry is sent again word for word."""
    if names and names != ["final_result"]:
        raise refuse(
            f"a text answer was judged by the output's schema beside the output tools {', '.join(names)} (not"
            " pydantic-ai's default final_result alone); no YAML output mode reads both",
            hint=AGENT_HINT,
        )
    texts = [event for event in events if event.kind == "text"]
    if any(event.verdict == "accepted" and not isinstance(event.value, dict) for event in texts):
        raise refuse(
            "a text answer that is no JSON object ended a turn whose other text answers were judged by the output's"
            " schema; no YAML output mode does both",
            hint=AGENT_HINT,
        )
    schema = _schema("final_result", events, schemas, refuse, with_text=True)
    if schema.get("type") != "object":
        raise refuse(
            "a text answer was judged by a non-object output schema, which a YAML output reads only through its tool",
            hint=AGENT_HINT,
        )
    section: dict[str, Any] = {"schema": schema, "mode": "auto"}
    validators = _validator_rules(events, judges_text=True)
    if validators:
        section["validators"] = validators
    return section


def output_value(name: str, args: Any, section: Mapping[str, Any] | None) -> Any:
    """The YAML agent's output for a call of its output tool `name`: the value itself for a wrapped non-object."""
    schema = section.get("schema") if section is not None else None
    for tool in section.get("tools", ()) if section is not None else ():
        if tool["name"] == name:
            schema = tool["schema"]
    if isinstance(schema, Mapping) and schema.get("type") != "object" and isinstance(args, dict):
        return args.get("response")
    return args


def _validator_rules(events: Sequence[OutputEvent], *, judges_text: bool) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    judged = 0
    for event in events:
        if event.kind == "text" and not judges_text:
            continue  # pydantic-ai's own retry: only the output tool ends the run
        if event.verdict == "invalid":
            continue  # the schema rejected it: the validator never saw it
        judged += 1
        if event.verdict == "retry":
            rules.append({"call": judged, "retry": event.message})
    return rules


def _schema(
    name: str,
    events: Sequence[OutputEvent],
    schemas: Mapping[str, Mapping[str, Any]],
    refuse: Refuse,
    *,
    with_text: bool = False,
) -> dict[str, Any]:
    """The output's schema: recorded, else inferred from the outputs (`with_text`: a text answer's JSON too)."""
    recorded = schemas.get(name)
    if recorded:
        return dict(recorded)
    tool_events = [event for event in events if event.kind == "tool" and event.call is not None]
    if any(not isinstance(event.call.args, dict) for event in tool_events if event.call is not None):
        raise refuse(
            f"an output tool call ({name}) whose arguments are not a JSON object, which pydantic-ai answers itself"
            " with errors no inferred schema is checked to reproduce",
            hint=AGENT_HINT,
        )
    typed_accepted: list[dict[str, Any]] = []
    typed_rejected: list[Rejection] = []
    for event in events:
        args = event.call.args if event.call is not None else event.value if with_text else None
        if not isinstance(args, dict):
            continue  # a text that is no JSON object: pydantic-ai's JSON errors, whatever the schema
        if event.verdict == "invalid":
            typed_rejected.append(Rejection(args, event.errors))
        else:
            typed_accepted.append(args)
    schema = infer_schema(typed_accepted, typed_rejected) if typed_rejected else seen_types_schema(typed_accepted)
    if schema is None:
        what = "the output's schema" if with_text else f"the output tool {name}"
        raise refuse(
            f"{what} rejected an output with validation errors that a schema inferred from the outputs does not"
            " reproduce; the source records no schema",
            hint=AGENT_HINT,
        )
    values = [*typed_accepted, *(r.value for r in typed_rejected)]
    if values and all(set(value) == {"response"} for value in values):
        inner = schema["properties"].get("response", {})
        return dict(inner) if inner else {}
    return schema
