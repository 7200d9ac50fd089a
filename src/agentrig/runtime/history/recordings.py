"""Recording files (`agentrig.recording/1`) read without any agent framework: their model and their history.

`agentrig run --record-mode ...` writes them (`runtime/models/record_replay.py`); `check`, `convert` and `diff` read
them here, as the conversation they recorded: the messages the last recorded request sent, then the answer it got
(nothing more when that request failed: a recorded provider error has no answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message
from agentrig.runtime.history.wire import history_from_json
from agentrig.runtime.runfolder import jsonio

__all__ = ["RECORDING_FORMAT", "is_recording", "recorded_model", "recording_exchanges", "recording_history"]

RECORDING_FORMAT = "agentrig.recording/1"
"""The format tag of recording files."""


def is_recording(data: object) -> bool:
    """Whether a parsed JSON document is a recording."""
    return isinstance(data, dict) and cast(dict[str, Any], data).get("format") == RECORDING_FORMAT


def recording_exchanges(data: object, *, source: str | Path | None = None) -> list[dict[str, Any]]:
    """The exchanges of a recording document, each an object with a `request` object and a `response` or an
    `error` object; anything else is a `HistoryFormatError` naming the file and the field."""
    if not is_recording(data):
        raise HistoryFormatError(f"not a recording (expected format {RECORDING_FORMAT!r})", path=source, field="format")
    raw_exchanges = cast(dict[str, Any], data).get("exchanges")
    if not isinstance(raw_exchanges, list):
        raise HistoryFormatError("expected a list", path=source, field="exchanges")
    exchanges: list[dict[str, Any]] = []
    for index, raw in enumerate(cast(list[Any], raw_exchanges)):
        entry = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
        answered = isinstance(entry.get("response"), dict) or isinstance(entry.get("error"), dict)
        if not isinstance(entry.get("request"), dict) or not answered:
            raise HistoryFormatError(
                "expected an object with a request object and a response or error object",
                path=source,
                field=f"exchanges[{index}]",
            )
        exchanges.append(entry)
    return exchanges


def recording_history(data: object, *, source: str | Path | None = None) -> list[Message]:
    """The conversation a recording holds: the last request's messages and the response to it, canonical."""
    exchanges = recording_exchanges(data, source=source)
    if not exchanges:
        return []
    last = exchanges[-1]
    messages = last["request"].get("messages", [])
    if not isinstance(messages, list):
        where = f"exchanges[{len(exchanges) - 1}].request.messages"
        raise HistoryFormatError("expected a list", path=source, field=where)
    documents = list(cast(list[Any], messages))
    response = last.get("response")
    if isinstance(response, dict):
        documents.append({"kind": "response", "parts": cast(dict[str, Any], response).get("parts", [])})
    return history_from_json(documents, source=source)


def recorded_model(path: Path) -> str | None:
    """The `provider:name` a recording file says it was made with; None when the file does not exist."""
    data = jsonio.read_json_file_if_present(path)
    if data is None:
        return None
    if not is_recording(data):
        raise HistoryFormatError(f"not a recording (expected format {RECORDING_FORMAT!r})", path=path, field="format")
    model = cast(dict[str, Any], data).get("model")
    if not isinstance(model, str) or not model:
        raise HistoryFormatError("expected the provider:name the recording was made with", path=path, field="model")
    return model
