"""Every field of pydantic-ai's messages and parts, and what the canonical form does with it: the one list.

A field is either carried (kept in the canonical form and written back), derived (not stored: rebuilt from what is),
per run (a timestamp, a duration: drawn afresh by every run, so not kept) or not carried, with the reason; a part
kind the canonical model does not know is kept verbatim, every field of it. `tests/history/test_field_inventory.py`
walks `pydantic_ai.messages` of the installed version (every pinned one in CI, the newest release every day) and
fails on a field that is on neither list; `unknown_fields` names, in a file agentrig reads, a field on neither list,
so `convert`, `check` and `scaffold` warn instead of dropping it in silence. docs/canonical-format.md shows the table
(`scripts/gen_field_table.py` writes it from this module).

Owners are named as pydantic-ai's JSON names them: `request` and `response` for the messages, the `part_kind` for a
part (a part class and its typed subclasses share one: `ToolSearchCallPart` is a `tool-call`), and `retry` and
`failed-attempt` for the values nested in them. Standard library only: the canonical layer imports no framework.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "FIELDS",
    "OPEN_OWNERS",
    "VERBATIM_PART_KINDS",
    "FieldRule",
    "How",
    "UnknownField",
    "describe_unknown",
    "rule_for",
    "unknown_fields",
]

How: TypeAlias = Literal["carried", "derived", "per-run", "not carried", "verbatim"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldRule:
    """What the canonical form does with one field."""

    how: How
    """`carried`, `derived`, `per-run`, `not carried` or `verbatim`."""
    note: str
    """How it is carried (its canonical name, when it differs), or why it is not."""
    since: str = "2.38"
    """The pydantic-ai release that has it first, of those agentrig supports (for docs/canonical-format.md)."""


def _carried(note: str, since: str = "2.38") -> FieldRule:
    return FieldRule(how="carried", note=note, since=since)


def _derived(note: str, since: str = "2.38") -> FieldRule:
    return FieldRule(how="derived", note=note, since=since)


def _per_run(note: str, since: str = "2.38") -> FieldRule:
    return FieldRule(how="per-run", note=note, since=since)


def _dropped(note: str, since: str = "2.38") -> FieldRule:
    return FieldRule(how="not carried", note=note, since=since)


_KIND = _derived("the class of the canonical message or part")
_TIMESTAMP = _per_run("when it was written: a new value on every run (goldens would never match)")
_PROVIDER = {
    "id": _carried("`id`, on responses' parts"),
    "provider_name": _carried("`provider_name`"),
    "provider_details": _carried("`provider_details`, verbatim"),
}
_TOOL_MARKS = {
    "tool_kind": _carried("`tool_kind`; an output tool's `output` is written on every version (2.78 writes it)"),
    "ui_visibility": _carried("`ui_visibility`: what a UI adapter shows of the call and its result", since="2.78"),
}

FIELDS: Mapping[str, Mapping[str, FieldRule]] = {
    "request": {
        "parts": _carried("`parts`, in order"),
        "kind": _KIND,
        "timestamp": _TIMESTAMP,
        "instructions": _dropped(
            "the agent's instructions, which the agent supplies again on every run (pydantic-ai sends only the "
            "newest request's); pydantic_ai_dump.json in the run folder keeps them"
        ),
        "run_id": _carried("`run_id`; cleared on resume and left out of goldens (random per run)"),
        "conversation_id": _carried("`conversation_id`; a resumed run continues it; left out of goldens"),
        "metadata": _carried(
            "`metadata`, verbatim: the application's, and pydantic-ai's marks such as 2.78's `deferred_pause` "
            "(written on every version at a pause)"
        ),
        "state": _carried("`state` when not `complete` (`interrupted`)"),
    },
    "response": {
        "parts": _carried("`parts`, in order"),
        "kind": _KIND,
        "usage": _dropped("per-request usage is in usage.json (per turn) and session.json (totals)"),
        "model_name": _dropped("who answered is in session.json (`current_model`) and the report, not the history"),
        "model_id": _dropped("as `model_name`", since="2.68"),
        "timestamp": _TIMESTAMP,
        "request_timestamp": _per_run("when the request was sent", since="2.78"),
        "duration": _per_run("how long the request took", since="2.78"),
        "provider_name": _dropped("the provider's bookkeeping of one response (parts keep their own provider)"),
        "provider_url": _dropped("the provider's base URL: configuration, not conversation"),
        "canonical_system": _dropped("which keys verify signed data, implied by the thoughts' provider", "2.68"),
        "provider_details": _dropped("the provider's bookkeeping of one response"),
        "provider_response_id": _dropped(
            "the provider's id of one response; without it a continuation sends the whole history instead of "
            "referring to server-side state"
        ),
        "finish_reason": _dropped("why the provider stopped; a cut response is the run's error (`state` is kept)"),
        "run_id": _carried("`run_id`; cleared on resume and left out of goldens"),
        "conversation_id": _carried("`conversation_id`; left out of goldens"),
        "metadata": _carried("`metadata`, verbatim"),
        "workspace_ref": _carried("`workspace_ref`, verbatim: a continuing run reuses the workspace", "2.59"),
        "history_digest": _dropped(
            "a digest of the history as one provider was sent it, for server-side continuation; without it the "
            "whole history is sent",
            since="2.59",
        ),
        "failed_attempts": _carried(
            "`failed_attempts`, each attempt verbatim but its per-run `timestamp` and `duration`", since="2.59"
        ),
        "state": _carried("`state` when not `complete` (`incomplete`, `interrupted`, `suspended`)"),
    },
    "user-prompt": {
        "content": _carried("a `text` part (a string) or a `user-content` part (text and attachments)"),
        "timestamp": _TIMESTAMP,
        "part_kind": _KIND,
    },
    "system-prompt": {
        "content": _carried("`content` (a persisted history holds no system prompt: stripped on resume)"),
        "timestamp": _TIMESTAMP,
        "dynamic_ref": _carried("`dynamic_ref`"),
        "context_id": _carried("`context_id`", since="2.68"),
        "scope": _carried("`scope` when `request` (the default, `conversation`, is left out)", since="2.59"),
        "metadata": _carried("`metadata`, verbatim", since="2.59"),
        "part_kind": _KIND,
    },
    "text": {
        "content": _carried("`content`"),
        **_PROVIDER,
        "citations": _carried("`citations`, verbatim", since="2.68"),
        "part_kind": _KIND,
    },
    "thinking": {
        "content": _carried("a `thought` part's `content`"),
        "signature": _carried("`signature`"),
        **_PROVIDER,
        "part_kind": _KIND,
    },
    "tool-call": {
        "tool_name": _carried("`tool_name`"),
        "args": _carried("`args`: a JSON object as a dict, anything else as the string the model wrote"),
        "tool_call_id": _carried("`tool_call_id`"),
        **_TOOL_MARKS,
        **_PROVIDER,
        "part_kind": _KIND,
    },
    "tool-return": {
        "tool_name": _carried("`tool_name`"),
        "content": _carried("`content`, as JSON"),
        "tool_call_id": _carried("`tool_call_id`"),
        **_TOOL_MARKS,
        "metadata": _carried("`metadata`, verbatim (pydantic-ai's mark on returns it synthesized included)"),
        "timestamp": _TIMESTAMP,
        "outcome": _carried("`outcome` (`retried`: a `retry-prompt` part, 2.60+)"),
        "retry": _carried("a retry's `cause` when its content does not imply it; attempt counts are derived", "2.60"),
        "content_file_digests": _carried(
            "`content_file_digests` when it names files (an empty record loads as none does)", "2.68"
        ),
        "part_kind": _KIND,
    },
    "retry-prompt": {
        "content": _carried("a `retry-prompt` part's `content`"),
        "tool_name": _carried("`tool_name`; None for an output retry"),
        "tool_call_id": _carried(
            "`tool_call_id` of a tool retry; an output retry's random id (< 2.60) references no call and is not kept"
        ),
        "timestamp": _TIMESTAMP,
        "part_kind": _KIND,
    },
    "retry-feedback": {
        "content": _carried("a `retry-prompt` part (no tool) with this `content`", since="2.60"),
        "retry": _carried("its `cause` when the content does not imply it", since="2.60"),
        "timestamp": _TIMESTAMP,
        "part_kind": _KIND,
    },
    "retry": {
        "cause": _carried(
            "`cause` on the retry-prompt part, only when the content does not imply it (a list: "
            "`validation_error`; a no-output text: `no_output`; else `model_retry`)",
            since="2.60",
        ),
        "attempt": _derived("pydantic-ai counts the attempt again when the run continues", since="2.60"),
        "max_retries": _derived("the agent's own retry budget, given again on every run", since="2.60"),
    },
    "failed-attempt": {
        "model_name": _carried("verbatim", since="2.59"),
        "provider_name": _carried("verbatim", since="2.59"),
        "outcome": _carried("verbatim (`error` or `rejected`)", since="2.59"),
        "error": _carried("verbatim", since="2.59"),
        "usage": _carried("verbatim", since="2.59"),
        "kind": _carried("verbatim (`retry` or `fallback`)", since="2.78"),
        "retry_after": _carried("verbatim: the wait the provider asked for", since="2.78"),
        "timestamp": _per_run("when the attempt started (the epoch on the way back)", since="2.59"),
        "duration": _per_run("how long it took (zero on the way back)", since="2.59"),
    },
    "capability": {
        "kind": _carried("`kind` (`namespace.name`)", since="2.78"),
        "content": _carried("`content`, verbatim", since="2.78"),
        "record_id": _carried("`record_id`; left out of goldens (a uuid7 per record)", since="2.78"),
        "timestamp": _per_run("when the part was created", since="2.78"),
        "source": _carried("in `data`, verbatim", since="2.78"),
        "scope": _carried("in `data`, verbatim", since="2.78"),
        "capability_id": _carried("in `data`; left out of goldens (the enqueuing capability's run id)", "2.78"),
        "metadata": _carried("in `data`, verbatim", since="2.78"),
        "rendering": _carried("in `data`, verbatim: how the part is rendered to the model", since="2.78"),
        "data": _carried("in `data`, verbatim (an unregistered kind's typed fields)", since="2.78"),
        "part_kind": _KIND,
    },
}
"""The rule for every field of every owner the canonical form reads itself."""

OPEN_OWNERS: frozenset[str] = frozenset({"capability"})
"""Owners whose other fields are carried verbatim too: a capability kind's own typed fields (`city` on a weather
part) are the application's, declared by its subclass."""

