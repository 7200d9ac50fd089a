"""report.html at scale: how big the page of a 2,000-scenario run is, how long it takes to write, how much memory
the writer holds, and in a headless Chromium from file://: how soon it is drawn and painted, how long a sort takes
until the next frame is on screen, and the first search of the conversations.

    PYDANTIC_AI_NO_BANNER=1 .venv/bin/python bench/bench_report_html.py [N]

Runs `scenarios/` once for real folders, then builds a run of N (default 2,000) scenarios from copies of them (one
in twenty failed), and writes its page through the same writer a run uses (`HtmlReport`, one scenario at a time).
Prints figures, no assertions: timings belong here, not in tests. The browser part needs Chromium
(scripts/install_browser.sh); without one it says so and prints the rest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for `tests.reports`

from tests.reports.chromium import Chromium, find_browser

from agentrig.runtime.reports.html import HtmlReport
from agentrig.runtime.runfolder import jsonio

REPOSITORY = Path(__file__).resolve().parents[1]


def real_run(root: Path) -> Path:
    out = root / "seed"
    arguments = ["run", str(REPOSITORY / "scenarios"), "--out", str(out), "-q", "--no-html"]
    command = [sys.executable, "-c", "from agentrig.cli import main; main()", *arguments]
    subprocess.run(command, check=False, capture_output=True, cwd=REPOSITORY)
    if not (out / "report.json").is_file():
        raise SystemExit(f"the seed run wrote no report: {' '.join(command)}")
    return out


def big_run(seed: Path, root: Path, count: int) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """A run folder of `count` scenarios copied round-robin from `seed` (every twentieth marked failed)."""
    report = jsonio.read_json_file(seed / "report.json")
    templates = report["scenarios"]
    run = root / f"run-{count}"
    entries: list[dict[str, Any]] = []
    for number in range(count):
        template = templates[number % len(templates)]
        name = f"{template['name']}-{number:05d}"
        shutil.copytree(seed / template["output_dir"], run / "scenarios" / name)
        entry = {**template, "name": name, "id": f"{template['path']}::{name}", "output_dir": f"scenarios/{name}"}
        if number % 20 == 7:
            failed_check = {
                "name": "turn 1: output.equals",
                "passed": False,
                "expected": "yes",
                "actual": "no",
                "detail": "--- expected\n+++ actual\n@@ -1 +1 @@\n-yes\n+no\n",
                "skipped_reason": None,
            }
            entry = {**entry, "status": "failed", "checks": [*entry["checks"], failed_check]}
        entries.append(entry)
    head = {key: value for key, value in report.items() if key != "scenarios"}
    head["summary"] = {**head["summary"], "total": count, "failed": count // 20, "passed": count - count // 20}
    return run, head, entries


def write_page(run: Path, head: dict[str, Any], entries: list[dict[str, Any]]) -> tuple[float, int, Path]:
    """Seconds to write the page and the writer's peak traced memory (bytes), entries fed one at a time."""

    def feed() -> Iterator[dict[str, Any]]:
        yield from entries

    target = run / "report.html"
    tracemalloc.start()
    started = time.perf_counter()
    with jsonio.open_atomic(target) as handle:
        page = HtmlReport(handle, head, run_dir=run, engine="pydantic-ai")
        for entry in feed():
            page.add(entry)
        page.finish()
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak, target


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# Both resolve to [click until the next frame, click until every row is in place and drawn]: the page fills the row
# groups off screen in later tasks, the table aria-busy until then (pages before that: the same frame).
_UNTIL_SETTLED = """
  requestAnimationFrame(() => setTimeout(() => {
    const frame = performance.now() - started;
    (function settled() {
      if (document.querySelector('#scenarios[aria-busy]')) setTimeout(settled, 1);
      else requestAnimationFrame(() => setTimeout(() => resolve([frame, performance.now() - started]), 0));
    })();
  }, 0));"""

