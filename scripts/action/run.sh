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
#   INPUT_DURATIONS  --durations REPORT (run, with INPUT_SHARD): shards balanced by an earlier run's durations
#   INPUT_MODEL    --model provider:name (run)    INPUT_OUT    --out (default agentrig-out; agentrig-matrix for matrix)
#   INPUT_ARGS     more arguments for the command, split like a shell command line (never evaluated)
# Writes `out-dir=<absolute output directory>` to $GITHUB_OUTPUT and exits with agentrig's exit code.
# `agentrig run` and `agentrig merge` append summary.md to $GITHUB_STEP_SUMMARY themselves; for `matrix` this script
# appends compatibility.md, and when agentrig stopped before writing a report it adds one line saying so.
set -euo pipefail

python_bin="$(command -v python || command -v python3)"

# Print a variable's words, split the way a shell splits a command line, each ending in NUL; a word holding a file
# pattern becomes its sorted matches (or stays as it is when nothing matches). Nothing in it is evaluated. A value
# that cannot be split (an unbalanced quote) prints why on stderr and exits 2: never a run with the input dropped.
# (Plain loops below, no namerefs or mapfile: macOS runners may have bash 3.2.)
shell_words() {
  "$python_bin" - "$1" <<'PY'
import glob, os, shlex, sys

try:
    words = shlex.split(os.environ.get(sys.argv[1], ""))
except ValueError as error:  # shlex says "No closing quotation" / "No escaped character"
    sys.stderr.write(f"{str(error)[0].lower()}{str(error)[1:]} in {os.environ[sys.argv[1]]!r}")
    sys.exit(2)
for word in words:
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

words_file="$(mktemp)"
trap 'rm -f "$words_file"' EXIT
split_input() {  # split_input VARIABLE INPUT: its words into $words_file, or a usage error naming the input
  local reason
  if ! reason="$(shell_words "$1" 2>&1 >"$words_file")"; then
    usage_error "input $2 cannot be split into words: ${reason:-its value is malformed}"
  fi
}

command="${INPUT_COMMAND:-run}"
paths=()
split_input INPUT_PATHS paths
while IFS= read -r -d '' word; do paths+=("$word"); done <"$words_file"
extra=()
split_input INPUT_ARGS args
while IFS= read -r -d '' word; do extra+=("$word"); done <"$words_file"
for word in ${paths[@]+"${paths[@]}"}; do
  [[ "$word" != -* ]] || usage_error "input paths holds '$word', an option: give options in input args"
done

case "$command" in
  run | matrix)
    [[ ${#paths[@]} -gt 0 ]] || paths=(scenarios)
    ;;
  merge)
    [[ ${#paths[@]} -gt 0 ]] || usage_error "command merge needs paths: the run output directories to merge"
    ;;
  *) usage_error "command must be run, merge or matrix, not '$command'" ;;
esac
# `--out DIR` or `--out=DIR` in input args names the output directory as well as input out does (the last one given
# wins, as in agentrig itself): taken out of the arguments and used as out, so out-dir and the upload name the folder
# agentrig really wrote. Both at once is a usage error. Words after `--` are arguments, never options.
args_out=""
args_out_given=false
kept_args=()
index=0
while [[ $index -lt ${#extra[@]} ]]; do
  word="${extra[$index]}"
  if [[ "$word" == -- ]]; then
    kept_args+=("${extra[@]:$index}")
    break
  elif [[ "$word" == --out ]]; then
    [[ $((index + 1)) -lt ${#extra[@]} ]] || usage_error "input args ends with --out: give its directory after it"
    args_out="${extra[$((index + 1))]}"
    args_out_given=true
    index=$((index + 2))
    continue
  elif [[ "$word" == --out=* ]]; then
    args_out="${word#--out=}"
    args_out_given=true
  else
    kept_args+=("$word")
  fi
  index=$((index + 1))
done
extra=(${kept_args[@]+"${kept_args[@]}"})
if [[ "$args_out_given" == true ]]; then
  [[ -z "${INPUT_OUT:-}" ]] || usage_error "input args gives --out and input out is set: give the output directory once"
  [[ -n "$args_out" ]] || usage_error "input args gives --out an empty directory"
  out="$args_out"
elif [[ "$command" == matrix ]]; then
  out="${INPUT_OUT:-agentrig-matrix}"
else
  out="${INPUT_OUT:-agentrig-out}"
fi
# `out` becomes a line of $GITHUB_OUTPUT (out-dir=...) read by the upload step: one line, and a path, never an option.
case "$out" in
  *$'\n'* | *$'\r'*) usage_error "input out must be one line (it holds a line break)" ;;
  -*) usage_error "input out must be a directory, not an option ('$out'): give options in input args" ;;
esac
only_for() {  # only_for VALUE INPUT COMMAND: refuse an input the command does not take
  [[ -z "$1" || "$command" == "$3" ]] || usage_error "input $2 is only for command $3"
}
only_for "${INPUT_SHARD:-}" shard run
only_for "${INPUT_MODEL:-}" model run
only_for "${INPUT_DURATIONS:-}" durations run
[[ -z "${INPUT_DURATIONS:-}" || -n "${INPUT_SHARD:-}" ]] || usage_error "input durations balances shards: it needs input shard"
[[ "$command" != merge || -z "${INPUT_K:-}${INPUT_JOBS:-}" ]] || usage_error "inputs k and jobs are not for merge"

argv=(agentrig "$command" "${paths[@]}" --out "$out")
[[ -z "${INPUT_K:-}" ]] || argv+=(-k "$INPUT_K")
[[ -z "${INPUT_SHARD:-}" ]] || argv+=(--shard "$INPUT_SHARD")
[[ -z "${INPUT_DURATIONS:-}" ]] || argv+=(--durations "$INPUT_DURATIONS")
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
  out_dir="$(cd -- "$out" && pwd)"
  if [[ "$out_dir" == *$'\n'* || "$out_dir" == *$'\r'* ]]; then  # the working directory's own name, then
    echo "agentrig action: not setting outputs out-dir and report-html: the path holds a line break" >&2
  else
    echo "out-dir=$out_dir" >> "${GITHUB_OUTPUT:-/dev/null}"
    page="$out_dir/report.html"
    [[ "$command" != matrix ]] || page="$out_dir/compatibility.html"
    if [[ -f "$page" ]]; then
      echo "report-html=$page" >> "${GITHUB_OUTPUT:-/dev/null}"
    fi
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
