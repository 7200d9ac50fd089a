"""Secret redaction: API keys never reach a file, a report or a terminal line agentrig writes.

`redact(text)` and `redact_json(value)` replace with `[REDACTED]`:

- key-shaped tokens: `sk-...` (OpenAI, including masked echoes like `sk-ab***yz`), `sk-ant-...`
  (Anthropic), and the token after `Bearer`; an `sk-` name made of words (`sk-learn-classifier`) is no key;
- the value after an `api_key` / `api-key` / `x-api-key` name in text (`api_key=...`, `"x-api-key": "..."`),
  the credentials after an `Authorization:` name whatever the scheme (`Basic <base64>`, `Bearer`, `Token`,
  `Digest` parameters, a custom scheme; the scheme stays), and the whole value of such a key in JSON objects;
- punctuation that ends a sentence right after a key (`... sk-...abc.`) is kept after the `[REDACTED]`;
- the actual values of the key variables present in the environment (`*_API_KEY`, `*_TOKEN`,
  `*_SECRET`, ...) and of keys registered at run time with `register_secret` (a `--api-key`-style
  argument that never was in the environment); also as they appear inside a JSON string (a golden
  file's diff quotes JSON text), and, for a multi-line value (a PEM key), each of its lines: a unified
  diff puts every line of a text on a line of its own, behind a `+` or `-`.

A text that arrives in pieces (a streamed answer, the deltas of an event log) is redacted with a
`StreamRedactor`: a piece is released only up to a point no key can straddle, so a key split across
pieces is redacted as it would be in the joined text.

Binary payloads are opaque: the base64 `data` of binary content (an object with `"kind": "binary"`, a
`media_type` and base64 `data`: the canonical form's attachments and pydantic-ai's `BinaryContent` as 2.38 and 2.68
dump it, URL-safe there) and a whole `data:...;base64,...` URL string are kept byte for byte. Their text is no
text anyone wrote: a key-shaped run (`-sk-...`, ~0.1 per MB of URL-safe base64) or a secret value can occur there
by chance, and replacing it would corrupt the file (and fail its SHA-256). The object's other values are redacted
as usual, and so is a string that only resembles base64 anywhere else.

Values are redacted, never serialized bytes: replacing text inside a JSON document can eat the backslash of
an escaped quote (`api_key=\\"...`) and end the string early. Writers redact the data before serializing it
(`dumps_redacted`), or parse, redact and re-serialize JSON they did not build (`redact_json_bytes`).

Cheap when there is nothing to redact: the secret values are read from the environment once (again after
`register_secret` or `refresh_secrets`), and a substring test for them and for the few key markers comes
before any regular expression.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from agentrig.runtime.runfolder import jsonio

__all__ = [
    "REDACTED",
    "StreamRedactor",
    "dumps_redacted",
    "might_hold_secret",
    "might_hold_secret_json",
    "redact",
    "redact_json",
    "redact_json_bytes",
    "refresh_secrets",
    "register_secret",
]

REDACTED = "[REDACTED]"

# Shortest value treated as a secret: shorter values ("1", "yes") would redact ordinary words.
_MIN_SECRET_LENGTH = 8

_SECRET_ENV_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|ACCESS_KEY)$", re.IGNORECASE)

_SENSITIVE_KEY_NAMES = frozenset({"api_key", "api-key", "apikey", "x-api-key", "authorization", "proxy-authorization"})

# An `sk-` token that looks like a key: a provider's own prefix (`sk-ant-api03-`, `sk-proj-`, `sk-svcacct-`,
# `sk-admin-`) and 8 more characters; a masked echo (`sk-ab****yz`); or a piece between dashes and underscores that
# looks random: 10+ characters mixing letters and digits, or 24+ of anything. Words (`sk-learn-classifier`,
# `sk-resnet50-v2`) are names, not keys (issue 31: a scenario named so lost its conversation in the report).
_KEY_SHAPED = re.compile(
    r"""\bsk-
    (?=(?:ant|proj|svcacct|admin)-[A-Za-z0-9_\-]{8}
      |[A-Za-z0-9_\-]*\*\*
      |(?:[A-Za-z0-9*]*[-_])*
       (?:(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{10,}|[A-Za-z0-9]{24,})(?![A-Za-z0-9])
    )
    [A-Za-z0-9_\-*.]+""",
    re.VERBOSE,
)

_TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = (
    # sk-ant-api03-..., sk-proj-..., sk-..., and the masked echo OpenAI puts in 401 bodies (sk-ab****yz).
    _KEY_SHAPED,
    re.compile(r"(?<=\bBearer )[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE),
)
_NAMED_VALUE = re.compile(
    r"""(?P<name>\b(?:x-api-key|api[_-]?key|apikey)\b["']?\s*[:=]\s*["']?)"""
    r"""(?:Bearer\s+)?(?P<value>[^\s"',;}\]]+)""",
    re.IGNORECASE,
)
# An Authorization header in text: whatever its scheme (`Basic <base64>`, `Bearer`, `Token`, `Digest`, a custom
# one), the scheme stays readable and the credentials go: a token, or a list of `name=value` parameters.
_AUTHORIZATION = re.compile(
    r"""(?P<name>\b(?:proxy-)?authorization\b["']?\s*[:=]\s*["']?(?:[A-Za-z][A-Za-z0-9_-]*[ \t]+)?)"""
    r"""(?P<value>[\w-]+=(?:"[^"\r\n]*"|[^\s,;"']+)(?:[ \t]*,[ \t]*[\w-]+=(?:"[^"\r\n]*"|[^\s,;"']+))*"""
    r"""|[^\s"',;}\]]+)""",
    re.IGNORECASE,
)
_NAMED_PATTERNS = (_NAMED_VALUE, _AUTHORIZATION)

# Punctuation that ends a sentence after a key (`my key is sk-...abc.`): kept after the `[REDACTED]`.
_TRAILING = ".)!?:"

# Base64 text as the canonical form (standard alphabet) and pydantic JSON (URL-safe) write bytes: one alphabet,
# padding optional; a length of 4n+1 is no base64 at all.
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_\-]*={0,2}")
_DATA_URL_BASE64 = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,")

_registered: set[str] = set()

# The secret values, collected from the environment once: redaction runs for every file a run writes,
# and looking through the environment each time cost more than the redaction itself.
_cached: tuple[tuple[str, ...], tuple[bytes, ...]] | None = None

# Text that holds none of these (case-insensitively) and none of the secret values cannot match a pattern
# below, so the regular expressions run only on the rare text that might hold a key.
_MARKERS = ("sk-", "bearer", "api_key", "api-key", "apikey", "authorization")
_MARKER_BYTES = tuple(marker.encode() for marker in _MARKERS)


def register_secret(value: str | None) -> None:
    """Treat `value` as a secret for the rest of the process (e.g. an API key passed as an argument)."""
    global _cached
    if value and len(value) >= _MIN_SECRET_LENGTH:
        _registered.add(value)
        _cached = None


def refresh_secrets() -> None:
    """Read the secret values from the environment again on the next redaction (a run calls this once)."""
    global _cached
    _cached = None


def _forms(value: str) -> set[str]:
    """The texts that give `value` away: itself, as it reads inside a JSON string (a newline or a quote escaped),
    and each line of a multi-line value long enough to be told apart from ordinary words."""
    found = {value, jsonio.dumps(value)[1:-1].decode()}
    if "\n" in value or "\r" in value:
        found.update(line.strip() for line in value.splitlines() if len(line.strip()) >= _MIN_SECRET_LENGTH)
    return found


def _secrets() -> tuple[tuple[str, ...], tuple[bytes, ...]]:
    """The secret texts (`_forms` of each value), longest first (a secret that contains another is replaced
    whole, a multi-line value before its lines), and each as it appears inside a JSON string."""
    global _cached
    if _cached is None:
        values = set(_registered)
        for name, value in os.environ.items():
            if _SECRET_ENV_NAME.search(name) and len(value) >= _MIN_SECRET_LENGTH:
                values.add(value)
        texts = {form for value in values for form in _forms(value)}
        ordered = tuple(sorted(texts, key=len, reverse=True))
        _cached = (ordered, tuple(jsonio.dumps(value)[1:-1] for value in ordered))
    return _cached


def _might_hold_secret_text(text: str, secrets: Iterable[str]) -> bool:
    if any(secret in text for secret in secrets):
        return True
    lowered = text.lower()
    return any(marker in lowered for marker in _MARKERS)


def might_hold_secret(text: str) -> bool:
    """Whether `text` might hold a secret: False means `redact(text) == text` (a substring test, no regular
    expression); True may be wrong."""
    return _might_hold_secret_text(text, _secrets()[0])


def might_hold_secret_json(data: bytes) -> bool:
    """`might_hold_secret` for serialized JSON."""
    return _might_hold_secret_json(data)


def _might_hold_secret_json(data: bytes) -> bool:
    """Whether serialized JSON might hold a secret: a substring test, no regular expression."""
    if any(secret in data for secret in _secrets()[1]):
        return True
    lowered = data.lower()
    return any(marker in lowered for marker in _MARKER_BYTES)


def _redact_with(text: str, secrets: Iterable[str]) -> str:
    if not _might_hold_secret_text(text, secrets):
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(_redacted_token, text)

    def _named(match: re.Match[str]) -> str:
        value = match.group("value")
        if value == REDACTED or value.startswith("[REDACTED"):
            return match.group(0)
        return match.group(0)[: match.start("value") - match.start(0)] + _redacted_token(value)

    for pattern in _NAMED_PATTERNS:
        text = pattern.sub(_named, text)
    return text


def _redacted_token(token: re.Match[str] | str) -> str:
    """`[REDACTED]`, followed by the punctuation that ended the sentence after the key (not part of it)."""
    value = token if isinstance(token, str) else token.group(0)
    kept = value.rstrip(_TRAILING)
    return REDACTED + value[len(kept) :] if kept else REDACTED


def redact(text: str) -> str:
    """`text` with every API key and auth token replaced by `[REDACTED]`."""
    return _redact_with(text, _secrets()[0])


def _is_base64(text: str) -> bool:
    pattern = _URLSAFE_BASE64 if "-" in text or "_" in text else _BASE64
    return pattern.fullmatch(text) is not None and len(text.rstrip("=")) % 4 != 1


def _is_binary_content(item: Mapping[Any, Any]) -> bool:
    """Binary content as the canonical form and pydantic-ai (2.38 to 2.68) write it: `kind` "binary", a
    `media_type`, and `data` in base64 (`BinaryContent`, `BinaryImage`; in a user prompt, a tool return, a file
    part)."""
    data = item.get("data")
    return (
        item.get("kind") == "binary"
        and isinstance(item.get("media_type"), str)
        and isinstance(data, str)
        and _is_base64(data)
    )


def _is_base64_data_url(text: str) -> bool:
    """A whole `data:TYPE;base64,PAYLOAD` string (tinyagent's image blocks, an `ImageUrl` of inline bytes)."""
    if not text.startswith("data:"):
        return False
    header = _DATA_URL_BASE64.match(text)
    return header is not None and _is_base64(text[header.end() :])


def _walk(item: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(item, str):
        return item if _is_base64_data_url(item) else _redact_with(item, secrets)
    if isinstance(item, Mapping):
        result: dict[Any, Any] = {}
        mapping = cast(Mapping[Any, Any], item)
        binary = _is_binary_content(mapping)
        for key, inner in mapping.items():
            if binary and key == "data":
                result[key] = inner  # bytes, not text: kept byte for byte (see the module docstring)
            elif isinstance(key, str) and key.lower() in _SENSITIVE_KEY_NAMES and isinstance(inner, str) and inner:
                result[key] = REDACTED
            else:
                result[_redact_with(key, secrets) if isinstance(key, str) else key] = _walk(inner, secrets)
        return result
    if isinstance(item, list | tuple):
        return [_walk(inner, secrets) for inner in cast(Iterable[Any], item)]
    return item


def redact_json(value: Any) -> Any:
    """A JSON value with secrets redacted in every string (keys included), and the values of sensitive keys
    (`api_key`, `authorization`, `x-api-key`, ...) replaced whole. Strings are redacted one by one, so the
    value serializes to valid JSON whatever the strings held.

    When nothing in `value` can be a secret, `value` itself is returned (not a copy)."""
    try:
        serialized = jsonio.dumps(value)
    except TypeError:  # not plain JSON data: walk it without the pre-check
        return _walk(value, _secrets()[0])
    if not _might_hold_secret_json(serialized):
        return value
    return _walk(value, _secrets()[0])


def dumps_redacted(value: Any, *, pretty: bool = False) -> bytes:
    """`value` as JSON bytes (`jsonio.dumps`), with its secrets redacted value by value."""
    data = jsonio.dumps(value, pretty=pretty)
    if not _might_hold_secret_json(data):
        return data
    return jsonio.dumps(_walk(value, _secrets()[0]), pretty=pretty)


def redact_json_bytes(data: bytes, *, pretty: bool = False) -> bytes:
    """Serialized JSON (e.g. another library's dump) with its secrets redacted: parsed, redacted value by value
    and serialized again with `jsonio.dumps`. Returned unchanged, byte for byte, when it holds no secret."""
    if not _might_hold_secret_json(data):
        return data
    return jsonio.dumps(_walk(jsonio.loads(data), _secrets()[0]), pretty=pretty)


# --- streams ---

# The key names a value can follow across whitespace (`Authorization: Bearer TOKEN`, `"api_key" : "..."`); a
# piece of a stream is never cut within three words after one (name, separator, `Bearer`, then the value).
_NAME_MARKERS = ("bearer", "api_key", "api-key", "apikey", "authorization")
_WORDS_A_NAME_REACHES = 3
_WHITESPACE = re.compile(r"\s")


class StreamRedactor:
    """Redacts a text that arrives in pieces, so that the joined output holds no key the joined input held.

    Redacting each piece alone misses a key split across two pieces (`sk-ab` + `cdef...`), and providers split
    keys across deltas. `feed` holds the text back from the last point where a key could still be growing and
    releases, redacted, what comes before it; `finish` releases the rest. Text is cut only at whitespace that no
    key-shaped token crosses, no more than three words after a key's name (`api_key`, `Authorization`,
    `Bearer`), and outside any secret value that contains whitespace. So a piece may come out empty, or later
    than it arrived: at most the last few words are held.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The redacted text that can be released now that `piece` arrived (possibly empty)."""
        self._held += piece
        cut = _release_point(self._held)
        if cut == 0:
            return ""
        released, self._held = self._held[:cut], self._held[cut:]
        return redact(released)

    def finish(self) -> str:
        """The redacted rest: the stream has ended."""
        rest, self._held = self._held, ""
        return redact(rest) if rest else ""


def _release_point(text: str) -> int:
    """The end of the longest start of `text` that can be redacted on its own, whatever text follows (0: none)."""
    spaced = [secret for secret in _secrets()[0] if _WHITESPACE.search(secret)]
    for space in reversed([match.start() for match in _WHITESPACE.finditer(text, 1)]):
        if _can_cut(text, space, spaced):
            return space
    return 0


def _can_cut(text: str, cut: int, spaced_secrets: Iterable[str]) -> bool:
    """Whether no key can straddle `cut`, a whitespace position (no key-shaped token contains whitespace)."""
    last_words = text[:cut].rsplit(None, _WORDS_A_NAME_REACHES)[-_WORDS_A_NAME_REACHES:]
    if any(marker in word.lower() for word in last_words for marker in _NAME_MARKERS):
        return False
    for secret in spaced_secrets:  # a secret value with whitespace in it, begun before the cut and not over
        start = text.find(secret[0], max(0, cut - len(secret) + 1), cut)
        while start != -1:
            if text.startswith(secret[: len(text) - start], start):
                return False
            start = text.find(secret[0], start + 1, cut)
    return True
