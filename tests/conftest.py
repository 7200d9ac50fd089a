"""Test-wide settings: no banner, no real model request can leave the machine by accident, and Hypothesis
without deadlines (on a shared 2-core machine an example's time says nothing about the code)."""

from __future__ import annotations

import os

from hypothesis import settings

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")

settings.register_profile("agentrig", deadline=None)
settings.load_profile("agentrig")
