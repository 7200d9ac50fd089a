"""Which scenarios a run takes: `-k` expressions (like pytest's) and `--shard K/N` (by count, or by an earlier run's
durations: `shard_plan`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agentrig.errors import UsageError
from agentrig.runtime.suite.scenario_store import ScenarioIdentity
from agentrig.runtime.suite.shard_plan import Durations, deal_by_durations, for_selection

__all__ = ["MAX_SHARDS", "KeywordExpression", "parse_shard", "select_scenarios", "shard_durations", "shard_members"]

_KEYWORD_TOKEN = re.compile(r"\(|\)|[^\s()]+")

Identified = TypeVar("Identified", bound=ScenarioIdentity)

MAX_KEYWORD_NESTING = 50
"""Parentheses and `not`s a `-k` expression may nest (the evaluator recurses once per level)."""


def _nesting(tokens: Sequence[str]) -> int:
    """The deepest nesting of parentheses and chained `not`s."""
    deepest = depth = nots = 0
    for token in tokens:
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        nots = nots + 1 if token == "not" else 0
        deepest = max(deepest, depth + nots)
    return deepest


@dataclass(frozen=True, slots=True, kw_only=True)
class KeywordExpression:
    """A parsed `-k` expression, like pytest's: words joined by `and`, `or`, `not` and parentheses.

    A word matches a scenario when it is a case-insensitive substring of the name or equals one of its tags.
    """

    tokens: tuple[str, ...]
    """The expression, tokenized (validated by `parse`)."""

    @staticmethod
    def parse(text: str) -> KeywordExpression:
        """Tokenize and validate; a malformed expression raises `UsageError`."""
        expression = KeywordExpression(tokens=tuple(_KEYWORD_TOKEN.findall(text)))
        if not expression.tokens:
            raise UsageError("-k needs an expression, e.g. -k tools or -k 'retry and not slow'")
        if _nesting(expression.tokens) > MAX_KEYWORD_NESTING:
            raise UsageError(f"-k: the expression is nested more than {MAX_KEYWORD_NESTING} levels deep")
        expression.matches("", ())  # evaluating once finds every syntax error
        return expression

    def matches(self, name: str, tags: Sequence[str]) -> bool:
        """Evaluate the expression for one scenario."""
        position = 0
        tokens = self.tokens
        lowered_name = name.lower()

        def peek() -> str | None:
            return tokens[position] if position < len(tokens) else None

        def take() -> str:
            nonlocal position
            token = peek()
            if token is None:
                raise UsageError(f"-k {' '.join(tokens)!r}: the expression ends too early")
            position += 1
            return token

        def either() -> bool:
            value = both()
            while peek() == "or":
                take()
                value = both() or value
            return value

        def both() -> bool:
            value = negation()
            while peek() == "and":
                take()
                value = negation() and value
            return value

        def negation() -> bool:
            if peek() == "not":
                take()
                return not negation()
            return atom()

        def atom() -> bool:
            token = take()
            if token == "(":
                value = either()
                if take() != ")":
                    raise UsageError(f"-k {' '.join(tokens)!r}: missing ')'")
                return value
            if token in (")", "and", "or"):
                raise UsageError(f"-k {' '.join(tokens)!r}: unexpected {token!r}")
            return token.lower() in lowered_name or token in tags

        result = either()
        if position != len(tokens):
            raise UsageError(f"-k {' '.join(tokens)!r}: unexpected {tokens[position]!r}")
        return result


MAX_SHARDS = 10_000
"""More shards than any CI runs; a bound keeps `N` a number every report format can hold."""


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N); 1 <= K <= N <= MAX_SHARDS."""
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise UsageError(f"--shard expects K/N such as 1/4, got {text!r}") from None
    if count > MAX_SHARDS:
        raise UsageError(f"--shard {text}: N must be at most {MAX_SHARDS}")
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return index, count


def _hash_order(scenario_id: str) -> tuple[bytes, str]:
    return hashlib.sha256(scenario_id.encode("utf-8")).digest(), scenario_id


def shard_members(
    scenario_ids: Iterable[str], shard: tuple[int, int], durations: Mapping[str, float] | None = None
) -> set[str]:
    """The ids in shard K of N: by count, every id ordered by a hash of the id and dealt round-robin over the N
    shards; with `durations` (seconds per id, `shard_plan`), dealt longest first onto the least-loaded shard.

    By count: balanced (shard sizes differ by at most one) and stable for a fixed set of ids: every shard of a run
    computes the same deal, whatever order the files were found in. Adding or removing a scenario moves the ids
    after it in hash order to other shards (docs/sharding.md explains the trade-off). By durations: the same for
    the same durations, so every shard given one file computes one partition.
    """
    index, count = shard
    ordered = sorted(set(scenario_ids), key=_hash_order)
    if durations:
        return set(deal_by_durations(ordered, count, durations)[index - 1])
    return set(ordered[index - 1 :: count])


def select_scenarios(
    loaded: Sequence[Identified],
    *,
    keyword: str | None,
    shard: tuple[int, int] | None,
    durations: Durations | None = None,
) -> list[Identified]:
    """The scenarios `-k` keeps and, of those, the ones in `--shard`, sorted by id.

    Shards are dealt from what `-k` selected, so `-k smoke --shard K/N` is balanced too (every shard of a run
    must be given the same paths, `-k` and durations file). `durations` are used as `shard_plan.for_selection`
    says (the caller gets its note and label there)."""
    expression = KeywordExpression.parse(keyword) if keyword else None
    chosen = [item for item in loaded if expression is None or expression.matches(item.name, item.tags)]
    if shard is not None:
        seconds = durations.seconds if durations is not None else None
        members = shard_members((item.id for item in chosen), shard, seconds)
        chosen = [item for item in chosen if item.id in members]
    return sorted(chosen, key=lambda item: item.id)


def shard_durations(loaded: Sequence[Identified], *, keyword: str | None, durations: Durations) -> Durations:
    """`durations` as the scenarios `-k` keeps use them (`shard_plan.for_selection`): pass the result to
    `select_scenarios`, print its note, record its label."""
    expression = KeywordExpression.parse(keyword) if keyword else None
    ids = sorted({item.id for item in loaded if expression is None or expression.matches(item.name, item.tags)})
    return for_selection(ids, durations)