_SORT_TO_NEXT_FRAME = (
    """new Promise(resolve => {
  const buttons = [...document.querySelectorAll('#scenarios th button')];
  const button = buttons.find(b => b.textContent === TITLE);
  const started = performance.now();
  button.click();"""
    + _UNTIL_SETTLED
    + "\n})"
)

_FILTER_TO_NEXT_FRAME = (
    """new Promise(resolve => {
  const button = document.querySelector('button[data-filter=' + JSON.stringify(KEY) + ']');
  const started = performance.now();
  button.click();"""
    + _UNTIL_SETTLED
    + "\n})"
)

_OPEN_TRANSCRIPT = """new Promise(resolve => {
  const links = [...document.querySelectorAll('#scenarios a.row-link')];
  const link = links.find(a => a.textContent.includes('compaction-threshold'));
  const started = performance.now();
  location.hash = link.getAttribute('href');
  (function poll() {  // drawn once its chunk is decompressed (pages before issue 45: at once)
    const heading = document.querySelector('#detail h2');
    if (heading && heading.textContent.includes(link.textContent)) resolve(performance.now() - started);
    else setTimeout(poll, 1);
  })();
})"""

_SEARCH_CONVERSATIONS = """new Promise(resolve => {
  const box = document.querySelector('.toolbar input'), count = document.querySelector('.toolbar .count');
  box.value = WORD; box.dispatchEvent(new Event('input'));
  const started = performance.now();  // the conversations are searched 150 ms after the last keystroke
  (function poll() {
    if (count.textContent.includes('by their conversation')) resolve(performance.now() - started - 150);
    else setTimeout(poll, 2);
  })();
})"""


TABS = 5


def browser_figures(executable: str, page_path: Path) -> dict[str, float]:
    """Milliseconds, median of TABS fresh tabs: until the page was drawn (its own clock, from navigation start),
    until that drawing was on screen (first paint: the browser's paint timing, or the first frame after drawing),
    to filter the rows (three filters, twice) and to sort them by a column until the next frame is on screen and
    until every row is in place (each of four columns, twice; the first sort in a fresh tab counted apart too), to
    search the conversations the first time (the text is read, and decompressed, then) and to open the heaviest
    scenario's transcript until it is drawn."""
    figures: dict[str, list[float]] = {
        "drawn_ms": [],
        "painted_ms": [],
        "tab_open_wall_ms": [],
        "first_sort_ms": [],
        "sort_ms": [],
        "filter_ms": [],
        "sort_settled_ms": [],
        "filter_settled_ms": [],
        "search_conversations_ms": [],
        "open_transcript_ms": [],
    }
    with Chromium.start(executable) as browser:
        for _ in range(TABS):
            started = time.perf_counter()
            page = browser.open(page_path.resolve().as_uri())
            while not page.evaluate("document.documentElement.dataset.painted"):
                time.sleep(0.01)
            figures["tab_open_wall_ms"].append((time.perf_counter() - started) * 1000)
            figures["drawn_ms"].append(float(page.evaluate("document.documentElement.dataset.ready")))
            paint = page.evaluate(
                "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
                " || Number(document.documentElement.dataset.painted)"
            )
            figures["painted_ms"].append(float(paint))
            for key in ("failed", "passed", "all") * 2:
                frame, settled = page.evaluate(_FILTER_TO_NEXT_FRAME.replace("KEY", repr(key)))
                figures["filter_ms"].append(float(frame))
                figures["filter_settled_ms"].append(float(settled))
            for title in ("Scenario", "Time", "Tokens in / out", "Status") * 2:
                sort_ms, settled = page.evaluate(_SORT_TO_NEXT_FRAME.replace("TITLE", repr(title)))
                sort_ms = float(sort_ms)
                figures["sort_ms"].append(sort_ms)
                figures["sort_settled_ms"].append(float(settled))
                if title == "Scenario" and len(figures["first_sort_ms"]) < len(figures["drawn_ms"]):
                    figures["first_sort_ms"].append(sort_ms)
            figures["search_conversations_ms"].append(
                float(page.evaluate(_SEARCH_CONVERSATIONS.replace("WORD", repr("preparing release"))))
            )
            page.evaluate(
                "(() => { const box = document.querySelector('.toolbar input'); box.value = '';"
                " box.dispatchEvent(new Event('input')); })()"
            )
            figures["open_transcript_ms"].append(float(page.evaluate(_OPEN_TRANSCRIPT)))
            assert not page.console_errors, page.console_errors
            page.close()
    result = {name: _median(values) for name, values in figures.items()}
    result["sort_worst_ms"] = max(figures["sort_ms"])
    result["first_sort_worst_ms"] = max(figures["first_sort_ms"])
    result["filter_worst_ms"] = max(figures["filter_ms"])
    result["sort_settled_worst_ms"] = max(figures["sort_settled_ms"])
    result["filter_settled_worst_ms"] = max(figures["filter_settled_ms"])
    return result


