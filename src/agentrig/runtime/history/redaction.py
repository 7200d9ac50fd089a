"""Secret redaction: API keys never reach a file, a report or a terminal line agentrig writes.

`redact(text)` and `redact_json(value)` replace with `[REDACTED]`:

- key-shaped tokens: `sk-...` (OpenAI, including masked echoes like `sk-ab***yz`), `sk-ant-...`
  (Anthropic), and the token after `Bearer`;
- the value after an `api_key` / `api-key` / `x-api-key` / `authorization` name in text
  (`api_key=...`, `"x-api-key": "..."`), and the whole value of such a key in JSON objects;
- the actual values of the key variables present in the environment (`*_API_KEY`, `*_TOKEN`,
  `*_SECRET`, ...) and of keys registered at run time with `register_secret` (a `--api-key`-style
  argument that never was in the environment).

Standard library only: the writers of histories, sessions, reports and recordings all call it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "redact", "redact_bytes", "redact_json", "register_secret"]

REDACTED = "[REDACTED]"

# Shortest value treated as a secret: shorter values ("1", "yes") would redact ordinary words.
_MIN_SECRET_LENGTH = 8

_SECRET_ENV_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|ACCESS_KEY)$", re.IGNORECASE)

_SENSITIVE_KEY_NAMES = frozenset({"api_key", "api-key", "apikey", "x-api-key", "authorization", "proxy-authorization"})

_TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    # sk-ant-api03-..., sk-proj-..., sk-..., and the masked echo OpenAI puts in 401 bodies (sk-ab****yz).
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}"),
    re.compile(r"(?<=\bBearer )[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE),
)
_NAMED_VALUE = re.compile(
    r"""(?P<name>\b(?:x-api-key|api[_-]?key|apikey|(?:proxy-)?authorization)\b["']?\s*[:=]\s*["']?)"""
    r"""(?:Bearer\s+)?(?P<value>[^\s"',;}\]]+)""",
    re.IGNORECASE,
)

_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Treat `value` as a secret for the rest of the process (e.g. an API key passed as an argument)."""
    if value and len(value) >= _MIN_SECRET_LENGTH:
        _registered.add(value)


def _secret_values(environ: Mapping[str, str]) -> list[str]:
    values = set(_registered)
    for name, value in environ.items():
        if _SECRET_ENV_NAME.search(name) and len(value) >= _MIN_SECRET_LENGTH:
            values.add(value)
    # Longest first, so a secret that contains another is replaced whole.
    return sorted(values, key=len, reverse=True)


def _redact_with(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(REDACTED, text)

    def _named(match: re.Match[str]) -> str:
        value = match.group("value")
        if value == REDACTED or value.startswith("[REDACTED"):
            return match.group(0)
        return match.group(0)[: match.start("value") - match.start(0)] + REDACTED

    return _NAMED_VALUE.sub(_named, text)


def redact(text: str) -> str:
    """`text` with every API key and auth token replaced by `[REDACTED]`."""
    return _redact_with(text, _secret_values(os.environ))


def redact_bytes(data: bytes) -> bytes:
    """UTF-8 text (a JSON, XML or markdown file about to be written) with every secret redacted."""
    text = data.decode("utf-8")
    redacted = redact(text)
    return data if redacted == text else redacted.encode("utf-8")


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with secrets redacted in every string, and the values of sensitive keys
    (`api_key`, `authorization`, `x-api-key`, ...) replaced whole."""
    secrets = _secret_values(os.environ)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _redact_with(item, secrets)
        if isinstance(item, Mapping):
            result: dict[Any, Any] = {}
            for key, inner in item.items():
                if isinstance(key, str) and key.lower() in _SENSITIVE_KEY_NAMES and isinstance(inner, str) and inner:
                    result[key] = REDACTED
                else:
                    result[key] = walk(inner)
            return result
        if isinstance(item, list | tuple):
            return [walk(inner) for inner in item]
        return item

    return walk(value)
