"""A UI turn (`ui:`) on pydantic-ai: the request a frontend sends, read by pydantic-ai's adapter, run through the
orchestrator like any turn, and answered with the adapter's own encoded events.

    ui = await open_ui_turn(loaded, index, turn.ui, handle)   # a UiExchange when the adapter refused the request
    record = await orchestrator.run(None, protocol_request=ui)
    exchange = await ui.answer()                               # status 200 and the encoded events

What is pydantic-ai's and what is agentrig's, step by step (the composition the compatibility contract names:
`build_run_input` and the event stream on the runtime's own turn pipeline):

1. reading: `Adapter.from_request` on an in-memory Starlette request (which calls `build_run_input`), then the
   adapter's `messages` (`load_messages`), `sanitize_messages(...)`, `toolset` (AG-UI's frontend tools, an
   `ExternalToolset`) and `deferred_tool_results`, exactly as its `run_stream_native` takes them. If any of it
   raises, the request is refused and the answer is what `dispatch_request` answers it (`ui_adapters.refusal`).
2. running: the orchestrator runs the request's conversation (it replaces the stored history, as the adapter hands
   the client's messages to the agent) through the engine with what `run_stream_native` adds to a run: the
   frontend toolset, `DeferredToolRequests` as an output type beside the agent's, the deferred results, the thread
   as the conversation id, the client's state on `StateDeps`, and `ReinjectSystemPrompt` (the adapter's default,
   server-managed system prompt). A per-run capability taps every native event (`on_event`, which also makes the
   run stream, as `run_stream_events` does) and the run's end (`wrap_run`).
3. answering: the tapped events, then `AgentRunResultEvent` (or the run's exception), go through the adapter's own
   `build_event_stream().transform_stream(...)`, each event through `encode_event`, and each `data:` line is kept
   as JSON (`UiExchange.events`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability, ReinjectSystemPrompt
from pydantic_ai.messages import ModelMessage
from pydantic_ai.run import AgentRunResultEvent

from agentrig.errors import ScenarioError
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import AgentHandle
from agentrig.runtime.engine.pydantic_ai_engine.ui_adapters import (
    adapter_class,
    decode_event,
    http_request,
    installed_versions,
    refusal,
)
from agentrig.runtime.history.canonical import JsonValue, Message
from agentrig.runtime.history.ui_exchange import UiExchange
from agentrig.runtime.models import pydantic_ai_compat
from agentrig.runtime.models.conversion import to_canonical
from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios.loader import LoadedScenario
from agentrig.scenarios.ui_model import UiRequest

__all__ = ["UiTurn", "open_ui_turn"]

OK = 200


class _EventTap(AbstractCapability[Any]):
    """Every native event of the run, in order, and how the run ended (its result or its exception)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Any] = []
        self.result: Any = None
        self.error: BaseException | None = None

    async def on_event(self, ctx: Any, *, event: Any) -> None:
        self.events.append(event)

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        try:
            self.result = await handler()
        except BaseException as error:  # recorded for the event stream, then the run fails as it would
            self.error = error
            raise
        return self.result


