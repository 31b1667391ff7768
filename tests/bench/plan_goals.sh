#!/usr/bin/env bash
# The planner's goal table (issue 13): see plan_goals.py (the same arguments).
# usage: tests/bench/plan_goals.sh BUILD_DIR [DATA_DIR] [--million] [--budgets MS1,MS2] [FILES...]
exec python3 "$(dirname "$0")/plan_goals.py" "$@"
