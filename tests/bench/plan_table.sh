#!/usr/bin/env bash
# Runs `memctl plan --budget-ms MS --json` on every plan problem and prints one table row per
# file (file, buffers, lower bound, arena, gap %, ms, ms to the first valid plan) plus
# the mean gap per folder.
# usage: tests/bench/plan_table.sh MEMCTL [DATA_DIR] [BUDGET_MS]
set -euo pipefail
memctl=${1:?usage: plan_table.sh MEMCTL [DATA_DIR] [BUDGET_MS]}
data=${2:-${MEMD_SHARED_DATA:-$(dirname "$0")/../../../shared/data}}
budget=${3:-1000}
printf '%-46s %8s %14s %14s %7s %8s %8s\n' file buffers lower_bound arena gap_pct ms first_ms
for dir in challenging real generated large; do
  sum=0 count=0
  for f in "$data"/plans/"$dir"/*.csv; do
    line=$("$memctl" plan "$f" --budget-ms "$budget" --json)
    read -r n lb arena gap ms first < <(python3 -c '
import json, sys
j = json.loads(sys.argv[1])
print(j["buffers"], j["lower_bound"], j["arena"], j["gap_pct"], j["plan_ms"], j["first_ms"])' "$line")
    printf '%-46s %8s %14s %14s %7s %8s %8s\n' "$dir/$(basename "$f")" "$n" "$lb" "$arena" "$gap" "$ms" "$first"
    sum=$(python3 -c "print($sum + $gap)"); count=$((count + 1))
  done
  python3 -c "print('mean gap %s: %.3f %%' % ('$dir', $sum / $count))"
done
