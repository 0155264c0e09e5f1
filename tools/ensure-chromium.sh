#!/usr/bin/env bash
# The browser test drives Debian's headless Chromium through Playwright (no browser download).
# Install it when missing and we may (root with apt-get); otherwise say how.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "note: the browser test needs Chromium at /usr/bin/chromium (sudo apt-get install chromium); it is skipped without it" >&2
fi
