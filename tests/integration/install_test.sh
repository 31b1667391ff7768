#!/usr/bin/env bash
# libmemclient as a user outside the tree gets it: `meson install --destdir` into a
# temporary root, then a small program is compiled and linked with nothing but
# `pkg-config --cflags --libs memclient` (PKG_CONFIG_SYSROOT_DIR points into the root),
# and run. Also checks the SONAME, that the library exports only memclient_* symbols,
# and that <memd/client.h> compiles alone as strict C99 and as C++.
#
# usage: install_test.sh BUILD_DIR
set -euo pipefail
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
nm -D --defined-only "$lib" | grep -q ' T memclient_connect@@' || fail "memclient_connect not exported"

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
readelf -d "$root/prog" | grep -q 'NEEDED.*libmemclient.so.0' || fail "the program does not need libmemclient.so.0"

if command -v c++ >/dev/null; then
    echo '#include <memd/client.h>
int main() { return memclient_strerror(0) ? 0 : 1; }' >"$root/prog.cc"
    c++ -Wall -Wextra -Werror $cflags "$root/prog.cc" -o "$root/progxx" $libs || fail "<memd/client.h> is not C++-clean"
fi
echo "install_test: ok ($lib, $cflags $libs)"
