"""Hostile YAML: an alias bomb in a free-form field (tool-call `args`, a result's `return`) is rejected at load,
with one line naming the file and line, instead of passing `validate` and exhausting memory in `run`."""

from __future__ import annotations

import pytest

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_source import MAX_NESTING
from agentrig.scenarios.loader import load_scenario_file
from tests.scenarios.conftest import WriteFile

BOMB = """\
name: bomb
turns:
  - user: hi
    model:
      - tool_calls:
          - id: c1
            name: fetch
            args:
              a: &a [x, x, x, x, x, x, x, x, x, x]
              b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
              c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
              d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
              e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
              f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
              g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
              h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
              i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_an_alias_bomb_is_rejected_at_load_naming_file_and_line(write: WriteFile) -> None:
    path = write("bomb.yaml", BOMB)

    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)

    error = caught.value
    assert (error.path, error.line) == (path, 14)  # `f`: the first list that expands past the limit
    assert "aliases" in error.reason
    assert "\n" not in error.message


def test_aliases_within_the_limit_still_load(write: WriteFile) -> None:
    path = write("fine.yaml", BOMB.split("              d:")[0])
    assert load_scenario_file(path)[0].scenario.name == "bomb"


def test_a_recursive_alias_is_rejected(write: WriteFile) -> None:
    path = write("loop.yaml", BOMB.split("            args:")[0] + "            args: &r {self: *r}\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    assert caught.value.line == 8


def _byte_bomb(length: int, uses: int) -> str:
    """One string of `length` characters, aliased `uses` times in a tool call's args."""
    return (
        "name: bytes\n"
        "turns:\n"
        "  - user: hi\n"
        "    model:\n"
        "      - tool_calls:\n"
        "          - id: c1\n"
        "            name: fetch\n"
        "            args:\n"
        f'              text: &s "{"x" * length}"\n'
        f"              copies: [{', '.join(['*s'] * uses)}]\n"
    )


def test_a_byte_bomb_is_rejected_at_load_though_it_has_few_values(write: WriteFile) -> None:
    # 200 copies of a 100,000-character string: 201 values, 20 million characters in every history and report.
    path = write("bytes.yaml", _byte_bomb(100_000, 200))

    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)

    error = caught.value
    assert (error.path, error.line) == (path, 10)  # `copies`: the list that expands past the limit
    assert error.reason.startswith("the aliases here expand to 20,000,000 characters, the file holds ")
    assert "\n" not in error.message


def test_a_long_string_aliased_a_few_times_still_loads(write: WriteFile) -> None:
    path = write("bytes.yaml", _byte_bomb(100_000, 20))  # 2 million characters
    assert load_scenario_file(path)[0].scenario.name == "bytes"


HUGE = "100000000000000000000000000000"


@pytest.mark.parametrize(
    ("step", "field"),
    [
        (f"text: hi\n        usage: {{input_tokens: {HUGE}}}", "turns[0].model[0].usage.input_tokens"),
        (f"tool_calls: [{{id: c1, name: fetch, args: {{n: -{HUGE}}}}}]", "turns[0].model[0].tool_calls[0].args.n"),
        (f"text: hi\n        usage: {{output_tokens: 0x{'f' * 17}}}", "turns[0].model[0].usage.output_tokens"),
    ],
)
def test_an_integer_past_64_bits_is_rejected_at_its_line_and_field(write: WriteFile, step: str, field: str) -> None:
    path = write("huge.yaml", f"name: huge\nturns:\n  - user: hi\n    model:\n      - {step}\n")

    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)

    error = caught.value
    assert (error.line, error.field) == (step.count("\n") + 5, field)
    assert "is out of the 64-bit range JSON files hold" in error.reason


def test_the_largest_64_bit_integers_load(write: WriteFile) -> None:
    args = f"{{low: {-(2**63)}, high: {2**64 - 1}}}"
    path = write(
        "edge.yaml",
        f"name: edge\nturns:\n  - user: hi\n    model:\n      - tool_calls: [{{id: c1, name: f, args: {args}}}]\n",
    )
    (loaded,) = load_scenario_file(path)
    assert loaded.scenario.turns[0].model[0].tool_calls[0].args == {"low": -(2**63), "high": 2**64 - 1}


def test_a_token_count_past_a_trillion_is_rejected(write: WriteFile) -> None:
    # Within 64 bits, but two such requests would overflow the run's usage totals in usage.json and report.json.
    path = write(
        "tokens.yaml",
        "name: t\nturns:\n  - user: hi\n    model:\n      - text: hi\n"
        "        usage: {input_tokens: 9223372036854775807}\n",
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    assert (caught.value.line, caught.value.field) == (6, "turns[0].model[0].usage.input_tokens")
    assert "less than or equal to 1000000000000" in caught.value.reason


def test_an_integer_key_past_64_bits_is_rejected_too(write: WriteFile) -> None:
    path = write(
        "key.yaml",
        f"name: k\nturns:\n  - user: hi\n    model:\n      - tool_calls: [{{id: c1, name: f, args: {{{HUGE}: x}}}}]\n",
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    assert caught.value.line == 5
    assert "is out of the 64-bit range" in caught.value.reason


def _nested_args(levels: int, *, flow: str = "list") -> str:
    """A scenario nested `levels` deep in all (lists and mappings; its tool call's args are the 8th level)."""
    more = levels - 8
    inner = "[" * more + "]" * more if flow == "list" else "{a: " * more + "1" + "}" * more
    return BOMB.split("            args:")[0] + f"            args: {{a: {inner}}}\n"


@pytest.mark.parametrize("flow", ["list", "mapping"])
@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 990, 10_000])
def test_a_value_nested_past_the_limit_is_rejected_at_its_line(write: WriteFile, levels: int, flow: str) -> None:
    # Past 1,000 levels libyaml stops itself; below that, agentrig's constructor and pydantic would recurse past
    # Python's limit (a RecursionError traceback at 990).
    path = write("deep.yaml", _nested_args(levels, flow=flow))

    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)

    error = caught.value
    assert error.path == path
    assert error.line == 8
    assert "nest" in error.reason  # "nested more than 200 levels deep"; libyaml's "maximum nesting depth" past 1,000
    assert "\n" not in error.message


def test_a_value_nested_to_the_limit_loads(write: WriteFile) -> None:
    path = write("deep.yaml", _nested_args(MAX_NESTING))
    assert load_scenario_file(path)[0].scenario.name == "bomb"


def test_aliases_nesting_past_the_limit_are_rejected(write: WriteFile) -> None:
    # Each anchor is shallow; each alias puts the one before inside 50 more levels: written 55 deep, built 505.
    lines = ["a0: &a0 x"]
    for number in range(1, 11):
        lines.append(f"a{number}: &a{number} " + "[" * 50 + f"*a{number - 1}" + "]" * 50)
    path = write("deep.yaml", BOMB.split("            args:")[0] + "            args: {" + ", ".join(lines) + "}\n")

    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)

    assert "nested" in caught.value.reason
