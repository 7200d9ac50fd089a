"""A provider key agentrig was given appears in no file it writes and on no line it prints (docs/security.md,
Secrets): not raw, not as JSON text, not in base64 (standard or URL-safe, at any of the three alignments a longer
string can put it in), not percent-encoded. Each route a key arrives by (the provider's environment variable, the
user information of `--base-url`) is driven through pydantic-ai's real OpenAI and Anthropic clients against the
loopback server, answering normally, with a 401 whose body echoes the key (as OpenAI's `Incorrect API key
provided: ...` does) and with a 500 that echoes it too; `agentrig run --record --out` and `agentrig prompt
--session --json` write everything they write, and every byte of it is searched."""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from agentrig.runtime.history import redaction
from tests.cli.cli_helpers import run_main
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import LoopbackServer, error, text
from tests.reports.runs import readable_text

pytestmark = pytest.mark.providers

# No provider's shape (`sk-...`): only what agentrig knows of the key can hide it, no pattern does by luck. The `+`
# and `/` make its percent-encoded and URL-safe base64 forms differ from the raw one.
KEY = "gw7Qx9+Tz4/Lm2Np8Wd3Fh6Rb1Kc5Vj0"

_SCENARIO = """\
name: asks
stream: {stream}
turns:
  - user: Say hello.
    expect:
      output: {{contains: hello}}
"""


