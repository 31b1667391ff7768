#!/bin/sh
# systemd-analyze verify on the units as meson generated them. The service copy used
# here runs the build tree's memd, since the installed path does not exist yet.
# Usage: verify-units.sh SERVICE SOCKET METRICS_SERVICE METRICS_SOCKET
# (exit 77: no systemd-analyze, test skipped)
set -eu
command -v systemd-analyze >/dev/null 2>&1 || { echo "systemd-analyze not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$1" "$dir/memd.service"
cp "$2" "$dir/memd.socket"
cp "$3" "$dir/memd-metrics.service"
cp "$4" "$dir/memd-metrics.socket"
cd "$dir"
# --man=no: no man pages are installed for memd; a dependency outside these files
# (sockets.target, ...) is resolved from the host's unit path.
out=$(systemd-analyze verify --man=no ./memd.socket ./memd.service ./memd-metrics.socket \
  ./memd-metrics.service 2>&1) || {
  echo "$out"; exit 1; }
# verify exits 0 on some warnings; treat anything it prints about our units as failure.
if printf '%s\n' "$out" | grep -q 'memd\(-metrics\)\?\.\(service\|socket\)'; then
  echo "$out"; exit 1
fi
echo "$out"
echo "units verified"
