#!/usr/bin/env bash
# The man pages as man(1) shows them: each built page renders through `man -l` without a
# groff warning, and each stays accurate to the programs it describes:
#   memd(8)          every option memd --help lists
#   memctl(1)        every command memctl --help lists, and every option of each
#                    command's (and model's subcommands') --help
#   libmemclient(3)  every function <memd/client.h> exports (MEMCLIENT_API)
#   memd.yaml(5)     every key the shipped config/memd.yaml sets or shows commented out
#
# usage: man_test.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
build=$1 src=$2
fail() { echo "man_test: $*" >&2; exit 1; }
command -v man >/dev/null || fail "man is not installed (Debian man-db; tools/deps installs it)"
memd=$build/daemon/memd memctl=$build/tools/memctl/memctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

render() { # page -> $tmp/page.txt (plain text, 80 columns)
    local page=$build/doc/$1
    [ -s "$page" ] || fail "$1 was not built"
    MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$page" 2>"$tmp/$1.err" |
        col -bx >"$tmp/$1.txt" || fail "man -l $1 failed: $(cat "$tmp/$1.err")"
    [ ! -s "$tmp/$1.err" ] || fail "man -l $1 warns: $(cat "$tmp/$1.err")"
    grep -q '^NAME' "$tmp/$1.txt" || fail "$1 has no NAME section"
    grep -q '^SEE ALSO' "$tmp/$1.txt" || fail "$1 has no SEE ALSO section"
}
for p in memd.8 memctl.1 memd.yaml.5 libmemclient.3; do
    render "$p"
done
# man(1)'s text joins words; search the page as one line of single-spaced words.
flat() { tr -s ' \n' '  ' <"$tmp/$1.txt"; }
has() { # page, text
    flat "$1" | grep -F -- "$2" >/dev/null || fail "$1 does not mention '$2'"
}

# memd(8): its options.
for o in $("$memd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    has memd.8 "$o"
done
has memd.8 "$(meson introspect "$build" --buildoptions |
    python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "default_socket"))')"

# memctl(1): commands, and the options of each.
cmds=$("$memctl" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$cmds" ] || fail "memctl --help lists no commands"
for c in $cmds; do
    has memctl.1 "memctl $c"
    if [ "$c" = model ]; then
        for s in check load list import; do
            has memctl.1 "memctl model $s"
            for o in $("$memctl" model "$s" --help | awk -v want="model $s " '
                    index($0, "memctl model ") { on = index($0, want) > 0 } on' |
                    grep -oE -- '--[a-z][a-z-]*' | sort -u); do
                has memctl.1 "$o"
            done
        done
        continue
    fi
    for o in $("$memctl" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
        has memctl.1 "$o"
    done
done
for o in $("$memctl" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    has memctl.1 "$o"
done

# libmemclient(3): the exported functions.
fns=$(grep -oE 'MEMCLIENT_API [^(]*\bmemclient_[a-z_0-9]+\(' "$src/include/memd/client.h" |
      grep -oE 'memclient_[a-z_0-9]+\($' | tr -d '(')
[ "$(echo "$fns" | wc -l)" -ge 20 ] || fail "found too few functions in client.h: $fns"
for f in $fns; do
    has libmemclient.3 "$f("
done

# memd.yaml(5): every key of the shipped config, set or commented out.
keys=$(sed -nE 's/^ *(# *)?(- )?([a-z_]+):( |$).*/\3/p' "$src/config/memd.yaml" | sort -u)
[ "$(echo "$keys" | wc -l)" -ge 10 ] || fail "found too few keys in config/memd.yaml: $keys"
for k in $keys; do
    has memd.yaml.5 "$k:"
done
echo "man_test: ok ($(echo "$cmds" | wc -w) memctl commands, $(echo "$fns" | wc -w) functions, $(echo "$keys" | wc -w) config keys)"
