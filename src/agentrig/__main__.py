"""`python -m agentrig`: the same as the `agentrig` command."""

from agentrig.cli import main

main()
