"""Scripts for the sub-agents a source run called, from the runs `agentrig run` recorded beside it.

A run's scenario folder holds `subagents/<module.attribute>.run<N>.history.json`: each run of a scripted
sub-agent, its history as the sub-agent's model last saw it plus the answer. A scenario scaffolded with the
user's agent then scripts each sub-agent (`agents: {module:attribute: {model: [...]}}`) with the responses of
its runs, in order: the tool that delegates to it runs for real, and the sub-agent answers as it did.
The label's module and attribute are told apart by importing (`resolve_label`); a label that names no agent
refuses the source.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentrig.errors import HistoryFormatError
from agentrig.runtime.history.canonical import Message, TextPart
from agentrig.runtime.history.redaction import redact_json
from agentrig.runtime.history.sessions import load_history_file
from agentrig.runtime.history.wire import history_from_json, history_to_json
from agentrig.runtime.scaffold.turns import Unreplayable, Walk, response_step

__all__ = ["SUBAGENTS_FOLDER", "subagent_scripts"]

SUBAGENTS_FOLDER = "subagents"
_RUN_FILE = re.compile(r"^(?P<label>.+)\.run(?P<number>[0-9]+)\.history\.json$")


def subagent_scripts(source: Path, resolve_label: Callable[[str], str | None]) -> dict[str, list[dict[str, Any]]]:
    """The scripts of the sub-agents recorded beside `source` (none when there is no `subagents/` folder)."""
    folder = source.parent / SUBAGENTS_FOLDER
    if not folder.is_dir():
        return {}
    runs: dict[str, list[tuple[int, Path]]] = defaultdict(list)
    for path in sorted(folder.iterdir()):
        match = _RUN_FILE.match(path.name)
        if match is not None and path.is_file():
            runs[match["label"]].append((int(match["number"]), path))
    scripts: dict[str, list[dict[str, Any]]] = {}
    for label, files in runs.items():
        spec = resolve_label(label)
        if spec is None:
            raise Unreplayable(
                source,
                -1,
                f"{SUBAGENTS_FOLDER}/{files[0][1].name}: {label!r} names no agent that imports",
                hint="make the sub-agent's module importable from the scenario's folder or the current one (the"
                " label is its module:attribute with ':' written '.'), or remove its runs from the folder",
            )
        steps: list[dict[str, Any]] = []
        for _, path in sorted(files):
            steps.extend(_steps(path))
        if steps:
            scripts[spec] = steps
    return scripts


def _steps(path: Path) -> list[dict[str, Any]]:
    """The responses of one run, after its last user message (earlier ones came in as history)."""
    try:
        messages = load_history_file(path)
    except HistoryFormatError as error:
        raise Unreplayable(
            path, -1, error.reason, hint="remove the file from the folder, or replace it with the run's history"
        ) from None
    redacted = history_from_json(redact_json(history_to_json(messages)))
    start = max(
        (i for i, m in enumerate(redacted) if m.kind == "request" and any(isinstance(p, TextPart) for p in m.parts)),
        default=0,
    )
    walk = Walk(path=path, own_agent=True, host_tools=None)
    return [
        response_step(walk, index, message, None)
        for index, message in enumerate(redacted)
        if index > start and _is_response(message)
    ]


def _is_response(message: Message) -> bool:
    return message.kind == "response"
