"""The tinyagent engine: self-contained scenarios and a user's own tinyagent agent, run without pydantic-ai."""
