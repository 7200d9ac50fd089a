"""Issue 42 item 2: a scaffolded scenario never fails its own expectations on a faithful replay. Every scenario of
the repository's suite (`scenarios/`) is run once, each of its run folder's three files (`session.json`,
`history.json`, `pydantic_ai_dump.json`) is scaffolded without `--agent` (one batch per file kind), the scaffolded
folder is replayed by one `agentrig run`, and `agentrig diff -q` compares each replay's `history.json` with its
source run's. What scaffold refuses, what replays but cannot hold the source's history, and what replays it but
for a text the source did not record (named by `agentrig diff`), is listed below with the reason: a new refusal,
difference or gap fails the test, and so does one that went away (shorten the list)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentrig.cli import main
from tests.scaffold.replay import REPO

FORMS = ("session.json", "history.json", "pydantic_ai_dump.json")
HISTORY = "history.json"

_EDIT = "(agentrig convert SOURCE -o FILE.json writes the history to edit)"
_AGENT = "scaffold with --agent module:attribute (your agent's real tools and output type replay it)"
_STARTS_WITH_RESULTS = (
    "messages[0]: tool results before any model response; a turn starts with the user: drop the messages before"
    f" the first user message {_EDIT}"
)
_NO_USER = (
    "messages[0]: the history holds no user message: nothing to replay: scaffold a history that holds the user's"
    " message (a run folder's session.json or history.json)"
)
_STARTS_WITH_RESPONSE = (
    "messages[0]: the history starts with a model response; a turn starts with the user: scaffold the run's"
    f" session.json or history.json, which start with the user, or add the user's message before it {_EDIT}"
)
_EMPTY = (
    "messages[1]: an empty response (no parts, or blank text only); agentrig's loop answers one with an"
    f" empty-response intervention, so a replay cannot end the same way: drop the empty response {_EDIT}"
)
_GHOST = f"messages[2]: a result for 'ghost_1', which no call of the response before awaits: drop the result {_EDIT}"
_NOT_AN_OBJECT = (
    "messages[2]: call 'call_2' (bash) has arguments that are not a JSON object, which pydantic-ai answers with"
    f" validation errors, but the source holds a message: {_AGENT}, or make its arguments a JSON object {_EDIT}"
)
_NATIVE_REJECTED = (
    "the output's schema rejected an output with validation errors that a schema inferred from the outputs does"
    f" not reproduce; the source records no schema: {_AGENT}"
)


def _went_on(call: str, tool: str) -> str:
    return (
        f"messages[2]: call '{call}' ({tool}) ended 'interrupted' and the conversation went on without"
        " `[INTERRUPTED]` (pydantic-ai closed it when a cancelled run was resumed); agentrig's loop ends a cancelled"
        " turn with `[INTERRUPTED]`, so a replay cannot hold this history: drop that turn's messages, or record it"
        " as agentrig's loop records a cancelled turn: the request that closed the call `state: interrupted`, then"
        f" the response `[INTERRUPTED]` {_EDIT}"
    )


_AGENTRIG_HISTORY_REFUSALS = {
    # These scenarios resume from a stored history that is no conversation agentrig's loop makes.
    "empty-response-intervention": _STARTS_WITH_RESULTS,
    "empty-response-repeated": _STARTS_WITH_RESULTS,
    "history-cleanup-continuation": (
        f"messages[0]: the request holds 2 user texts; a scenario turn has one: join them into one text {_EDIT}"
    ),
    "history-cleanup-public": _went_on("dangling_1", "lookup"),
    "steering-pending-after-cancel": _went_on("notify_1", "notify"),
    "ui-agui-tool-results": (
        "messages[2]: the results answer ['tc_1', 'tc_2', 'tc_2'] but the calls were ['tc_1', 'tc_2']; a run"
        f" answers each call once, in order: keep one result per call, in the order of the calls {_EDIT}"
    ),
    # A tool call whose arguments are not JSON, answered with a message: pydantic-ai never lets it reach a tool.
    "history-roundtrip": _NOT_AN_OBJECT,
    # The native output's non-object schema rejected a text answer ({"response": -3}): no schema is inferred for it.
    "structured-output-native": _NATIVE_REJECTED,
    # Only UI turns (AG-UI's adapter), no user message.
    "ui-agui-refusals": _NO_USER,
}

REFUSED: dict[str, dict[str, str]] = {
    "session.json": _AGENTRIG_HISTORY_REFUSALS,
    "history.json": _AGENTRIG_HISTORY_REFUSALS,
    "pydantic_ai_dump.json": {
        # The dump keeps the empty response agentrig's loop answered with an intervention it does not keep.
        "empty-response-intervention": _EMPTY,
        "empty-response-repeated": _EMPTY,
        # The dump holds the stored history before agentrig's cleanup: a result no call awaits.
        "history-cleanup-continuation": _GHOST,
        "history-cleanup-public": _GHOST,
        "history-roundtrip": _NOT_AN_OBJECT,
        "structured-output-native": _NATIVE_REJECTED,
        "ui-agui-refusals": _NO_USER,
        # A UI adapter's run starts from the frontend's messages: the dump begins with a response.
        "ui-agui-frontend-tool": _STARTS_WITH_RESPONSE,
        "ui-agui-tool-results": _STARTS_WITH_RESPONSE,
        "ui-vercel-tool-round-trip": _STARTS_WITH_RESPONSE,
    },
}

_DUMP_DIFFERS = {
    # A pydantic-ai dump holds pydantic-ai's messages, not what agentrig's loop wrote of a turn that went wrong
    # or of the history it prepared: the replay holds what scaffold could know (docs/scaffold.md), the source more.
    "abort-before-answer": "the dump keeps no `[INTERRUPTED]` of a turn cancelled before the model answered",
    "abort-partial-text": "the dump keeps no `[INTERRUPTED] partial` text of a turn cancelled mid-answer",
    "cancel-mid-response": "the dump keeps no `[INTERRUPTED] partial` text of a turn cancelled mid-answer",
    "steering-pending-after-cancel": "the dump keeps no `interrupted` closing of the call a cancellation cut",
    "resume-stored-history": "the dump holds the stored history before agentrig's cleanup (a dangling call)",
    "prune-old-tool-outputs": "the dump holds the tool output before agentrig's pruning",
    "history-processor-persisted": "the dump holds the messages before the history processor dropped them",
    # Its dump is the same conversation as abort-partial-text's (kept once): neither keeps the cut answer.
    "incomplete-response": "the dump keeps no `[INTERRUPTED] partial` text of the answer the provider cut",
}

DIFFERS: dict[str, dict[str, str]] = {
    "session.json": {},
    "history.json": {},
    "pydantic_ai_dump.json": {
        **_DUMP_DIFFERS,
        # The dump leaves the calls a limit stopped open, as a cancellation does: scripted as one (`[INTERRUPTED]`).
        "usage-limit": "the dump cannot tell a usage limit from a cancellation",
    },
}


_GAP = "1 tool error text not recorded in the source (a pydantic-ai dump keeps none): set aside"

GAPS: dict[str, dict[str, str]] = {
    "session.json": {},
    "history.json": {},
    # The dump does not record a failed tool's error: the replay holds scaffold's placeholder where the source holds
    # the text, which `agentrig diff` sets aside and names; every other byte of the history is the source's.
    "pydantic_ai_dump.json": {"tool-failure": _GAP},
}
"""Replays that hold their source's history but for what the source did not record, as `agentrig diff` names it."""


