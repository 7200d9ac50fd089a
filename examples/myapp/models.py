"""The example application's output types: what its structured agents answer with.

A scenario names one as a self-contained agent's output type (`output: {type: examples.myapp.models:OrderStatus}`),
so its answers are validated as the application's own agent would validate them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class OrderStatus(BaseModel):
    """Where an order is."""

    order_id: int = Field(gt=0)
    """The order's number."""
    status: Literal["pending", "shipped", "delivered"]
    """How far it got."""
    eta_days: int | None = None
    """Days until it arrives, when known."""
