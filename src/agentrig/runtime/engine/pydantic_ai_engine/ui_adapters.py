"""pydantic-ai's UI adapters as a UI turn uses them, and the one place that knows how they differ by version.

    adapter_class("ag-ui")                 # AGUIAdapter, imported only when a scenario has a UI turn
    http_request(body, content_type=..., accept=...)   # the request a frontend sends, as Starlette holds it
    await refusal(adapter_class, request, agent)        # what `dispatch_request` answers a request it refuses
    decode_event(encoded)                               # one encoded event (`data: {...}`) as JSON

Differences between the pinned versions, all in the adapter's answer (none needs a branch here; the scenarios
state them, `when_pydantic_ai`, and the compatibility page lists them):

- `from_request` checks the `Content-Type` (a CSRF control) from 2.44: anything but `application/json` is a 415
  (a Starlette `HTTPException`); up to 2.43 any content type is read.
- AG-UI: `TEXT_MESSAGE_START` carries `role: assistant` from 2.63 (set by pydantic-ai); before, only where the
  installed `ag-ui-protocol` (< 1.0, its model's default) writes it. `RUN_STARTED` carries `protocolVersion` from
  2.63 with `ag-ui-protocol` 1.0. 2.59 to 2.62 declare `ag-ui-protocol<1`, whose `RunAgentInput` also requires
  `state`, `context`, `forwardedProps` and `tools` (a body without them is a 422 there). A server tool's failed or
  retried result adds a `REASONING_ENCRYPTED_VALUE` event on 2.68 and not on 2.38 (no shipped scenario has one).
- Vercel AI: `load_messages` keeps the tool calls of one assistant message in one response from 2.59 (one
  response per call on 2.38 and 2.40): the shipped scenario sends one call per message.

What stays the same on every pin and is therefore used as is: `from_request`, `build_run_input`, the adapter's
`messages`, `toolset`, `deferred_tool_results`, `sanitize_messages(...)` and `build_event_stream()`,
`transform_stream` and `encode_event`, and `dispatch_request`'s 422 for a body that fails validation.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import JsonValue
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.runfolder import jsonio

__all__ = ["adapter_class", "decode_event", "http_request", "installed_versions", "refusal"]

_ADAPTERS = {
    "ag-ui": ("pydantic_ai.ui.ag_ui", "AGUIAdapter"),
    "vercel-ai": ("pydantic_ai.ui.vercel_ai", "VercelAIAdapter"),
}
_PROTOCOL_PACKAGES = {"ag-ui": ("ag-ui-protocol",), "vercel-ai": ()}
"""Distributions besides pydantic-ai whose version shapes a protocol's answer."""

SERVER_ERROR = 500
"""What Starlette answers when the adapter raises while reading a request (its `ServerErrorMiddleware`)."""


def adapter_class(protocol: str) -> Any:
    """The adapter class of `protocol` (`requires` already checked that its extra is installed)."""
    module_name, name = _ADAPTERS[protocol]
    return vars(importlib.import_module(module_name))[name]


def installed_versions(protocol: str) -> tuple[tuple[str, str], ...]:
    """The versions that shape the adapter's answer: pydantic-ai's and the protocol package's."""
    found = [("pydantic-ai", pydantic_ai_compat.PYDANTIC_AI_VERSION_TEXT)]
    for package in _PROTOCOL_PACKAGES[protocol]:
        try:
            found.append((package, version(package)))
        except PackageNotFoundError:  # pragma: no cover - `requires` checked the module is importable
            continue
    return tuple(found)


def http_request(body: bytes, *, content_type: str, accept: str) -> Any:
    """A `starlette.requests.Request` for a POST of `body`, as the frontend sends it (read once, like a socket)."""
    from starlette.requests import Request

    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    headers = [(b"content-type", content_type.encode("latin-1")), (b"accept", accept.encode("latin-1"))]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers, "query_string": b""}
    return Request(scope, receive)


async def refusal(cls: Any, request: Any, agent: Any) -> tuple[int, str, list[JsonValue]]:
    """(status, body, events) of what `cls.dispatch_request` answers a request `from_request` or the adapter's
    reading of its messages refused: pydantic-ai's own answer (a 422 with the validation errors, 2.44+'s 415; a
    stream holding only an error event where the adapter defers the refusal to the stream), or a 500 with the
    exception when the adapter raises (Starlette's answer to an exception an endpoint raises). `model` is one that
    refuses to answer, so nothing runs even if this version got further than the reading did."""
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from starlette.exceptions import HTTPException

    def never(messages: Any, info: AgentInfo) -> Any:
        raise AssertionError("a UI request the adapter refused reached the model")

    try:
        response = await cls.dispatch_request(request, agent=agent, model=FunctionModel(never))
        events: list[JsonValue] = []
        chunks: Any = getattr(response, "body_iterator", None)
        if chunks is not None:
            async for chunk in chunks:
                events.extend(decode_event(chunk if isinstance(chunk, str) else bytes(chunk).decode("utf-8")))
    except HTTPException as error:
        return int(error.status_code), str(error.detail), []  # an HTTPStatus member: a plain int travels anywhere
    except Exception as error:  # the adapter raised: the server answers 500, whatever the exception
        return SERVER_ERROR, f"{type(error).__name__}: {error}", []
    body: bytes = getattr(response, "body", b"")
    return int(response.status_code), body.decode("utf-8", errors="replace"), events


def decode_event(encoded: str) -> list[JsonValue]:
    """The JSON of each `data:` line of one encoded event (a line that is not JSON, like Vercel AI's `[DONE]`, as
    its text)."""
    decoded: list[JsonValue] = []
    for line in encoded.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        try:
            decoded.append(jsonio.loads(data))
        except HistoryFormatError:
            decoded.append(data)
    return decoded
