"""YAML text -> (node tree, plain data), and positions in that tree.

The loader validates plain data with pydantic, but errors must name a line and column. So the file is
composed once into YAML nodes (which carry marks) and the data is constructed from those same nodes;
an error's field path is then walked through the node tree to find where it points.

Only the safe loader is used: no Python object tags, no arbitrary construction.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentrig.errors import ScenarioError
from agentrig.scenarios._yaml_construct import construct_plain, memoizing_resolver

# libyaml's safe loader builds the same nodes with the same marks, several times faster.
_SafeLoader: type[yaml.SafeLoader] = memoizing_resolver(getattr(yaml, "CSafeLoader", yaml.SafeLoader))

PathElement = str | int
"""One step of a field path: a mapping key or a list index."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedYaml:
    """A YAML document as nodes (for positions) and as plain data (for validation)."""

    root: Node | None
    """The document's root node; None for an empty file."""
    data: Any
    """The constructed value (dicts, lists, scalars)."""


def parse_yaml(text: str, path: Path) -> ParsedYaml:
    """Parse one YAML document safely; a syntax error or a duplicate key becomes a located `ScenarioError`."""
    loader = _SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return ParsedYaml(root=None, data=None)
        # Checked before construction: constructing flattens `<<` merge keys into the node itself.
        _reject_duplicate_keys(root, path)
        if "*" in text:  # without a `*` the document has no alias: nothing can expand or refer to itself
            _reject_alias_expansion(root, path, written=len(text))
        _reject_deep_nesting(root, path)  # after the expansion check: it walks the aliases expanded
        data = construct_plain(loader, root)
        _reject_huge_integers(loader, root, data, path)
    except yaml.MarkedYAMLError as error:
        raise _syntax_error(error, path) from None
    except RecursionError:  # PyYAML's pure-Python parser (no libyaml) recurses once per level as it composes
        raise ScenarioError(f"invalid YAML: nested more than {MAX_NESTING} levels deep", path=path) from None
    except yaml.YAMLError as error:
        raise ScenarioError(f"invalid YAML: {error}", path=path) from None
    finally:
        loader.dispose()
    return ParsedYaml(root=root, data=data)


def _syntax_error(error: yaml.MarkedYAMLError, path: Path) -> ScenarioError:
    mark = error.problem_mark or error.context_mark
    problem = error.problem or "syntax error"
    if error.context:
        problem = f"{problem} ({error.context}"
        if error.context_mark is not None and error.context_mark is not mark:
            problem += f" at line {error.context_mark.line + 1}"
        problem += ")"
    if mark is None:
        return ScenarioError(f"invalid YAML: {problem}", path=path)
    return ScenarioError(f"invalid YAML: {problem}", path=path, line=mark.line + 1, column=mark.column + 1)


def _reject_duplicate_keys(root: Node, path: Path) -> None:
    """PyYAML keeps the last of two equal keys silently; in a scenario that is always a mistake."""
    seen_nodes: set[int] = set()
    pending: list[tuple[Node, tuple[PathElement, ...]]] = [(root, ())]
    while pending:
        node, field_path = pending.pop()
        if id(node) in seen_nodes:  # aliases share nodes; an alias cycle must not loop forever
            continue
        seen_nodes.add(id(node))
        if isinstance(node, MappingNode):
            # Keyed by tag and text: `'true'` (a string) and `true` (a boolean) are two keys, as PyYAML builds them.
            first_line: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                    continue
                key = str(key_node.value)
                if (key_node.tag, key) in first_line:
                    raise ScenarioError(
                        f"duplicate key '{key}' (first given on line {first_line[key_node.tag, key]})",
                        path=path,
                        line=key_node.start_mark.line + 1,
                        column=key_node.start_mark.column + 1,
                        field=format_field_path((*field_path, key)),
                    )
                first_line[key_node.tag, key] = key_node.start_mark.line + 1
                pending.append((value_node, (*field_path, key)))
        elif isinstance(node, SequenceNode):
            pending.extend((item, (*field_path, index)) for index, item in enumerate(node.value))


