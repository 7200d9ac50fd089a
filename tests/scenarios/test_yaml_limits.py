"""Hostile YAML: an alias bomb in a free-form field (tool-call `args`, a result's `return`) is rejected at load,
with one line naming the file and line, instead of passing `validate` and exhausting memory in `run`."""

from __future__ import annotations

import pytest

from agentrig.errors import ScenarioError
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
