#!/bin/sh
# Install a headless browser for the report tests (tests/reports/test_report_browser.py), only when none is there.
# Idempotent: exits at once when /usr/bin/chromium (or another Chromium/Chrome on PATH) exists. Debian/Ubuntu (apt);
# runs apt-get through sudo when not root. The tests call it themselves when they run as root and find no browser.
set -eu
for browser in /usr/bin/chromium chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$browser" >/dev/null 2>&1; then
    echo "install_browser: $("$browser" --version 2>/dev/null || echo "$browser") already installed"
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_browser: no apt-get here; install Chromium or Chrome by hand (or set AGENTRIG_CHROMIUM=/path)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends chromium
echo "install_browser: $(chromium --version)"
