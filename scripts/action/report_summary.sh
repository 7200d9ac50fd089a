#!/usr/bin/env bash
# Name the HTML page (report.html, or compatibility.html for matrix) in the job summary: which artifact holds it
# and that it opens from disk. Env: REPORT_HTML (its path), UPLOAD, ARTIFACT_NAME, ARTIFACT_URL (empty when the
# upload gave none).
set -euo pipefail
[[ -n "${GITHUB_STEP_SUMMARY:-}" && -n "${REPORT_HTML:-}" ]] || exit 0
file=$(basename "$REPORT_HTML")
if [[ "${UPLOAD:-}" == true ]]; then
  if [[ -n "${ARTIFACT_URL:-}" ]]; then
    where="the artifact [\`$ARTIFACT_NAME\`]($ARTIFACT_URL)"
  else
    where="the artifact \`$ARTIFACT_NAME\` (this run's Artifacts)"
  fi
  printf '\n**%s**: the run in one page (conversations, failed checks, diffs). Download %s, unzip it and open the file in a browser; it needs no server.\n' \
    "$file" "$where" >> "$GITHUB_STEP_SUMMARY"
else
  # shellcheck disable=SC2016  # the backticks are markdown for the summary, not a command substitution
  printf '\n**%s** was written to `%s` (upload is off).\n' "$file" "$REPORT_HTML" >> "$GITHUB_STEP_SUMMARY"
fi
