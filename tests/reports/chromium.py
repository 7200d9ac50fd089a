"""Headless Chromium driven over the DevTools protocol through a pipe (`--remote-debugging-pipe`): no websocket
library, no chromedriver, no port; one browser process serves a whole test module.

    with Chromium.start(path) as browser:
        page = browser.open("file:///.../report.html")     # waits for the load event
        page.evaluate("document.title")
        page.console_errors, page.requests                 # what the page logged and fetched
        page.screenshot(path)

The browser reads commands (JSON, each ended by a NUL byte) from its fd 3 and writes replies and events to fd 4.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    """$AGENTRIG_CHROMIUM, else the first Chromium-like browser on PATH (Debian's `chromium` package first)."""
    explicit = os.environ.get("AGENTRIG_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).is_file() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """The browser died, answered with an error, or did not answer in time."""


@dataclass
class Page:
    """One tab: what it logged and requested since it was opened."""

    browser: Chromium
    session: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    loaded: bool = False

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited when it is a promise); a thrown error fails the call."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def trace(self, expression: str, categories: str = "devtools.timeline") -> list[dict[str, Any]]:
        """The browser's trace events (`Tracing` domain) while `expression` is evaluated: style recalculations,
        layouts, paints, with what they counted (`UpdateLayoutTree` has `args.elementCount`)."""
        events: list[dict[str, Any]] = []
        self.browser.trace_events, self.browser.trace_complete = events, False
        try:
            self.send("Tracing.start", {"categories": categories, "transferMode": "ReportEvents"})
            self.evaluate(expression)
            self.send("Tracing.end")
            while not self.browser.trace_complete:  # the data arrives in events after `Tracing.end` answers
                self.browser.pump()
        finally:
            self.browser.trace_events, self.browser.trace_complete = None, False
        return events

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.browser.targets.pop(self.session)})


class Chromium:
    """A headless Chromium process and its DevTools pipe."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int, profile: str) -> None:
        self._process = process
        self._to = to_browser
        self._from = from_browser
        self._profile = profile
        self._buffer = b""
        self._next_id = 0
        self._pages: dict[str, Page] = {}
        self.targets: dict[str, str] = {}
        self.trace_events: list[dict[str, Any]] | None = None  # collecting while not None (Page.trace)
        self.trace_complete = False

    @classmethod
    def start(cls, executable: str, *, width: int = 1400, height: int = 900) -> Chromium:
        profile = tempfile.mkdtemp(prefix="agentrig-chromium-")
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()

        def wire_pipes() -> None:  # in the child: the protocol's fixed descriptors 3 (in) and 4 (out)
            # Moved out of the way first: either pipe end may itself be 3 or 4.
            reading, writing = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, replies_write))
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        arguments = [
            executable,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",  # CI containers run as root, where the sandbox refuses to start
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--user-data-dir={profile}",
            "about:blank",
        ]
        process = subprocess.Popen(
            arguments,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_pipes,
            pass_fds=(3, 4),  # kept open through the exec (the rest are closed after `wire_pipes` runs)
        )
        os.close(commands_read)
        os.close(replies_write)
        return cls(process, commands_write, replies_read, profile)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        for descriptor in (self._to, self._from):
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    # --- the protocol ---------------------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(timeout=60)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _read(self, *, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("the browser did not answer in time")
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser exited (code {self._process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def pump(self) -> None:
        """Read and handle one event (an error after 60 s without one)."""
        self._event(self._read(timeout=60))

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("method") == "Tracing.dataCollected" and self.trace_events is not None:
            self.trace_events.extend(event["params"]["value"])
        elif event.get("method") == "Tracing.tracingComplete":
            self.trace_complete = True
        page = self._pages.get(event.get("sessionId") or "")
        if page is None:
            return
        method, params = event.get("method"), event.get("params") or {}
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            page.console_errors.append(str((details.get("exception") or {}).get("description") or details.get("text")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            page.console_errors.append(
                " ".join(str(arg.get("value", arg.get("description"))) for arg in params["args"])
            )
        elif method == "Log.entryAdded" and (params.get("entry") or {}).get("level") == "error":
            page.console_errors.append(str(params["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            page.requests.append(str((params.get("request") or {}).get("url")))
        elif method == "Page.loadEventFired":
            page.loaded = True

    def open(self, url: str) -> Page:
        """A new tab at `url`, once its load event has fired and the report's script has drawn it."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self._pages[session] = page
        self.targets[session] = target
        for domain in ("Runtime", "Log", "Network", "Page"):
            page.send(f"{domain}.enable")
        page.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while not page.loaded:
            if time.monotonic() > deadline:
                raise BrowserError(f"{url}: no load event")
            self._event(self._read(timeout=60))
        return page
