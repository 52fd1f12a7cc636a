#!/usr/bin/env bash
# store_pg_unit.sh TEST_STORE — the store's unit tests (tests/unit/
# test_store.c) on PostgreSQL: a private cluster (lib/pg_cluster.sh) in a
# temporary folder, SOLBENCH_TEST_PG naming its socket folder. Exit 77
# (skip) with the reason when no server can be started.
set -u
T=$1
W=$(mktemp -d)
chmod 755 "$W" # the server's user reaches its folder through it
# shellcheck source=tests/scripts/lib/pg_cluster.sh
. "$(dirname "$0")/lib/pg_cluster.sh"
trap 'pg_cluster_stop; rm -rf "$W"' EXIT
mkdir "$W/pg"
pg_cluster_start "$W/pg" || { echo "SKIP: $PG_SKIP"; exit 77; }
SOLBENCH_TEST_PG=$W/pg "$T"
