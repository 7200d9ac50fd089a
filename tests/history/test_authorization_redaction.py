"""Every `Authorization` scheme loses its credentials in text, the scheme stays readable, and the punctuation that
ends a sentence after a key is kept (`redaction.py`)."""

from __future__ import annotations

import pytest

from agentrig.runtime.history.redaction import REDACTED, StreamRedactor, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", f"Authorization: Basic {REDACTED}"),
        ("authorization: bearer abc.def-ghi_123", f"authorization: bearer {REDACTED}"),
        (
            'curl -H "Authorization: Token 9f8e7d6c5b4a" https://api',
            f'curl -H "Authorization: Token {REDACTED}" https://api',
        ),
        ("Authorization=CustomScheme k3y-v4lue-000", f"Authorization=CustomScheme {REDACTED}"),
        ("Authorization: raw-credential-42", f"Authorization: {REDACTED}"),
        (
            'Authorization: Digest username="Mufasa", realm="x", response="6629fae49393a0539745"',
            f"Authorization: Digest {REDACTED}",
        ),
        ("Proxy-Authorization: Basic Zm9vOmJhcg==\nAccept: */*", f"Proxy-Authorization: Basic {REDACTED}\nAccept: */*"),
        ('{"authorization": "Basic Zm9vOmJhcg=="}', f'{{"authorization": "Basic {REDACTED}"}}'),
        ("Authorization is required for this call", "Authorization is required for this call"),
    ],
)
def test_every_authorization_scheme_loses_its_credentials(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My key is sk-proj-AbC123def456.", f"My key is {REDACTED}."),
        ("Use Bearer abcdef123456!", f"Use Bearer {REDACTED}!"),
        ("(api_key=abcd1234efgh)", f"(api_key={REDACTED})"),
        ("api_key=abcd1234efgh.", f"api_key={REDACTED}."),
        ("Authorization: Basic dXNlcjpwYXNz.", f"Authorization: Basic {REDACTED}."),
    ],
)
def test_the_punctuation_after_a_key_is_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_streamed_authorization_header_is_redacted_as_the_whole_text() -> None:
    text = "calling with Authorization: Basic dXNlcjpwYXNzd29yZA== now, then done"
    redactor = StreamRedactor()
    pieces = [redactor.feed(text[i : i + 5]) for i in range(0, len(text), 5)]
    assert "".join(pieces) + redactor.finish() == redact(text)
    assert "dXNlcjpw" not in "".join(pieces)