VERBATIM_PART_KINDS: frozenset[str] = frozenset(
    {
        "builtin-tool-call",
        "builtin-tool-return",
        "file",
        "compaction",
        "speech",
        "tool-availability-delta",
        "capability-load-delta",
        "model-settings-delta",
        "instruction-delta",
        "instruction-baseline",
    }
)
"""Part kinds the canonical model keeps whole (`OpaquePart`): every field carried as it was read."""

_VERBATIM = FieldRule(how="verbatim", note="the whole part is kept as it was read (an opaque part)")

# The canonical vocabulary's own keys, which the same readers accept beside pydantic-ai's.
_CANONICAL_KEYS: Mapping[str, frozenset[str]] = {
    "text": frozenset({"content", "id", "provider_name", "provider_details", "citations", "part_kind"}),
    "tool-call": frozenset({"tool_call_id", "tool_name", "args", "tool_kind", "ui_visibility", "part_kind"}),
    "retry-prompt": frozenset({"cause", "tool_kind", "ui_visibility"}),
    "request": frozenset({"failed_attempts", "workspace_ref"}),
    "response": frozenset(),
}


def rule_for(owner: str, field: str) -> FieldRule | None:
    """The rule for `owner.field`, or None when it is on neither list."""
    if owner in VERBATIM_PART_KINDS:
        return _VERBATIM
    rules = FIELDS.get(owner)
    if rules is None:
        return None
    rule = rules.get(field)
    if rule is None and owner in OPEN_OWNERS:
        return FieldRule(how="carried", note="in `data`, verbatim (the kind's own typed field)")
    return rule


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownField:
    """A field of a file agentrig read that is on neither list (so it is not carried)."""

    owner: str
    """`request`, `response`, a part kind, `retry` or `failed-attempt`."""
    field: str
    """The key."""
    first: str
    """Where it first appears, e.g. `[3].parts[1]`."""
    count: int
    """How many times it appears."""