@dataclass(slots=True)
class UiTurn:
    """A UI request the adapter accepted: the conversation it carries and what the run needs from it."""

    protocol: str
    adapter: Any
    """The pydantic-ai adapter instance (`AGUIAdapter` / `VercelAIAdapter`) holding the request."""
    native_messages: list[ModelMessage]
    """The adapter's messages, sanitized as `run_stream_native` sanitizes them."""
    history: list[Message] = field(default_factory=list[Message])
    """The same, canonical (the orchestrator's `ProtocolRequest.history`)."""
    tap: _EventTap = field(default_factory=_EventTap)

    def capabilities(self) -> list[Any]:
        """The run's extra capabilities: the adapter's system-prompt reinjection, then the event tap."""
        extra: list[Any] = []
        if self.adapter.manage_system_prompt == "server":
            extra.append(ReinjectSystemPrompt(replace_existing=True, id=None))
        return [*extra, self.tap]

    def run_options(self, handle: AgentHandle) -> dict[str, Any]:
        """What `run_stream_native` passes the run besides the history: toolsets, output type, deferred results,
        the conversation id; the client's state goes on the deps when they hold state."""
        from pydantic_ai.ui import StateHandler

        options: dict[str, Any] = {}
        toolset = self.adapter.toolset
        if toolset:
            options["toolsets"] = [toolset]
            options["output_type"] = [handle.agent.output_type, DeferredToolRequests]
        options["deferred_tool_results"] = self.adapter.deferred_tool_results
        conversation_id = self.adapter.conversation_id
        if conversation_id is not None and pydantic_ai_compat.supports_run_kwarg("conversation_id"):
            options["conversation_id"] = conversation_id
        deps = handle.deps
        if isinstance(deps, StateHandler):  # as `run_stream_native` does: the client's state on the run's deps
            raw_state: Any = self.adapter.state or {}
            current: Any = deps.state
            deps.state = type(current).model_validate(raw_state) if isinstance(current, BaseModel) else raw_state
        return options

    async def answer(self) -> UiExchange:
        """The adapter's encoded events for the run that took place (status 200)."""
        tap = self.tap

        async def native() -> AsyncIterator[Any]:
            for event in tap.events:
                yield event
            if tap.result is not None:
                yield AgentRunResultEvent(result=tap.result)
            elif isinstance(tap.error, Exception):
                raise tap.error  # the adapter turns it into its error event (AG-UI RUN_ERROR, Vercel AI error)
            else:  # cancelled or stopped by agentrig (a timeout, max_iterations): no result, no exception of its own
                raise RuntimeError("the run ended without a result (cancelled or stopped)")

        stream = self.adapter.build_event_stream()
        events: list[JsonValue] = []
        async for event in stream.transform_stream(native()):
            events.extend(decode_event(stream.encode_event(event)))
        return UiExchange(
            protocol=self.protocol, status=OK, events=tuple(events), versions=installed_versions(self.protocol)
        )


def _request_body(loaded: LoadedScenario, index: int, ui: UiRequest) -> bytes:
    if ui.input is not None:
        return jsonio.dumps(ui.input)
    if ui.body is not None:
        return ui.body.encode("utf-8")
    path: Path = loaded.resolve(ui.input_file or "")
    try:
        return path.read_bytes()
    except OSError as error:
        raise ScenarioError(
            f"cannot read {path}: {error.strerror or error}",
            path=loaded.path,
            line=loaded.line_of("turns", index, "ui", "input_file"),
            field=f"turns[{index}].ui.input_file",
        ) from None


async def open_ui_turn(loaded: LoadedScenario, index: int, ui: UiRequest, handle: AgentHandle) -> UiTurn | UiExchange:
    """Read turn `index`'s request with its adapter: the `UiTurn` to run, or the adapter's refusal (no run)."""
    body = _request_body(loaded, index, ui)
    cls = adapter_class(ui.protocol)

    def request() -> Any:
        return http_request(body, content_type=ui.content_type, accept=ui.accept)

    try:
        adapter = await cls.from_request(request(), agent=handle.agent)
        messages: Sequence[ModelMessage] = adapter.sanitize_messages(
            adapter.messages, deferred_tool_results=adapter.deferred_tool_results
        )
        adapter.toolset  # noqa: B018 - read now: a tool definition the adapter cannot build refuses the request here
    except Exception:  # whatever the adapter raises, the answer is what its own dispatch_request gives
        status, text, events = await refusal(cls, request(), handle.agent)
        versions = installed_versions(ui.protocol)
        return UiExchange(protocol=ui.protocol, status=status, body=text, events=tuple(events), versions=versions)
    native = list(messages)
    return UiTurn(protocol=ui.protocol, adapter=adapter, native_messages=native, history=to_canonical(native))