_INT_TAG = "tag:yaml.org,2002:int"
_JSON_INTEGERS = range(-(2**63), 2**64)
"""The integers every JSON file agentrig writes can hold (orjson's 64-bit range)."""


def _reject_huge_integers(loader: yaml.SafeLoader, root: Node, data: Any, path: Path) -> None:
    """An integer past 64 bits (a 30-digit token count, an argument) is refused here, at its line: every value of a
    scenario ends up in a JSON file, and the writer would fail at the end of the run. orjson finds one in the
    constructed data at its own speed; only then is the node tree searched for where it is written."""
    try:
        orjson.dumps(data, default=_anything, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError as error:
        if "64-bit" not in str(error):
            return  # not an integer (nesting past orjson's depth): the validation says what is wrong with it
        huge = [
            (node_position(node), node.value, field_path)
            for node, field_path in _scalars(root)
            if node.tag == _INT_TAG and loader.construct_yaml_int(node) not in _JSON_INTEGERS
        ]
        if huge:
            (line, column), text, field_path = min(huge, key=lambda found: found[0])  # the first in the file
            raise ScenarioError(
                f"the integer {_shorten(str(text))} is out of the 64-bit range JSON files hold",
                path=path,
                line=line,
                column=column,
                field=format_field_path(field_path) or None,
            ) from None


def _anything(value: object) -> None:
    """orjson's fallback for what YAML builds and JSON has no type for (bytes, sets): their own checks judge them."""


def _shorten(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def _scalars(root: Node) -> Iterator[tuple[ScalarNode, tuple[PathElement, ...]]]:
    """Every scalar node (keys included) with its field path (an aliased node once, at its first path)."""
    seen: set[int] = set()
    pending: list[tuple[Node, tuple[PathElement, ...]]] = [(root, ())]
    while pending:
        node, field_path = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            yield node, field_path
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                pending.extend(((value, (*field_path, str(key.value))), (key, (*field_path, str(key.value)))))
        elif isinstance(node, SequenceNode):
            pending.extend((item, (*field_path, index)) for index, item in enumerate(node.value))


MAX_NESTING = 200
"""Levels of lists and mappings a document may nest, its aliases expanded (the document itself the first). Real
scenarios nest a few dozen at most (a tool's JSON Schema); every value of one ends up inside a history, which JSON
files hold to 254 levels (`jsonio.MAX_NESTING`); and the constructor and pydantic recurse once per level, so ~990
was a RecursionError traceback (libyaml itself stops at 1,000)."""

MAX_EXPANDED_VALUES = 1_000_000
"""Values a document may hold once its aliases are expanded (validation, JSON export and the run all expand them).
A few aliased lists nested in each other (an "alias bomb") reach billions while the file stays tiny."""

MAX_ALIASED_CHARACTERS = 16_000_000
"""Characters the aliases of a document may add to what it holds written out. Counting values is not enough: one
100 KB string aliased 10,000 times is 10,000 values and a gigabyte of text in every history and report (a "byte
bomb"), which a run held several times over before failing with no report."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _reject_alias_expansion(root: Node, path: Path, *, written: int) -> None:
    """Measure every value as if each alias were written out (each shared node measured once, used per alias, in
    linear time): the first node past `MAX_EXPANDED_VALUES` values, or past `MAX_ALIASED_CHARACTERS` characters
    more than the file's own `written` characters, or an alias inside its own anchor, is a located error."""
    max_characters = written + MAX_ALIASED_CHARACTERS
    sizes: dict[int, tuple[int, int]] = {}  # node -> (values, characters) once expanded
    in_progress: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            in_progress.discard(key)
            values, characters = 1, len(node.value) if isinstance(node, ScalarNode) else 0
            for child in _children(node):
                child_values, child_characters = sizes[id(child)]
                values += child_values
                characters += child_characters
            sizes[key] = values, characters
            if values > MAX_EXPANDED_VALUES:
                raise _expansion_error(node, path, f"more than {MAX_EXPANDED_VALUES:,} values")
            if characters > max_characters:
                raise _expansion_error(node, path, f"{characters:,} characters, the file holds {written:,}")
            continue
        if key in sizes:
            continue
        if key in in_progress:
            line, column = node_position(node)
            raise ScenarioError("an alias refers to a value that contains it", path=path, line=line, column=column)
        in_progress.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _reject_deep_nesting(root: Node, path: Path) -> None:
    """The first list or mapping (in document order) more than `MAX_NESTING` levels deep, aliases expanded, is a
    located error. Walked top-down without recursion; aliases are already bounded (`_reject_alias_expansion`)."""
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, ScalarNode):
            continue
        if level > MAX_NESTING:
            line, column = node_position(node)
            message = f"nested more than {MAX_NESTING} levels deep (lists and mappings); no scenario needs that"
            raise ScenarioError(message, path=path, line=line, column=column)
        stack.extend((child, level + 1) for child in reversed(_children(node)))


def _expansion_error(node: Node, path: Path, size: str) -> ScenarioError:
    line, column = node_position(node)
    message = f"the aliases here expand to {size}; write the data out"
    return ScenarioError(message, path=path, line=line, column=column)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeLookup:
    """Where a field path points in the YAML tree."""

    node: Node
    """The deepest node found along the path (the target itself when `found`)."""
    key_node: Node | None
    """The key node when the last element is a mapping key that exists."""
    found: bool
    """The whole path exists; otherwise `node` is its nearest existing ancestor."""


def find_node(root: Node, field_path: Sequence[PathElement]) -> NodeLookup:
    """Walk `field_path` (keys and indexes) down from `root`, stopping at the nearest existing ancestor."""
    node = root
    key_node: Node | None = None
    for element in field_path:
        child = _child(node, element)
        if child is None:
            return NodeLookup(node=node, key_node=None, found=False)
        key_node, node = child
    return NodeLookup(node=node, key_node=key_node, found=True)


def _child(node: Node, element: PathElement) -> tuple[Node | None, Node] | None:
    if isinstance(node, MappingNode):
        # The last equal key wins, as in the constructed data (merged keys come first after flattening).
        for key_node, value_node in reversed(node.value):
            if isinstance(key_node, ScalarNode) and str(key_node.value) == str(element):
                return key_node, value_node
        return None
    if isinstance(node, SequenceNode) and isinstance(element, int) and 0 <= element < len(node.value):
        return None, node.value[element]
    return None


def node_position(node: Node) -> tuple[int, int]:
    """1-based (line, column) where a node starts."""
    return node.start_mark.line + 1, node.start_mark.column + 1


def format_field_path(field_path: Sequence[PathElement]) -> str:
    """`("turns", 0, "model", 1)` -> `turns[0].model[1]`."""
    text = ""
    for element in field_path:
        if isinstance(element, int):
            text += f"[{element}]"
        else:
            text += f".{element}" if text else element
    return text


def ui_field_lines(root: Node) -> dict[str, int]:
    """The line of each field of each turn's `ui:` mapping, by field path (`turns[0].ui.protocol`): what a run names
    in an error once the scenario is detached from its YAML (the turn's extra missing, its request file unreadable)."""
    turns = find_node(root, ("turns",))
    lines: dict[str, int] = {}
    if not turns.found or not isinstance(turns.node, SequenceNode):
        return lines
    for index in range(len(turns.node.value)):
        ui = find_node(turns.node, (index, "ui"))
        if ui.found and isinstance(ui.node, MappingNode):
            for key_node, value_node in ui.node.value:
                if isinstance(key_node, ScalarNode):
                    lines[format_field_path(("turns", index, "ui", str(key_node.value)))] = node_position(value_node)[0]
    return lines
