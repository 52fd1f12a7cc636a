#!/usr/bin/env bash
# scripts/install-deps.sh's package detection against a stub apt-cache and
# dpkg-query on PATH: an optional package whose `apt-cache policy` prints
# more than a pipe buffer (a package with many versions) is found in the
# archive, one the archive lacks is named as left out, and a package already
# installed is not asked for again.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/bin"
cat >"$d/bin/apt-cache" <<'STUB'
#!/usr/bin/env bash
# policy PKG: a candidate first, then a version table of ~200 KB
[ "$1" = policy ] || exit 1
case "$2" in
  libdnnl-dev)
    printf '%s:\n  Installed: (none)\n  Candidate: 2.7.3-1\n  Version table:\n' "$2"
    for i in $(seq 4000); do
      printf '     2.7.%d-1 500\n        500 http://archive.invalid/debian bookworm/main amd64 Packages\n' "$i"
    done ;;
  *) printf '%s:\n  Installed: (none)\n  Candidate: (none)\n' "$2" ;;
esac
STUB
cat >"$d/bin/dpkg-query" <<'STUB'
#!/usr/bin/env bash
# every package is installed but the ones named in $STUB_MISSING
for a; do p=$a; done
case " $STUB_MISSING " in
  *" $p "*) exit 1 ;;
  *) printf 'install ok installed' ;;
esac
STUB
chmod +x "$d/bin/apt-cache" "$d/bin/dpkg-query"

# the stub really does outgrow a pipe buffer
test "$("$d/bin/apt-cache" policy libdnnl-dev | wc -c)" -gt 65536

out=$(PATH="$d/bin:$PATH" STUB_MISSING="libdnnl-dev jansson-none" \
      bash "$root/scripts/install-deps.sh" --plan)
echo "$out"
grep -qx 'install: libdnnl-dev' <<<"$out" || { echo "FAIL: libdnnl-dev not planned"; exit 1; }
! grep -q 'without:' <<<"$out" || { echo "FAIL: a package left out"; exit 1; }
! grep -q 'install: cmake' <<<"$out" || { echo "FAIL: an installed package asked for"; exit 1; }

# an optional package the archive lacks is named, not installed
out=$(PATH="$d/bin:$PATH" STUB_MISSING="libdnnl-dev not-in-archive" \
      bash -c 'sed "s/^optional=(libdnnl-dev)/optional=(libdnnl-dev not-in-archive)/" "$1" | bash -s -- --plan' _ "$root/scripts/install-deps.sh")
grep -qx 'without: not-in-archive' <<<"$out" || { echo "FAIL: a missing optional not named: $out"; exit 1; }
grep -qx 'install: libdnnl-dev' <<<"$out" || { echo "FAIL: $out"; exit 1; }

# a wrong argument is refused
if bash "$root/scripts/install-deps.sh" --bogus 2>/dev/null; then echo "FAIL: --bogus accepted"; exit 1; fi
echo "install-deps plan: ok"
