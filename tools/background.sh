#!/usr/bin/env bash
# Run a long computation (a bundle item, a benchmark) in the background at the lowest priority, so that the
# tests and builds run beside it at full speed: `bash tools/background.sh LOG COMMAND...`, e.g.
#   bash tools/background.sh /tmp/bundle.log .venv/bin/nadcore bundle fig3_sigma
# `nice` alone is not enough on Linux with autogroup scheduling (the default on most desktops and VMs):
# priorities then hold only within a session, and every Jupyter kernel starts a session of its own, so a
# niced job still takes a whole core from a chapter's kernel. The job runs in a session of its own whose
# autogroup is set to nice 19. Prints the job's PID; its output goes to LOG.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: bash tools/background.sh LOG COMMAND [ARG...]" >&2
    exit 2
fi
log=$1
shift
setsid nice -n 19 "$@" > "$log" 2>&1 < /dev/null &
pid=$!
# the autogroup is the session's: set it once setsid has made the session (before, it is this shell's)
for _ in $(seq 50); do
    [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] && break
    sleep 0.1
done
if [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] && [ -w "/proc/$pid/autogroup" ]; then
    echo 19 > "/proc/$pid/autogroup"
fi
echo "$pid"
