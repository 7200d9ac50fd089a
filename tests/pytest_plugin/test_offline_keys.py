"""`agentrig_placeholder_keys = true`: test modules that build a provider's client at import are collected
without a key, as agentrig imports agent modules for a scripted run; the placeholders go once collection ends."""

from __future__ import annotations

import importlib.util

import pytest

from agentrig.runtime.engine.pydantic_ai_engine.deps import PROVIDER_KEY_VARIABLES
from tests.pytest_plugin.project import write

pytest_plugins = ["pytester"]

SUPPORT_AGENT = """\
from pydantic_ai import Agent

support_agent = Agent("openai:gpt-4o", instructions="Be brief.")  # the provider is built here, at import
"""

TEST_MODULE = """\
import asyncio
import os

from pydantic_ai.models.test import TestModel

from {module} import support_agent


def test_the_agent_runs_offline():
    # asyncio.run, not run_sync: pydantic-ai's run_sync leaves its event loop open, in the outer test process too.
    result = asyncio.run(support_agent.run("hi", model=TestModel(custom_output_text="hello")))
    assert result.output == "hello"
    assert os.environ.get("OPENAI_API_KEY") == {key!r}  # the placeholder is gone; a real key stays
"""


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_a_test_module_importing_an_agent_is_collected_without_a_key(pytester: pytest.Pytester) -> None:
    write(pytester, {"support.py": SUPPORT_AGENT, "test_support.py": TEST_MODULE.format(module="support", key=None)})

    without = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    with_option = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "agentrig_placeholder_keys=true")

    without.assert_outcomes(errors=1)  # pydantic-ai: "Set the `OPENAI_API_KEY` environment variable ..."
    assert "OPENAI_API_KEY" in without.stdout.str()
    with_option.assert_outcomes(passed=1)


def test_a_key_that_is_set_is_left_alone(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own")
    write(
        pytester,
        {"support.py": SUPPORT_AGENT, "test_support.py": TEST_MODULE.format(module="support", key="sk-the-users-own")},
    )
    pytester.makeini("[pytest]\nagentrig_placeholder_keys = true\n")

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)


@pytest.mark.skipif(importlib.util.find_spec("pydantic_ai_examples") is None, reason="pydantic-ai-examples absent")
def test_the_docs_example_module_is_collected_without_a_key(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        {
            "test_bank.py": "import os\n\n"
            "from pydantic_ai_examples.bank_support import support_agent  # docs/pytest.md's own example\n\n\n"
            "def test_collected():\n"
            "    assert support_agent.name is None\n"
            "    assert 'OPENAI_API_KEY' not in os.environ\n"
        },
    )
    pytester.makeini("[pytest]\nagentrig_placeholder_keys = true\n")

    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
