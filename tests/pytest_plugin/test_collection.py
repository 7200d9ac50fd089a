"""What the plugin collects: each scenario of the scenario paths as an item, and no other YAML of the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrig.pytest_plugin.state import SKIPPED_DIRECTORIES, STATE_KEY
from agentrig.scenarios import loader
from tests.pytest_plugin.project import scenario, write

pytest_plugins = ["pytester"]

NOT_YAML_OF_OURS = ": : this is not YAML [\n"
"""Were the plugin to parse a file holding this, the run would show a collection error."""


def test_every_scenario_is_an_item_and_no_other_yaml_is_opened(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "scenarios/tools.yaml": scenario("first") + "\n",
            "scenarios/more/two.yml": f"- {scenario('second').replace(chr(10), chr(10) + '  ')}",
            "scenarios/golden/left.yaml": NOT_YAML_OF_OURS,  # run artifacts and fragments, as `agentrig run` skips
            "scenarios/_fragment.yaml": NOT_YAML_OF_OURS,
            ".github/workflows/ci.yml": NOT_YAML_OF_OURS,
            "docker-compose.yaml": NOT_YAML_OF_OURS,
            "tests/fixtures/data.yaml": NOT_YAML_OF_OURS,
            "tests/test_plain.py": "def test_plain():\n    pass\n",
        },
    )

    result = pytester.runpytest_inprocess("--collect-only", "-q")

    assert result.ret == 0, result.stdout.str()
    ids = sorted(line for line in result.outlines if "::" in line)
    assert ids == ["scenarios/more/two.yml::second", "scenarios/tools.yaml::first", "tests/test_plain.py::test_plain"]


def test_the_ini_option_names_the_scenario_paths_and_a_file_on_the_command_line_is_collected(
    pytester: pytest.Pytester,
) -> None:
    write(
        pytester,
        {
            "checks/a.yaml": scenario("in-checks"),
            "scenarios/b.yaml": scenario("in-default-folder"),
            "elsewhere/c.yaml": scenario("named"),
        },
    )
    pytester.makeini("[pytest]\nagentrig_scenarios = checks\n")

    listed = pytester.runpytest_inprocess("--collect-only", "-q", ".", "elsewhere/c.yaml")

    ids = sorted(line for line in listed.outlines if "::" in line)
    assert ids == ["checks/a.yaml::in-checks", "elsewhere/c.yaml::named"]


def test_an_invalid_file_is_a_collection_error_with_the_located_one_line_message(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/bad.yaml": "name: bad\nturns:\n  - user: hi\n    modle: []\n"})

    result = pytester.runpytest_inprocess()

    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = result.stdout.str()
    assert "ERROR collecting scenarios/bad.yaml" in output
    assert "scenarios/bad.yaml:4:5: turns[0].modle: unknown field" in output or "bad.yaml:4" in output
    assert "Traceback" not in output
    assert "agentrig/scenarios" not in output  # no frame of agentrig's own


def test_a_duplicate_name_across_files_is_a_collection_error_naming_the_first(pytester: pytest.Pytester) -> None:
    write(pytester, {"scenarios/a.yaml": scenario("same"), "scenarios/b.yaml": scenario("same")})

    result = pytester.runpytest_inprocess("--collect-only")

    result.stdout.fnmatch_lines(
        ["*scenarios/b.yaml:1: name: duplicate scenario name 'same' (first defined in scenarios/a.yaml:1)*"]
    )


def test_the_plugin_skips_the_directories_the_loader_skips() -> None:
    # The plugin keeps its own copy so that a session without scenarios never imports the loader.
    assert SKIPPED_DIRECTORIES == loader.SKIPPED_DIRECTORIES


def test_tags_are_registered_markers_and_pytest_own_marker_names_are_not_applied(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "scenarios/a.yaml": scenario("smoke-one", tags="smoke, pydantic-ai-x"),
            "scenarios/b.yaml": scenario("slow-one", tags="slow, skip, xfail"),
        },
    )

    by_marker = pytester.runpytest_inprocess("--strict-markers", "-W", "error", "-m", "smoke", "-q")
    by_hyphenated = pytester.runpytest_inprocess("--strict-markers", "-m", "pydantic-ai-x", "-q")
    skip_tagged = pytester.runpytest_inprocess("--strict-markers", "-m", "slow", "-q")
    by_keyword = pytester.runpytest_inprocess("-k", "skip", "-q")
    by_name = pytester.runpytest_inprocess("-k", "smoke-one", "-q")

    by_marker.assert_outcomes(passed=1, deselected=1)
    by_hyphenated.assert_outcomes(passed=1, deselected=1)
    # Tagged `skip` and `xfail`: it runs and passes (it would be skipped if the tag were applied as pytest's marker).
    skip_tagged.assert_outcomes(passed=1, deselected=1)
    by_keyword.assert_outcomes(passed=1, deselected=1)
    by_name.assert_outcomes(passed=1, deselected=1)


ACTS_ON_VCR = """\
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "vcr(cassette): record HTTP into a cassette (as pytest-recording)")


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("vcr")
    if marker is not None and not marker.args:
        raise TypeError("vcr marker must name a cassette")
