"""What model requests cost in money: genai-prices for the models it knows, a `--prices` file for the rest.

    pricer = pricer_for("openai:gpt-4o", prices=None)
    pricer.price(usage)          # Decimal US dollars, or None: `pricer.note` says why ("no price for openai:x")

genai-prices is a dependency of pydantic-ai itself (`genai-prices>=0.1.6` at pydantic-ai 2.38, `>=0.2.3` at 2.68);
only its public `calc_price(usage, model_ref, provider_id=...)` is used, which both have. It is imported on first
use only: a scripted run prices nothing (its `FunctionModel` has no price, and the reports say so), and the
canonical layer never sees it. A model genai-prices does not know gets no price, never 0: a `--prices` file can
give one (`read_price_table`), in US dollars per million tokens:

    openai:my-finetune: {input: 0.30, output: 1.20, cache_read: 0.15}
    anthropic:claude-next: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}

Each request is priced on its own, as the provider bills it (tiered prices depend on one request's size).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import metadata
from pathlib import Path
from typing import Any

from agentrig.errors import InputError, UsageError
from agentrig.input_files import SCENARIO_FILE_LIMIT, read_input_text, reason_of
from agentrig.runtime.history.run_records import Cost
from agentrig.runtime.history.usage import Usage

__all__ = [
    "PRICE_FIELDS",
    "SCRIPTED_COST",
    "PriceTable",
    "Pricer",
    "TokenPrices",
    "pricer_for",
    "read_price_table",
    "require_price",
    "to_usd",
]

PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
"""The fields of a `--prices` entry, each in US dollars per million tokens (`input` and `output` required)."""
_MILLION = Decimal(1_000_000)

SCRIPTED_COST = Cost(usd=None, spent_usd=None, model=None, note="scripted run: no provider, no price")
"""The cost of a scenario that ran its script (FunctionModel): there is nothing to price, and the report says so."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenPrices:
    """One model's prices from a `--prices` file, US dollars per million tokens."""

    input: Decimal
    """Input tokens not read from or written to the cache."""
    output: Decimal
    """Output tokens."""
    cache_read: Decimal | None = None
    """Input tokens read from the provider's cache; None: billed as `input`."""
    cache_write: Decimal | None = None
    """Input tokens written to the provider's cache; None: billed as `input`."""

    def price(self, usage: Usage) -> Decimal:
        """The price of one request's usage (`input_tokens` includes the cached tokens, as pydantic-ai counts)."""
        cache_read = usage.cache_read_tokens if self.cache_read is not None else 0
        cache_write = usage.cache_write_tokens if self.cache_write is not None else 0
        plain_input = max(0, usage.input_tokens - cache_read - cache_write)
        total = plain_input * self.input + usage.output_tokens * self.output
        total += cache_read * (self.cache_read or Decimal(0)) + cache_write * (self.cache_write or Decimal(0))
        return total / _MILLION


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceTable:
    """A `--prices` file: `provider:name` -> its prices."""

    path: Path
    entries: Mapping[str, TokenPrices]


def read_price_table(path: Path) -> PriceTable:
    """Read a `--prices` YAML (or JSON) file; anything wrong is an `InputError` naming the file, line and field."""
    import yaml

    try:
        text = read_input_text(path, limit=SCENARIO_FILE_LIMIT, what="a --prices file")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"--prices {path}: cannot read it ({reason_of(error)})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:  # PyYAML's Python parser recurses once per level; a price table nests two
        raise InputError(f"{path}: not valid YAML (nested too deeply for a --prices file)") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: not valid YAML ({getattr(error, 'problem', None) or error})") from None
    if root is None:
        raise InputError(f"{path}: empty; expected provider:name: {{input: USD, output: USD}} per million tokens")
    if not isinstance(root, yaml.MappingNode):
        raise InputError(f"{path}:{root.start_mark.line + 1}: expected a mapping of provider:name to prices")
    entries: dict[str, TokenPrices] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        model = str(key_node.value)
        provider, _, name = model.partition(":")
        if not isinstance(key_node, yaml.ScalarNode) or not provider or not name:
            raise InputError(f"{path}:{line}: {model!r}: expected provider:name, e.g. openai:gpt-4o")
        if model in entries:
            raise InputError(f"{path}:{line}: {model}: listed twice")
        entries[model] = _token_prices(path, model, value_node)
    return PriceTable(path=path, entries=entries)


