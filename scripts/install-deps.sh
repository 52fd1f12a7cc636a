#!/usr/bin/env bash
# Installs the Debian packages solbench builds and tests with. Idempotent:
# packages already present are not touched, and nothing runs when all are.
#   --plan   print what would be installed (one "install: PKG" line each,
#            "without: PKG" for an optional package the archive lacks) and
#            change nothing: no root needed, no apt-get update
set -euo pipefail

plan=0
if [ "${1:-}" = "--plan" ]; then
  plan=1
elif [ $# -gt 0 ]; then
  echo "install-deps: unknown argument '$1' (only --plan)" >&2
  exit 2
fi

pkgs=(
  build-essential cmake pkg-config        # toolchain
  libhwloc-dev hwloc                      # topology and thread binding
  libopenblas-openmp-dev                  # CBLAS (OpenMP flavour)
  libjansson-dev                          # JSON
  libsqlite3-dev sqlite3                  # results store
  libpq-dev postgresql                    # the store on a server (and its tests)
  zlib1g-dev                              # gzip'd profiler traces
  libopenmpi-dev openmpi-bin              # network area (MPI)
  libxml2-utils                           # xmllint, for the JUnit test
  python3                                 # test scripts
  clang libclang-rt-14-dev                # the sanitizer build of the tests
  clang-format                            # the style check (make format-check)
  chromium                                # renders the HTML report in its test
)
# Extra packages can be asked for: SOLBENCH_EXTRA_PKGS="likwid mpich".
if [ -n "${SOLBENCH_EXTRA_PKGS:-}" ]; then
  read -r -a extra <<<"$SOLBENCH_EXTRA_PKGS"
  pkgs+=("${extra[@]}")
fi

# Wanted where the architecture's archive has them; the build goes on
# without (oneDNN: the second GEMM library, SOLBENCH_DNNL=AUTO).
optional=(libdnnl-dev)

# Neither test pipes into `grep -q`: under pipefail a grep that exits at
# its first match kills the writer with SIGPIPE once its output passes a
# pipe buffer (apt-cache policy of a package with many versions), and the
# pipeline's status 141 then reads as "not there".
installed() {
  local st
  st=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
  [[ $st == *"ok installed"* ]]
}
in_archive() {
  local pol
  pol=$(apt-cache policy "$1" 2>/dev/null) || return 1
  [[ $pol =~ Candidate:\ [0-9] ]]
}

missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || missing+=("$p")
done
want=()
for p in "${optional[@]}"; do
  installed "$p" || want+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && exit 0

if [ $plan -eq 1 ]; then
  for p in "${want[@]}"; do
    if in_archive "$p"; then missing+=("$p"); else echo "without: $p"; fi
  done
  for p in "${missing[@]}"; do echo "install: $p"; done
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: not installing the optional ${want[*]} (not root); building without" >&2
    exit 0
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "install-deps: these Debian packages are missing: ${missing[*]}" >&2
    echo "install-deps: run as root (or install them) and try again" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# An optional package joins the list where the archive has it.
for p in "${want[@]}"; do
  if in_archive "$p"; then
    missing+=("$p")
  else
    echo "install-deps: $p is not in this machine's package archive; building without it" >&2
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
