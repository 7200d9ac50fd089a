"""The files a scenario names, checked when it is loaded: they must exist (a golden file only warns: `agentrig run
--update-golden` writes it), and an attachment's file must be a regular file of at most `MAX_ATTACHMENT_BYTES`
inside the scenario file's folder (symbolic links followed), unless the attachment says `outside: true`; a path
outside is refused as outside before anything there is looked at. When a turn sends the file, `read_attachment` makes
the same checks again and reads the file through the descriptor they were made on (docs/security.md, Attachments).
"""

from __future__ import annotations

import errno
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

__all__ = [
    "AttachmentProblem",
    "ScenarioWarning",
    "attachment_problem",
    "check_referenced_files",
    "read_attachment",
    "scenario_attachments",
]


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


class AttachmentProblem(Exception):
    """Why an attachment's file cannot be sent: the text names the file (the caller adds the line and field)."""


def attachment_problem(attachment: Attachment, base_dir: Path) -> str | None:
    """Why the attachment's file cannot be sent (None when it can, or when it names no file)."""
    if attachment.file is None:
        return None
    try:
        _checked_path(attachment, base_dir)
    except AttachmentProblem as problem:
        return str(problem)
    return None


def read_attachment(attachment: Attachment, base_dir: Path) -> bytes:
    """The bytes of the attachment's file, checked as `attachment_problem` checks it and read through the one
    descriptor the checks were made on: a file replaced by a link out of the folder after its check (at load time or
    a moment ago) is refused, not read through the link (`AttachmentProblem`), and no more than
    `MAX_ATTACHMENT_BYTES` is read whatever the file grew to."""
    target, resolved = _checked_path(attachment, base_dir)
    # The resolved path has no link in it; O_NOFOLLOW refuses its last part if it became one since, and O_NONBLOCK
    # keeps a FIFO swapped in from blocking the open.
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(resolved, flags)
    except OSError as error:
        raise AttachmentProblem(f"cannot read {target}: {_changed_or(error)}") from None
    with os.fdopen(descriptor, "rb") as handle:
        opened = _opened_path(descriptor)
        if opened is not None and not attachment.outside and not _inside(opened, base_dir):
            # A folder on the way was replaced by a link since the path was resolved (Linux names what was opened).
            raise AttachmentProblem(_outside_message(target, base_dir))
        _check_kind_and_size(target, os.fstat(descriptor))
        data = handle.read(MAX_ATTACHMENT_BYTES + 1)
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise AttachmentProblem(f"{target} is more than an attachment may be ({MAX_ATTACHMENT_BYTES} bytes)")
    return data


def _checked_path(attachment: Attachment, base_dir: Path) -> tuple[Path, Path]:
    """The file as named and as resolved (links followed), once every check passed; else `AttachmentProblem`."""
    target = base_dir / (attachment.file or "")
    # Inside the folder first, before anything at the path is looked at: a path outside is refused as outside
    # whatever is there (a file, nothing, a device, a folder it may not read), so the message names the rule and a
    # scenario cannot probe the machine by its errors. `resolve()` follows every link that exists.
    resolved = target.resolve()
    if not attachment.outside and not _inside(resolved, base_dir):
        raise AttachmentProblem(_outside_message(target, base_dir))
    try:
        info = resolved.stat()
    except OSError as error:
        reason = "no such file" if isinstance(error, FileNotFoundError) else (error.strerror or str(error))
        raise AttachmentProblem(f"cannot read {target}: {reason}") from None
    _check_kind_and_size(target, info)
    return target, resolved


def _check_kind_and_size(target: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise AttachmentProblem(f"{target} is not a regular file")
    if info.st_size > MAX_ATTACHMENT_BYTES:
        raise AttachmentProblem(
            f"{target} is {info.st_size} bytes, more than an attachment may be ({MAX_ATTACHMENT_BYTES})"
        )


def _outside_message(target: Path, base_dir: Path) -> str:
    return (
        f"{target} is outside the scenario's folder {base_dir.resolve()}; say `outside: true` to send a file"
        " from elsewhere"
    )


def _changed_or(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "it became a symbolic link after it was checked"
    return "no such file" if isinstance(error, FileNotFoundError) else (error.strerror or str(error))


def _opened_path(descriptor: int) -> Path | None:
    """The path the kernel opened for `descriptor` (Linux's /proc), None where the system does not say."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:
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