def _known(owner: str, key: str) -> bool:
    return rule_for(owner, key) is not None or key in _CANONICAL_KEYS.get(owner, ())


def _fields_of(data: object) -> Iterator[tuple[str, str, str]]:
    """(owner, key, where) for every key of every message, part and nested value in a history's JSON."""
    items: object = data
    if type(data) is dict:
        items = data.get("messages")
    if type(items) is not list:
        return
    for index, message in enumerate(items):
        if type(message) is not dict or message.get("kind") not in ("request", "response"):
            continue  # a legacy or tinyagent entry: its own reader names what it does not know
        owner = str(message["kind"])
        for key in message:
            yield owner, key, f"[{index}]"
        attempts = message.get("failed_attempts")
        for attempt in attempts if type(attempts) is list else ():
            for key in attempt if type(attempt) is dict else ():
                yield "failed-attempt", key, f"[{index}].failed_attempts"
        parts: Any = message.get("parts")
        for number, item in enumerate(parts if type(parts) is list else ()):
            part: dict[str, Any] = item if type(item) is dict else {}
            kind: Any = part.get("part_kind")
            if type(kind) is not str:
                continue
            where = f"[{index}].parts[{number}]"
            if kind not in FIELDS and kind not in VERBATIM_PART_KINDS and kind not in _CANONICAL_KEYS:
                if kind not in {"user-content", "thought", "image"}:  # canonical-only kinds, read whole
                    yield "part kind", kind, where
                continue
            for key in part:
                yield kind, key, where
            retry = part.get("retry")
            for key in retry if type(retry) is dict else ():
                yield "retry", key, f"{where}.retry"


def unknown_fields(data: object) -> list[UnknownField]:
    """The fields of a parsed history (a pydantic-ai dump, a canonical document, a message list) that are on
    neither list, each once with where it first appears and how often; [] for a history agentrig knows whole."""
    first: dict[tuple[str, str], str] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for owner, key, where in _fields_of(data):
        if owner != "part kind" and _known(owner, key):
            continue
        counts[(owner, key)] += 1
        first.setdefault((owner, key), where)
    return [
        UnknownField(owner=owner, field=key, first=first[(owner, key)], count=counts[(owner, key)])
        for owner, key in sorted(counts)
    ]


def describe_unknown(field: UnknownField) -> str:
    """One warning line's text for an unknown field."""
    times = f", {field.count} times" if field.count > 1 else ""
    if field.owner == "part kind":
        return f"part kind {field.field!r} ({field.first}{times}) is unknown to agentrig: it is kept verbatim"
    return (
        f"field {field.owner}.{field.field} ({field.first}{times}) is unknown to agentrig's canonical form: "
        "it is not carried (docs/canonical-format.md)"
    )
