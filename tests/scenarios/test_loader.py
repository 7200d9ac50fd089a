"""The YAML loader: valid files, exact error locations, discovery, references, duplicates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentrig.errors import ScenarioError
from agentrig.scenarios.loader import (
    discover,
    load_paths,
    load_scenario_file,
    validate_paths,
    validation_report,
)
from tests.scenarios.conftest import WriteFile

MINIMAL = """\
name: {name}
turns:
  - user: hi
    model:
      - text: hello
"""


def load_error(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    return caught.value


# --------------------------------------------------------------------------------------------
# Valid files
# --------------------------------------------------------------------------------------------


def test_single_scenario_file(write: WriteFile) -> None:
    path = write("s/one.yaml", "# comment\n" + MINIMAL.format(name="one"))
    [loaded] = load_scenario_file(path)
    assert loaded.name == "one"
    assert loaded.index == 0
    assert loaded.line == 2
    assert loaded.base_dir == path.parent
    assert loaded.id == f"{path.as_posix()}::one"
    assert not loaded.in_list
    assert loaded.line_of("turns", 0, "model", 0, "text") == 6
    assert loaded.resolve("x/y.md") == path.parent / "x" / "y.md"
    assert loaded.system_prompt_text() is None


def test_list_file_gives_index_and_line_of_each_scenario(write: WriteFile) -> None:
    body = MINIMAL.format(name="a").replace("\n", "\n  ").rstrip()
    second = MINIMAL.format(name="b").replace("\n", "\n  ").rstrip()
    path = write("list.yaml", f"- {body}\n- {second}\n")
    loaded = load_scenario_file(path)
    assert [(s.name, s.index, s.line, s.in_list) for s in loaded] == [("a", 0, 1, True), ("b", 1, 6, True)]


def test_system_prompt_from_file_with_context_appended(write: WriteFile) -> None:
    write("dir/prompts/p.md", "Be terse.\n")
    write("dir/AGENTS.md", "\nRun make test.\n\n")
    path = write(
        "dir/s.yaml",
        "system_prompt_file: prompts/p.md\ncontext_file: AGENTS.md\n" + MINIMAL.format(name="ctx"),
    )
    [loaded] = load_scenario_file(path)
    assert loaded.system_prompt_text() == "Be terse.\n\n<user_context>\nRun make test.\n</user_context>"


def test_context_without_prompt_is_the_section_alone(write: WriteFile) -> None:
    write("AGENTS.md", "guide")
    [loaded] = load_scenario_file(write("s.yaml", "context_file: AGENTS.md\n" + MINIMAL.format(name="c")))
    assert loaded.system_prompt_text() == "<user_context>\nguide\n</user_context>"


def test_inline_system_prompt(write: WriteFile) -> None:
    [loaded] = load_scenario_file(write("s.yaml", "system_prompt: Be kind.\n" + MINIMAL.format(name="c")))
    assert loaded.system_prompt_text() == "Be kind."


def test_merge_keys_and_anchors_are_supported(write: WriteFile) -> None:
    path = write(
        "s.yaml",
        """\
        - &base
          name: a
          turns: [{user: hi, model: [{text: hello}]}]
        - <<: *base
          name: b
        """,
    )
    assert [s.name for s in load_scenario_file(path)] == ["a", "b"]


# --------------------------------------------------------------------------------------------
# Errors name file, line, column and field path
# --------------------------------------------------------------------------------------------


def test_nested_type_error_points_at_the_value(write: WriteFile) -> None:
    path = write(
        "x.yaml",
        """\
        name: x
        turns:
          - user: hi
            model:
              - text: first
              - tool_calls:
                  - id: tc_1
                    name: bash
                    args: 5
        """,
    )
    error = load_error(path)
    assert error.message == (
        f"{path}:9:19: turns[0].model[1].tool_calls[0].args: Input should be a mapping or a valid string (got 5)"
    )
    assert (error.line, error.column, error.field) == (9, 19, "turns[0].model[1].tool_calls[0].args")


def test_unknown_field_suggests_the_closest_name(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "    expect:\n      outptu: {contains: hi}\n")
    error = load_error(path)
    assert error.message == f"{path}:7:7: turns[0].expect.outptu: unknown field 'outptu'; did you mean 'output'?"


def test_unknown_field_without_a_close_match_lists_the_valid_ones(write: WriteFile) -> None:
    path = write("x.yaml", "zzz: 1\n" + MINIMAL.format(name="x"))
    assert "unknown field 'zzz'; valid fields: name, description, tags" in load_error(path).message


def test_missing_field_points_at_the_parent_mapping(write: WriteFile) -> None:
    path = write("x.yaml", "name: x\nturns:\n  - user: hi\n    model:\n      - tool_calls: [{name: bash}]\n")
    error = load_error(path)
    assert error.message == f"{path}:5:22: turns[0].model[0].tool_calls[0]: missing required field 'id'"


def test_missing_top_level_field(write: WriteFile) -> None:
    path = write("x.yaml", "name: x\n")
    assert load_error(path).message == f"{path}:1:1: missing required field 'turns'"


def test_model_validator_message_is_shown_at_the_mapping(write: WriteFile) -> None:
    path = write(
        "x.yaml",
        "name: x\ntools:\n  t:\n    results:\n      - {retry: a, fail: b}\n" + MINIMAL.format(name="x")[8:],
    )
    error = load_error(path)
    assert error.field == "tools.t.results[0]"
    assert (error.line, error.column) == (5, 9)
    assert "exactly one of return, retry, fail, defer" in error.reason


def test_literal_typo_gets_a_suggestion(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "    expect:\n      error: {kind: rate_limt}\n")
    error = load_error(path)
    assert error.field == "turns[0].expect.error.kind"
    assert error.reason.endswith("(got 'rate_limt'); did you mean 'rate_limit'?")


def test_union_member_that_fits_the_shape_explains_the_error(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "expect:\n  usage: {requests: {min: lots}}\n")
    error = load_error(path)
    assert error.field == "expect.usage.requests.min"
    assert (error.line, error.column) == (7, 27)


def test_failed_list_items_do_not_also_report_too_short(write: WriteFile) -> None:
    path = write("x.yaml", "name: x\nturns:\n  - {user: 5}\n")
    _, errors = validate_paths([path])
    assert [e.field for e in errors] == ["turns[0].user"]


def test_every_error_of_a_file_is_collected_in_line_order(write: WriteFile) -> None:
    path = write("x.yaml", "name: x\ntags: 3\nturns:\n  - {user: hi, modle: []}\n")
    _, errors = validate_paths([path])
    assert [(e.line, e.field) for e in errors] == [(2, "tags"), (4, "turns[0].modle")]


def test_list_file_errors_carry_the_scenario_index(write: WriteFile) -> None:
    body = MINIMAL.format(name="a").replace("\n", "\n  ").rstrip()
    path = write("x.yaml", f"- {body}\n- name: b\n")
    assert load_error(path).message == f"{path}:6:3: [1]: missing required field 'turns'"


def test_yaml_syntax_error_carries_its_mark(write: WriteFile) -> None:
    path = write("x.yaml", "name: x\nturns:\n  - user: [unclosed\n")
    error = load_error(path)
    assert error.path == path
    assert error.line is not None
    assert error.line >= 3
    assert error.reason.startswith("invalid YAML:")


def test_duplicate_key_is_an_error(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "name: y\n")
    assert load_error(path).message == f"{path}:6:1: name: duplicate key 'name' (first given on line 1)"


def test_python_object_tags_are_refused(write: WriteFile) -> None:
    path = write("x.yaml", "name: !!python/object/apply:os.system [echo pwned]\nturns: []\n")
    error = load_error(path)
    assert error.reason.startswith("invalid YAML:")
    assert error.line == 1


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty file: expected a scenario (a mapping) or a list of scenarios"),
        ("just a string\n", "expected a scenario (a mapping) or a list of scenarios"),
        ("[]\n", "empty list: expected at least one scenario"),
        ("- 3\n", "expected a scenario (a mapping)"),
    ],
)
def test_wrong_document_shapes(write: WriteFile, text: str, reason: str) -> None:
    assert load_error(write("x.yaml", text)).reason == reason


def test_undecodable_file(write: WriteFile, tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00name")
    assert load_error(path).reason.startswith("cannot read file")


# --------------------------------------------------------------------------------------------
# Referenced files and duplicates across the set
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["system_prompt_file", "context_file", "initial_history"])
def test_missing_referenced_file_is_an_error(write: WriteFile, field: str) -> None:
    path = write("x.yaml", f"{field}: nowhere.txt\n" + MINIMAL.format(name="x"))
    error = load_error(path)
    assert error.message == f"{path}:1:{len(field) + 3}: {field}: file not found: {path.parent / 'nowhere.txt'}"


def test_missing_golden_is_a_warning(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "expect: {golden: golden/x.json}\n")
    [loaded] = load_scenario_file(path)
    [warning] = loaded.warnings
    assert warning.field == "expect.golden"
    assert warning.line == 6
    assert "golden file not found" in str(warning)
    assert loaded.golden_path() == path.parent / "golden" / "x.json"
    write("golden/x.json", "{}")
    assert load_scenario_file(path)[0].warnings == ()


def test_duplicate_names_across_files_name_both_files(write: WriteFile) -> None:
    first = write("s/a.yaml", MINIMAL.format(name="same"))
    second = write("s/b.yaml", "# note\n" + MINIMAL.format(name="same"))
    scenarios, errors = validate_paths([first.parent])
    assert [s.path for s in scenarios] == [first]
    [error] = errors
    assert error.message == f"{second}:2:7: name: duplicate scenario name 'same' (first defined in {first}:1)"
    with pytest.raises(ScenarioError, match="duplicate scenario name"):
        load_paths([first.parent])


# --------------------------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------------------------


def test_discover_skips_artifacts_fragments_and_hidden(write: WriteFile, tmp_path: Path) -> None:
    wanted = [write("s/b.yaml", ""), write("s/a.yml", ""), write("s/sub/c.yaml", "")]
    for skipped in ["s/golden/g.yaml", "s/recordings/r.yaml", "s/_shared.yaml", "s/.hidden/h.yaml", "s/notes.txt"]:
        write(skipped, "")
    assert discover([tmp_path / "s"]) == sorted(wanted)


def test_discover_keeps_explicit_files_and_dedupes(write: WriteFile, tmp_path: Path) -> None:
    fragment = write("s/_frag.yaml", "")
    other = write("s/a.yaml", "")
    assert discover([fragment, tmp_path / "s", other]) == [fragment, other]


def test_discover_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file or directory"):
        discover([tmp_path / "nope"])


def test_report_groups_by_file_and_flags_empty_directories(write: WriteFile, tmp_path: Path) -> None:
    good = write("s/good.yaml", MINIMAL.format(name="good"))
    bad = write("s/bad.yaml", "name: bad\n")
    (tmp_path / "empty").mkdir()
    report = validation_report([tmp_path / "s", tmp_path / "empty"])
    assert [(f.path, f.ok, len(f.scenarios)) for f in report.files] == [
        (bad, False, 0),
        (good, True, 1),
        (tmp_path / "empty", False, 0),
    ]
    assert not report.ok
    assert "no scenario files" in report.files[2].errors[0].reason


def test_load_paths_returns_every_scenario_in_order(write: WriteFile, tmp_path: Path) -> None:
    write("s/b.yaml", MINIMAL.format(name="b"))
    write("s/a.yaml", MINIMAL.format(name="a"))
    assert [s.name for s in load_paths([tmp_path / "s"])] == ["a", "b"]


def test_scenarios_package_imports_neither_typer_nor_pydantic_ai() -> None:
    code = "import sys, agentrig.scenarios\nprint(sorted(m for m in ('typer', 'pydantic_ai') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_loaded_scenarios_survive_pickling(write: WriteFile) -> None:
    """The runner may hand scenarios to worker processes."""
    import pickle

    [loaded] = load_scenario_file(write("s.yaml", MINIMAL.format(name="p")))
    copy = pickle.loads(pickle.dumps(loaded))
    assert copy == loaded
    assert copy.line_of("turns", 0, "user") == 3


def test_bad_mapping_key_points_at_the_key(write: WriteFile) -> None:
    path = write("x.yaml", MINIMAL.format(name="x") + "tools:\n  1: {}\n")
    error = load_error(path)
    assert (error.line, error.column, error.field) == (7, 3, "tools[1]")
    assert error.reason == "Input should be a valid string (got 1)"
