"""The pydantic-ai engines: one agent run through `Agent.iter` (`plain`), or streamed (`streamed`), and what
running a scenario on pydantic-ai needs (agent loading, deps, sub-agents, YAML tools, deferred results)."""
