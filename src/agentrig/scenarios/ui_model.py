"""A turn that arrives as one request of a UI protocol (`ui:`), and what its answer must be.

A UI turn is what a frontend sends the application's endpoint: an AG-UI `RunAgentInput` (thread, messages,
frontend tools) or a Vercel AI SDK chat request. pydantic-ai's adapter reads it (`AGUIAdapter` /
`VercelAIAdapter`: `from_request`, `build_run_input`, `load_messages`), the agent runs on the conversation the
request carries, and the adapter's event stream (`AGUIEventStream` / `VercelAIEventStream`, `transform_stream`)
encodes what the run did. A request the adapter refuses gets the HTTP answer its `dispatch_request` gives (a 422
with the validation errors, a 415 for a content type it does not accept) and runs nothing.

Kept apart from `model.py` (whose `Turn` has a `ui` field and whose expectations have `ui` / `ui_events`), with
the same rules: unknown keys are errors, field docstrings become the schema's descriptions and docs/scenarios.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentrig.scenarios._strict import Strict, VersionSpec

__all__ = [
    "UI_EXTRA",
    "UiAnswerExpectation",
    "UiEventFields",
    "UiEventsGolden",
    "UiProtocol",
    "UiRequest",
    "UiStatusWhen",
    "frontend_tool_names",
]

UiProtocol = Literal["ag-ui", "vercel-ai"]

UI_EXTRA: dict[str, Literal["ag-ui", "vercel-ai"]] = {"ag-ui": "ag-ui", "vercel-ai": "vercel-ai"}
"""The optional extra (`requires:`) each protocol's adapter needs; a UI turn needs it whether or not it is listed."""


class UiRequest(Strict):
    """The request a frontend sends: exactly one of `input`, `input_file` or `body`."""

    protocol: UiProtocol
    """`ag-ui` (pydantic-ai's `AGUIAdapter`, the body an AG-UI `RunAgentInput`) or `vercel-ai` (`VercelAIAdapter`,
    the body a Vercel AI SDK chat request: `trigger`, `id`, `messages` with `parts`)."""
    input: dict[str, Any] | None = None
    """The request body as a mapping, written as the protocol spells it (camelCase keys: `threadId`, `runId`,
    `messages`, `tools`, `toolCallId`, ...). The messages are the whole conversation, as the client holds it."""
    input_file: str | None = None
    """A JSON file holding the request body (relative to the scenario file)."""
    body: str | None = None
    """The raw body text, sent as is: a request that is not valid JSON or not valid for the protocol."""
    content_type: str = "application/json"
    """The request's `Content-Type` header (pydantic-ai 2.44+ answers 415 to anything but `application/json`)."""
    accept: str = "text/event-stream"
    """The request's `Accept` header: how the adapter encodes its events."""

    @model_validator(mode="after")
    def _one_body(self) -> UiRequest:
        given = [name for name in ("input", "input_file", "body") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"ui needs exactly one of input, input_file, body (got {', '.join(given) or 'none'})")
        return self


def frontend_tool_names(request: UiRequest, base_dir: Path) -> frozenset[str] | None:
    """The frontend tools an AG-UI request declares (`tools[].name`), which the model may call in that turn; None
    when they cannot be known before the run (a raw `body`, or a file that is missing or not a JSON mapping)."""
    body: Any = request.input
    if body is None and request.input_file is not None:
        try:
            body = json.loads((base_dir / request.input_file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    if not isinstance(body, dict):
        return None
    tools: Any = body.get("tools") or []  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(
        str(tool["name"])  # pyright: ignore[reportUnknownArgumentType]
        for tool in tools  # pyright: ignore[reportUnknownVariableType]
        if isinstance(tool, dict) and "name" in tool
    )


class UiStatusWhen(Strict):
    """The status expected on the pydantic-ai versions `when_pydantic_ai` selects."""

    when_pydantic_ai: VersionSpec
    """Which installed versions this applies to, e.g. `>=2.63` (comparisons joined by commas)."""
    status: int = Field(ge=100, le=599)
    """The HTTP status on those versions."""


class UiAnswerExpectation(Strict):
    """What the adapter answers one UI turn: the HTTP status and the encoded events (each decoded from its
    `data:` line, with the protocol's own field names)."""

    status: int | tuple[UiStatusWhen, ...] | None = None
    """The HTTP status: 200 for a request that ran (its events streamed), or the adapter's refusal (422: the
    body failed validation; 415: a content type it does not accept; 500: the adapter raised while reading the
    request, e.g. a tool result for a call the messages never made). Or per-version statuses (the first whose
    `when_pydantic_ai` matches the installed version applies; none matching is a failure). Omitted: 200."""
    events: tuple[dict[str, Any], ...] = ()
    """Events that appear in this order (others may come between them): each an event's `type` and any of its
    fields, matched as JSON subsets (`{type: TOOL_CALL_START, toolCallName: confirm}`)."""
    not_events: tuple[dict[str, Any], ...] = ()
    """Events that must not appear (each matched as in `events`)."""
    body_contains: tuple[str, ...] | str = ()
    """A refused request's answer body contains this text (or each of these texts)."""

    @field_validator("status")
    @classmethod
    def _valid_status(cls, status: int | tuple[UiStatusWhen, ...] | None) -> int | tuple[UiStatusWhen, ...] | None:
        if isinstance(status, int) and not 100 <= status <= 599:
            raise ValueError(f"{status} is not an HTTP status (100-599)")
        return status

    @field_validator("events", "not_events")
    @classmethod
    def _typed(cls, events: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        for index, event in enumerate(events):
            if not isinstance(event.get("type"), str):
                raise ValueError(f"event {index} needs a `type` (e.g. RUN_FINISHED, text-delta)")
        return events


class UiEventFields(Strict):
    """Event fields that differ between versions, stated for the versions a variant selects: on those versions
    each named event carries exactly these values of these fields (absent when not named)."""

    when_pydantic_ai: VersionSpec | None = None
    """The pydantic-ai versions this variant is for, e.g. `>=2.63` (see `when_pydantic_ai` of steering)."""
    when_ag_ui_protocol: VersionSpec | None = None
    """The installed `ag-ui-protocol` versions it is for, e.g. `<1.0` (its event models decide some defaults)."""
    fields: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """By event type, the fields those events carry on these versions and their values (ids masked as in the
    golden): `{RUN_STARTED: {protocolVersion: "1.0"}, TEXT_MESSAGE_START: {role: assistant}}`; `{}`: none."""


class UiEventsGolden(Strict):
    """The scenario's UI answers compared with a golden file: every UI turn's events, with the ids and timestamps
    the adapter makes up masked (`<id-1>`, `<timestamp>`), identical on every pinned version (each turn's status is
    checked by its `expect.ui.status`)."""

    golden: str
    """Path (relative to the scenario file) of the golden UI answers; `agentrig run --update-golden` writes it."""
    versions: tuple[UiEventFields, ...] = ()
    """Fields that really differ between versions, stated: the fields any variant names are left out of the
    golden and held, on each version, to the first variant whose `when_*` matches it (none matching is a
    failure). The compatibility page lists them."""

    @model_validator(mode="after")
    def _conditions(self) -> UiEventsGolden:
        for index, variant in enumerate(self.versions):
            if variant.when_pydantic_ai is None and variant.when_ag_ui_protocol is None:
                raise ValueError(f"versions[{index}] needs when_pydantic_ai or when_ag_ui_protocol")
        return self
