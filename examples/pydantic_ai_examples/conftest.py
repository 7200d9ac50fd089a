"""The test setup a user of these agents would have: the agent modules build their provider clients at import,
which needs an API key; no test here sends a request (scripted scenarios and `TestModel` runs refuse to)."""

from __future__ import annotations

import os

for _variable in ("OPENAI_API_KEY", "GROQ_API_KEY"):
    os.environ[_variable] = os.environ.get(_variable) or "sk-test-placeholder"
