"""Run folders for the report tests: a baseline run and a candidate run of the same suite, where one scenario
that passed on the baseline fails on the candidate (its answer changed: an output check and its golden history
fail), one streams, one compacts, and one prompt tries to break out of the page's script."""

from __future__ import annotations

import base64
import contextlib
import gzip
import re
from dataclasses import dataclass
from pathlib import Path

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio

HOSTILE = "</script><script>window.pwned = 1</script><!-- <b>bold</b>"

_ANSWERING = """\
name: answering
tags: [tools]
system_prompt: You are terse.
tools:
  bash:
    results:
      - call: 1
        retry: "unknown flag -z; use -l"
      - return: "total 0"
turns:
  - user: List the files in long form.
    model:
      - thought: The user wants a long listing.
        tool_calls: [{id: tc_1, name: bash, args: {command: ls -z}}]
        usage: {input_tokens: 100, output_tokens: 12}
      - tool_calls: [{id: tc_2, name: bash, args: {command: ls -l}}]
        usage: {input_tokens: 130, output_tokens: 12}
      - text: ANSWER
        usage: {input_tokens: 150, output_tokens: 6}
    expect:
      output: {equals: The directory is empty.}
expect:
  golden: golden/answering.json
"""

_HOSTILE = f"""\
name: hostile-prompt
tags: [security]
stream: true
turns:
  - user: "{HOSTILE}"
    model:
      - text: "I will not run {HOSTILE}"
        usage: {{input_tokens: 12, output_tokens: 9}}
"""

_GREETING = """\
name: ahoy
tags: [smoke]
turns:
  - user: Say hello.
    model:
      - text: Hello.
"""


@dataclass(frozen=True)
class Runs:
    scenarios: Path
    baseline: Path
    candidate: Path


def run_cli(*args: str) -> int:
    """`agentrig ARGS` through the console entry point (one-line errors and their exit codes included)."""
    try:
        main(list(args))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def write_suite(directory: Path, answer: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "answering.yaml").write_text(_ANSWERING.replace("ANSWER", answer), encoding="utf-8")
    (directory / "hostile.yaml").write_text(_HOSTILE, encoding="utf-8")
    (directory / "ahoy.yaml").write_text(_GREETING, encoding="utf-8")
    return directory


def make_runs(root: Path) -> Runs:
    """The baseline passes everything (its goldens are written by it); the candidate's `answering` fails.
    Run from `root` with relative paths, as a user would: the pages show `scenarios/answering.yaml`."""
    with contextlib.chdir(root):
        write_suite(Path("scenarios"), "The directory is empty.")
        assert run_cli("run", "scenarios", "--out", "golden-run", "--update-golden", "-q") == 0
        assert run_cli("run", "scenarios", "--out", "baseline", "-q") == 0
        write_suite(Path("scenarios"), "Nothing is here.")
        assert run_cli("run", "scenarios", "--out", "candidate", "-q") == 1
    return Runs(scenarios=root / "scenarios", baseline=root / "baseline", candidate=root / "candidate")


_CHUNK = re.compile(r'<script type="application/octet-stream" id="ar-c(\d+)">([^<]*)</script>')


def decompressed(page: str) -> str:
    """The page with each compressed chunk of scenarios (report.html) written out as the JSON blocks it holds,
    `<script type="application/json" id="ar-sN">`, numbered as the index's rows: what the page's script reads."""
    index = page.split('<script type="application/json" id="ar-index">', 1)[-1]
    size = int(m.group(1)) if (m := re.search(r'"chunk_size":(\d+)', index)) else 0

    def blocks(match: re.Match[str]) -> str:
        lines = gzip.decompress(base64.b64decode(match.group(2))).decode("utf-8").split("\n")
        first = int(match.group(1)) * size
        return "".join(
            f'<script type="application/json" id="ar-s{first + n}">{line}</script>\n' for n, line in enumerate(lines)
        )

    return _CHUNK.sub(blocks, page)


def readable_text(path: Path) -> str:
    """A written file's text as its reader gets it: report.html with its compressed scenarios written out, so a
    scan for a key that must not be there looks inside them (in the gzip it could never match)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    return decompressed(text) if path.suffix == ".html" else text


def data_blocks(page: str) -> dict[str, object]:
    """Every `<script type="application/json" id=...>` block of a page (the chunks' scenarios too), parsed."""
    blocks: dict[str, object] = {}
    marker = '<script type="application/json" id="'
    for chunk in decompressed(page).split(marker)[1:]:
        block_id, rest = chunk.split('">', 1)
        blocks[block_id] = jsonio.loads(rest.split("</script>", 1)[0])
    return blocks
