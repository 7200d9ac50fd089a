"""The loader's own YAML construction gives exactly what `yaml.safe_load` gives, on any document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_source import parse_yaml

ROOT = Path(__file__).resolve().parents[2]

# Integers past 64 bits are refused (test_yaml_limits.py): every scenario value ends up in a JSON file.
json_integers = st.integers(min_value=-(2**63), max_value=2**64 - 1)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    json_integers,
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["yes", "no", "on", "off", "null", "~", "1e3", "0x1F", "0o17", "1_000", "2026-12-02", ".inf"]),
)
keys = st.one_of(st.text(max_size=10), json_integers, st.booleans(), st.sampled_from(["<<", "on", "null", "1"]))
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4))


def ours(text: str) -> Any:
    return parse_yaml(text, Path("doc.yaml")).data


@settings(max_examples=300, deadline=None)
@given(documents, st.sampled_from([False, True]))
def test_generated_documents(document: Any, flow: bool) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    assert ours(text) == yaml.safe_load(text)


@pytest.mark.parametrize(
    "text",
    [
        "base: &base {a: 1, b: [x, y]}\nchild:\n  <<: *base\n  b: z\nagain: *base\n",
        "items: &items [1, 2]\nboth: [*items, *items]\n",
        "when: 2026-12-02 10:00:00\nset: !!set {a, b}\nraw: !!binary aGVsbG8=\npairs: !!omap [a: 1, b: 2]\n",
        "quoted: '1'\nplain: 1\nfloat: 1.5\nempty:\nlist: []\nmap: {}\ntext: !!str 12\n",
        "multi: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    ],
)
def test_aliases_merges_tags_and_odd_keys(text: str) -> None:
    assert ours(text) == yaml.safe_load(text)


def test_an_unhashable_key_is_refused_as_pyyaml_refuses_it() -> None:
    text = "? [1, 2]\n: complex key\n"
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.safe_load(text)
    with pytest.raises(ScenarioError, match="unhashable key"):
        ours(text)


def test_an_alias_shares_one_object_as_pyyaml_does() -> None:
    data = ours("a: &shared [1]\nb: *shared\n")
    assert data["a"] is data["b"]


def test_every_yaml_file_in_the_repository() -> None:
    files = [path for folder in ("scenarios", "examples") for path in sorted((ROOT / folder).rglob("*.y*ml"))]
    assert len(files) > 30
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert ours(text) == yaml.safe_load(text), path


def test_a_quoted_key_and_a_plain_one_of_the_same_text_are_two_keys() -> None:
    text = "'true': 1\ntrue: 2\n'2': 3\n2: 4\n"  # a string and a boolean, a string and an integer
    assert ours(text) == yaml.safe_load(text) == {"true": 1, True: 2, "2": 3, 2: 4}
    with pytest.raises(ScenarioError, match="duplicate key 'true'"):
        ours("true: 1\ntrue: 2\n")
