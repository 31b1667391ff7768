#!/usr/bin/env bash
# `meson install --destdir` into a temporary root, checked as an operator and a user
# outside the tree get it:
# - libmemclient: a small program is compiled and linked with nothing but
#   `pkg-config --cflags --libs memclient` (PKG_CONFIG_SYSROOT_DIR points into the root),
#   and run; the SONAME, that the library exports only memclient_* symbols, and that
#   <memd/client.h> compiles alone as strict C99 and as C++.
# - the tree: programs, config and descriptors, the systemd units where
#   `pkg-config systemd` says (memd.socket on -Ddefault_socket, ExecStart on the
#   installed memd), sysusers.d/tmpfiles.d, man pages (rendered with man -l), the bash
#   completion where `pkg-config bash-completion` says; the installed memd defaults to
#   the installed config, never the source tree's; the README's install steps on the
#   tree (systemd-sysusers/-tmpfiles --root, systemctl --root enable and disable
#   memd.socket); a second install keeps an edited
#   memd.yaml; the installed memd serves the installed config to the installed memctl;
#   and -Dsystemd_units=false / -Ddefault_socket as meson plans them.
#
# usage: install_test.sh BUILD_DIR
set -euo pipefail
# No `grep -q` after a pipe: it exits at the first match, the writer dies of SIGPIPE and
# pipefail fails the pipeline although the text was there.
build=$1
fail() { echo "install_test: $*" >&2; exit 1; }

root=$(mktemp -d /tmp/memclient-install-XXXXXX)
trap 'rm -rf "$root"' EXIT
meson install -C "$build" --destdir "$root/dest" --no-rebuild >"$root/install.log" 2>&1 ||
    { cat "$root/install.log" >&2; fail "meson install failed"; }

pc=$(find "$root/dest" -name memclient.pc -print -quit)
[ -n "$pc" ] || fail "no memclient.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$root/dest"
export PKG_CONFIG_LIBDIR="$PKG_CONFIG_PATH" # only the installed copy, never the system's
cflags=$(pkg-config --cflags memclient) || fail "pkg-config --cflags failed"
libs=$(pkg-config --libs memclient) || fail "pkg-config --libs failed"
case "$cflags $libs" in
*"$build"* | *"$(cd "$(dirname "$0")/../.." && pwd)"*) fail "flags point into the tree: $cflags $libs" ;;
esac

lib=$(find "$root/dest" -name 'libmemclient.so.0.*' -type f -print -quit)
[ -n "$lib" ] || fail "no libmemclient.so.0.* installed"
[ -L "$(dirname "$lib")/libmemclient.so.0" ] || fail "no libmemclient.so.0 link"
[ -L "$(dirname "$lib")/libmemclient.so" ] || fail "no libmemclient.so dev link"
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libmemclient.so.0 ] || fail "SONAME is '$soname'"
others=$(nm -D --defined-only "$lib" | awk '$2 != "A" && $3 !~ /^memclient_/ {print $3}')
[ -z "$others" ] || fail "exports beyond memclient_*: $others"
nm -D --defined-only "$lib" | grep ' T memclient_connect@@' >/dev/null || fail "memclient_connect not exported"

cat >"$root/prog.c" <<'C'
#include <errno.h>
#include <memd/client.h>
#include <memd/version.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    memclient *c = NULL;
    memclient_error e;
    int r = memclient_connect("/nonexistent/memd.sock", &c);
    memclient_last_error(&e);
    printf("%s %d %s\n", MEMD_VERSION_STRING, r, memclient_strerror(-ENOMEM));
    return r == -ENOENT && c == NULL && strstr(e.message, "/nonexistent/memd.sock") ? 0 : 1;
}
C
cc ${CC_FLAGS:-} -std=c99 -Wall -Wextra -Werror -pedantic $cflags "$root/prog.c" -o "$root/prog" $libs ||
    fail "cannot build against the installed library"
