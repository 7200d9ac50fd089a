"""What a scenario's attachments may reach (docs/security.md, Attachments): a file only inside the scenario's folder
unless it says `outside: true` (a `../` path, an absolute path, a link out of the folder: one line naming the file,
line and field, exit code 2, nothing run), checked again when the turn reads the file, and read as it was checked;
a URL never fetched by an offline run (scripted, streamed, tinyagent, replayed): the URL is served from a local
server here, and the server counts every request it gets."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentrig.runtime.runfolder import jsonio
from tests.cli.cli_helpers import run_main

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")


def _scenario(folder: Path, user: str, *, stream: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "look.yaml"
    path.write_text(
        f"name: look\nstream: {str(stream).lower()}\nturns:\n  - user:\n      - Look.\n      - {user}\n"
        "    model:\n      - text: I see it.\n",
        encoding="utf-8",
    )
    return path


# --- paths ---------------------------------------------------------------------------------------------------


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A scenario folder `suite/` with a private file beside it, outside it."""
    (tmp_path / "private.key").write_text("-----BEGIN PRIVATE KEY-----", encoding="utf-8")
    (tmp_path / "suite").mkdir()
    return tmp_path / "suite"


@pytest.mark.parametrize(
    ("name", "user"),
    [
        ("parent", "{file: ../private.key}"),
        ("absolute", "{file: ABSOLUTE}"),
        ("link", "{file: innocent.png}"),
        ("link in a folder", "{file: photos/innocent.png}"),
        ("missing outside", "{file: ../nothing-there.png}"),
        ("device", "{file: /dev/zero}"),
    ],
)
def test_a_file_outside_the_folder_is_refused_with_one_located_line(
    suite: Path, capsys: pytest.CaptureFixture[str], name: str, user: str
) -> None:
    (suite / "innocent.png").symlink_to(suite.parent / "private.key")
    (suite / "photos").mkdir()
    (suite / "photos" / "innocent.png").symlink_to("../../private.key")
    path = _scenario(suite, user.replace("ABSOLUTE", str(suite.parent / "private.key")))
    code, out, err = run_main(capsys, "run", str(path), "--out", str(suite.parent / "out"))
    assert code == 2, (out, err)
    (line,) = err.splitlines()
    assert line.startswith(f"agentrig: error: {path}:6:"), line
    assert ": turns[0].user[1].file: " in line, line
    # Refused as outside whatever is there (a file, nothing, a device): the message names the rule, not the file's
    # state, so a scenario cannot probe the machine by its error.
    assert "is outside the scenario's folder" in line, line
    assert "say `outside: true`" in line, line
    assert not (suite.parent / "out").exists()


