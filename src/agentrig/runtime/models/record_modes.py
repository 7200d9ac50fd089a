"""Which recordings a run reads and writes: pytest-recording's (vcrpy's) record modes, decided before the run.

| mode | a scenario with a recording | a scenario without one |
|---|---|---|
| `none` | replayed; a request it does not hold fails (`replay_mismatch`) | error: no recording |
| `once` | replayed, as `none` | recorded from the live model |
| `new_episodes` | replayed while the requests match; from the first new one on, live and appended | recorded |
| `all` | recorded again from the live model (the old file is replaced) | recorded |

`--record DIR` alone is `all`, `--replay DIR` alone is `none` (no `--model`: the recording names its model). A
recording names the model it was made with, and a run under another `--model` is refused before it starts, with
both names. Only the modes that can reach the provider build the live model (and need its key): a replay needs none.

Framework-free: the runner decides all this before pydantic-ai is imported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentrig.errors import UsageError
from agentrig.runtime.history.recordings import recorded_model

__all__ = [
    "DEFAULT_RECORDINGS_DIR",
    "RECORD_MODES",
    "RecordSetup",
    "check_recorded_models",
    "needs_live_model",
    "record_setup",
    "recording_path",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")
"""pytest-recording's record modes, with its meanings."""
MODE_ALIASES = {"rewrite": "all"}
"""Older names: the pytest plugin's `--agentrig-record-mode rewrite` (pytest-recording's name for `all`)."""
DEFAULT_RECORDINGS_DIR = Path("recordings")
"""Where `--record-mode` keeps recordings when neither `--record DIR` nor `--replay DIR` names a directory."""


@dataclass(frozen=True, slots=True)
class RecordSetup:
    """A run's record mode and the directory of its recordings (one `<scenario>.json` per scenario)."""

    mode: str
    directory: Path

    @property
    def replays_only(self) -> bool:
        """Never reaches the provider: no live model, no key."""
        return self.mode == "none"


def recording_path(directory: str | Path, scenario: str) -> Path:
    """Where the recording of `scenario` lives in `directory`."""
    return Path(directory) / f"{scenario}.json"


def record_setup(
    *, mode: str | None, record_dir: Path | None, replay_dir: Path | None, model: str | None
) -> RecordSetup | None:
    """The run's record mode from its flags (None: no recordings), or a `UsageError` in one line."""
    if record_dir is not None and replay_dir is not None:
        raise UsageError("--record and --replay cannot be used together")
    if mode is None:
        if replay_dir is not None:
            return RecordSetup("none", replay_dir)
        if record_dir is not None:
            if model is None:
                raise UsageError("--record needs --model: the real model whose answers are recorded")
            return RecordSetup("all", record_dir)
        return None
    chosen = MODE_ALIASES.get(mode, mode)
    if chosen not in RECORD_MODES:
        raise UsageError(f"--record-mode {mode}: expected one of {', '.join(RECORD_MODES)}")
    if model is None:
        raise UsageError(
            f"--record-mode {mode} needs --model: the model the recordings are made with (and checked against)"
        )
    if replay_dir is not None and chosen != "none":
        raise UsageError(f"--replay DIR only replays; to record with --record-mode {mode} use --record DIR")
    return RecordSetup(chosen, record_dir or replay_dir or DEFAULT_RECORDINGS_DIR)


def needs_live_model(setup: RecordSetup | None, scenarios: Iterable[str]) -> bool:
    """Whether a run with `--model` may send a request to the provider (and so needs the model, and its key)."""
    if setup is None:
        return True
    if setup.mode == "none":
        return False
    if setup.mode == "once":
        return any(not recording_path(setup.directory, name).is_file() for name in scenarios)
    return True


def check_recorded_models(setup: RecordSetup | None, model: str | None, scenarios: Iterable[str]) -> None:
    """A `UsageError` naming both models when a recording the run would replay was made with another model."""
    if setup is None or model is None or setup.mode == "all":
        return
    for name in scenarios:
        path = recording_path(setup.directory, name)
        recorded = recorded_model(path)
        if recorded is not None and recorded != model:
            raise UsageError(
                f"{path}: recorded with {recorded}, but this run's --model is {model}; replay it with --model "
                f"{recorded}, or record {model} anew with --record-mode all"
            )
