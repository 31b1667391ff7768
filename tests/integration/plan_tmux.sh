#!/usr/bin/env bash
# memctl plan in a real terminal (tmux): while it plans with a long budget, the screen
# shows the best arena so far; Ctrl-C (send-keys C-c) stops it, and it still writes the
# best plan found (valid, by memctl plan --validate, and the one it printed) and prints
# it as interrupted, exiting 0 long before its budget. Both on a graph-placed problem and
# on one big enough for the planner's segment-tree path. Not on a terminal: no progress.
# The lines written before the first plan, seen through script(1).
#
# usage: plan_tmux.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
fail() { echo "plan_tmux: $*" >&2; [ -n "${screen:-}" ] && printf '%s\n' "--- screen:" "$screen" >&2; exit 1; }
command -v tmux >/dev/null || fail "tmux is not installed (tools/deps installs it)"
dir=$(mktemp -d /tmp/memd-plan-XXXXXX)
tmx=(tmux -S "$dir/tmux.sock")
trap '"${tmx[@]}" kill-server 2>/dev/null || true; rm -rf "$dir"' EXIT
memctl=$build/tools/memctl/memctl
python3 "$src/tests/bench/gen_plan_problem.py" --buffers 20000 --seed 3 >"$dir/p.csv"

screen=
expect() {
    for _ in $(seq "${2:-100}"); do
        screen=$("${tmx[@]}" capture-pane -p -J -t "$sess")
        grep -qE "$1" <<<"$screen" && return 0
        sleep 0.1
    done
    fail "the screen never showed /$1/"
}
# One problem the planner places with a conflict graph (20000 buffers of a training
# trace), one on its segment-tree path (30000 buffers shaped like large/: the squeaky-wheel
# lanes, then the rest of the portfolio, on two threads).
python3 "$src/tests/bench/gen_plan_problem.py" --buffers 30000 --seed 13 --shape large >"$dir/l.csv"
for p in p l; do
    start=$(date +%s) sess=plan-$p
    # A session each (the first one's shell lingers): killing the only session ends the
    # server, and a new-session racing its exit fails.
    "${tmx[@]}" -f /dev/null new-session -d -s "$sess" -x 200 -y 12 \
        "$memctl plan $dir/$p.csv --budget-ms 600000 --output $dir/out.csv --json; echo \"plan exited \$?\"; sleep 30"
    expect 'best arena [0-9]+ bytes \([0-9.]+% over the lower bound [0-9]+\)' 300
    "${tmx[@]}" send-keys -t "$sess" C-c
    expect '^plan exited 0' 300
    grep -qE '"arena": [0-9]+,.*"cancelled": true' <<<"$screen" || fail "$p: no cancelled result printed"
    grep -q 'interrupted: keeping the best plan found' <<<"$screen" || fail "$p: no interrupted line"
    [ $(($(date +%s) - start)) -lt 300 ] || fail "$p: Ctrl-C did not stop the 600 s budget early"
    [ -s "$dir/out.csv" ] || fail "$p: no plan written"
    arena=$(grep -oE '"arena": [0-9]+' <<<"$screen" | head -1 | grep -oE '[0-9]+$')
    valid=$("$memctl" plan --validate "$dir/out.csv" --json) || fail "$p: the written plan is not valid"
    grep -q "\"arena\": $arena," <<<"$valid" || fail "$p: the written plan is not the one printed ($arena): $valid"
    rm -f "$dir/out.csv"
done
# Every line the terminal got, overwritten ones too (script(1) keeps the bytes): what it
# is doing from the start (reading, the first plan: seconds each at a million buffers),
# then the best arena, then the result.
command -v script >/dev/null || fail "script (util-linux) is not installed"
script -qfec "$memctl plan $dir/l.csv --budget-ms 300" "$dir/typescript" >/dev/null ||
    fail "memctl plan under script failed"
screen=$(tr '\r' '\n' <"$dir/typescript")
for want in "memctl plan: reading $dir/l.csv \.\.\." \
            'memctl plan: 30000 buffers read in [0-9.]+ s; placing the first plan \.\.\.' \
            'memctl plan: best arena [0-9]+ bytes' '(^|\[K)plan: 30000 buffers, arena '; do
    grep -qE "$want" <<<"$screen" || fail "the terminal never got /$want/"
done
# Not on a terminal: no progress lines, the same result line.
"$memctl" plan "$dir/p.csv" --budget-ms 200 2>"$dir/err" | grep '^plan: 20000 buffers, arena ' >/dev/null ||
    fail "no result line without a terminal"
grep -q ', interrupted' <<<"$("$memctl" plan "$dir/p.csv" --budget-ms 200 2>/dev/null)" &&
    fail "an uninterrupted plan says it was interrupted"
! grep -qE 'best arena|reading|placing' "$dir/err" || fail "progress printed to a non-terminal"
echo "plan_tmux: ok"
