"""Plain data from a composed YAML node tree, several times faster than PyYAML's constructor on scenario files.

PyYAML's `construct_document` dispatches every node through a table of constructor methods, in Python. A
scenario file is almost all plain mappings, lists and strings, so those are built here directly; anything
else (numbers, booleans, null, timestamps, `<<` merges, explicit tags, unhashable keys) goes to the loader's
own constructor, so the result is always what `yaml.safe_load` gives. A node reached twice through an alias
is built once and shared, as PyYAML does.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["construct_plain", "memoizing_resolver"]

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"


def construct_plain(loader: yaml.SafeLoader, root: Node) -> Any:
    """What `loader.construct_document(root)` returns."""
    built: dict[int, Any] = {}

    def build(node: Node) -> Any:
        key = id(node)
        if key in built:
            return built[key]
        kind = type(node)
        if kind is ScalarNode and node.tag == _STR:
            value: Any = node.value
        elif kind is SequenceNode and node.tag == _SEQ:
            value = []
            built[key] = value  # before the items: a sequence may (through an alias) contain itself
            value.extend(build(item) for item in node.value)
            return value
        elif kind is MappingNode and node.tag == _MAP and _plain_keys(node):
            value = {}
            built[key] = value
            for key_node, value_node in node.value:
                value[key_node.value] = build(value_node)
            return value
        else:
            value = loader.construct_object(node, deep=True)
        built[key] = value
        return value

    return build(root)


def _plain_keys(node: Node) -> bool:
    """Every key is a plain string (no merge key, no number or list as a key)."""
    return all(type(key) is ScalarNode and key.tag == _STR for key, _ in node.value)


def memoizing_resolver(loader_class: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """`loader_class` whose implicit tag resolution (a regular expression per plain scalar, called back from the C
    parser for every one) remembers its answers: a scenario file repeats the same keys and values."""
    resolve = loader_class.resolve
    answers: dict[tuple[str, tuple[bool, bool]], str] = {}

    class MemoizingLoader(loader_class):
        def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
            if kind is not ScalarNode or self.yaml_path_resolvers or len(value) > 64:
                return resolve(self, kind, value, implicit)
            key = (value, implicit)
            tag = answers.get(key)
            if tag is None:
                tag = resolve(self, kind, value, implicit)
                if len(answers) < 100_000:
                    answers[key] = tag
            return tag

    return MemoizingLoader