def _cli(*args: str) -> tuple[int, str]:
    """`agentrig ARGS` in-process (no interpreter start-up per command): the exit code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, out.getvalue()


@dataclass(frozen=True, slots=True)
class Outcome:
    """One file kind of every scenario: scaffolded, replayed, compared."""

    refused: dict[str, str]
    """Scenario name -> scaffold's reason."""
    replay_code: int
    replay_failed: list[str]
    differs: set[str]
    gaps: dict[str, str]
    """Scenario name -> what `agentrig diff` set aside to find the replay identical."""
    replayed: int
    """Sources scaffolded or kept as a duplicate of one scaffolded."""
    total: int


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`agentrig run scenarios/ --out DIR`, once: the run folder every file kind is scaffolded from."""
    out = tmp_path_factory.mktemp("every") / "out"
    code, stdout = _cli("run", str(REPO / "scenarios"), "--out", str(out))
    assert code == 0, stdout
    return out / "scenarios"


@pytest.fixture(scope="module")
def outcomes(sources: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    root = tmp_path_factory.mktemp("scaffolded")
    names = sorted(path.name for path in sources.iterdir())
    results: dict[str, Outcome] = {}
    for form in FORMS:
        suite, replay = root / form / "suite", root / form / "replay"
        _, table = _cli("scaffold", *(str(sources / name / form) for name in names), "-o", str(suite))
        refused: dict[str, str] = {}
        replayed_by: dict[str, str] = {}  # source scenario -> the scenario that replays it (a duplicate's twin)
        for line in table.splitlines()[1:-1]:
            path, result = line.split(None, 1)
            name = Path(path).parent.name
            if result.startswith("refused: "):
                refused[name] = result.removeprefix(f"refused: {path}: ")
            elif result.startswith("duplicate: the same conversation as "):
                replayed_by[name] = result.removeprefix("duplicate: the same conversation as ")
            else:
                replayed_by[name] = Path(result.removeprefix("scaffolded ")).stem
        code, report = _cli("run", str(suite), "--out", str(replay))
        failed = [line.split()[1] for line in report.splitlines() if line.startswith("FAIL ")]
        compared = {
            name: _cli("diff", str(replay / "scenarios" / twin / HISTORY), str(sources / name / HISTORY))
            for name, twin in replayed_by.items()
        }
        differs = {name for name, (code, _) in compared.items() if code}
        gaps = {
            name: text.splitlines()[-1]
            for name, (code, text) in compared.items()
            if not code and text.splitlines()[-1] != "identical"
        }
        results[form] = Outcome(refused, code, failed, differs, gaps, len(replayed_by), len(names))
    return results


@pytest.mark.parametrize("form", FORMS)
def test_every_scaffolded_scenario_passes_its_own_replay(outcomes: dict[str, Outcome], form: str) -> None:
    outcome = outcomes[form]
    assert (outcome.replay_code, outcome.replay_failed) == (0, [])
    assert outcome.replayed + len(outcome.refused) == outcome.total


@pytest.mark.parametrize("form", FORMS)
def test_scaffold_refuses_only_the_listed_sources_for_the_listed_reasons(
    outcomes: dict[str, Outcome], form: str
) -> None:
    assert outcomes[form].refused == REFUSED[form]


@pytest.mark.parametrize("form", FORMS)
def test_every_replay_holds_its_source_history_but_the_listed(outcomes: dict[str, Outcome], form: str) -> None:
    assert outcomes[form].differs == set(DIFFERS[form])


@pytest.mark.parametrize("form", FORMS)
def test_a_replay_identical_but_for_what_its_source_did_not_record_names_the_gap(
    outcomes: dict[str, Outcome], form: str
) -> None:
    assert outcomes[form].gaps == GAPS[form]
