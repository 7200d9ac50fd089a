"""What a scenario expects, judged: the checks of a run's records and history, and the verdict they give.

`expectations.check_scenario` turns a scenario's turn records and final history into `Check`s, with one module
per kind of expectation (`output_checks`, `tool_call_checks`, `unknown_tool_checks`, `approval_checks`,
`event_checks`, `history_checks` for invariants and the golden file; `check_support` holds what they share);
`outcome` decides a scenario's status from its checks and error. This package imports only `history` and
`scenarios`: any front end (the CLI's run, the pytest plugin, `agentrig.testing`) gets the same verdict.
"""
