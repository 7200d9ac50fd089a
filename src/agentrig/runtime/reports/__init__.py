"""Reports of a run that any front end asks for, read from the run's folder: report.html and compatibility.html.

`html` streams a run's page one scenario at a time (`HtmlReport`, used by `reports/report_files` while report.json
is written); `render` writes a page from folders already on disk (`agentrig report`, `agentrig matrix`);
`scenario_data` reads what the page shows of one scenario. The page itself (page.html, report.css, report.js)
is package data under `assets/`. This package imports only `history`: no agent framework, no suite.
"""
