"""The loopback server's models for the support gate: a good and a weaker support model, and a judge.

- The support models (`gpt-4o`: good, `gpt-4o-mini`: weaker) look the order up, then answer. Each answer is drawn
  at random with a seed fixed per request (the model's name and its request number), so a run is a sample and the
  whole suite is reproducible: the weaker model forgets to cite the order and breaks the refund policy (promising
  the money at once) far more often.
- The judge (any request offering the `verdict` output tool) grades the output it is shown against the rubric's
  one fact, with a score drawn from the output's text: pass 0.75..1, fail 0.05..0.35.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter
from typing import Any

from tests.providers.loopback import ReceivedRequest, Reply, ToolCallReply, tool_calls

__all__ = ["PROFILES", "SupportModels"]

PROFILES = {"gpt-4o": (0.97, 0.97), "gpt-4o-mini": (0.15, 0.35)}
"""Model name -> (chance to cite the order, chance to follow the refund policy) per answer.

At 10 runs a check separates a 10/10 model (95% Wilson interval 72%-100%) only at 4/10 or fewer (4/10: 17%-69%).
The weaker model cited the order at 0.35 once: seed 43 drew 6/10 (31%-83%, overlapping), and over seeds 0-1999 that
rate separated the citing check in 60% of them; at 0.15 it does in 94% (seed 43: 2/10). The judge was not the cause:
each of those 6 passes was an answer naming "order A-1001" and each fail one saying "your order"."""
_CITE_RUBRIC = "Names the order"
_POLICY_RUBRIC = "Follows the refund policy"


class SupportModels:
    """The server's `responder`: a support model's answer or a judge's verdict, by what the request says."""

    def __init__(self, seed: int = 43) -> None:
        self.seed = seed
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: ReceivedRequest) -> Reply:
        body: dict[str, Any] = request.body or {}
        tools = [tool["function"]["name"] for tool in body.get("tools") or ()]
        if "verdict" in tools:
            return _verdict(body)
        return self._answer(body)

    def _answer(self, body: dict[str, Any]) -> Reply:
        model = str(body.get("model"))
        messages: list[dict[str, Any]] = body.get("messages") or []
        if not any(message.get("role") == "tool" for message in messages):
            call = ToolCallReply(id="call_lookup", name="lookup_order", args={"order_id": "A-1001"})
            return tool_calls(call, input_tokens=180, output_tokens=20)
        with self._lock:
            self.counts[model] += 1
            number = self.counts[model]
        draw = random.Random(f"{self.seed}:{model}:{number}")
        cite, policy = PROFILES[model]
        order = "order A-1001" if draw.random() < cite else "your order"
        if draw.random() < policy:
            answer = f"Your return of {order} arrived on 1 December; the refund reaches you within 5 business days."
        else:
            answer = f"Good news about {order}: your refund of 59.90 EUR is paid back immediately, today."
        return Reply(text=answer, input_tokens=260, output_tokens=30)


def _verdict(body: dict[str, Any]) -> Reply:
    # The material is in the user's message (the judge's instructions name the tags too).
    (prompt,) = [str(message.get("content")) for message in body.get("messages") or () if message.get("role") == "user"]
    rubric = _tag(prompt, "rubric")
    output = _tag(prompt, "output")
    if rubric.startswith(_CITE_RUBRIC):
        passed, reason = "A-1001" in output, "cites order A-1001" if "A-1001" in output else "no order number given"
    elif rubric.startswith(_POLICY_RUBRIC):
        passed = "5 business days" in output and "immediately" not in output
        reason = "gives the 5-business-day delay" if passed else "promises the refund at once, against the policy"
    else:
        raise AssertionError(f"no grading for the rubric {rubric!r}")
    draw = random.Random(f"{rubric}|{output}")
    score = round(0.75 + 0.25 * draw.random(), 2) if passed else round(0.05 + 0.3 * draw.random(), 2)
    arguments = {"reason": reason[0].upper() + reason[1:] + ".", "pass": passed, "score": score}
    return tool_calls(ToolCallReply(id="call_verdict", name="verdict", args=arguments), input_tokens=400)


def _tag(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", prompt, re.DOTALL)
    assert found is not None, f"the judge's prompt has no <{tag}>: {json.dumps(prompt)[:300]}"
    return found.group(1)
