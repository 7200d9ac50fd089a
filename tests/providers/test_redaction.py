"""Secret redaction: key shapes, named values, environment values, JSON walking."""

from __future__ import annotations

import pytest

from agentrig.runtime.history import redaction
from agentrig.runtime.history.redaction import (
    REDACTED,
    dumps_redacted,
    redact,
    redact_json,
    redact_json_bytes,
    refresh_secrets,
    register_secret,
)
from agentrig.runtime.runfolder import jsonio

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


@pytest.mark.parametrize(
    "key",
    [
        "sk-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2qR5tU8",  # OpenAI's older keys: 48 random characters
        "sk-proj-" + "Ab1_Cd2-Ef3Gh4Ij5Kl6" * 6,
        "sk-ant-api03-" + "x9Y-z8W_v7U" * 8,
        "sk-or-v1-" + "0a1b2c3d" * 8,
        "sk-abcdefghij0123",
        "sk-ab****yz",
        "sk-" + "q" * 30,
    ],
)
def test_random_looking_sk_tokens_are_keys(key: str) -> None:
    assert redact(f"key {key} here") == f"key {REDACTED} here"


@pytest.mark.parametrize(
    "name",
    ["sk-learn-classifier", "sk-learn-regressor", "sk-resnet50-v2", "sk-learn_classifier_v2", "sk-gpt4o-mini-2024"],
)
def test_names_made_of_words_are_not_keys(name: str) -> None:
    # Issue 31: a scenario named `sk-learn-classifier` became `[REDACTED]` in every report and lost its conversation.
    assert redact(f"scenario {name} passed") == f"scenario {name} passed"
    assert redact_json({"name": name}) == {"name": name}


def test_values_of_key_variables_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    refresh_secrets()
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
    refresh_secrets()
    value = {
        "headers": {"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "anything", "accept": "json"},
        "messages": [{"content": "my key is env-key-value-0000"}, ("sk-abcdefghij0123", 3, None, True)],
        "api_key": "",
    }
    assert redact_json(value) == {
        "headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED, "accept": "json"},
        "messages": [{"content": f"my key is {REDACTED}"}, [REDACTED, 3, None, True]],
        "api_key": "",
    }


def test_the_environment_is_read_once_until_a_secret_is_registered_or_refreshed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redaction, "_registered", set[str]())
    monkeypatch.delenv("LATE_API_KEY", raising=False)
    refresh_secrets()
    assert redact("value-set-later-123") == "value-set-later-123"
    monkeypatch.setenv("LATE_API_KEY", "value-set-later-123")
    assert redact("value-set-later-123") == "value-set-later-123"  # cached: the environment is not read again
    register_secret("registered-on-the-way-9")  # a registration invalidates the cache
    assert redact("value-set-later-123 registered-on-the-way-9") == f"{REDACTED} {REDACTED}"
    monkeypatch.delenv("LATE_API_KEY")
    refresh_secrets()
    assert redact("value-set-later-123") == "value-set-later-123"


class _Forbidden:
    """A stand-in for a compiled pattern: text without a key marker must never reach a regular expression."""

    def sub(self, *_: object) -> str:
        raise AssertionError("a regular expression ran on text that cannot hold a key")

    search = sub


def test_text_without_markers_or_secret_values_never_reaches_a_regex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redaction, "_TOKEN_PATTERNS", (_Forbidden(),))
    monkeypatch.setattr(redaction, "_NAMED_VALUE", _Forbidden())
    plain = {"messages": [{"content": "An ordinary answer about API design, tokens and keys."}] * 50}
    assert redact("An ordinary answer, nothing to hide.") == "An ordinary answer, nothing to hide."
    assert redact_json(plain) is plain
    assert dumps_redacted(plain) == jsonio.dumps(plain)
    assert redact_json_bytes(jsonio.dumps(plain)) == jsonio.dumps(plain)


@pytest.mark.parametrize(
    "text",
    [
        'client = Client(api_key="YOUR_KEY")',
        'headers = {"Authorization": "Bearer x"}',
        "x-api-key: \\\"abc\\\" and apikey='q'",
        "a backslash \\ then api_key=\\ and sk-proj-abcdefgh\\",
    ],
)
def test_redacted_json_is_valid_json_whatever_the_strings_quote(text: str) -> None:
    document = {"prompt": text, "nested": [{"answer": text}], text: "as a key too"}
    for data in (dumps_redacted(document, pretty=True), redact_json_bytes(jsonio.dumps(document))):
        parsed = jsonio.loads(data)
        assert REDACTED in parsed["prompt"]
        assert parsed["nested"][0]["answer"] == parsed["prompt"]


def test_a_multi_line_secret_is_redacted_whole_line_by_line_and_as_json_text(monkeypatch: pytest.MonkeyPatch) -> None:
    pem = "-----BEGIN TEST KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcN\nQ9x2=\n-----END TEST KEY-----"
    monkeypatch.setenv("SIGNING_SECRET", pem)
    refresh_secrets()
    assert redact(f"key: {pem}.") == f"key: {REDACTED}."
    # Split by someone else's diff: each line long enough to be told apart from ordinary words goes.
    assert redact("+MIIBOgIBAAJBAKj34GkxFhD90vcN\n+Q9x2=") == f"+{REDACTED}\n+Q9x2="
    # Quoted as JSON text (a golden file's diff): the escaped value as a whole.
    quoted = jsonio.dumps(pem).decode()
    assert redact(f'"content": {quoted}') == f'"content": "{REDACTED}"'
