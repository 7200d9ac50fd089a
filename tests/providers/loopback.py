"""A loopback HTTP server that speaks the OpenAI Chat Completions and Anthropic Messages APIs.

pydantic-ai's real provider clients (the openai and anthropic SDKs underneath) are pointed at it, so
tests exercise a real HTTP round trip through the real client code, offline. Replies follow the
shapes the two APIs document and return (text, tool calls, usage, SSE streaming, error bodies);
a script of `Reply`s is served in order, then `default`. Every request is recorded (method, path,
lower-cased headers, JSON body) for assertions.

Hostile on request: `latency_s` for every reply, `limits` (a sliding window of requests and tokens, as providers
enforce them, answered with 429 and `Retry-After` / `retry-after-ms`), `fail_every` (a 503 now and then), `hold`
(a request that hangs), `cut_after_events` / `stall_after_events` (a stream cut or stalled), `end_after_events`
(a stream the server ends cleanly before its last events: a response the provider ended early, `ended_early`). It
counts what a test asserts on: `peak_in_flight` (requests it was answering at once) and `rejected` (the 429s its
limits sent).

Bounded: it listens on 127.0.0.1 on a free port, serves from a daemon thread, and shuts itself down
after `max_lifetime_s` even if a test forgets to.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

__all__ = [
    "LoopbackServer",
    "ReceivedRequest",
    "Reply",
    "ServerLimits",
    "ToolCallReply",
    "context_length_exceeded",
    "ended_early",
    "error",
    "rate_limited",
    "text",
    "tool_calls",
]

_CREATED = 1764633600  # a fixed timestamp keeps recorded-style bodies stable


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallReply:
    """One tool call in a reply."""

    id: str
    """The provider's call id (`call_...` / `toolu_...`)."""
    name: str
    """The tool's name."""
    args: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The arguments as a JSON object."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What the server answers to one request; rendered in the dialect of the endpoint that was called."""

    text: str | None = None
    """Assistant text."""
    tool_calls: tuple[ToolCallReply, ...] = ()
    """Tool calls, after the text."""
    text_deltas: tuple[str, ...] | None = None
    """Streamed replies only: the pieces the text is sent in (they join to `text`), instead of its two halves
    (OpenAI) or one piece (Anthropic). Real providers split words, and keys, across deltas."""
    input_tokens: int = 12
    """Reported prompt tokens."""
    output_tokens: int = 4
    """Reported completion tokens."""
    status: int = 200
    """HTTP status; anything but 200 sends an error body."""
    error_message: str = ""
    """The provider's error message (error replies)."""
    error_code: str | None = None
    """OpenAI's `error.code` (e.g. `context_length_exceeded`)."""
    error_type: str | None = None
    """The error type (`invalid_request_error`, `rate_limit_error`, ...); derived from the status when None."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Extra response headers (e.g. `Retry-After`)."""
    delay_s: float | None = None
    """Latency of this reply; the server's default latency when None."""
    hold: threading.Event | None = None
    """The reply is sent only once this event is set (or the server's lifetime ends): a request held open."""
    cut_after_events: int | None = None
    """Streamed replies only: send this many SSE events, then drop the connection mid-body (chunked transfer
    without its last chunk, which the HTTP client reports as an incomplete read)."""
    stall_after_events: int | None = None
    """Streamed replies only: send this many SSE events, then wait for `hold` before the rest (a stream that
    stalls mid-response); `hold` then no longer delays the start of the reply."""
    end_after_events: int | None = None
    """Streamed replies only: send this many SSE events, then end the body cleanly (the connection closed at the end
    of a whole event, no transport error): a stream the provider ended early, before Anthropic's `message_delta` /
    `message_stop` or OpenAI's finish chunk and `[DONE]`. `ended_early` picks the count for a reply."""


def text(content: str, *, input_tokens: int = 12, output_tokens: int = 4, delay_s: float | None = None) -> Reply:
    """A plain text answer."""
    return Reply(text=content, input_tokens=input_tokens, output_tokens=output_tokens, delay_s=delay_s)


def tool_calls(
    *calls: ToolCallReply, content: str | None = None, input_tokens: int = 20, output_tokens: int = 9
) -> Reply:
    """An answer that calls tools."""
    return Reply(text=content, tool_calls=calls, input_tokens=input_tokens, output_tokens=output_tokens)


def error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    error_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An HTTP error reply with the provider's error body."""
    return Reply(
        status=status, error_message=message, error_code=code, error_type=error_type, headers=dict(headers or {})
    )


def rate_limited(retry_after: str = "0") -> Reply:
    """A 429 with `Retry-After` (seconds or an HTTP date)."""
    return error(
        429, "Rate limit reached for requests", code="rate_limit_exceeded", headers={"Retry-After": retry_after}
    )