"""


def test_a_tag_named_after_another_plugins_or_a_conftests_marker_is_no_marker(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_timeout")  # it registers `timeout` and reads its argument from every item
    write(
        pytester,
        {
            "scenarios/a.yaml": scenario("tagged", tags="timeout, vcr, smoke, fresh"),
            "conftest.py": ACTS_ON_VCR,
        },
    )
    pytester.makeini("[pytest]\nmarkers =\n    smoke: the quick checks (the user's own label)\n")

    plain = pytester.runpytest_inprocess("--strict-markers", "-p", "no:cacheprovider")
    by_user_marker = pytester.runpytest_inprocess("--strict-markers", "-p", "no:cacheprovider", "-m", "smoke")
    by_new_tag = pytester.runpytest_inprocess("--strict-markers", "-p", "no:cacheprovider", "-m", "fresh")
    by_foreign = pytester.runpytest_inprocess("--strict-markers", "-p", "no:cacheprovider", "-m", "timeout or vcr")
    by_keyword = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "timeout and vcr")

    plain.assert_outcomes(passed=1)  # pytest-timeout and the conftest never see a marker without its argument
    assert "INTERNALERROR" not in plain.stdout.str()
    by_user_marker.assert_outcomes(passed=1)
    by_new_tag.assert_outcomes(passed=1)
    by_foreign.assert_outcomes(deselected=1)
    by_keyword.assert_outcomes(passed=1)


def test_a_path_is_resolved_as_path_resolve_resolves_it(pytester: pytest.Pytester) -> None:
    # Each folder is resolved once per session (every file pytest reaches is resolved): through links the same.
    root = pytester.path
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "a.yaml").write_text("", encoding="utf-8")
    (root / "linked").symlink_to(root / "real", target_is_directory=True)
    (root / "real" / "b.yaml").symlink_to(root / "real" / "deep" / "a.yaml")
    (root / "real" / "dangling.yaml").symlink_to(root / "nowhere.yaml")
    state = pytester.parseconfigure().stash[STATE_KEY]

    shapes = [
        root / "real" / "deep" / "a.yaml",
        root / "linked" / "deep" / "a.yaml",
        root / "real" / "b.yaml",
        root / "linked" / "b.yaml",
        root / "real" / "dangling.yaml",
        root / "real" / "deep" / ".." / "deep" / "a.yaml",
        root / "missing" / "x.yaml",
        Path("relative.yaml"),
    ]
    for _ in range(2):  # the second time from what the first remembered
        assert [state.resolved(path) for path in shapes] == [path.resolve() for path in shapes]
