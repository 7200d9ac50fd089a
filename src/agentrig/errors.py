"""The one error module: every error agentrig raises on purpose, and the exit code it maps to.

    AgentrigError                      .message, .exit_code
    ├── UsageError           (2)       bad flag, bad argument combination
    ├── InputError           (2)       a file agentrig reads is wrong: bad YAML, bad field, corrupt session
    │   ├── ScenarioError              scenario files (names file, line, column and field path)
    │   │   └── MissingExtraError      a valid scenario needs an extra that is not installed (also Unsupported)
    │   └── HistoryFormatError         history / session / dump files (names the file and what is wrong)
    ├── ProviderError        (3)       a model provider failed after retries (auth, rate limit, server, connection)
    │   └── ContextOverflowError       the provider said the context window is exceeded
    ├── InfrastructureError  (3)       an environment could not be built, a subprocess failed
    ├── Unsupported          (3)       a valid scenario this environment cannot run (run error kind `unsupported`)
    │   └── OutputWriteError           a file could not be written: the disk is full, a quota, an I/O error
    └── Interrupted          (130)     Ctrl-C / SIGINT (143 for a run stopped by SIGTERM: EXIT_TERMINATED)

Scenario *failures* are not errors: they are results (exit code 1), reported, never raised.
This module imports nothing outside the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PROVIDER = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
"""128 + SIGTERM, as a shell reports a process SIGTERM killed: `agentrig run` stopped by SIGTERM, reports written."""


class AgentrigError(Exception):
    """Base of every error agentrig raises on purpose; carries a one-line message and an exit code."""

    exit_code: int = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(AgentrigError):
    """A bad flag or a bad combination of arguments."""

    exit_code = EXIT_USAGE


class InputError(AgentrigError):
    """A file agentrig was asked to read is missing, malformed or of the wrong kind."""

    exit_code = EXIT_USAGE


def printable_path(path: str | Path) -> str:
    """`path` as text any output can hold: a byte of a non-UTF-8 file name (which Python keeps as a lone surrogate,
    and no terminal, JSON or XML file can write) is shown as `\\xe9`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _located(path: str | Path | None, line: int | None, column: int | None, field: str | None, message: str) -> str:
    where = printable_path(path) if path is not None else "<input>"
    if line is not None:
        where += f":{line}"
        if column is not None:
            where += f":{column}"
    if field:
        where += f": {field}"
    return f"{where}: {message}"


class ScenarioError(InputError):
    """A scenario file is invalid; the message names file, line, column and the field path."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(_located(path, line, column, field, message))
        self.reason = message
        self.path = path
        self.line = line
        self.column = column
        self.field = field


class Unsupported(AgentrigError):
    """A valid scenario this environment cannot run: the engine does not express a feature it uses (`--engine
    tinyagent`), or an extra it requires is not installed. A run reports it as the scenario's error of kind
    `unsupported` (exit code 3), never as the agent's error: nothing of the user's raised."""

    exit_code = EXIT_PROVIDER


class MissingExtraError(ScenarioError, Unsupported):
    """A scenario's `requires:` (or a UI turn's protocol) names an extra that is not installed; located at that line.
    A run skips the scenario with `requirements` as the reason, unless it was asked to require the extras
    (`--require-extras`): then it is the scenario's error."""

    exit_code = EXIT_PROVIDER

    def __init__(
        self,
        message: str,
        *,
        requirements: tuple[str, ...],
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, path=path, line=line, field=field)
        self.requirements = requirements
        """Each extra the scenario needs and this environment lacks, as `requires EXTRA: INSTALL COMMAND`."""


class HistoryFormatError(InputError):
    """A history, session or pydantic-ai dump file cannot be read; the file is never modified."""

    def __init__(self, message: str, *, path: str | Path | None = None, field: str | None = None) -> None:
        super().__init__(_located(path, None, None, field, message))
        self.reason = message
        self.path = path
        self.field = field


class ProviderError(AgentrigError):
    """A model provider failed after retries. The message names provider and status, never a key."""

    exit_code = EXIT_PROVIDER


class ContextOverflowError(ProviderError):
    """The provider answered that the request exceeds the model's context window."""


class InfrastructureError(AgentrigError):
    """Something around the run failed: an environment, a subprocess, a file system write."""

    exit_code = EXIT_PROVIDER


class OutputWriteError(InfrastructureError):
    """A file could not be written for want of space (disk full, quota exceeded) or an I/O error. The message
    names the file and the system's reason; an atomic write leaves what the file held before unchanged."""

    def __init__(self, message: str, *, path: str | Path | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class Interrupted(AgentrigError):
    """The user interrupted the run (Ctrl-C)."""

    exit_code = EXIT_INTERRUPTED