def context_length_exceeded(api: str = "openai") -> Reply:
    """The 400 each API sends when the prompt does not fit the context window."""
    if api == "anthropic":
        return error(400, "prompt is too long: 210034 tokens > 200000 maximum", error_type="invalid_request_error")
    return error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. "
        "Please reduce the length of the messages.",
        code="context_length_exceeded",
        error_type="invalid_request_error",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    """A provider's rate limits: at most `requests` requests and `tokens` tokens (a reply's input plus output) in any
    `window_s` seconds, counted when a request arrives; one over is answered 429 with `Retry-After` and
    `retry-after-ms` (when the window has room again). Rejected requests do not count."""

    requests: int | None = None
    tokens: int | None = None
    window_s: float = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedRequest:
    """One request the server received."""

    method: str
    path: str
    """The path without the query string."""
    headers: Mapping[str, str]
    """Lower-cased header names."""
    body: Any
    """The parsed JSON body (None when empty)."""


_DEFAULT_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class LoopbackServer:
    """The server; use as a context manager. `openai_base_url` and `anthropic_base_url` go to the providers."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        default: Reply | None = None,
        latency_s: float = 0.0,
        max_lifetime_s: float = 120.0,
        limits: ServerLimits | None = None,
        fail_every: int | None = None,
        responder: Callable[[ReceivedRequest], Reply | None] | None = None,
    ) -> None:
        self.latency_s = latency_s
        self.max_lifetime_s = max_lifetime_s
        self.default = default
        self.limits = limits
        self.fail_every = fail_every
        """Every `fail_every`-th request that passes the limits is answered 503 (a flaky server)."""
        self.responder = responder
        """Answers a request by what it says (None: the script's next reply), for requests that arrive in any order."""
        self.requests: list[ReceivedRequest] = []
        self.rejected = 0
        """Requests the limits answered with 429."""
        self.in_flight = 0
        self.peak_in_flight = 0
        """The most requests the server was answering at the same time."""
        self._admitted: deque[tuple[float, int]] = deque()
        self._passed = 0
        self._replies: deque[Reply] = deque(replies)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.loopback = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._deadline = threading.Timer(max_lifetime_s, self.close)
        self._deadline.daemon = True
        self._closed = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        with self._lock:
            self._replies.extend(replies)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        self._deadline.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._deadline.cancel()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def next_reply(self, request: ReceivedRequest) -> Reply:
        answer = self.responder(request) if self.responder is not None else None
        with self._lock:
            self.requests.append(request)
            if answer is not None:
                return answer
            if self._replies:
                return self._replies.popleft()
        if self.default is not None:
            return self.default
        return error(500, "loopback: no reply scripted for this request", error_type="api_error")

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def arrived(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def left(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def admit(self, reply: Reply) -> Reply:
        """`reply`, or the 429 (or 503 of `fail_every`) the server answers instead."""
        limits = self.limits
        with self._lock:
            if limits is not None:
                now = time.monotonic()
                while self._admitted and self._admitted[0][0] <= now - limits.window_s:
                    self._admitted.popleft()
                tokens = reply.input_tokens + reply.output_tokens
                over_requests = limits.requests is not None and len(self._admitted) >= limits.requests
                over_tokens = limits.tokens is not None and sum(t for _, t in self._admitted) + tokens > limits.tokens
                if over_requests or over_tokens:
                    self.rejected += 1
                    wait = max(0.001, self._admitted[0][0] + limits.window_s - now) if self._admitted else 0.001
                    headers = {"Retry-After": str(max(1, round(wait + 0.5))), "retry-after-ms": str(round(wait * 1000))}
                    limited = error(429, "Rate limit reached for requests", code="rate_limit_exceeded", headers=headers)
                    return replace(limited, delay_s=0.0)  # refused at once, as providers do
                self._admitted.append((now, tokens))
            self._passed += 1
            if self.fail_every is not None and self._passed % self.fail_every == 0:
                return error(503, "The server is overloaded, try again", error_type="api_error")
        return reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # benchmarks open many connections at once; the default backlog is 5
    loopback: LoopbackServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout test) is expected; anything else is printed as usual."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log line."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        path = urlsplit(self.path).path
        headers = {key.lower(): value for key, value in self.headers.items()}
        loopback = cast(_Server, self.server).loopback
        loopback.arrived()
        try:
            request = ReceivedRequest(method="POST", path=path, headers=headers, body=body)
            self._answer(loopback, loopback.next_reply(request), path, body)
        finally:
            loopback.left()

    def _answer(self, loopback: LoopbackServer, reply: Reply, path: str, body: Any) -> None:
        reply = loopback.admit(reply)
        if reply.hold is not None and reply.stall_after_events is None:
            reply.hold.wait(timeout=loopback.max_lifetime_s)
        delay = loopback.latency_s if reply.delay_s is None else reply.delay_s
        if delay > 0:
            time.sleep(delay)
        number = loopback.next_id()
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        else:
            self._send_json(404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})
            return
        if reply.status != 200:
            self._send_json(reply.status, _error_body(api, reply), reply.headers)
            return
        model = str((body or {}).get("model", "unknown"))
        streaming = bool((body or {}).get("stream"))
        if api == "openai":
            if streaming:
                chunks = _openai_chunks(reply, model, number)
                self._send_events(None, _ended(chunks, reply), cut_after=reply.cut_after_events, stall=reply)
            else:
                self._send_json(200, _openai_completion(reply, model, number), reply.headers)
        elif streaming:
            events = _ended(_anthropic_events(reply, model, number), reply)
            self._send_events("anthropic", events, cut_after=reply.cut_after_events, stall=reply)
        else:
            self._send_json(200, _anthropic_message(reply, model, number), reply.headers)

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_events(
        self,
        dialect: str | None,
        events: Iterator[tuple[str, Any]],
        *,
        cut_after: int | None = None,
        stall: Reply | None = None,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        if cut_after is not None:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        for sent, (name, payload) in enumerate(events):
            if cut_after is not None and sent >= cut_after:
                self.wfile.flush()
                return  # no terminating chunk: the body ends early, as when a connection drops
            if stall is not None and stall.stall_after_events == sent and stall.hold is not None:
                self.wfile.flush()
                stall.hold.wait(timeout=cast(_Server, self.server).loopback.max_lifetime_s)
            data = payload if isinstance(payload, str) else json.dumps(payload)
            prefix = f"event: {name}\n" if dialect == "anthropic" else ""
            event = f"{prefix}data: {data}\n\n".encode()
            if cut_after is not None:
                event = f"{len(event):x}\r\n".encode() + event + b"\r\n"
            self.wfile.write(event)
            self.wfile.flush()
        if cut_after is not None:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _ended(events: Iterator[tuple[str, Any]], reply: Reply) -> Iterator[tuple[str, Any]]:
    """The reply's events, up to `end_after_events` of them."""
    return events if reply.end_after_events is None else itertools.islice(events, reply.end_after_events)


def ended_early(api: str, *text_deltas: str, sent: int | None = None) -> Reply:
    """A streamed text reply (the text in these deltas) that the server ends cleanly after `sent` of them (all when
    None): Anthropic's `message_start` and `content_block_start` come first, OpenAI's role chunk; neither
    Anthropic's `content_block_stop`, `message_delta` and `message_stop` nor OpenAI's finish chunk, usage chunk and
    `[DONE]` follow."""
    before = 2 if api == "anthropic" else 1
    count = len(text_deltas) if sent is None else sent
    return Reply(text="".join(text_deltas), text_deltas=text_deltas, end_after_events=before + count)


def _error_body(api: str, reply: Reply) -> dict[str, Any]:
    error_type = reply.error_type or _DEFAULT_ERROR_TYPES.get(reply.status, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": error_type, "message": reply.error_message}}
    return {"error": {"message": reply.error_message, "type": error_type, "param": None, "code": reply.error_code}}


def _openai_usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _openai_completion(reply: Reply, model: str, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.args)}}
            for call in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-loopback{number}",
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _openai_usage(reply),
        "system_fingerprint": "fp_loopback",
    }


