"""Hostile attachments in report.html (docs/security.md, Attachments): an SVG and an HTML page whose script would set
the page's title and call a local server, an SVG that claims to be a PNG, and URLs on that server, opened in a real
headless Chromium. No script of theirs runs, and the server receives no request: an attachment is a chip of text,
an image drawn from its own bytes only for raster types (as `data:`, which no script runs in), never markup."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.reports.browsing import detail_text, open_page
from tests.reports.chromium import Chromium
from tests.reports.runs import run_cli


class _Counting(BaseHTTPRequestHandler):
    seen: list[str]

    def _answer(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A local server (127.0.0.1, a free port) that hostile content would call, and what it was asked."""
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Counting,), {"seen": seen}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _hostile_svg(base: str) -> bytes:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" onload="document.title=\'pwned-onload\'">'
        f'<script>document.title = "pwned-svg"; window.pwned = 1; fetch("{base}/svg-script", {{method: "POST"}});'
        f'</script><image href="{base}/svg-image.png" width="10" height="10"/>'
        f'<foreignObject><img xmlns="http://www.w3.org/1999/xhtml" src="{base}/svg-foreign.png"/></foreignObject>'
        "</svg>"
    ).encode()


def _hostile_html(base: str) -> bytes:
    return (
        f'<html><body onload="document.title=\'pwned-onload\'"><script>document.title = "pwned-html";'
        f' window.pwned = 2; navigator.sendBeacon("{base}/html-beacon");</script>'
        f'<img src="{base}/html-image.png"><link rel="stylesheet" href="{base}/html.css">'
        f'<iframe src="{base}/html-frame"></iframe></body></html>'
    ).encode()


def _scenario(base: str, folder: Path) -> str:
    (folder / "drawing.svg").write_bytes(_hostile_svg(base))
    (folder / "page.html").write_bytes(_hostile_html(base))

    def inline(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"""\
name: look
turns:
  - user:
      - Look.
      - file: drawing.svg
      - file: page.html
      - {{data: "{inline(_hostile_svg(base))}", media_type: image/svg+xml}}
      - {{data: "{inline(_hostile_svg(base))}", media_type: image/png}}
      - {{data: "{inline(_hostile_html(base))}", media_type: text/html}}
      - image_url: "{base}/url-image.png"
      - document_url: "{base}/url-document.pdf"
    model:
      - text: "I see <script>document.title = 'pwned-answer'</script>."
"""


def test_no_script_of_an_attachment_runs_and_nothing_is_fetched(
    browser: Chromium, tmp_path: Path, listener: tuple[str, list[str]]
) -> None:
    base, seen = listener
    (tmp_path / "look.yaml").write_text(_scenario(base, tmp_path), encoding="utf-8")
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(io.StringIO()) as printed:
        assert run_cli("run", "look.yaml", "--out", "out") == 0, printed.getvalue()
    report = tmp_path / "out" / "report.html"
    # The policy: nothing but the page's own style and script (by hash), images only from data: URLs.
    html = report.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    directives = dict(part.strip().split(" ", 1) for part in policy.group(1).split(";"))
    assert directives["default-src"] == "'none'"
    assert re.fullmatch(r"'sha256-[A-Za-z0-9+/]+=*'", directives["script-src"]), directives
    assert directives["img-src"] == "data:"
    assert "connect-src" not in directives  # default-src 'none' holds for fetches
    assert "frame-src" not in directives  # and for frames
    page = open_page(browser, report, "#look")
    try:
        assert "Look." in detail_text(page, "I see")
        chips = page.evaluate("[...document.querySelectorAll('#detail .attachment')].map(c => c.innerText)")
        assert len(chips) == 14  # the seven, in the message and in the turn's header
        # No attachment became markup: no SVG, frame or object of theirs in the page, and the one image drawn is
        # the "PNG" that is an SVG, as an inert data: image that does not decode.
        hostile = "svg, iframe, object, embed, foreignObject, link, #detail script"
        assert page.evaluate(f"document.querySelectorAll('{hostile}').length") == 0
        drawn = "[...document.querySelectorAll('#detail img')].map(i => [i.src.slice(0, 22), i.naturalWidth])"
        images = page.evaluate(drawn)
        assert images == [["data:image/png;base64,", 0]]
        assert page.evaluate("document.title").startswith("agentrig:")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert not [url for url in page.requests if url.startswith(("http:", "https:"))], page.requests
    finally:
        page.close()
    assert seen == []
