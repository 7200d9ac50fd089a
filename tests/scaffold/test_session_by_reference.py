"""A run's session.json names its history.json instead of holding the messages again (issue 45 item 2): scaffolding
it writes exactly what scaffolding the same session with its messages inline writes, and the scenario replays."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.cli.cli_helpers import run_main
from tests.scaffold.replay import REPO


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_a_run_session_scaffolds_as_its_inline_copy_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, output, _ = run_main(capsys, "run", str(REPO / "scenarios" / "tool_roundtrip.yaml"), "--out", str(out))
    assert code == 0, output
    folder = out / "scenarios" / "tool-roundtrip"
    stored = json.loads((folder / "session.json").read_bytes())
    assert "messages" not in stored
    assert stored["history"] == "history.json"
    # The same session whole, in a folder of the same name (scaffold names a session.json after its folder).
    whole = {key: value for key, value in stored.items() if key != "history"}
    whole["messages"] = json.loads((folder / "history.json").read_bytes())["messages"]
    copy = tmp_path / "copy" / "tool-roundtrip" / "session.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(whole, indent=2), encoding="utf-8")
    written: list[dict[str, bytes]] = []
    for source, target in ((folder / "session.json", tmp_path / "a"), (copy, tmp_path / "b")):
        code, output, err = run_main(capsys, "scaffold", str(source), "-o", str(target))
        assert (code, err) == (0, ""), output
        # What differs is the digest of the file read (its bytes differ), and so the folder's manifest of digests.
        digest = hashlib.sha256(source.read_bytes()).hexdigest().encode()
        files = _files(target)
        del files[".agentrig-scaffold.json"]
        written.append({name: data.replace(digest, b"DIGEST") for name, data in files.items()})
    assert set(written[0]) == {"tool-roundtrip.yaml", "golden/tool-roundtrip.json"}
    assert written[0] == written[1]
    code, output, _ = run_main(capsys, "run", str(tmp_path / "a"), "--out", str(tmp_path / "replayed"))
    assert code == 0, output
