"""What `agentrig scaffold --agent` must know of the user's agent to script a conversation it held, read once,
before anything is written: the agent imports (a wrong `--agent` is a usage error at once, not a scenario that
fails at run time), which of its tools the host answers (`requires_approval=True`, an `ExternalToolset`), and
what its output processing makes of a recorded final answer (so a turn's output expectation is the value the
run records: a `bool` output is `true`, not the `{"response": true}` the output tool was called with).

The output is predicted with the agent's own validators, read from pydantic-ai's output schema
(`agent._output_schema`): private, but the same shape on every pinned version (2.38 to 2.68: the output
toolset's processors by tool name, each with its `validator`, `outer_typed_dict_key` when pydantic-ai wrapped
a non-object type, and `_function_schema` for an output function). Anything else (an output function, a union
of native outputs, a shape a future version changes) predicts nothing, and the scenario then has no output
expectation: its golden history still holds the output tool's arguments exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.agent import AbstractAgent
from pydantic_core import to_jsonable_python

from agentrig.errors import ScenarioError, UsageError
from agentrig.runtime.engine.module_loading import resolve_attribute
from agentrig.runtime.engine.pydantic_ai_engine.agent_loading import load_user_agent
from agentrig.runtime.engine.pydantic_ai_engine.deps import offline_import
from agentrig.runtime.history.canonical import JsonValue

__all__ = ["AgentFacts", "agent_facts", "check_deps_spec", "subagent_spec"]

OutputPredictor = Callable[[str | None, JsonValue, str | None], "dict[str, JsonValue] | None"]


def _no_prediction(tool_name: str | None, args: JsonValue, text: str | None) -> dict[str, JsonValue] | None:
    return {"equals": text} if tool_name is None and text is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentFacts:
    """The user's agent, as scaffold sees it."""

    spec: str
    """`module:attribute`, as `--agent` named it."""
    approval_tools: frozenset[str] = frozenset()
    """Tools that ask the host for approval before they run (`requires_approval=True`)."""
    external_tools: frozenset[str] = frozenset()
    """Tools the host runs (an `ExternalToolset`): their results come back as deferred results."""
    delegates: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """Function tools whose code names another agent of its module (a tool that delegates to a sub-agent), by tool
    name: the `module:attribute` of each agent it names."""
    output_instructions: bool = False
    """The output adds to the instructions the model reads (a `PromptedOutput`'s template), which pydantic-ai does
    not store in the request's `instructions`: a dump's are the agent's own only."""
    predict: OutputPredictor = field(default=_no_prediction)
    """`(output tool name or None for text, its arguments, the text)` -> the output expectation the run's output
    meets (`json_equals`, `equals`), or None when it cannot be known without running the agent's code."""

    def output_expectation(
        self, *, tool_name: str | None = None, args: JsonValue = None, text: str | None = None
    ) -> dict[str, JsonValue] | None:
        """The output expectation of a turn that ended with this output tool call (or this text)."""
        return self.predict(tool_name, args, text)


def agent_facts(spec: str, *, search_paths: Sequence[Path]) -> AgentFacts:
    """Import the agent `spec` names (offline: placeholder provider keys) and read its facts; a module that does
    not import, a missing attribute or something that is no agent is a `UsageError` naming `--agent`."""
    try:
        with offline_import():
            agent = load_user_agent(spec, search_paths=search_paths)
    except ScenarioError as error:
        raise UsageError(f"--agent {spec}: {error.reason}") from None
    approval, external = _host_answered_tools(agent)
    return AgentFacts(
        spec=spec,
        approval_tools=approval,
        external_tools=external,
        delegates=_delegates(agent),
        output_instructions=_output_adds_instructions(agent),
        predict=_predictor(agent),
    )


def check_deps_spec(spec: str, *, search_paths: Sequence[Path]) -> None:
    """`--deps module:attribute` names something callable (it is called only when the scenario runs: it may open a
    database); a `UsageError` naming `--deps` otherwise."""

    def fail(message: str) -> ScenarioError:
        return ScenarioError(message, field="deps")

    try:
        with offline_import():
            value = resolve_attribute(spec, search_paths=search_paths, fail=fail)
    except ScenarioError as error:
        raise UsageError(f"--deps {spec}: {error.reason}") from None
    if not callable(value):
        raise UsageError(f"--deps {spec}: a {type(value).__name__}, not a callable building the deps")


def subagent_spec(label: str, *, search_paths: Sequence[Path]) -> str | None:
    """The `module:attribute` of a sub-agent from the label of its recorded runs (`subagents/<label>.runN...`:
    the spec with `:` written as `.`), by trying each split until one names an agent; None when none does."""
    pieces = label.split(".")
    for cut in range(len(pieces) - 1, 0, -1):
        spec = f"{'.'.join(pieces[:cut])}:{'.'.join(pieces[cut:])}"
        try:
            with offline_import():
                value = resolve_attribute(spec, search_paths=search_paths, fail=lambda m: ScenarioError(m))
        except ScenarioError:
            continue
        if isinstance(value, AbstractAgent):
            return spec
    return None


# --- tools ---


