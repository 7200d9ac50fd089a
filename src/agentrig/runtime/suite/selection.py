"""Which scenarios a run takes: `-k` expressions (like pytest's) and `--shard K/N`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentrig.errors import UsageError
from agentrig.scenarios.loader import LoadedScenario

__all__ = ["KeywordExpression", "in_shard", "parse_shard", "select_scenarios"]

_KEYWORD_TOKEN = re.compile(r"\(|\)|[^\s()]+")

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


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` -> (K, N); 1 <= K <= N."""
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise UsageError(f"--shard expects K/N such as 1/4, got {text!r}") from None
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: K must be between 1 and N")
    return index, count


def in_shard(scenario_id: str, shard: tuple[int, int]) -> bool:
    """Stable shard membership: a hash of the id alone, so adding a scenario moves only that scenario."""
    index, count = shard
    digest = hashlib.sha256(scenario_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def select_scenarios(
    loaded: Sequence[LoadedScenario], *, keyword: str | None, shard: tuple[int, int] | None
) -> list[LoadedScenario]:
    """The scenarios `-k` and `--shard` keep, sorted by id."""
    expression = KeywordExpression.parse(keyword) if keyword else None
    chosen = [
        item
        for item in loaded
        if (expression is None or expression.matches(item.scenario.name, item.scenario.tags))
        and (shard is None or in_shard(item.id, shard))
    ]
    return sorted(chosen, key=lambda item: item.id)
