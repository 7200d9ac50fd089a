#!/usr/bin/env bash
# Install step of the agentrig GitHub Action (action.yml at the repository root); runnable by hand as well.
#
#   AGENTRIG_SPEC      a pip requirement for agentrig, e.g. `agentrig==0.1.0`; empty: the action's own source
#   GITHUB_ACTION_PATH the action's checkout (GitHub sets it in composite actions)
#
# Installs into the `python` on PATH: the one actions/setup-python chose, or the one your project is installed in.
set -euo pipefail

spec="${AGENTRIG_SPEC:-}"
if [[ -z "$spec" ]]; then
  # The action's own checkout, at the ref the workflow pinned, with the provider SDKs so `model:` works.
  spec="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set: give AGENTRIG_SPEC or run from the action}[providers]"
fi
python -m pip install --disable-pip-version-check "$spec"
agentrig --version
