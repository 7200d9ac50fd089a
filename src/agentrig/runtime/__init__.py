"""The engine. The canonical history layer (canonical, wire, history_ops, invariants, registry,
sessions, usage) imports no pydantic-ai; the modules that drive pydantic-ai are imported only
by name, so `import agentrig.runtime` stays cheap."""
