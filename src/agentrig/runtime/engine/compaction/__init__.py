"""Context compaction, all of it (docs/compaction.md):

- `controller.py`: when to compact, where to split, the summary state (framework-free);
- `summarizer.py`: the summarize request to the run's model, and the controller for a scenario's settings;
- `model_input.py`: what the orchestrator hands the engine when a compaction shortens the model's input.

The two hooks outside this package: `RequestOrchestrator.run` asks the controller before each request (and once
more, forced, after a context-length error), and the model chain's `RequestModel` swaps the summarized prefix in
what the model is sent, never in what is stored.
"""
