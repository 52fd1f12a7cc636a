#!/usr/bin/env bash
# install_example.sh BUILD SOURCE [CC] — the library as a program of its own
# uses it (docs/LIBRARY.md): `cmake --install` into a scratch prefix, then
# examples/embed.c compiled against the installed headers with the flags
# of the installed solbench.pc alone (no source tree on the include path,
# no jansson headers asked for), linked to the shared library, and run:
# it must measure memory.triad and report it valid.
set -euo pipefail
build=$(readlink -f "$1")
src=$(readlink -f "$2")
cc=${3:-cc}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cmake --install "$build" --prefix "$W/prefix" >/dev/null
export PKG_CONFIG_PATH=$W/prefix/lib/pkgconfig
for f in libsolbench.a libsolbench.so pkgconfig/solbench.pc; do
    [ -e "$W/prefix/lib/$f" ] || { echo "FAIL: lib/$f not installed"; exit 1; }
done
[ -e "$W/prefix/include/solbench/library.h" ] || { echo "FAIL: headers not installed"; exit 1; }
if grep -l '#include "' "$W/prefix/include/solbench/"*.h | xargs grep -h '#include "' | grep -v '"solbench/'; then
    echo "FAIL: a public header includes a private one"
    exit 1
fi
if grep -l '^#include <jansson.h>' "$W/prefix/include/solbench/"*.h; then
    echo "FAIL: a public header includes jansson's"
    exit 1
fi
# compiled with the installed headers only, and run with the installed
# library (its run path) and the installed data
"$cc" -std=c11 -Wall -Werror "$src/examples/embed.c" -o "$W/embed" \
    $(pkg-config --cflags solbench) $(pkg-config --libs solbench) \
    -Wl,-rpath,"$W/prefix/lib"
ldd "$W/embed" | grep "$W/prefix/lib/libsolbench.so" >/dev/null ||
    { echo "FAIL: not linked to the installed libsolbench.so"; ldd "$W/embed"; exit 1; }
out=$(SOLBENCH_DATA="$W/prefix/share/solbench/data" "$W/embed")
echo "$out"
grep -qE '^memory.triad [0-9.]+ GB/s, [0-9]+ samples, valid yes, stable (yes|no)$' <<<"$out" ||
    { echo "FAIL: unexpected output"; exit 1; }
echo "ok: examples/embed.c built against the installed library and ran"
