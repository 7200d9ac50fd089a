"""A user message with attachments (a canonical `user-content` part) in every report: report.html shows the user's
text and each attachment as a labelled chip (kind, media type, size, short hash; a URL as text, never a link or a
fetch), an image drawn from its own bytes as a data: image, the turn's header where the message starts it; the CLI's
and summary.md's failure text label each attachment where they show the prompt, and a golden file's diff shows an
attachment's bytes by their size and hash, never as base64."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import re
import shutil
from pathlib import Path

import pytest

from agentrig.runtime.checks.history_checks import canonical_golden_bytes, check_golden
from agentrig.runtime.history.canonical import FileContent, Message, UserContentPart
from agentrig.runtime.reports.scenario_data import canonical_diff
from agentrig.runtime.runfolder import jsonio
from tests.reports.browsing import REPOSITORY, axe_source, axe_violations, detail_text, open_page, serious
from tests.reports.chromium import Chromium
from tests.reports.runs import run_cli

FIXTURES = REPOSITORY / "scenarios" / "fixtures" / "attachments"
URL = "https://example.com/contracts/2026.pdf?sig=abc&x=<b>1</b>"

_COMPARE = f"""\
name: compare
tags: [attachments]
turns:
  - user:
      - Compare the receipt with the contract.
      - file: attachments/red-square.png
      - {{file: attachments/invoice.pdf, identifier: invoice-42}}
      - document_url: "{URL}"
    model:
      - text: They match.
  - user: And the total?
    model:
      - text: "42"
    expect:
      output: {{contains: "43"}}
"""

_UNANSWERED = """\
name: unanswered
turns:
  - user:
      - Look at this.
      - file: attachments/red-square.png
      - image_url: https://example.com/cat.jpg
    model: []
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A run of the two scenarios (both fail) and what `agentrig run` printed."""
    root = tmp_path_factory.mktemp("attachments")
    shutil.copytree(FIXTURES, root / "attachments")
    (root / "compare.yaml").write_text(_COMPARE, encoding="utf-8")
    (root / "unanswered.yaml").write_text(_UNANSWERED, encoding="utf-8")
    capture = root / "stdout.txt"
    with contextlib.chdir(root), capture.open("w") as printed, contextlib.redirect_stdout(printed):
        assert run_cli("run", "compare.yaml", "unanswered.yaml", "--out", "out") == 1
    return root / "out", capture.read_text(encoding="utf-8")


PNG = (FIXTURES / "red-square.png").read_bytes()
PDF = (FIXTURES / "invoice.pdf").read_bytes()
PNG_LABEL = f"<image/png, {len(PNG)} bytes, sha256:{hashlib.sha256(PNG).hexdigest()[:12]}>"


def test_the_failure_text_labels_each_attachment_of_the_prompt(run: tuple[Path, str]) -> None:
    out, printed = run
    asked = f'the model was asked: user-prompt "Look at this." + {PNG_LABEL} + <image-url https://example.com/cat.jpg>'
    assert asked in printed
    summary = (out / "summary.md").read_text(encoding="utf-8")
    escaped = re.sub(r"([<>])", r"\\\1", asked)  # markdown: the labels are text, not HTML tags
    assert escaped in summary


def test_the_page_shows_the_text_and_each_attachment_as_a_chip(browser: Chromium, run: tuple[Path, str]) -> None:
    out, _ = run
    page = open_page(browser, out / "report.html", "#compare")
    try:
        detail_text(page, "Compare the receipt")
        user = page.evaluate("document.querySelector('#s0-m-0 [data-part=\"0\"]').innerText")
        assert user.splitlines()[:2] == ["User", "Compare the receipt with the contract."]
        chips = page.evaluate("[...document.querySelectorAll('#s0-m-0 .attachment')].map(c => c.innerText)")
        assert [" ".join(chip.split()) for chip in chips] == [
            f"image image/png · {len(PNG)} B · sha256:{hashlib.sha256(PNG).hexdigest()[:12]}",
            f"document application/pdf · {len(PDF)} B · sha256:{hashlib.sha256(PDF).hexdigest()[:12]} · id invoice-42",
            f"document URL application/pdf {URL}",
        ]
        # The URL is text: no link, no image, nothing that loads or follows it.
        assert (
            page.evaluate(
                'document.querySelectorAll(\'#detail a[href*="example.com"], #detail [src*="example"]\').length'
            )
            == 0
        )
        # The image is drawn from its own bytes, and only from them.
        image = page.evaluate(
            "(() => { const i = document.querySelector('#s0-m-0 img.attached-image');"
            " return i && [i.getAttribute('src'), i.complete && i.naturalWidth, i.alt]; })()"
        )
        assert image[0] == "data:image/png;base64," + base64.b64encode(PNG).decode()
        assert image[1] == 2  # decoded: the policy let the page draw it
        assert image[2].startswith("the attached image/png")
        assert page.evaluate("document.querySelectorAll('#detail img').length") == 1  # not the PDF
        # The turn's header is where the message with attachments starts it, and names them.
        header = page.evaluate("document.getElementById('s0-turn-1').innerText")
        assert " ".join(header.split()).endswith(
            "3 attachments: image image/png document application/pdf document URL application/pdf"
        )
        assert page.evaluate("document.getElementById('s0-turn-1').nextElementSibling.id") == "s0-m-0"
        assert page.evaluate("document.getElementById('s0-turn-2').nextElementSibling.id") == "s0-m-2"
        assert page.console_errors == []
        others = [url for url in page.requests if url.split("#")[0] != (out / "report.html").resolve().as_uri()]
        assert others == ["data:image/png;base64," + base64.b64encode(PNG).decode()]  # the page's own bytes
    finally:
        page.close()


def test_the_conversation_search_reads_no_attachment_bytes(browser: Chromium, run: tuple[Path, str]) -> None:
    out, _ = run
    page = open_page(browser, out / "report.html")
    try:
        piece = base64.b64encode(PDF).decode()[40:52].lower()  # text that is only in the PDF's base64
        page.evaluate(
            "(() => { const box = document.querySelector('.toolbar input');"
            f" box.value = {piece!r}; box.dispatchEvent(new Event('input')); }})()"
        )
        page.evaluate("new Promise(resolve => setTimeout(resolve, 400))")  # the conversations are searched at 150 ms
        assert page.evaluate("document.querySelector('.toolbar .count').textContent") == "0 of 2 shown"
    finally:
        page.close()


def test_axe_core_finds_no_serious_violation_among_the_chips(browser: Chromium, run: tuple[Path, str]) -> None:
    out, _ = run
    source = axe_source()
    page = open_page(browser, out / "report.html", "#compare")
    try:
        detail_text(page, "Compare the receipt")
        assert serious(axe_violations(page, source)) == []
    finally:
        page.close()


_GOLDEN = """\
name: golden-picture
turns:
  - user:
      - What is this?
      - file: attachments/{file}
    model:
      - text: A picture.
