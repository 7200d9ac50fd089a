"""What the browser tests of the report pages share: finding (or installing) Chromium, opening a page from disk and
waiting until it is drawn, reading the visible rows, pressing real keys, and axe-core.

In the gate (`CI` set) a missing browser or a missing axe-core fails the test that needs it: a skip there would
pass the gate without the check. Elsewhere the test skips and says how to install what is missing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.reports.chromium import Chromium, Page, find_browser

REPOSITORY = Path(__file__).parents[2]
INSTALL_SCRIPT = REPOSITORY / "scripts" / "install_browser.sh"
ARTIFACTS = Path(os.environ.get("AGENTRIG_TEST_ARTIFACTS") or REPOSITORY / "test-artifacts")
VISIBLE_ROWS = "[...document.querySelectorAll('#scenarios tbody tr')].filter(tr => !tr.hidden)"


def missing(reason: str) -> None:
    """Fail in the gate (`CI` set), skip elsewhere: a check the gate promises cannot be skipped there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the gate runs this test, it does not skip it)")
    pytest.skip(reason)


def installed_browser() -> str | None:
    """Install Chromium with the repository's script when the tests may (root, apt-get, not opted out)."""
    if os.environ.get("AGENTRIG_NO_BROWSER_INSTALL") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    # pytest-xdist workers may all get here: one installs, the others wait on the lock and find it installed.
    with open(Path("/tmp") / "agentrig-install-browser.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if find_browser() is None:
            subprocess.run(["sh", str(INSTALL_SCRIPT)], check=False, capture_output=True, timeout=900)
    return find_browser()


def start_browser() -> Chromium:
    executable = find_browser() or installed_browser()
    if executable is None:
        missing(
            "no Chromium or Chrome found: run scripts/install_browser.sh (apt-get install chromium) "
            "or set AGENTRIG_CHROMIUM=/path/to/chrome"
        )
        raise AssertionError("unreachable")
    return Chromium.start(executable)


def wait_for(page: Page, condition: str) -> Any:
    """The first truthy value of a JavaScript expression, polled until it is (an error after 10 s)."""
    return page.evaluate(
        "new Promise((resolve, reject) => { const start = Date.now(); (function poll() {"
        f" let value; try {{ value = ({condition}); }} catch (error) {{ value = null; }}"
        " if (value) resolve(value); else if (Date.now() - start > 10000) reject(new Error('timed out: ' +"
        f" {json.dumps(condition)})); else setTimeout(poll, 20); }})(); }})"
    )


def open_page(browser: Chromium, path: Path, fragment: str = "") -> Page:
    page = browser.open(path.resolve().as_uri() + fragment)
    wait_for(page, "document.documentElement.dataset.ready")
    return page


def detail_text(page: Page, containing: str = "") -> str:
    """The scenario pane's text once it shows a scenario (and `containing`)."""
    condition = "document.querySelector('#detail h2')"
    if containing:
        condition += f" && document.getElementById('detail').innerText.includes({json.dumps(containing)})"
    return str(wait_for(page, f"{condition} && document.getElementById('detail').innerText"))


def visible_names(page: Page) -> list[str]:
    return page.evaluate(f"{VISIBLE_ROWS}.map(tr => tr.querySelector('a.row-link').textContent)")


SETTLED = "!document.querySelector('#scenarios[aria-busy]')"
"""Every row in its group: a sort, filter or search fills the groups off screen in later tasks (list.js), the
table aria-busy until then."""


def settled(page: Page) -> None:
    wait_for(page, SETTLED)


def click_filter(page: Page, key: str) -> None:
    page.evaluate(f"document.querySelector('button[data-filter=\"{key}\"]').click()")
    settled(page)


def search(page: Page, text: str) -> None:
    page.evaluate(
        "(() => { const box = document.querySelector('.toolbar input');"
        f" box.value = {json.dumps(text)}; box.dispatchEvent(new Event('input')); }})()"
    )
    settled(page)


_KEYS = {
    "Tab": (9, "Tab"),
    "Enter": (13, "Enter"),
    "ArrowDown": (40, "ArrowDown"),
    "ArrowUp": (38, "ArrowUp"),
    "End": (35, "End"),
    "Home": (36, "Home"),
    " ": (32, "Space"),
}


def press(page: Page, key: str, *, shift: bool = False) -> None:
    """A real key press (down and up) through the browser's input pipeline, as a keyboard user makes it."""
    code, name = _KEYS[key]
    common: dict[str, Any] = {"key": key, "code": name, "windowsVirtualKeyCode": code, "modifiers": 8 if shift else 0}
    text = {"text": "\r"} if key == "Enter" else {"text": " "} if key == " " else {}
    page.send("Input.dispatchKeyEvent", {"type": "keyDown", **common, **text})
    page.send("Input.dispatchKeyEvent", {"type": "keyUp", **common})


def focused(page: Page) -> str:
    """What has the keyboard focus, as `tag.class: text`."""
    return page.evaluate(
        "(() => { const e = document.activeElement; return e ? e.tagName.toLowerCase() + '.' + e.className + ': '"
        " + (e.textContent || e.value || '').trim().slice(0, 60) : ''; })()"
    )


def axe_source() -> str:
    """axe-core's axe.min.js: $AGENTRIG_AXE_JS, else the copy the `axe-core-python` package ships (the dev extra)."""
    explicit = os.environ.get("AGENTRIG_AXE_JS")
    if explicit:
        return Path(explicit).read_text(encoding="utf-8")
    try:
        return resources.files("axe_core_python").joinpath("axe.min.js").read_text(encoding="utf-8")
    except ModuleNotFoundError:
        missing(
            "axe-core not found: install the dev extra (pip install -e '.[dev]': axe-core-python ships axe.min.js) "
            "or set AGENTRIG_AXE_JS=/path/to/axe.min.js"
        )
        raise AssertionError("unreachable") from None


def axe_violations(page: Page, source: str) -> list[dict[str, Any]]:
    """axe-core's violations of the page as it is now (WCAG 2 A and AA rules and best practices): each with its
    rule id, impact, help and the elements it found."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(source + "\n;true")
    found = page.evaluate(
        "axe.run(document, { resultTypes: ['violations'] }).then(r => r.violations.map(v => ({ id: v.id, impact:"
        " v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ') + ' :: ' + n.failureSummary) })))"
    )
    return list(found)


def serious(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [violation for violation in violations if violation["impact"] in ("serious", "critical")]
