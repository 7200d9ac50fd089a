"""Secret redaction: key shapes, named values, environment values, JSON walking."""

from __future__ import annotations

import pytest

from agentrig.runtime.history import redaction
from agentrig.runtime.history.redaction import REDACTED, redact, redact_json, register_secret

pytestmark = pytest.mark.providers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-AbC123_def-456 used", f"key {REDACTED} used"),
        ("anthropic sk-ant-api03-AAAAbbbbCCCC", f"anthropic {REDACTED}"),
        ("Incorrect API key provided: sk-live-****wxyz", f"Incorrect API key provided: {REDACTED}"),
        ("Authorization: Bearer abc.def-ghi_123", f"Authorization: Bearer {REDACTED}"),
        ("x-api-key: plainvalue123", f"x-api-key: {REDACTED}"),
        ('{"api_key": "hunter2hunter2"}', f'{{"api_key": "{REDACTED}"}}'),
        ("api-key=abcdefgh12345, next", f"api-key={REDACTED}, next"),
        ("nothing secret in a task list", "nothing secret in a task list"),
        ("ask-me later, sketch", "ask-me later, sketch"),
    ],
)
def test_key_shapes_and_named_values(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_values_of_key_variables_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "zz-unusual-shape-998877")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_recognisable_token_42")
    monkeypatch.setenv("SHORT_API_KEY", "abc")  # too short to be told apart from ordinary words
    monkeypatch.setenv("AGENTRIG_MODEL", "openai:gpt-4o-mini")  # not a secret variable
    text = "a zz-unusual-shape-998877 b ghp_recognisable_token_42 c abc openai:gpt-4o-mini"
    assert redact(text) == f"a {REDACTED} b {REDACTED} c abc openai:gpt-4o-mini"


def test_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redaction, "_registered", set[str]())
    register_secret("passed-on-the-command-line-1")
    register_secret(None)
    register_secret("short")
    assert redact("x passed-on-the-command-line-1 short") == f"x {REDACTED} short"


def test_redact_json_walks_and_replaces_sensitive_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-value-0000")
    value = {
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "anything", "accept": "json"},
        "messages": [{"content": "my key is env-key-value-0000"}, ("sk-abcdefghij", 3, None, True)],
        "api_key": "",
    }
    assert redact_json(value) == {
        "headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED, "accept": "json"},
        "messages": [{"content": f"my key is {REDACTED}"}, [REDACTED, 3, None, True]],
        "api_key": "",
    }
