"""What report.html shows of one scenario, read from its folder: the data of one `<script type="application/json">`.

    {"entry":     the scenario's report.json entry (status, turns with prompt and instructions, checks, usage),
     "messages":  history.json's messages, each response with "usage" (from events.jsonl's message_end),
     "compaction": session.json's compaction record (what was summarized), or null,
     "subagents": [{"file", "spec", "run", "messages", "call_id"}]  (call_id: the tool call that made it, when known),
     "call_outcomes": {tool_call_id: outcome} from events.jsonl (deferred, not_run: what the history cannot say),
     "events":    the event log when the run streamed (it has message_update events), else null,
     "retries":   events.jsonl's request_retry events (a request the provider layer sent again, with its status),
     "files":     the folder's files: [{"path": relative to the report, "href": the same, each segment encoded}],
     "problems":  files that could not be read (the page says so instead of failing)}

Only the folder's JSON is read, never a live object, so a run, a merged folder and `agentrig report` show the same.
"""

from __future__ import annotations

import difflib
import os
import re
import urllib.parse
from collections import defaultdict, deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentrig.errors import AgentrigError
from agentrig.input_files import HISTORY_FILE_LIMIT, InputFileError, read_input_file
from agentrig.runtime.history.per_run import message_json_without_per_run_values
from agentrig.runtime.history.user_content import elide_base64_data
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.runfolder.jsonio import JSON_INPUT

__all__ = ["MAX_EVENTS", "canonical_diff", "canonical_history_text", "file_href", "scenario_payload"]

MAX_EVENTS = 3000
"""Events embedded per streamed scenario; the rest stay in events.jsonl (linked), so one long stream cannot bloat
the page."""

_SUBAGENT_FILE = re.compile(r"^(?P<spec>.+)\.run(?P<run>\d+)\.history\.json$")


def scenario_payload(
    run_dir: Path, entry: Mapping[str, Any], files_base: str, *, source: str | None = None
) -> dict[str, Any]:
    """The page's data for one report entry, read from `run_dir / source` (default: the entry's `output_dir`)."""
    relative = str(source or entry.get("output_dir") or f"scenarios/{entry['name']}")
    folder = run_dir / relative
    # One directory listing, from which every later read knows what exists: a stat per file would cost more
    # than reading the small ones (a 2,000-scenario page is written at the end of the run).
    names = _listing(folder)
    problems: list[str] = []
    if not names and entry.get("status") != "skipped" and not folder.is_dir():
        problems.append(f"{relative}/: no such folder (its conversation and files are not shown)")
    messages = _messages(_read_json(folder, "history.json", names, problems))
    events = list(_read_events(folder, names, problems))
    _attach_response_usage(messages, events)
    compaction = _compaction(folder, names, problems)
    subagents = _subagents(folder / "subagents", messages, problems) if "subagents/" in names else []
    streamed = any(event.get("type") == "message_update" for event in events)
    return {
        # Its `files` stays out: the page lists the folder itself (`files` below, with links), and a 5,000-scenario
        # page would carry every path twice.
        "entry": {key: value for key, value in entry.items() if key != "files"},
        "messages": messages,
        "compaction": compaction,
        "subagents": subagents,
        "call_outcomes": _call_outcomes(events),
        "events": events[:MAX_EVENTS] if streamed else None,
        "retries": [event for event in events if event.get("type") == "request_retry"][:MAX_EVENTS],
        "events_total": len(events),
        "files": _files(folder, names, f"{files_base}{relative}"),
        "problems": problems,
    }


def file_href(relative: str) -> str:
    """A relative path as a link: every segment percent-encoded, so no folder name (`javascript:alert(1)`, `a#b`,
    `?x`) can become a scheme, a fragment or a query; `..` stays `..`."""
    return "/".join(urllib.parse.quote(segment, safe="") for segment in relative.split("/"))


def _listing(folder: Path) -> set[str]:
    """The names in `folder` (sub-folders with a trailing slash), empty when it is missing."""
    try:
        with os.scandir(folder) as entries:
            return {entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name for entry in entries}
    except OSError:
        return set()


def _read_json(folder: Path, name: str, names: set[str], problems: list[str]) -> Any:
    if name not in names:
        return None
    try:
        return jsonio.read_json_file(folder / name)
    except AgentrigError as error:
        problems.append(f"{name}: {error.message}")
        return None


def _compaction(folder: Path, names: set[str], problems: list[str]) -> dict[str, Any] | None:
    """session.json's compaction record; the session (the whole history again) is parsed only when it has one."""
    if "session.json" not in names:
        return None
    try:
        data = read_input_file(folder / "session.json", limit=HISTORY_FILE_LIMIT, what=JSON_INPUT)
    except InputFileError as error:
        problems.append(f"session.json: {error.reason}")
        return None
    except OSError as error:
        problems.append(f"session.json: {error.strerror or error}")
        return None
    if b'"compaction"' not in data or b'"compaction": null' in data:
        return None
    try:
        record = jsonio.loads(data, source="session.json")
    except AgentrigError as error:
        problems.append(f"session.json: {error.message}")
        return None
    compaction = record.get("compaction") if isinstance(record, dict) else None
    return compaction if isinstance(compaction, dict) else None


def _messages(history: Any) -> list[dict[str, Any]]:
    """The messages of a history.json (the tagged document or a bare list), as plain dicts."""
    raw = history.get("messages") if isinstance(history, dict) else history
    return [dict(message) for message in raw if isinstance(message, dict)] if isinstance(raw, list) else []


