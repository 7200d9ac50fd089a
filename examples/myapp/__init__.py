"""An example application with its own pydantic-ai agent, tested by agentrig (docs/tutorial-own-agent.md)."""
