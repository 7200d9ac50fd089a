"""A self-contained agent's output-validator rules (`output.validators`) on tinyagent, which has no output step.

pydantic-ai runs the validator on a final text answer and, when it raises `ModelRetry`, sends the model the message
as an output retry; each such retry, and each empty response it answers with "Please return text.", spends one unit
of the run's output-retry budget (`settings.output_retries`), and the unit past the budget ends the run with
`Exceeded maximum output retries (N)` (`consume_output_retry`, 2.38 and 2.68). The engine does the same at its model
boundary: the retry is queued as tinyagent's follow-up message, as the empty-response intervention is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentrig.runtime.engine.tool_rules import ToolCallCounts, matching_output_rule
from agentrig.runtime.history.run_records import RunError
from agentrig.scenarios.model import OutputValidatorRule

__all__ = ["OutputRules"]


@dataclass(slots=True, kw_only=True)
class OutputRules:
    """The validator rules, the scenario's count of outputs judged, and this run's use of the retry budget."""

    rules: Sequence[OutputValidatorRule] = ()
    counts: ToolCallCounts
    """The scenario's counts (rules match by the Nth output judged)."""
    used: int = 0
    """Output retries spent in the current run."""

    def begin_run(self) -> None:
        self.used = 0

    def retry_for(self, text: str) -> str | None:
        """The retry message for a final text answer when a rule matches it, else None (the answer stands)."""
        if not self.rules:
            return None
        rule = matching_output_rule(self.rules, text, text, self.counts.next_output_validation())
        return rule.retry if rule is not None else None

    def spend(self, budget: int) -> RunError | None:
        """Spend one output retry; the error that ends the run when it is one past `budget`."""
        self.used += 1
        if self.used > budget:
            return RunError(kind="unexpected_model_behavior", message=f"Exceeded maximum output retries ({budget})")
        return None