def _read_events(folder: Path, names: set[str], problems: list[str]) -> Iterator[dict[str, Any]]:
    if "events.jsonl" not in names:
        return
    try:
        data = read_input_file(folder / "events.jsonl", limit=HISTORY_FILE_LIMIT, what="an events log")
    except InputFileError as error:
        problems.append(f"events.jsonl: {error.reason}")
        return
    except OSError as error:
        problems.append(f"events.jsonl: {error.strerror or error}")
        return
    lines = data.splitlines()
    try:  # one parse for the whole log: JSON Lines hold no raw newline inside a value
        parsed = jsonio.loads(b"[" + b",".join(line for line in lines if line.strip()) + b"]")
    except AgentrigError:
        parsed = None
    if isinstance(parsed, list):
        yield from (event for event in parsed if isinstance(event, dict))
        return
    for number, line in enumerate(lines, 1):  # a broken line: name it, keep the events before it
        try:
            event = jsonio.loads(line, source=f"events.jsonl:{number}") if line.strip() else None
        except AgentrigError as error:
            problems.append(error.message)
            return
        if isinstance(event, dict):
            yield event


def _message_key(message: Any) -> bytes:
    return jsonio.dumps({"parts": message.get("parts")} if isinstance(message, dict) else message)


def _attach_response_usage(messages: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
    """Give each response the usage of the message_end event that carried the same parts (in order of arrival):
    matched by content, not position, so histories that began with earlier messages line up too."""
    usages: defaultdict[bytes, deque[Any]] = defaultdict(deque)
    for event in events:
        if event.get("type") == "message_end" and event.get("usage") is not None:
            usages[_message_key(event.get("message"))].append(event["usage"])
    for message in messages:
        if message.get("kind") == "response":
            queue = usages.get(_message_key(message))
            if queue:
                message["usage"] = queue.popleft()


def _call_outcomes(events: list[dict[str, Any]]) -> dict[str, str]:
    return {
        str(event["tool_call_id"]): str(event.get("outcome"))
        for event in events
        if event.get("type") == "tool_execution_end" and event.get("tool_call_id")
    }


def _string_values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _string_values(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _string_values(inner)


def _calling_tool(prompt: str, messages: list[dict[str, Any]], taken: set[str]) -> str | None:
    """The tool call whose arguments the sub-agent's prompt quotes (the first one not yet given a run): how a
    delegating tool usually builds the prompt. None when no call's arguments appear in it."""
    for message in messages:
        for part in message.get("parts") or ():
            if part.get("part_kind") != "tool-call" or part.get("tool_call_id") in taken:
                continue
            texts = [text for text in _string_values(part.get("args")) if len(text.strip()) >= 4]
            if texts and any(text in prompt for text in texts):
                return str(part.get("tool_call_id"))
    return None


def _first_prompt(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message (of a user message with attachments, its text pieces)."""
    for message in messages:
        for part in message.get("parts") or ():
            content = part.get("content")
            if part.get("part_kind") == "text" and isinstance(content, str):
                return content
            if part.get("part_kind") == "user-content" and isinstance(content, list):
                return "\n".join(item for item in content if isinstance(item, str))
    return ""


def _subagents(folder: Path, messages: list[dict[str, Any]], problems: list[str]) -> list[dict[str, Any]]:
    names = _listing(folder)
    runs: list[dict[str, Any]] = []
    files = sorted((folder / name for name in names if name.endswith(".history.json")), key=_subagent_order)
    taken: set[str] = set()
    for path in files:
        run_messages = _messages(_read_json(folder, path.name, names, problems))
        match = _SUBAGENT_FILE.match(path.name)
        call_id = _calling_tool(_first_prompt(run_messages), messages, taken)
        if call_id:
            taken.add(call_id)
        runs.append(
            {
                "file": f"subagents/{path.name}",
                "spec": match.group("spec") if match else path.name,
                "run": int(match.group("run")) if match else None,
                "messages": run_messages,
                "call_id": call_id,
            }
        )
    return runs


def _subagent_order(path: Path) -> tuple[int, str]:
    match = _SUBAGENT_FILE.match(path.name)
    return (int(match.group("run")) if match else 0, path.name)


def _files(folder: Path, names: set[str], relative: str) -> list[dict[str, str]]:
    found = [name for name in names if not name.endswith("/")]
    for sub in (name for name in names if name.endswith("/")):
        found += [sub + inner for inner in _listing(folder / sub) if not inner.endswith("/")]
    return [{"path": f"{relative}/{name}", "href": file_href(f"{relative}/{name}")} for name in sorted(found)]


# --------------------------------------------------------------------------------------------
# the canonical diff of two runs' histories
# --------------------------------------------------------------------------------------------


def _without_run_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [message_json_without_per_run_values(message) for message in messages]


def canonical_history_text(path: Path) -> str | None:
    """A run's history.json as a golden file holds it (canonical, pretty, run ids dropped: they are random per
    run), or None when there is none or it cannot be read."""
    if not path.is_file():
        return None
    try:
        history = jsonio.read_json_file(path)
    except AgentrigError:
        return None
    document = {"format": "agentrig.history/1", "messages": _without_run_ids(_messages(history))}
    return jsonio.dumps(document, pretty=True).decode("utf-8")


def canonical_diff(baseline: str | None, candidate: str | None, *, baseline_label: str, candidate_label: str) -> str:
    """The unified diff of two canonical histories ("" when equal or both missing)."""
    if baseline == candidate:
        return ""
    lines = difflib.unified_diff(  # an attachment's base64 shown by its size and hash, one line
        elide_base64_data(baseline or "").splitlines(keepends=True),
        elide_base64_data(candidate or "").splitlines(keepends=True),
        fromfile=baseline_label if baseline is not None else "/dev/null",
        tofile=candidate_label if candidate is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