def _openai_chunks(reply: Reply, model: str, number: int) -> Iterator[tuple[str, Any]]:
    base = {"id": f"chatcmpl-loopback{number}", "object": "chat.completion.chunk", "created": _CREATED, "model": model}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    yield "", chunk({"role": "assistant", "content": ""})
    if reply.text:
        middle = len(reply.text) // 2
        for piece in _text_pieces(reply) or (reply.text[:middle], reply.text[middle:]):
            if piece:
                yield "", chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        arguments = json.dumps(call.args)
        start = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        yield "", chunk({"tool_calls": [start]})
        yield "", chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})
    yield "", chunk({}, "tool_calls" if reply.tool_calls else "stop")
    yield "", {**base, "choices": [], "usage": _openai_usage(reply)}
    yield "", "[DONE]"


def _text_pieces(reply: Reply) -> tuple[str, ...]:
    """The pieces a reply's text streams in when the test chose them (`text_deltas`), else ()."""
    if reply.text_deltas is None:
        return ()
    assert "".join(reply.text_deltas) == reply.text, "text_deltas must join to the reply's text"
    return reply.text_deltas


def _anthropic_content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.args)} for call in reply.tool_calls
    )
    return blocks


def _anthropic_usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _anthropic_message(reply: Reply, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"msg_loopback{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_content(reply),
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def _anthropic_events(reply: Reply, model: str, number: int) -> Iterator[tuple[str, Any]]:
    start = {**_anthropic_message(reply, model, number), "content": [], "stop_reason": None}
    start["usage"] = {**_anthropic_usage(reply), "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(_anthropic_content(reply)):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _text_pieces(reply) or [block["text"]]]
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def status_phrase(status: int) -> str:
    """The reason phrase of a status (for assertions on error lines)."""
    return HTTPStatus(status).phrase
