#!/usr/bin/env bash
# The bash completion of memctl, sourced into bash with bash-completion's library as an
# interactive shell has it, then asked what it offers: every command memctl --help lists,
# each command's options (from that command's --help, model's subcommands apart), the
# values of --class/--scope/--dtype/--report, files by extension, and --socket anywhere.
#
# usage: completion_test.sh COMPLETION_FILE MEMCTL
set -euo pipefail
comp=$(realpath "$1") memctl=$(realpath "$2")
fail() { echo "completion_test: $*" >&2; exit 1; }
lib=$(pkg-config --variable=datadir bash-completion)/bash-completion/bash_completion
[ -f "$lib" ] || fail "no bash-completion library at $lib (Debian bash-completion)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/a.csv" "$work/b.txt" "$work/m.yaml" "$work/n.onnx"

# Prints what completing LINE (the cursor at its end) offers, sorted, one per line.
cat >"$work/run.sh" <<'SH'
source "$LIB"
source "$COMP"
cd "$WORK"
line=$1
read -ra COMP_WORDS <<<"$line"
[[ $line == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$line COMP_POINT=${#line}
COMPREPLY=()
_memctl memctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort -u
SH
offers() { LIB=$lib COMP=$comp WORK=$work bash "$work/run.sh" "$memctl $1"; }
expect() { # line, words that must all be offered
    local got; got=$(offers "$1")
    for w in $2; do
        grep -qx -- "$w" <<<"$got" || fail "'memctl $1<TAB>' offers no '$w': $(echo $got)"
    done
}
expect_only() { # line, exactly these words
    local got; got=$(offers "$1" | tr '\n' ' ' | sed 's/ $//')
    [ "$got" = "$2" ] || fail "'memctl $1<TAB>' offers '$got', want '$2'"
}

cmds=$("$memctl" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ "$(echo "$cmds" | wc -l)" -ge 5 ] || fail "memctl --help lists too few commands: $cmds"
expect "" "$cmds"
expect_only "d" "devices dump"
expect_only "plan" "plan plan-submit"
expect "--" "--socket --all --help --version"
for c in $cmds; do
    [ "$c" = model ] && continue
    expect "$c --" "$("$memctl" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u) --socket --all"
done
expect_only "model " "check import list load"
expect_only "model load --" "--all --budget-ms --device --help --hold --instances --json --page-size --seed --socket"
expect "model import --" "--dims --name"
expect_only "model list --" "--all --help --json --socket"
expect_only "subdev " "define"
expect_only "subdev define left --group " "dram global l1 sram"
expect "subdev define left --" "--banks --budget --device --group --overlap --window"
expect_only "dump --j" "--json"
expect_only "--socket /tmp/x.sock dump --de" "--detailed --device"
expect_only "--socket=/tmp/x.sock alloc --ho" "--hold"
expect_only "dump --socket /tmp/x.sock --wa" "--watch"
expect_only "alloc --class c" "code constant"
expect_only "alloc --scope dram" "dram dram.texture"
expect_only "alloc --dtype bf" "bf16"
expect_only "dump --csv --report l" "l1_usage_summary"
expect_only "alloc --size " ""
expect_only "plan " "a.csv"
expect_only "plan-submit " "a.csv"
expect_only "model check " "m.yaml"
expect_only "model import " "n.onnx"
echo "completion_test: ok ($(echo $cmds | wc -w) commands)"