def load_average() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg()) + f" on {os.cpu_count()} cores"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"at start: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="agentrig-bench-html-") as temp:
        root = Path(temp)
        seed = real_run(root)
        small_run, small_head, small_entries = big_run(seed, root, count // 10)
        run, head, entries = big_run(seed, root, count)
        small_seconds, small_peak, _ = write_page(small_run, small_head, small_entries)
        seconds, peak, page = write_page(run, head, entries)
        report_json = sum(len(jsonio.dumps(entry)) for entry in entries)
        size = page.stat().st_size
        print(f"scenarios: {count}")
        print(
            f"report.html: {size / 1e6:.1f} MB ({size / count / 1e3:.1f} kB per scenario; report.json entries "
            f"{report_json / 1e6:.1f} MB)"
        )
        print(
            f"write: {seconds:.2f} s ({seconds / count * 1e3:.2f} ms per scenario; {count // 10} scenarios: "
            f"{small_seconds:.2f} s)"
        )
        print(
            f"writer peak memory (tracemalloc, entries excluded): {count // 10} scenarios {small_peak / 1e6:.1f} MB,"
            f" {count} scenarios {peak / 1e6:.1f} MB ({peak / small_peak:.2f}x for 10x the scenarios)"
        )
        executable = find_browser()
        if executable is None:
            print("browser: none found (scripts/install_browser.sh); open time not measured")
            return
        figures = browser_figures(executable, page)
        print(
            f"browser (medians of {TABS} tabs): drawn {figures['drawn_ms']:.0f} ms after navigation start, first paint "
            f"{figures['painted_ms']:.0f} ms; tab open to painted, wall {figures['tab_open_wall_ms']:.0f} ms"
        )
        print(
            f"sort {count} rows, click to next frame: median {figures['sort_ms']:.0f} ms, worst "
            f"{figures['sort_worst_ms']:.0f} ms (4 columns x 2 x {TABS} tabs); the first sort in a fresh tab: median "
            f"{figures['first_sort_ms']:.0f} ms, worst {figures['first_sort_worst_ms']:.0f} ms"
        )
        print(
            f"filter {count} rows (Failed, Passed, All, twice), click to next frame: median {figures['filter_ms']:.0f} "
            f"ms, worst {figures['filter_worst_ms']:.0f} ms"
        )
        print(
            f"until every row is in place (the groups off screen filled too): sort median "
            f"{figures['sort_settled_ms']:.0f} ms, worst {figures['sort_settled_worst_ms']:.0f} ms; filter median "
            f"{figures['filter_settled_ms']:.0f} ms, worst {figures['filter_settled_worst_ms']:.0f} ms"
        )
        print(
            f"first search of the conversations {figures['search_conversations_ms']:.0f} ms; one transcript opened "
            f"in {figures['open_transcript_ms']:.0f} ms"
        )
        print(f"at end: {load_average()}")


if __name__ == "__main__":
    main()
