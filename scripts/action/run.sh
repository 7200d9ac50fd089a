#!/usr/bin/env bash
# Run step of the agentrig GitHub Action (action.yml at the repository root); runnable by hand as well:
#
#   INPUT_PATHS=scenarios INPUT_K=smoke GITHUB_OUTPUT=/tmp/outputs bash scripts/action/run.sh
#
# Inputs arrive as environment variables, so no value is ever spliced into shell code:
#   INPUT_PATHS  scenario files or directories, split like a shell command line (quotes allowed); default scenarios
#   INPUT_K      -k selection          INPUT_SHARD  --shard K/N       INPUT_JOBS  --jobs N
#   INPUT_MODEL  --model provider:name INPUT_OUT    --out (default agentrig-out)
#   INPUT_ARGS   more `agentrig run` arguments, split like a shell command line (never evaluated)
# Writes `out-dir=<absolute output directory>` to $GITHUB_OUTPUT and exits with agentrig's exit code.
# `agentrig run` appends summary.md to $GITHUB_STEP_SUMMARY itself; this script adds a line only when agentrig
# stopped before writing one (a usage or scenario file error), so the job summary never stays silent.
set -euo pipefail

python_bin="$(command -v python || command -v python3)"

# Print a variable's words, split the way a shell splits a command line (quotes allowed), each ending in NUL; nothing
# in it is evaluated. (Plain loops below, no namerefs or mapfile: macOS runners may have bash 3.2.)
shell_words() {
  "$python_bin" -c 'import os, shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(os.environ.get(sys.argv[1], ""))))' "$1"
}

paths=()
while IFS= read -r -d '' word; do paths+=("$word"); done < <(shell_words INPUT_PATHS)
extra=()
while IFS= read -r -d '' word; do extra+=("$word"); done < <(shell_words INPUT_ARGS)
if [[ ${#paths[@]} -eq 0 ]]; then
  paths=(scenarios)
fi
out="${INPUT_OUT:-agentrig-out}"

argv=(agentrig run "${paths[@]}" --out "$out")
[[ -n "${INPUT_K:-}" ]] && argv+=(-k "$INPUT_K")
[[ -n "${INPUT_SHARD:-}" ]] && argv+=(--shard "$INPUT_SHARD")
[[ -n "${INPUT_JOBS:-}" ]] && argv+=(--jobs "$INPUT_JOBS")
[[ -n "${INPUT_MODEL:-}" ]] && argv+=(--model "$INPUT_MODEL")
argv+=(${extra[@]+"${extra[@]}"})

printf '+'
printf ' %q' "${argv[@]}"
printf '\n'
status=0
"${argv[@]}" || status=$?

if [[ -d "$out" ]]; then
  echo "out-dir=$(cd "$out" && pwd)" >> "${GITHUB_OUTPUT:-/dev/null}"
fi
if [[ ! -f "$out/summary.md" && -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  printf '**agentrig run exited with code %s before writing a report**: see the job log.\n' "$status" \
    >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
