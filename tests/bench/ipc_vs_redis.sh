#!/usr/bin/env bash
# memd alloc+free through libmemclient vs Redis GET, both over Unix sockets, interleaved in
# the same run on the same machine (BENCHMARKS.md section 2). Prints one line per case
# with the median of REPS runs of each side.
#   usage: tests/bench/ipc_vs_redis.sh BUILD_DIR [REPS] [SECONDS]
# Needs redis-server and redis-benchmark (Debian package redis-server). Never a test.
set -euo pipefail
build=${1:?usage: ipc_vs_redis.sh BUILD_DIR [REPS] [SECONDS]}
reps=${2:-3}
secs=${3:-3}
command -v redis-server >/dev/null || { echo "needs redis-server (apt-get install redis-server)" >&2; exit 2; }
dir=$(mktemp -d /tmp/memd-ipc-bench.XXXXXX)
"$build/daemon/memd" --foreground --socket "$dir/memd.sock" 2>"$dir/memd.log" &
memd=$!
redis-server --port 0 --unixsocket "$dir/redis.sock" --save '' --appendonly no \
  --logfile "$dir/redis.log" &
redis=$!
trap 'kill $memd $redis 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$dir/memd.sock" ] && [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
redis-cli -s "$dir/redis.sock" set key:__rand_int__ xxx >/dev/null

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
redis_rps() { # clients pipeline
  local n=$(( $1 * $2 * 20000 )); [ "$n" -lt 200000 ] && n=200000
  redis-benchmark -s "$dir/redis.sock" -t get -c "$1" -P "$2" -n "$n" --csv | tail -1 | cut -d, -f2 | tr -d '"'
}
memd_ops() { # bench-ipc args...
  "$build/tests/bench/memd-bench-ipc" --socket "$dir/memd.sock" --seconds "$secs" "$@" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ops_per_s"])'
}
case_line() { # label redis-clients redis-pipeline memd-args...
  local label=$1 rc=$2 rp=$3; shift 3
  local r=() m=()
  for _ in $(seq "$reps"); do
    if [ "$rc" -gt 0 ]; then r+=("$(redis_rps "$rc" "$rp")"); fi
    m+=("$(memd_ops "$@")")
  done
  local rm="-" mm
  [ "$rc" -gt 0 ] && rm=$(printf '%s\n' "${r[@]}" | median)
  mm=$(printf '%s\n' "${m[@]}" | median)
  local ratio="-"
  [ "$rc" -gt 0 ] && ratio=$(python3 -c "print(f'{$mm/$rm:.2f}')")
  printf '%-34s redis_get_rps=%-10s memd_ops_per_s=%-10s memd_allocs_per_s=%-10s ratio=%s\n' \
    "$label" "$rm" "$mm" "$(python3 -c "print(int($mm/2))")" "$ratio"
}
echo "load $(cut -d' ' -f1-3 /proc/loadavg), $reps reps x ${secs}s, medians"
# redis-benchmark serves all its connections from one thread; "1 thread" runs memd's
# clients the same way (each still its own connection), "thread each" one thread apiece.
case_line "1 client"                          1 1  --clients 1
case_line "16 clients, 1 thread"             16 1  --clients 16 --threads 1
case_line "64 clients, 1 thread"             64 1  --clients 64 --threads 1
case_line "16 clients, thread each"          16 1  --clients 16
case_line "64 clients, thread each"          64 1  --clients 64
case_line "16 clients x 16 pipelined, 1 thr" 16 16 --clients 16 --pipeline 16 --threads 1
case_line "batch 256, 1 client, D4"     0 0  --clients 1 --batch 256 --pipeline 4
case_line "batch 1024, 2 clients, D4"   0 0  --clients 2 --batch 1024 --pipeline 4
