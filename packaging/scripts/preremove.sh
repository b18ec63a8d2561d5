#!/bin/sh
# Stops and disables the daily prune when the package is removed (not
# when it is upgraded): dpkg passes "remove", rpm the number of versions
# left, 0.
set -e
case "$1" in
remove|0)
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable --now objgc-prune.timer >/dev/null 2>&1 || true
  fi
  ;;
esac
exit 0
