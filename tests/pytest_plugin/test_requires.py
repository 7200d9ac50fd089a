"""A scenario item whose `requires:` extra is not installed is skipped with the extra and its install command
(`pytest.skip`), in pytest's summary and in `--agentrig-out`'s reports; `--agentrig-require-extras` and the ini's
`agentrig_require_extras` make it an error. The extra is made missing by pointing its module at one that does not
exist (the inner sessions share this process's modules)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest

from agentrig.runtime.runfolder import jsonio
from agentrig.scenarios import composition_model
from tests.pytest_plugin.project import scenario, write

pytest_plugins = ["pytester"]

NEEDS_HARNESS = """\
name: needs-harness
requires: [harness]
turns:
  - user: hi
    model:
      - text: hello
"""

REASON = "requires harness: pip install pydantic-ai-harness"


@pytest.fixture(autouse=True)
def no_harness(monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester) -> None:
    _, install = composition_model.EXTRAS["harness"]
    monkeypatch.setitem(composition_model.EXTRAS, "harness", (("agentrig_no_such_module",), install))
    write(pytester, {"scenarios/a.yaml": scenario("passes"), "scenarios/h.yaml": NEEDS_HARNESS})


def test_the_item_is_skipped_with_the_install_command(pytester: pytest.Pytester) -> None:
    out = pytester.path / "out"

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs", f"--agentrig-out={out}")

    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"SKIPPED [[]1[]] scenarios/h.yaml:*: {REASON}"])
    entries = {item["name"]: item for item in jsonio.loads((out / "report.json").read_bytes())["scenarios"]}
    assert entries["needs-harness"]["status"] == "skipped"
    assert [check["skipped_reason"] for check in entries["needs-harness"]["checks"]] == [REASON]
    (skipped,) = ElementTree.parse(out / "junit.xml").getroot().iter("skipped")
    assert skipped.get("message") == REASON


@pytest.mark.parametrize("how", ["option", "ini"])
def test_require_extras_makes_it_an_error(pytester: pytest.Pytester, how: str) -> None:
    if how == "ini":
        pytester.makeini("[pytest]\nagentrig_require_extras = true\n")
    args = ["--agentrig-require-extras"] if how == "option" else []

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "ERROR needs-harness (scenarios/h.yaml)",
            "  error unsupported *: scenarios/h.yaml:2: requires[[]0[]]: the harness extra is not installed *",
        ],
        consecutive=True,
    )
