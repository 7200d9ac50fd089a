#!/usr/bin/env bash
# Run step of the agentrig GitHub Action (action.yml at the repository root); runnable by hand as well:
#
#   INPUT_PATHS=scenarios INPUT_K=smoke GITHUB_OUTPUT=/tmp/outputs bash scripts/action/run.sh
#
# Inputs arrive as environment variables, so no value is ever spliced into shell code:
#   INPUT_COMMAND  run (default), merge or matrix
#   INPUT_PATHS    scenario files or directories (run, matrix; default scenarios) or run output directories (merge),
#                  split like a shell command line (quotes allowed); a word with * ? [ is expanded as a file pattern
#   INPUT_K        -k selection (run, matrix)     INPUT_SHARD  --shard K/N (run)    INPUT_JOBS  --jobs N (run, matrix)
#   INPUT_MODEL    --model provider:name (run)    INPUT_OUT    --out (default agentrig-out; agentrig-matrix for matrix)
#   INPUT_ARGS     more arguments for the command, split like a shell command line (never evaluated)
# Writes `out-dir=<absolute output directory>` to $GITHUB_OUTPUT and exits with agentrig's exit code.
# `agentrig run` and `agentrig merge` append summary.md to $GITHUB_STEP_SUMMARY themselves; for `matrix` this script
# appends compatibility.md, and when agentrig stopped before writing a report it adds one line saying so.
set -euo pipefail

python_bin="$(command -v python || command -v python3)"

# Print a variable's words, split the way a shell splits a command line, each ending in NUL; a word holding a file
# pattern becomes its sorted matches (or stays as it is when nothing matches). Nothing in it is evaluated.
# (Plain loops below, no namerefs or mapfile: macOS runners may have bash 3.2.)
shell_words() {
  "$python_bin" - "$1" <<'PY'
import glob, os, shlex, sys

for word in shlex.split(os.environ.get(sys.argv[1], "")):
    matches = sorted(glob.glob(word)) if any(char in word for char in "*?[") else []
    for item in matches or [word]:
        sys.stdout.write(item + "\0")
PY
}

usage_error() {  # a mistake in the action's inputs: say so in the log and the job summary, exit 2 as agentrig would
  echo "agentrig action: $1" >&2
  [[ -z "${GITHUB_STEP_SUMMARY:-}" ]] || printf '**agentrig action: %s**\n' "$1" >> "$GITHUB_STEP_SUMMARY"
  exit 2
}

command="${INPUT_COMMAND:-run}"
paths=()
while IFS= read -r -d '' word; do paths+=("$word"); done < <(shell_words INPUT_PATHS)
extra=()
while IFS= read -r -d '' word; do extra+=("$word"); done < <(shell_words INPUT_ARGS)

case "$command" in
  run | matrix)
    [[ ${#paths[@]} -gt 0 ]] || paths=(scenarios)
    ;;
  merge)
    [[ ${#paths[@]} -gt 0 ]] || usage_error "command merge needs paths: the run output directories to merge"
    ;;
  *) usage_error "command must be run, merge or matrix, not '$command'" ;;
esac
if [[ "$command" == matrix ]]; then
  out="${INPUT_OUT:-agentrig-matrix}"
else
  out="${INPUT_OUT:-agentrig-out}"
fi
only_for() {  # only_for VALUE INPUT COMMAND: refuse an input the command does not take
  [[ -z "$1" || "$command" == "$3" ]] || usage_error "input $2 is only for command $3"
}
only_for "${INPUT_SHARD:-}" shard run
only_for "${INPUT_MODEL:-}" model run
[[ "$command" != merge || -z "${INPUT_K:-}${INPUT_JOBS:-}" ]] || usage_error "inputs k and jobs are not for merge"

argv=(agentrig "$command" "${paths[@]}" --out "$out")
[[ -z "${INPUT_K:-}" ]] || argv+=(-k "$INPUT_K")
[[ -z "${INPUT_SHARD:-}" ]] || argv+=(--shard "$INPUT_SHARD")
[[ -z "${INPUT_JOBS:-}" ]] || argv+=(--jobs "$INPUT_JOBS")
[[ -z "${INPUT_MODEL:-}" ]] || argv+=(--model "$INPUT_MODEL")
argv+=(${extra[@]+"${extra[@]}"})

printf '+'
printf ' %q' "${argv[@]}"
printf '\n'
status=0
if [[ "$command" == matrix ]]; then
  # matrix's per-version `agentrig run`s would each append their summary.md; compatibility.md (below) is the summary.
  env -u GITHUB_STEP_SUMMARY "${argv[@]}" || status=$?
else
  "${argv[@]}" || status=$?
fi

if [[ -d "$out" ]]; then
  echo "out-dir=$(cd "$out" && pwd)" >> "${GITHUB_OUTPUT:-/dev/null}"
  page="$out/report.html"
  [[ "$command" != matrix ]] || page="$out/compatibility.html"
  if [[ -f "$page" ]]; then
    echo "report-html=$(cd "$out" && pwd)/$(basename "$page")" >> "${GITHUB_OUTPUT:-/dev/null}"
  fi
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  if [[ "$command" == matrix && -f "$out/compatibility.md" ]]; then
    cat "$out/compatibility.md" >> "$GITHUB_STEP_SUMMARY"
  elif [[ "$command" != matrix && -f "$out/summary.md" ]]; then
    :  # agentrig already appended it
  else
    printf '**agentrig %s exited with code %s before writing a report**: see the job log.\n' "$command" "$status" \
      >> "$GITHUB_STEP_SUMMARY"
  fi
fi
exit "$status"
