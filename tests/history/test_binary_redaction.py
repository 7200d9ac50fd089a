"""Redaction never alters the bytes of binary content: base64 `data` may hold a key-shaped run (`-sk-proj-...` in
URL-safe base64) or a secret value by chance, and is kept byte for byte, while a real key in the text beside it
is still redacted (`redaction.py`). Binary content is recognised by the JSON shape the canonical form and
pydantic-ai (2.38 and 2.68 dump `BinaryContent` alike) give it."""

from __future__ import annotations

import base64
import hashlib
import random
import string
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.history.redaction import (
    REDACTED,
    dumps_redacted,
    redact_json,
    redact_json_bytes,
    refresh_secrets,
)
from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main
from tests.reports.runs import decompressed

REAL_KEY = "sk-proj-Real0Key1In2The3User4Text5678"
KEY_SHAPED_RUN = "sk-proj-" + "Zq7" * 12  # what _KEY_SHAPED takes for a key, 44 characters
SECRET_IN_BLOB = "Wd4kPq9Xr2Ls"  # a secret variable's value that the blob's base64 also holds, by chance


def blob_holding(*runs: str) -> bytes:
    """Bytes whose URL-safe base64 holds each of `runs`, each after a `-` (a word boundary, so `\\bsk-` matches
    there), amid random text; the standard alphabet's form holds the same runs with `+` and `/`."""
    rng = random.Random(31)
    alphabet = string.ascii_letters + string.digits + "-_"
    pieces = ["".join(rng.choice(alphabet) for _ in range(3000))]
    for run in runs:
        pieces += ["-" + run + "-", "".join(rng.choice(alphabet) for _ in range(1000))]
    text = "".join(pieces)
    text += "A" * (-len(text) % 4)
    data = base64.urlsafe_b64decode(text)
    assert base64.urlsafe_b64encode(data).decode() == text  # every character is the bytes' own: no padding bits
    return data


BLOB = blob_holding(KEY_SHAPED_RUN, SECRET_IN_BLOB)
URLSAFE = base64.urlsafe_b64encode(BLOB).decode()
STANDARD = base64.b64encode(BLOB).decode()


@pytest.fixture(autouse=True)
def _secret_in_the_blob(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("BLOB_SERVICE_TOKEN", SECRET_IN_BLOB)
    refresh_secrets()
    yield
    monkeypatch.delenv("BLOB_SERVICE_TOKEN")
    refresh_secrets()


def test_the_blob_holds_what_a_key_or_a_secret_looks_like() -> None:
    assert f"-{KEY_SHAPED_RUN}-" in URLSAFE
    assert SECRET_IN_BLOB in URLSAFE
    assert SECRET_IN_BLOB in STANDARD
    # Without its shape, the same text is redacted: the redactor does see a key and a secret there.
    assert REDACTED in redact_json({"text": URLSAFE})["text"]
    assert REDACTED in redact_json({"text": STANDARD})["text"]


def _canonical_history() -> dict[str, Any]:
    attachment = {
        "kind": "binary",
        "media_type": "application/octet-stream",
        "sha256": hashlib.sha256(BLOB).hexdigest(),
        "data": STANDARD,
    }
    content = [f"My key is {REAL_KEY}, and the file:", attachment]
    return {
        "format": "agentrig.history/1",
        "messages": [{"kind": "request", "parts": [{"part_kind": "user-content", "content": content}]}],
    }


def _pydantic_ai_dump() -> list[dict[str, Any]]:
    """A dump as pydantic-ai 2.38 and 2.68 both write it (`ModelMessagesTypeAdapter.dump_json`): `BinaryContent`
    with URL-safe base64, in a user prompt, a tool return and a file part."""
    binary = {
        "data": URLSAFE,
        "media_type": "application/octet-stream",
        "vendor_metadata": None,
        "kind": "binary",
        "identifier": "a1b2c3",
    }
    prompt = {
        "content": [f"My key is {REAL_KEY}", binary],
        "timestamp": "2026-01-01T00:00:00Z",
        "part_kind": "user-prompt",
    }
    tool_return = {"tool_name": "fetch", "content": binary, "tool_call_id": "c1", "part_kind": "tool-return"}
    return [
        {"parts": [prompt, tool_return], "kind": "request"},
        {"parts": [{"content": binary, "id": None, "part_kind": "file"}, {"content": REAL_KEY, "part_kind": "text"}],
         "kind": "response"},
    ]  # fmt: skip


def _binary_data(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["data"]] if value.get("kind") == "binary" else []
        return found + [data for inner in value.values() for data in _binary_data(inner)]
    if isinstance(value, list):
        return [data for inner in value for data in _binary_data(inner)]
    return []


def test_the_canonical_history_keeps_the_blob_and_loses_the_key() -> None:
    written = dumps_redacted(_canonical_history(), pretty=True).decode()
    (data,) = _binary_data(jsonio.loads(written))
    assert base64.b64decode(data) == BLOB
    assert REAL_KEY not in written
    assert f"My key is {REDACTED}, and the file:" in written


def test_a_pydantic_ai_dump_keeps_the_blob_and_loses_the_key() -> None:
    written = redact_json_bytes(jsonio.dumps(_pydantic_ai_dump())).decode()
    datas = _binary_data(jsonio.loads(written))
    assert len(datas) == 3
    assert all(base64.urlsafe_b64decode(data) == BLOB for data in datas)
    assert REAL_KEY not in written
    assert written.count(REDACTED) == 2


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"kind": "binary", "data": URLSAFE}, id="no media type"),
        pytest.param({"kind": "image-url", "media_type": "image/png", "data": URLSAFE}, id="not binary"),
        pytest.param({"kind": "binary", "media_type": "text/plain", "data": f"{URLSAFE} "}, id="not base64"),
        pytest.param({"kind": "binary", "media_type": "text/plain", "data": URLSAFE + "x"}, id="4n+1 characters"),
    ],
)
def test_only_binary_content_is_opaque(value: dict[str, Any]) -> None:
    assert REDACTED in redact_json(value)["data"]