def test_a_file_swapped_for_a_link_after_its_check_is_not_read_through_the_link(
    suite: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The turn checks the file again before it reads it (it may have changed since the scenario was loaded); a file
    # replaced by a link out of the folder between that check and the read must not be read through the link.
    from agentrig.runtime.engine.pydantic_ai_engine import scenario_execution
    from agentrig.scenarios import referenced_files

    (suite / "photo.png").write_bytes(PNG)
    path = _scenario(suite, "{file: photo.png}")
    turn_started = threading.Event()
    inside, turn_prompt = referenced_files._inside, scenario_execution.turn_prompt  # pyright: ignore[reportPrivateUsage]

    def starting_the_turn(*args: Any) -> Any:
        turn_started.set()
        return turn_prompt(*args)

    def inside_then_swapped(resolved: Path, base_dir: Path) -> bool:
        answer = inside(resolved, base_dir)
        if turn_started.is_set() and not (suite / "photo.png").is_symlink():  # the turn's check, not the loader's
            (suite / "photo.png").unlink()
            (suite / "photo.png").symlink_to(suite.parent / "private.key")
        return answer

    monkeypatch.setattr(scenario_execution, "turn_prompt", starting_the_turn)
    monkeypatch.setattr(referenced_files, "_inside", inside_then_swapped)
    code, out, err = run_main(capsys, "run", str(path), "--out", str(suite.parent / "out"))
    assert (suite / "photo.png").is_symlink()  # the swap happened, in the turn
    for written in (suite.parent / "out").rglob("*"):  # the key's text, raw or in base64, in no file of the run
        assert not written.is_file() or not {b"PRIVATE KEY", b"LS0tLS1CRUdJTi"} & _substrings(written.read_bytes())
    report = jsonio.loads((suite.parent / "out" / "report.json").read_bytes())
    (entry,) = report["scenarios"]
    assert (code, entry["status"]) == (3, "error"), (out, err)
    assert f"{suite / 'photo.png'}: it became a symbolic link after it was checked" in entry["error"]["message"]


def _substrings(data: bytes) -> set[bytes]:
    return {needle for needle in (b"PRIVATE KEY", b"LS0tLS1CRUdJTi") if needle in data}


# --- URLs ----------------------------------------------------------------------------------------------------


class _Counting(BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PNG)))
        self.end_headers()
        self.wfile.write(PNG)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def served() -> Iterator[tuple[str, list[str]]]:
    """A local server for the URLs (127.0.0.1, a free port) and the paths it was asked for."""
    seen: list[str] = []
    handler = type("Handler", (_Counting,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


_URLS = [  # (field, path, force_download)
    ("image_url", "cat.png", False),
    ("document_url", "contract.pdf", True),
    ("audio_url", "memo.mp3", False),
    ("video_url", "clip.mp4", True),
    ("image_url", "dog.png", True),
]


def _urls(base: str, engine: str) -> list[tuple[str, str, bool]]:
    """The URL attachments of the scenario: every kind; only images for tinyagent (its user messages hold text and
    images, and it refuses the rest)."""
    return [
        (field, f"{base}/{path}", force)
        for field, path, force in _URLS
        if engine != "tinyagent" or field == "image_url"
    ]


@pytest.mark.parametrize(
    ("stream", "engine"), [(False, "pydantic-ai"), (True, "pydantic-ai"), (False, "tinyagent")], ids=str
)
def test_an_offline_run_fetches_no_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: tuple[str, list[str]], stream: bool, engine: str
) -> None:
    base, seen = served
    urls = _urls(base, engine)
    items = "\n      - ".join(
        f'{{{field}: "{url}", force_download: {str(force).lower()}}}' for field, url, force in urls
    )
    path = _scenario(tmp_path / "suite", items, stream=stream)
    code, out, err = run_main(capsys, "run", str(path), "--out", str(tmp_path / "out"), "--engine", engine)
    assert code == 0, (out, err)
    assert seen == []
    # Passed through as URL parts, their URL and kind kept: what a real model's provider would be sent.
    history = jsonio.loads((tmp_path / "out" / "scenarios" / "look" / "history.json").read_bytes())
    sent = [item for item in history["messages"][0]["parts"][-1]["content"] if isinstance(item, dict)]
    assert [(item["kind"], item["url"], item.get("force_download", False)) for item in sent] == [
        (field.replace("_", "-"), url, force) for field, url, force in urls
    ]


def test_a_replayed_run_fetches_no_url_the_recorded_run_downloaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: tuple[str, list[str]]
) -> None:
    from pydantic_ai.models import override_allow_model_requests

    from tests.providers.loopback import LoopbackServer, text

    base, seen = served
    # `allow-local`: pydantic-ai downloads a URL on a local address only when told so (its SSRF guard).
    path = _scenario(tmp_path / "suite", f'{{image_url: "{base}/cat.png", force_download: allow-local}}')
    recordings = str(tmp_path / "recordings")
    with LoopbackServer([text("I see it.")]) as provider, override_allow_model_requests(True):
        model = ["--model", "openai:gpt-4o", "--base-url", provider.openai_base_url, "--record", recordings]
        code, out, err = run_main(capsys, "run", str(path), "--out", str(tmp_path / "rec"), *model)
    assert code == 0, (out, err)
    assert seen == ["/cat.png"]  # a real model's provider layer downloaded it, as asked
    seen.clear()
    code, out, err = run_main(capsys, "run", str(path), "--out", str(tmp_path / "replay"), "--replay", recordings)
    assert code == 0, (out, err)
    assert seen == []
