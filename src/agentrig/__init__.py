"""agentrig: a headless batch runner and compatibility test harness for pydantic-ai agents."""

__version__ = "0.1.0"
