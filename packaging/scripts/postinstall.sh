#!/bin/sh
# Makes systemd see objgc-prune.service and objgc-prune.timer. The timer
# is not enabled: pruning deletes packages from murano-engine's cache, and
# the operator says when (systemctl enable --now objgc-prune.timer).
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
  systemctl daemon-reload || true
fi
exit 0
