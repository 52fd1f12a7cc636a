# shellcheck shell=bash disable=SC2034
# pg_cluster.sh — sourced by the store's tests: a private PostgreSQL
# cluster in a temporary folder, on a Unix socket there and no TCP port,
# started as the postgres user when the tests run as root (the server
# refuses root), stopped and removed by pg_cluster_stop (call it from the
# test's EXIT trap, so a failing test leaves nothing running).
#   pg_cluster_start DIR   0 and PGURL set (postgresql:// URL of database
#                          "solbench"), or 1 and PG_SKIP the reason
#   pg_cluster_stop        stops the server at once (-m immediate)
#   pg_cluster_restart     stops it mid-whatever and starts it again
PG_BIN=
PG_DIR=
PG_AS=()
pg_cluster_start() {
    PG_DIR=$1
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
        PG_SKIP="no PostgreSQL server installed (initdb not found)"
        return 1
    fi
    if [ "$(id -u)" = 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            PG_SKIP="running as root and there is no postgres user to run the server"
            return 1
        fi
        chown postgres "$PG_DIR" || { PG_SKIP="cannot give $PG_DIR to postgres"; return 1; }
        PG_AS=(runuser -u postgres --)
    fi
    if ! "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U solbench \
           --no-sync >"$PG_DIR/initdb.log" 2>&1; then
        PG_SKIP="initdb failed: $(tail -1 "$PG_DIR/initdb.log")"
        return 1
    fi
    if ! pg_cluster_up; then
        PG_SKIP="the server did not start: $(tail -1 "$PG_DIR/server.log")"
        return 1
    fi
    "${PG_AS[@]}" "$PG_BIN/createdb" -h "$PG_DIR" -U solbench solbench ||
        { PG_SKIP="createdb failed"; return 1; }
    PGURL="postgresql:///solbench?host=$PG_DIR&user=solbench"
    return 0
}
pg_cluster_up() {
    "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
        -o "-k $PG_DIR -c listen_addresses= -c fsync=off -c max_connections=60" \
        start >/dev/null 2>&1
}
pg_cluster_stop() {
    [ -n "$PG_DIR" ] && [ -d "$PG_DIR/data" ] &&
        "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
    return 0
}
pg_cluster_restart() {
    pg_cluster_stop
    pg_cluster_up
}
# psql against the cluster: pgq "SQL" prints the rows, fields by '|'
pgq() { psql "$PGURL" -XAtqc "$1"; }