def test_the_other_values_of_binary_content_are_still_redacted() -> None:
    value = {"kind": "binary", "media_type": "text/plain", "data": URLSAFE, "identifier": REAL_KEY,
             "vendor_metadata": {"api_key": "hunter2hunter2"}}  # fmt: skip
    redacted = redact_json(value)
    assert redacted == {**value, "identifier": REDACTED, "vendor_metadata": {"api_key": REDACTED}}


def test_a_base64_data_url_is_kept_whole_and_other_text_is_not() -> None:
    url = f"data:image/png;base64,{STANDARD}"
    assert redact_json({"type": "image", "url": url}) == {"type": "image", "url": url}
    assert REDACTED in redact_json({"url": f"see data:image/png;base64,{STANDARD}"})["url"]


_SCENARIO = """\
name: blob-beside-a-key
turns:
  - user:
      - "My key is {key}; what is in this file?"
      - {{data: "{data}", media_type: application/octet-stream}}
    model:
      - text: "It is a blob. Your key {key} should not be pasted."
"""


def test_a_run_writes_the_blob_byte_for_byte_and_no_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "blob.yaml").write_text(_SCENARIO.format(key=REAL_KEY, data=STANDARD), encoding="utf-8")
    out = tmp_path / "out"

    code, stdout, stderr = run_main(capsys, "run", str(tmp_path / "blob.yaml"), "--out", str(out))

    assert code == 0, stdout + stderr
    folder = out / "scenarios" / "blob-beside-a-key"
    (canonical,) = _binary_data(jsonio.read_json_file(folder / "history.json"))
    assert base64.b64decode(canonical) == BLOB
    (dumped,) = _binary_data(jsonio.read_json_file(folder / "pydantic_ai_dump.json"))
    assert dumped == URLSAFE  # pydantic writes bytes URL-safe: the key-shaped run is in the file as it is
    # session.json names history.json for its messages (they are written once): its text holds no key either.
    assert REAL_KEY not in (folder / "session.json").read_text(encoding="utf-8")
    assert jsonio.read_json_file(folder / "session.json")["history"] == "history.json"
    for path in (
        folder / "history.json",
        folder / "pydantic_ai_dump.json",
        out / "report.html",
    ):
        text = path.read_text(encoding="utf-8")
        text = decompressed(text) if path.suffix == ".html" else text  # the page keeps its scenarios gzipped
        assert REAL_KEY not in text, path
        assert "My key is [REDACTED]; what is in this file?" in text, path
    assert STANDARD in (folder / "history.json").read_text(encoding="utf-8")  # the canonical form
    assert STANDARD in decompressed((out / "report.html").read_text(encoding="utf-8"))
