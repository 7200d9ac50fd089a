"""A key a provider splits across stream deltas is redacted as in the joined text: on the terminal
(`prompt --stream`), in `events.jsonl` (`run --stream`), and by `StreamRedactor` itself at every split."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.runtime.history.events import read_events
from agentrig.runtime.history.redaction import REDACTED, StreamRedactor, redact, refresh_secrets
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, Reply

pytestmark = pytest.mark.providers

APIS = ("openai", "anthropic")

# A key of a known shape, and the value of a key variable that has no shape redaction could recognise.
SHAPED_KEY = "sk-proj-AbCdEf0123456789"
ENV_SECRET = "loopback-deploy-secret-4242"
ANSWER = f"Your key is {SHAPED_KEY} and the token is {ENV_SECRET} today."
# Split as providers split: inside both keys, so no delta holds a whole one.
DELTAS = ("Your key is sk-pr", "oj-AbCdEf01", "23456789 and the tok", "en is loopback-dep", "loy-secret-4242 today.")
FRAGMENTS = ("AbCdEf", "23456789", "loopback-dep", "loy-secret", "4242")


@pytest.fixture(autouse=True)
def env_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    refresh_secrets()


def _model(server: LoopbackServer, api: str) -> list[str]:
    if api == "openai":
        return ["--model", "openai:gpt-4o", "--base-url", server.openai_base_url]
    return ["--model", "anthropic:claude-loopback-test", "--base-url", server.anthropic_base_url]


@pytest.mark.parametrize("api", APIS)
def test_prompt_stream_prints_no_key_a_provider_split_across_deltas(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SHAPED_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SHAPED_KEY)
    server = loopback([Reply(text=ANSWER, text_deltas=DELTAS), Reply(text=ANSWER)])

    code, streamed, err = run_main(capsys, "prompt", "Echo my key.", "--stream", *_model(server, api))
    _, plain, _ = run_main(capsys, "prompt", "Echo my key.", *_model(server, api))

    assert (code, err) == (0, "")
    assert streamed == plain == f"Your key is {REDACTED} and the token is {REDACTED} today.\n"
    assert not [fragment for fragment in FRAGMENTS if fragment in streamed]


@pytest.mark.parametrize("api", APIS)
def test_run_stream_writes_no_fragment_of_a_split_key_to_events_jsonl(
    api: str, loopback: ServerFactory, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "echo.yaml"
    scenario.write_text("name: echo\nturns:\n  - user: Echo my key.\n")
    server = loopback([Reply(text=ANSWER, text_deltas=DELTAS)])
    out_dir = tmp_path / "out"

    code, out, _ = run_main(capsys, "run", str(scenario), "--stream", "--out", str(out_dir), *_model(server, api))

    assert code == 0, out
    written = (out_dir / "scenarios" / "echo" / "events.jsonl").read_text()
    assert not [fragment for fragment in FRAGMENTS if fragment in written]
    events = read_events(out_dir / "scenarios" / "echo" / "events.jsonl")
    deltas = [e.get("delta") for e in events if e.type == "message_update" and e.get("part_kind") == "text"]
    assert len(deltas) == len(DELTAS)  # one event per delta the provider sent, as before
    assert "".join(deltas) == f"Your key is {REDACTED} and the token is {REDACTED} today."


TEXTS = (
    ANSWER,
    "Authorization: Bearer abc.def-ghi_123 was sent",
    'config {"api_key" :  "hunter2hunter2", "x": 1}',
    "api-key=abcdefgh12345, next",
    "no key here at all, just words",
)


@pytest.mark.parametrize("text", TEXTS)
def test_every_split_of_a_text_redacts_as_the_joined_text(text: str) -> None:
    expected = redact(text)
    for cut in range(1, len(text)):
        for second in (cut + 1, cut + 5, len(text)):
            redactor = StreamRedactor()
            pieces = (text[:cut], text[cut:second], text[second:])
            joined = "".join(redactor.feed(piece) for piece in pieces) + redactor.finish()
            assert joined == expected, pieces


def test_one_character_at_a_time_and_what_is_held_back() -> None:
    redactor = StreamRedactor()
    released = [redactor.feed(char) for char in ANSWER]
    assert "".join(released) + redactor.finish() == redact(ANSWER)
    # Words are released as they end; only the word being written (and a key's name with what follows) waits.
    assert "".join(released).startswith("Your key is")


def test_a_multi_line_secret_streamed_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pem = "-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf\nQ9x2=\n-----END TEST KEY-----"
    monkeypatch.setenv("SIGNING_SECRET", pem)
    refresh_secrets()
    text = f"Here it is:\n{pem}\nKeep it safe."
    redactor = StreamRedactor()
    joined = "".join(redactor.feed(line + "\n") for line in text.split("\n")) + redactor.finish()
    assert joined == f"Here it is:\n{REDACTED}\nKeep it safe.\n"
