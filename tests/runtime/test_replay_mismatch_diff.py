"""A replay that differs from its recording shows the diff of the request; an attachment in it is its size and
SHA-256, never its base64 (a megabyte image would fill the CLI line, summary.md and report.json)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from agentrig.runtime.models.record_replay import _mismatch  # pyright: ignore[reportPrivateUsage]


def _request(data: bytes) -> dict[str, Any]:
    image = {"kind": "binary", "media_type": "image/png", "data": base64.b64encode(data).decode()}
    return {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": ["Describe it.", image]}]}


def test_a_request_whose_image_changed_shows_its_size_and_hash_not_its_base64() -> None:
    recorded, now = _request(b"a" * 3000), _request(b"b" * 3000)

    mismatch = _mismatch(Path("recordings/image.json"), 1, recorded, now)

    for payload in (b"a" * 3000, b"b" * 3000):
        assert base64.b64encode(payload).decode()[:64] not in mismatch.diff
        assert base64.b64encode(payload).decode()[:64] not in str(mismatch)
    labels = [line for line in mismatch.diff.splitlines() if "3000 bytes in base64, sha256:" in line]
    assert [line[0] for line in labels] == ["-", "+"]
    assert labels[0][1:] != labels[1][1:]
    assert "3000 bytes in base64" in str(mismatch)  # the one-line summary names what changed
