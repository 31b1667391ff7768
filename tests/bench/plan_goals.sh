#!/usr/bin/env bash
# The planner's goal table (issue 13): per plan problem, the lower bound, the best run of
# the greedy portfolio (memd-bench-plan-greedy), memd at 1 s and at 10 s (`memctl plan
# --budget-ms`), and ms to the first plan (of the 1 s run). Markdown on stdout; also
# flags a memd result above the best greedy. Timing is wall clock: say the load.
# usage: tests/bench/plan_goals.sh BUILD_DIR [DATA_DIR] [FILES...]
set -euo pipefail
build=${1:?usage: plan_goals.sh BUILD_DIR [DATA_DIR] [FILES...]}
data=${2:-${MEMD_SHARED_DATA:-$(dirname "$0")/../../../shared/data}}
shift $(( $# > 1 ? 2 : 1 ))
memctl=$build/tools/memctl/memctl
greedy=$build/tests/bench/memd-bench-plan-greedy
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for dir in challenging real generated large; do files+=("$data"/plans/"$dir"/*.csv); done
fi
echo "| file | buffers | lower bound | best greedy (gap %) | memd 1 s (gap %) | memd 10 s (gap %) | first plan ms |"
echo "|---|---|---|---|---|---|---|"
for f in "${files[@]}"; do
  g=$("$greedy" "$f")
  one=$("$memctl" plan "$f" --budget-ms 1000 --json)
  ten=$("$memctl" plan "$f" --budget-ms 10000 --json)
  python3 - "$f" "$g" "$one" "$ten" <<'PY'
import json, os, sys
f, g, one, ten = sys.argv[1], *map(json.loads, sys.argv[2:])
lb = g["lower_bound"]
gap = lambda a: (a - lb) * 100.0 / lb if lb else 0.0
flag = lambda a: " **above greedy**" if a > g["best"] else ""
name = os.path.basename(os.path.dirname(f)) + "/" + os.path.basename(f)
print(f"| {name} | {g['buffers']} | {lb} | {g['best']} ({gap(g['best']):.3f}, {g['best_run']}) "
      f"| {one['arena']} ({gap(one['arena']):.3f}){flag(one['arena'])} "
      f"| {ten['arena']} ({gap(ten['arena']):.3f}){flag(ten['arena'])} | {one['first_ms']} |")
PY
done
