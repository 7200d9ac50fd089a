"""What a run writes: each scenario's folder (`scenario_files`) and the run's reports (`reports`), in an output folder
agentrig owns by its manifest."""
