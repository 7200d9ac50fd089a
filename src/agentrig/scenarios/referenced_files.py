"""The files a scenario names, checked when it is loaded: they must exist (a golden file only warns: `agentrig run
--update-golden` writes it), and an attachment's file must be a regular file of at most `MAX_ATTACHMENT_BYTES`
inside the scenario file's folder (symbolic links followed), unless the attachment says `outside: true`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import Node

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_source import PathElement, find_node, format_field_path, node_position
from agentrig.scenarios.content_model import MAX_ATTACHMENT_BYTES, Attachment
from agentrig.scenarios.model import Scenario

__all__ = ["ScenarioWarning", "attachment_problem", "check_referenced_files", "scenario_attachments"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioWarning:
    """Something worth knowing that does not make the file invalid (e.g. a golden file not written yet)."""

    message: str
    """What is wrong, without the location."""
    path: Path
    """The scenario file."""
    line: int | None = None
    """1-based line."""
    column: int | None = None
    """1-based column."""
    field: str | None = None
    """The field path, e.g. `expect.golden`."""

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.message}"


def check_referenced_files(
    scenario: Scenario, node: Node, path: Path, prefix: tuple[PathElement, ...]
) -> tuple[list[ScenarioError], list[ScenarioWarning]]:
    required: dict[tuple[PathElement, ...], str | None] = {
        ("system_prompt_file",): scenario.system_prompt_file,
        ("context_file",): scenario.context_file,
        ("initial_history",): scenario.initial_history,
    }
    for index, turn in enumerate(scenario.turns):  # a UI turn's request body, read from a file
        if turn.ui is not None and turn.ui.input_file is not None:
            required["turns", index, "ui", "input_file"] = turn.ui.input_file
    errors: list[ScenarioError] = []
    for field_path, name in required.items():
        if name is not None and not (path.parent / name).is_file():
            line, column = node_position(find_node(node, field_path).node)
            errors.append(
                ScenarioError(
                    f"file not found: {path.parent / name}",
                    path=path,
                    line=line,
                    column=column,
                    field=format_field_path((*prefix, *field_path)),
                )
            )
    errors.extend(_attachment_errors(scenario, node, path, prefix))
    warnings: list[ScenarioWarning] = []
    golden = scenario.expect.golden
    if golden is not None and (path.parent / golden).is_dir():
        # Neither compared nor written (`--update-golden`): a file error now, not a traceback mid-run.
        line, column = node_position(find_node(node, ("expect", "golden")).node)
        errors.append(
            ScenarioError(
                f"{path.parent / golden} is a directory; name the golden file",
                path=path,
                line=line,
                column=column,
                field=format_field_path((*prefix, "expect", "golden")),
            )
        )
    elif golden is not None and not (path.parent / golden).is_file():
        line, column = node_position(find_node(node, ("expect", "golden")).node)
        warnings.append(
            ScenarioWarning(
                message=f"golden file not found: {path.parent / golden} (`agentrig run --update-golden` writes it)",
                path=path,
                line=line,
                column=column,
                field=format_field_path((*prefix, "expect", "golden")),
            )
        )
    return errors, warnings


def scenario_attachments(scenario: Scenario) -> Iterator[tuple[tuple[PathElement, ...], Attachment]]:
    """Every attachment the scenario names, with its field path: in the users' messages and in the steps'
    `expect_input` (the sub-agents' scripts included)."""
    for turn_index, turn in enumerate(scenario.turns):
        if isinstance(turn.user, tuple):
            for item_index, item in enumerate(turn.user):
                if isinstance(item, Attachment):
                    yield ("turns", turn_index, "user", item_index), item
        for step_index, step in enumerate(turn.model):
            where: tuple[PathElement, ...] = ("turns", turn_index, "model", step_index)
            yield from _expected(where, step.expect_input)
    for spec, script in scenario.agents.items():
        for step_index, step in enumerate(script.model):
            yield from _expected(("agents", spec, "model", step_index), step.expect_input)


def _expected(where: tuple[PathElement, ...], expect: object) -> Iterator[tuple[tuple[PathElement, ...], Attachment]]:
    attachments = getattr(expect, "attachments", None) or ()
    for index, attachment in enumerate(attachments):
        yield (*where, "expect_input", "attachments", index), attachment


def attachment_problem(attachment: Attachment, base_dir: Path) -> str | None:
    """Why the attachment's file cannot be sent (None when it can, or when it names no file)."""
    if attachment.file is None:
        return None
    target = base_dir / attachment.file
    try:
        resolved = target.resolve(strict=True)
        info = resolved.stat()
    except OSError as error:
        reason = "no such file" if isinstance(error, FileNotFoundError) else (error.strerror or str(error))
        return f"cannot read {target}: {reason}"
    if not stat.S_ISREG(info.st_mode):
        return f"{target} is not a regular file"
    if info.st_size > MAX_ATTACHMENT_BYTES:
        return f"{target} is {info.st_size} bytes, more than an attachment may be ({MAX_ATTACHMENT_BYTES})"
    if not attachment.outside and not _inside(resolved, base_dir):
        return (
            f"{target} is outside the scenario's folder {base_dir.resolve()}; say `outside: true` to send a file"
            " from elsewhere"
        )
    return None


def _inside(resolved: Path, base_dir: Path) -> bool:
    folder = base_dir.resolve()
    return os.path.commonpath([resolved, folder]) == str(folder)


def _attachment_errors(
    scenario: Scenario, node: Node, path: Path, prefix: tuple[PathElement, ...]
) -> list[ScenarioError]:
    errors: list[ScenarioError] = []
    for field_path, attachment in scenario_attachments(scenario):
        problem = attachment_problem(attachment, path.parent)
        if problem is not None:
            line, column = node_position(find_node(node, (*field_path, "file")).node)
            errors.append(
                ScenarioError(
                    problem,
                    path=path,
                    line=line,
                    column=column,
                    field=format_field_path((*prefix, *field_path, "file")),
                )
            )
    return errors