def _token_prices(path: Path, model: str, node: Any) -> TokenPrices:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise InputError(f"{path}:{node.start_mark.line + 1}: {model}: expected {{input: USD, output: USD}}")
    values: dict[str, Decimal] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        field = str(key_node.value)
        if field not in PRICE_FIELDS:
            known = ", ".join(PRICE_FIELDS)
            raise InputError(f"{path}:{line}: {model}.{field}: unknown field (known: {known}; USD per million tokens)")
        number = _amount(value_node)
        if number is None:
            got = value_node.value if isinstance(value_node, yaml.ScalarNode) else "a collection"
            raise InputError(f"{path}:{line}: {model}.{field}: expected a number of US dollars >= 0, got {got!r}")
        values[field] = number
    for required in ("input", "output"):
        if required not in values:
            line = node.start_mark.line + 1
            raise InputError(f"{path}:{line}: {model}: missing {required!r} (USD per million tokens)")
    return TokenPrices(**values)


def _amount(node: Any) -> Decimal | None:
    import yaml

    if not isinstance(node, yaml.ScalarNode) or node.tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        return None
    try:
        number = Decimal(str(node.value).replace("_", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() and number >= 0 else None


class Pricer:
    """Prices the requests of one model: from a `--prices` entry, else from genai-prices, else not at all."""

    def __init__(self, model: str, table: PriceTable | None = None) -> None:
        self.model = model
        self.note: str | None = None
        """Why this model has no price (None when it has one)."""
        self.priced_by: str | None = None
        self._table_prices = table.entries.get(model) if table is not None else None
        if self._table_prices is not None:
            assert table is not None
            self.priced_by = f"--prices {table.path}"
            return
        self._provider, _, self._model_ref = model.partition(":")
        try:
            import genai_prices

            version = metadata.version("genai-prices")
        except ImportError:  # agentrig run --engine tinyagent where pydantic-ai (and genai-prices) is absent
            self.note = f"no price for {model} (genai-prices is not installed)"
            return
        self._calc_price = genai_prices.calc_price
        self._genai_usage = genai_prices.Usage
        self.priced_by = f"genai-prices {version}"
        if self._genai_price(Usage()) is None:
            self.note = f"no price for {model} (genai-prices {version} does not know it; give one with --prices FILE)"
            self.priced_by = None

    @property
    def has_price(self) -> bool:
        return self.note is None

    def price(self, usage: Usage) -> Decimal | None:
        """US dollars for one request's `usage`; None when this model has no price."""
        if self._table_prices is not None:
            return self._table_prices.price(usage)
        if self.note is not None:
            return None
        return self._genai_price(usage)

    def _genai_price(self, usage: Usage) -> Decimal | None:
        genai_usage = self._genai_usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        )
        try:
            calculation = self._calc_price(genai_usage, self._model_ref, provider_id=self._provider or None)
        except LookupError:  # genai-prices: "Unable to find model with model_ref=..." / "... provider ..."
            return None
        return Decimal(calculation.total_price)


@functools.cache
def pricer_for(model: str, prices: Path | None = None) -> Pricer:
    """The pricer of `model`, with the `--prices` file `prices` (read once per process)."""
    return Pricer(model, read_price_table(prices) if prices is not None else None)


def require_price(model: str | None, prices: Path | None, *, flag: str) -> Pricer:
    """The pricer of the run's model, for an option that needs a price (`--max-cost`): else a `UsageError`."""
    if model is None:
        raise UsageError(f"{flag} limits what a real model costs: it needs --model provider:name")
    pricer = pricer_for(model, prices)
    if not pricer.has_price:
        raise UsageError(f"{flag}: {pricer.note}")
    return pricer


def to_usd(amount: Decimal | None) -> float | None:
    """An amount as report.json writes it: a float of US dollars, to a millionth of a cent."""
    return None if amount is None else round(float(amount), 8)