libdir=$(dirname "$lib")
LD_LIBRARY_PATH="$libdir" "$root/prog" >"$root/prog.out" || fail "the program failed: $(cat "$root/prog.out")"
grep -q "^$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])') -2 " "$root/prog.out" ||
    fail "unexpected output: $(cat "$root/prog.out")"
readelf -d "$root/prog" | grep 'NEEDED.*libmemclient.so.0' >/dev/null || fail "the program does not need libmemclient.so.0"

if command -v c++ >/dev/null; then
    echo '#include <memd/client.h>
int main() { return memclient_strerror(0) ? 0 : 1; }' >"$root/prog.cc"
    c++ -Wall -Wextra -Werror $cflags "$root/prog.cc" -o "$root/progxx" $libs || fail "<memd/client.h> is not C++-clean"
fi

# ---- the rest of the tree -------------------------------------------------------------
opt() { meson introspect "$build" --buildoptions |
    python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
under() { case $2 in /*) echo "$2" ;; *) echo "$1/$2" ;; esac; } # meson: absolute wins
prefix=$(opt prefix) sock=$(opt default_socket)
etc=$(under "$prefix" "$(opt sysconfdir)")/memd
sbin=$(under "$prefix" "$(opt sbindir)") bin=$(under "$prefix" "$(opt bindir)")
man=$(under "$prefix" "$(opt mandir)")
d=$root/dest
for f in "$sbin/memd" "$bin/memctl"; do
    [ -x "$d$f" ] || fail "$f not installed"
done
[ -f "$d$etc/memd.yaml" ] || fail "no $etc/memd.yaml"
for f in wormhole_b0 esperanto_etsoc1 gmem_tpu opencl_gpu; do
    [ -f "$d$etc/devices/$f.yaml" ] || fail "no $etc/devices/$f.yaml"
done

hostenv() { env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR "$@"; }
pcvar() { # pkg-config variable of the host's .pc (not the installed tree's), under prefix
    hostenv pkg-config --variable="$2" --define-variable=prefix="$prefix" \
        --define-variable=datadir="$(under "$prefix" "$(opt datadir)")" "$1"
}
if [ "$(opt systemd_units)" = True ] || [ "$(opt systemd_units)" = true ]; then
    unitdir=$(opt systemdunitdir); [ -n "$unitdir" ] || unitdir=$(pcvar systemd systemdsystemunitdir)
    sysusers=$(opt sysusersdir); [ -n "$sysusers" ] || sysusers=$(pcvar systemd sysusersdir)
    tmpfiles=$(opt tmpfilesdir); [ -n "$tmpfiles" ] || tmpfiles=$(pcvar systemd tmpfilesdir)
    for f in "$unitdir/memd.service" "$unitdir/memd.socket" "$sysusers/memd.conf" \
             "$tmpfiles/memd.conf"; do
        [ -f "$d$f" ] || fail "$f not installed (units: $(cd "$d" && find . -name 'memd.*'))"
    done
    grep -qx "ListenStream=$sock" "$d$unitdir/memd.socket" ||
        fail "memd.socket does not listen on $sock: $(grep ListenStream "$d$unitdir/memd.socket")"
    grep -qx "ExecStart=$sbin/memd --foreground" "$d$unitdir/memd.service" ||
        fail "memd.service does not run $sbin/memd: $(grep ExecStart "$d$unitdir/memd.service")"
    grep -qx "RuntimeDirectory=$(dirname "${sock#/run/}")" "$d$unitdir/memd.service" ||
        fail "memd.service's RuntimeDirectory is not the socket's folder"
    grep -q "^d $(dirname "$sock") 0755 memd memd" "$d$tmpfiles/memd.conf" ||
        fail "tmpfiles.d does not create $(dirname "$sock")"
    grep -q '^u memd ' "$d$sysusers/memd.conf" || fail "sysusers.d does not create user memd"
    # The README's steps, run for real on the tree (no running systemd needed): the
    # user and group, the socket's folder, then enable and disable memd.socket.
    if command -v systemd-sysusers >/dev/null && command -v systemctl >/dev/null; then
        steps=$root/steps
        cp -a "$d" "$steps"
        mkdir -p "$steps/etc"
        systemd-sysusers --root="$steps" "$steps$sysusers/memd.conf" >/dev/null 2>&1 ||
            fail "systemd-sysusers --root failed"
        grep -q '^memd:' "$steps/etc/group" || fail "systemd-sysusers made no group memd"
        grep -q '^memd:' "$steps/etc/passwd" || fail "systemd-sysusers made no user memd"
        systemd-tmpfiles --root="$steps" --create "$steps$tmpfiles/memd.conf" ||
            fail "systemd-tmpfiles --root --create failed"
        gid=$(awk -F: '$1 == "memd" { print $3 }' "$steps/etc/group")
        [ "$(stat -c '%a %g' "$steps$(dirname "$sock")")" = "755 $gid" ] ||
            fail "systemd-tmpfiles made no $(dirname "$sock") with mode 0755, group memd"
        systemctl --root="$steps" enable memd.socket >/dev/null 2>&1 || fail "systemctl enable failed"
        [ -L "$steps/etc/systemd/system/sockets.target.wants/memd.socket" ] ||
            fail "enable made no sockets.target.wants/memd.socket"
        [ "$(systemctl --root="$steps" is-enabled memd.socket 2>/dev/null)" = enabled ] ||
            fail "systemctl is-enabled memd.socket does not say enabled"
        systemctl --root="$steps" disable memd.socket >/dev/null 2>&1 || fail "systemctl disable failed"
        [ ! -e "$steps/etc/systemd/system/sockets.target.wants/memd.socket" ] ||
            fail "disable left sockets.target.wants/memd.socket"
        rm -rf "$steps"
    fi
fi

for page in man8/memd.8 man1/memctl.1 man5/memd.yaml.5 man3/libmemclient.3; do
    [ -s "$d$man/$page" ] || fail "no $man/$page"
    out=$(MANWIDTH=80 man --warnings -l "$d$man/$page" 2>&1 >/dev/null) || fail "man -l $page failed"
    [ -z "$out" ] || fail "man -l $page: $out"
done
MANWIDTH=80 man -l "$d$man/man8/memd.8" 2>/dev/null | grep "$etc/memd.yaml" >/dev/null ||
    fail "memd(8) does not name the installed config $etc/memd.yaml"

completions=$(opt bashcompletiondir)
[ -n "$completions" ] || completions=$(pcvar bash-completion completionsdir)
[ -f "$d$completions/memctl" ] || fail "no bash completion at $completions/memctl"
bash -n "$d$completions/memctl" || fail "the installed completion is not valid bash"

# The installed memd's default config is the installed one, whatever the source tree.
srcroot=$(cd "$(dirname "$0")/../.." && pwd)
help=$(LD_LIBRARY_PATH="$libdir" "$d$sbin/memd" --help)
grep -qF -- "--config FILE        daemon config (default: $etc/memd.yaml)" <<<"$help" ||
    fail "installed memd's default config is not $etc/memd.yaml: $help"
! grep -qF "$srcroot" <<<"$help" || fail "installed memd names the source tree: $help"
if [ ! -e "$etc/memd.yaml" ]; then # (a real install on this host would be served)
    set +e
    msg=$(LD_LIBRARY_PATH="$libdir" "$d$sbin/memd" --foreground --socket "$root/s.sock" 2>&1)
    rc=$?
    set -e
    [ "$rc" = 1 ] && grep -qF "$etc/memd.yaml" <<<"$msg" ||
        fail "installed memd without $etc/memd.yaml: exit $rc, '$msg'"
fi
# The installed programs serve and read the installed config (its relative descriptor
# paths resolve in the installed tree).
LD_LIBRARY_PATH="$libdir" "$d$sbin/memd" --check-config "$d$etc/memd.yaml" >"$root/check.log" 2>&1 ||
    fail "the installed memd.yaml does not check out: $(tail -3 "$root/check.log")"
LD_LIBRARY_PATH="$libdir" "$d$sbin/memd" --foreground --config "$d$etc/memd.yaml" \
    --socket "$root/memd.sock" >"$root/memd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -rf "$root"' EXIT
for _ in $(seq 100); do # until it serves (the socket file exists a moment before)
    LD_LIBRARY_PATH="$libdir" "$d$bin/memctl" --socket "$root/memd.sock" devices >/dev/null 2>&1 &&
        break
    sleep 0.1
done
LD_LIBRARY_PATH="$libdir" "$d$bin/memctl" --socket "$root/memd.sock" dump >"$root/dump.txt" 2>&1 ||
    fail "the installed memctl cannot dump the installed memd: $(cat "$root/dump.txt" "$root/memd.log")"
grep -q 'device 0: wormhole_b0' "$root/dump.txt" || fail "unexpected dump: $(head "$root/dump.txt")"
kill "$pid"
wait "$pid" || fail "the installed memd exited $? on SIGTERM: $(cat "$root/memd.log")"
trap 'rm -rf "$root"' EXIT
LD_LIBRARY_PATH="$libdir" "$d$bin/memctl" --version | grep '^memctl ' >/dev/null || fail "installed memctl does not run"

# An upgrade (a second install) keeps the operator's memd.yaml; the shipped one goes beside.
echo "# edited by the operator" >>"$d$etc/memd.yaml"
meson install -C "$build" --destdir "$d" --no-rebuild >"$root/install2.log" 2>&1 ||
    { cat "$root/install2.log" >&2; fail "second meson install failed"; }
tail -1 "$d$etc/memd.yaml" | grep 'edited by the operator' >/dev/null || fail "an upgrade overwrote memd.yaml"
cmp -s "$srcroot/config/memd.yaml" "$d$etc/memd.yaml.new" || fail "no memd.yaml.new beside the edited one"

# What a build with other options would install, from a setup alone (nothing built):
# -Dsystemd_units=false installs no unit; -Ddefault_socket moves memd.socket's path.
alt=$root/alt
hostenv meson setup "$alt" "$srcroot" -Dtests=false -Dpython=disabled -Dsystemd_units=false \
    -Ddefault_socket=/run/memd-alt/x.sock >"$root/alt.log" 2>&1 ||
    { cat "$root/alt.log" >&2; fail "meson setup with -Dsystemd_units=false failed"; }
plan=$(meson introspect "$alt" --install-plan)
! grep -qE 'memd\.(service|socket)|sysusers|tmpfiles' <<<"$plan" ||
    fail "-Dsystemd_units=false still installs units"
grep -qx 'ListenStream=/run/memd-alt/x.sock' "$alt/systemd/memd.socket" ||
    fail "memd.socket ignores -Ddefault_socket: $(grep ListenStream "$alt/systemd/memd.socket")"
grep -qx 'RuntimeDirectory=memd-alt' "$alt/systemd/memd.service" ||
    fail "memd.service's RuntimeDirectory ignores -Ddefault_socket"
grep -q '"/run/memd-alt/x.sock"' "$alt/config/memd-build-config.h" ||
    fail "the programs' default socket ignores -Ddefault_socket"
if hostenv meson setup "$root/bad" "$srcroot" -Dtests=false -Dpython=disabled \
        -Ddefault_socket=/tmp/x.sock >"$root/bad.log" 2>&1; then
    fail "a default_socket outside /run was accepted with systemd units"
fi
grep -q 'not under /run/' "$root/bad.log" || fail "no reason given: $(tail -3 "$root/bad.log")"

echo "install_test: ok ($lib, $cflags $libs; units, man pages, completion, config)"