def key_forms(key: str = KEY) -> dict[str, bytes]:
    """Every text that gives `key` away, by name: raw, JSON-escaped, percent-encoded, and base64 of the key inside a
    longer string at each of the three byte alignments (the groups of four characters that only the key's bytes
    make), in both alphabets."""
    raw = key.encode()
    forms = {
        "raw": raw,
        "json": json.dumps(key)[1:-1].encode(),
        "percent": urllib.parse.quote(key, safe="").encode(),
        "percent-path": urllib.parse.quote(key).encode(),  # `/` kept, as in a URL's path
        "percent-plus": urllib.parse.quote_plus(key).encode(),
    }
    for offset in range(3):
        encoded = base64.b64encode(b"x" * offset + raw + b"y")
        # Drop the groups the prefix or the suffix shares with the key: what stays is made of the key's bytes alone.
        inner = encoded[4 if offset else 0 : (len(b"x" * offset + raw + b"y") // 3) * 4 - 4]
        forms[f"base64+{offset}"] = inner
        forms[f"urlsafe-base64+{offset}"] = inner.replace(b"+", b"-").replace(b"/", b"_")
    return forms


def leaks(data: bytes, key: str = KEY) -> list[str]:
    """The names of the forms of `key` found in `data`."""
    return [name for name, form in key_forms(key).items() if form in data]


def test_the_forms_are_found_where_they_are() -> None:
    # The scanner itself: each form is found in a text that holds it, and none in one that does not.
    for offset in range(3):
        for prefix in (b"", b"Basic ", b"ab:"):
            wrapped = prefix + b"u" * offset + b":" + KEY.encode() + b"tail"
            assert {"base64+0", "base64+1", "base64+2"} & set(leaks(base64.b64encode(wrapped)))
            assert {"urlsafe-base64+0", "urlsafe-base64+1", "urlsafe-base64+2"} & set(
                leaks(base64.urlsafe_b64encode(wrapped))
            )
    assert "percent" in leaks(f"http://u:{urllib.parse.quote(KEY, safe='')}@h/".encode())
    assert leaks(b"nothing here") == []


@dataclass(frozen=True, slots=True)
class Route:
    """How the key reaches agentrig: in the provider's key variable, as the password of `--base-url`
    (`http://agentrig:KEY@127.0.0.1:PORT/v1`), or as that of the SDK's base URL variable (`OPENAI_BASE_URL`)."""

    name: str
    model: str
    api: str
    how: Literal["key variable", "--base-url", "base URL variable"]

    def arguments(self, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """The model's arguments, with the key put where the route puts it."""
        url = server.openai_base_url if self.api == "openai" else server.anthropic_base_url
        with_key = url.replace("http://", f"http://agentrig:{urllib.parse.quote(KEY, safe='')}@", 1)
        if self.how == "key variable":
            monkeypatch.setenv(f"{self.api.upper()}_API_KEY", KEY)
            return ["--model", self.model, "--base-url", url]
        if self.how == "--base-url":
            return ["--model", self.model, "--base-url", with_key]
        monkeypatch.setenv(f"{self.api.upper()}_BASE_URL", with_key)
        return ["--model", self.model]


ROUTES = [
    Route(f"{api} {how}", model, api, how)
    for api, model in (("openai", "openai-chat:gpt-4o"), ("anthropic", "anthropic:claude-loopback-test"))
    for how in ("key variable", "--base-url", "base URL variable")
]

ANSWERS = {
    "answer": text("hello there"),
    "401 echoing the key": error(401, f"Incorrect API key provided: {KEY}. You can find your API key at ..."),
    "500 echoing the key": error(500, f"internal error while serving key={KEY} Authorization: {KEY}"),
}


@pytest.fixture(autouse=True)
def fresh_redaction(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Redaction's memory of keys as a fresh process has it: none registered, the environment read anew."""
    monkeypatch.setattr(redaction, "_registered", set[str]())
    redaction.refresh_secrets()
    yield
    redaction.refresh_secrets()


def _files_leaking(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and (names := leaks(readable_text(path).encode())):
            found[str(path.relative_to(root))] = names
    return found


def _received_key(server: LoopbackServer) -> bool:
    """Whether the key reached the server (so the run really had it to leak): as a bearer token, Anthropic's
    `x-api-key`, or the base64 of HTTP basic credentials."""
    for request in server.requests:
        values = " ".join(request.headers.values())
        if KEY in values or base64.b64encode(f"agentrig:{KEY}".encode()).decode() in values:
            return True
    return False


@pytest.mark.parametrize("answer", list(ANSWERS), ids=list(ANSWERS))
@pytest.mark.parametrize("route", ROUTES, ids=[route.name for route in ROUTES])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_run_writes_and_prints_no_form_of_the_key(
    loopback: ServerFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    route: Route,
    answer: str,
    stream: bool,
) -> None:
    server = loopback([ANSWERS[answer]], default=ANSWERS[answer])
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "asks.yaml").write_text(_SCENARIO.format(stream=str(stream).lower()), encoding="utf-8")
    arguments = ["run", str(scenarios), "--out", str(tmp_path / "out"), "--record", str(tmp_path / "recordings")]
    arguments += [*route.arguments(server, monkeypatch), "--max-attempts", "1"]
    code, out, err = run_main(capsys, *arguments)
    assert code == (0 if answer == "answer" else 3), (code, out, err)
    assert _received_key(server), [request.headers for request in server.requests]
    assert (tmp_path / "out" / "report.json").is_file()
    assert _files_leaking(tmp_path) == {}
    assert (leaks(out.encode()), leaks(err.encode())) == ([], []), (out, err)


@pytest.mark.parametrize("answer", list(ANSWERS), ids=list(ANSWERS))
@pytest.mark.parametrize("route", ROUTES, ids=[route.name for route in ROUTES])
def test_prompt_saves_and_prints_no_form_of_the_key(
    loopback: ServerFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    route: Route,
    answer: str,
) -> None:
    server = loopback([ANSWERS[answer]], default=ANSWERS[answer])
    session = tmp_path / "session.json"
    arguments = ["prompt", "Say hello.", "--session", str(session), "--json"]
    arguments += [*route.arguments(server, monkeypatch), "--max-attempts", "1"]
    code, out, err = run_main(capsys, *arguments)
    assert code == (0 if answer == "answer" else 3), (code, out, err)
    assert _received_key(server), [request.headers for request in server.requests]
    assert _files_leaking(tmp_path) == {}
    assert (leaks(out.encode()), leaks(err.encode())) == ([], []), (out, err)