expect:
  golden: golden/picture.json
"""


def test_a_golden_diff_shows_an_attachment_by_its_size_and_hash_not_its_base64(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "attachments")
    scenario = tmp_path / "picture.yaml"
    printed = io.StringIO()
    with contextlib.chdir(tmp_path):
        scenario.write_text(_GOLDEN.format(file="red-square.png"), encoding="utf-8")
        assert run_cli("run", "picture.yaml", "--out", "out", "-q", "--update-golden") == 0
        scenario.write_text(_GOLDEN.format(file="invoice.pdf"), encoding="utf-8")  # another attachment now
        with contextlib.redirect_stdout(printed):
            assert run_cli("run", "picture.yaml", "--out", "out") == 1
    pdf_label = f'"data": "<{len(PDF)} bytes in base64, sha256:{hashlib.sha256(PDF).hexdigest()[:12]}>"'
    png_label = f'"data": "<{len(PNG)} bytes in base64, sha256:{hashlib.sha256(PNG).hexdigest()[:12]}>"'
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    report = (tmp_path / "out" / "report.json").read_text(encoding="utf-8")
    (check,) = [c for c in jsonio.loads(report)["scenarios"][0]["checks"] if c["name"] == "scenario: golden"]
    for text in (printed.getvalue(), summary, check["detail"]):
        assert f"-              {png_label}" in text
        assert f"+              {pdf_label}" in text
        assert base64.b64encode(PNG).decode() not in text
        assert base64.b64encode(PDF).decode()[:64] not in text
    # The files themselves keep the bytes: the golden the PNG's, this run's history the PDF's.
    assert base64.b64encode(PNG).decode() in (tmp_path / "golden" / "picture.json").read_text(encoding="utf-8")


def test_a_golden_that_differs_only_in_its_base64_alphabet_shows_the_whole_lines(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 2  # its base64 has `+` and `/`: URL-safe base64 writes it otherwise
    history = [Message.request(UserContentPart(content=("look", FileContent(data=blob, media_type="image/png"))))]
    golden = tmp_path / "golden.json"
    written = canonical_golden_bytes(history).decode()
    standard, urlsafe = base64.b64encode(blob).decode(), base64.urlsafe_b64encode(blob).decode()
    golden.write_text(written.replace(standard, urlsafe), encoding="utf-8")

    check = check_golden(golden, history, update=False)

    assert not check.passed
    lines = str(check.detail).splitlines()  # not "holds a secret", not two equal labels
    assert [line.split()[-1] for line in lines if line.startswith(("-  ", "+  "))] == [f'"{urlsafe}"', f'"{standard}"']


def test_the_pages_baseline_diff_shows_an_attachment_by_its_size_and_hash() -> None:
    history = '{{\n  "data": "{}"\n}}\n'
    before, now = base64.b64encode(PNG).decode(), base64.b64encode(PDF).decode()
    diff = canonical_diff(history.format(before), history.format(now), baseline_label="a", candidate_label="b")
    assert f'-  "data": "<{len(PNG)} bytes in base64, sha256:{hashlib.sha256(PNG).hexdigest()[:12]}>"' in diff
    assert f'+  "data": "<{len(PDF)} bytes in base64, sha256:{hashlib.sha256(PDF).hexdigest()[:12]}>"' in diff
    assert before not in diff
