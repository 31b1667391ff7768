#!/usr/bin/env bash
# memctl top in a real terminal: tmux runs it in a detached 120x32 window on a private
# memd; the test reads the screen (capture-pane), presses keys (send-keys) and checks
# what the screen shows after each: the view, sorting, the name filter, the class
# filter, clearing, a smaller window (every line fits), and q quitting with status 0;
# the processes with their client names, top's own session left out.
#
# usage: top_tmux.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
fail() { echo "top_tmux: $*" >&2; [ -n "${screen:-}" ] && printf '%s\n' "--- screen:" "$screen" >&2; exit 1; }
command -v tmux >/dev/null || fail "tmux is not installed (tools/deps installs it)"

dir=$(mktemp -d /tmp/memd-top-XXXXXX)
sock=$dir/memd.sock
tmx=(tmux -S "$dir/tmux.sock")
memd_pid= hold_pids=()
cleanup() {
    "${tmx[@]}" kill-server 2>/dev/null || true
    for p in "${hold_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$memd_pid" ] && kill "$memd_pid" 2>/dev/null && wait "$memd_pid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

"$build/daemon/memd" --foreground --config "$src/config/memd.yaml" --socket "$sock" 2>"$dir/memd.log" &
memd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "memd did not start: $(cat "$dir/memd.log")"
memctl=("$build/tools/memctl/memctl" --socket "$sock")
# Two holders: a large DRAM constant and a small L1 buffer, with names to filter on.
"${memctl[@]}" alloc --device 0 --class constant --size 96MiB --name weights.big --hold \
    >"$dir/h1" 2>&1 & hold_pids+=($!)
"${memctl[@]}" alloc --device 0 --scope sram --class internal --size 64KiB --name act.small --hold \
    >"$dir/h2" 2>&1 & hold_pids+=($!)
for _ in $(seq 100); do grep -q handle= "$dir/h1" && grep -q handle= "$dir/h2" && break; sleep 0.05; done

screen=
capture() { screen=$("${tmx[@]}" capture-pane -p -t top); }
# Waits until the screen shows the pattern (grep -E), else fails with the screen.
expect() {
    for _ in $(seq 60); do
        capture
        grep -qE "$1" <<<"$screen" && return 0
        sleep 0.1
    done
    fail "the screen never showed /$1/"
}
expect_not() {
    for _ in $(seq 60); do
        capture
        grep -qE "$1" <<<"$screen" || return 0
        sleep 0.1
    done
    fail "the screen still shows /$1/"
}

"${tmx[@]}" -f /dev/null new-session -d -s top -x 120 -y 32 \
    "TERM=xterm-256color ${memctl[*]} top --interval 0.2; echo \"top exited \$?\"; sleep 30"
expect '^memd [0-9.]+ +pid [0-9]+ +up'
expect 'wormhole_b0 +dram +12 +1.1 GiB / 12.0 GiB'
expect 'PID +UID PROCESS +CLIENT +SESSIONS'
# The holders are memctl processes with the client name memctl; top's own session (a
# memctl holding nothing) is not a holder: two process rows, not three.
expect '^[0-9]+ +[0-9]+ memctl +memctl +1 +1 '
rows=$(grep -cE '^[0-9]+ +[0-9]+ memctl +memctl ' <<<"$screen" || true)
[ "$rows" -eq 2 ] || fail "$rows memctl process rows, want the 2 holders"
expect 'HANDLE +DEV REGION'
expect 'weights\.big'
expect 'act\.small'
# Largest first: the 96 MiB buffer's row comes before the 64 KiB one.
big=$(grep -n 'weights\.big' <<<"$screen" | cut -d: -f1)
small=$(grep -n 'act\.small' <<<"$screen" | cut -d: -f1)
[ "$big" -lt "$small" ] || fail "not sorted by size (big on line $big, small on $small)"
"${tmx[@]}" send-keys -t top r
expect 'sort bytes \(reversed\)'
capture
big=$(grep -n 'weights\.big' <<<"$screen" | cut -d: -f1)
small=$(grep -n 'act\.small' <<<"$screen" | cut -d: -f1)
[ "$big" -gt "$small" ] || fail "r did not reverse the order"
"${tmx[@]}" send-keys -t top r s
expect 'sort allocs'
# The name filter: a glob typed at the prompt.
"${tmx[@]}" send-keys -t top / 'weights*' Enter
expect 'filters: name=weights\*'
expect_not 'act\.small'
expect 'weights\.big'
"${tmx[@]}" send-keys -t top x
expect 'filters: none'
expect 'act\.small'
# The class filter cycles code, constant, ...: twice is constant.
"${tmx[@]}" send-keys -t top c c
expect 'filters: class=constant'
expect_not 'act\.small'
"${tmx[@]}" send-keys -t top x
# A smaller terminal: every line fits its 70 columns, the view still there.
"${tmx[@]}" resize-window -t top -x 70 -y 14
expect 'HANDLE'
capture
long=$(awk 'length($0) > 70' <<<"$screen" | head -1)
[ -z "$long" ] || fail "a line is wider than the window: '$long'"
[ "$(wc -l <<<"$screen")" -le 14 ] || fail "more lines than the window has"
"${tmx[@]}" send-keys -t top q
expect '^top exited 0'
echo "top_tmux: ok"