def _toolsets(toolsets: Sequence[Any]) -> Iterator[Any]:
    """Every toolset, wrapped and combined ones opened (`.wrapped`, `.toolsets`)."""
    for toolset in toolsets:
        yield toolset
        wrapped = getattr(toolset, "wrapped", None)
        if wrapped is not None:
            yield from _toolsets([wrapped])
        inner = getattr(toolset, "toolsets", None)
        if isinstance(inner, list | tuple):
            yield from _toolsets(list(inner))  # pyright: ignore[reportUnknownArgumentType]


def _host_answered_tools(agent: AbstractAgent[Any, Any]) -> tuple[frozenset[str], frozenset[str]]:
    approval: set[str] = set()
    external: set[str] = set()
    for toolset in _toolsets(list(agent.toolsets)):
        tools = getattr(toolset, "tools", None)
        if isinstance(tools, Mapping):
            for name, tool in tools.items():  # pyright: ignore[reportUnknownVariableType]
                if getattr(tool, "requires_approval", False):
                    approval.add(str(name))  # pyright: ignore[reportUnknownArgumentType]
        definitions = getattr(toolset, "tool_defs", None)
        if isinstance(definitions, list | tuple):
            for definition in definitions:  # pyright: ignore[reportUnknownVariableType]
                name = getattr(definition, "name", None)
                if isinstance(name, str):
                    external.add(name)
    return frozenset(approval), frozenset(external)


def _delegates(agent: AbstractAgent[Any, Any]) -> dict[str, tuple[str, ...]]:
    """Each function tool's sub-agents: the agents its function's code names (nested functions included) that are
    globals of its module. A dump or session records only the calling agent's messages, so a replay with the real
    tool needs a script for each (`subagent_scripts.py`)."""
    found: dict[str, tuple[str, ...]] = {}
    for toolset in _toolsets(list(agent.toolsets)):
        tools = getattr(toolset, "tools", None)
        if not isinstance(tools, Mapping):
            continue
        for name, tool in tools.items():  # pyright: ignore[reportUnknownVariableType]
            specs = _named_agents(getattr(tool, "function", None), agent)
            if specs:
                found[str(name)] = specs  # pyright: ignore[reportUnknownArgumentType]
    return found


def _named_agents(function: Any, own: AbstractAgent[Any, Any]) -> tuple[str, ...]:
    code = getattr(function, "__code__", None)
    namespace = getattr(function, "__globals__", None)
    if not isinstance(code, CodeType) or not isinstance(namespace, dict):
        return ()
    names: list[str] = []
    stack = [code]
    while stack:
        current = stack.pop()
        names.extend(current.co_names)
        stack.extend(const for const in current.co_consts if isinstance(const, CodeType))
    module = getattr(function, "__module__", None)
    globals_: dict[str, Any] = namespace  # pyright: ignore[reportUnknownVariableType]
    specs = [
        f"{module}:{name}"
        for name in dict.fromkeys(names)
        if isinstance(value := globals_.get(name), AbstractAgent) and value is not own
    ]
    return tuple(specs) if module else ()


# --- output ---


def _output_adds_instructions(agent: AbstractAgent[Any, Any]) -> bool:
    """A prompted output (`PromptedOutputSchema` on every pinned version), or any output given a `template`: the
    model reads the output's instructions beside the agent's."""
    schema = getattr(agent, "_output_schema", None) if isinstance(agent, Agent) else None
    if schema is None:
        return False
    return type(schema).__name__ == "PromptedOutputSchema" or getattr(schema, "template", None) is not None


def _predictor(agent: AbstractAgent[Any, Any]) -> OutputPredictor:
    schema = getattr(agent, "_output_schema", None) if isinstance(agent, Agent) else None
    if schema is None or getattr(agent, "_output_validators", None):
        # An output validator returns the output, and may change it (pydantic-ai-examples' SQL agent strips the
        # backslashes of its query): what the model sent is then not what the run returned. No expectation rather
        # than a wrong one; the golden history still checks the model's output call byte for byte.
        return _no_prediction
    toolset = getattr(schema, "toolset", None)
    processors: Mapping[str, Any] = getattr(toolset, "processors", None) or {}
    text_processor = getattr(schema, "text_processor", None)

    def predict(tool_name: str | None, args: JsonValue, text: str | None) -> dict[str, JsonValue] | None:
        if tool_name is None:
            if text is None:
                return None
            if type(text_processor).__name__ == "TextOutputProcessor":  # a str output: the text itself
                return {"equals": text}
            return _validated(text_processor, text, from_json=True)  # native or prompted: JSON in the text
        processor = processors.get(tool_name)
        return _validated(processor, args, from_json=False) if processor is not None else None

    return predict


def _validated(processor: Any, data: Any, *, from_json: bool) -> dict[str, JsonValue] | None:
    """`json_equals` the value the agent's output processor makes of `data`, as the run records it; None when the
    processor runs the user's code (an output function) or has another shape."""
    if processor is None or getattr(processor, "_function_schema", None) is not None:
        return None
    validator = getattr(processor, "validator", None)
    if validator is None:
        return None
    key = getattr(processor, "outer_typed_dict_key", None)
    try:
        value = validator.validate_json(data) if from_json else validator.validate_python(data)
    except Exception:  # not what this processor takes: say nothing rather than something wrong
        return None
    if isinstance(key, str):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return {"json_equals": to_jsonable_python(value, fallback=str)}
