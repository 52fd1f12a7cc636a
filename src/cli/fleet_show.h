/*
 * fleet_show.h — a fleet report's outputs, shared by `fleet run` and
 * `fleet show`, and the subcommands that read stored fleets
 * (cmd_fleet_show.c).
 */
#ifndef SOLBENCH_CLI_FLEET_SHOW_H
#define SOLBENCH_CLI_FLEET_SHOW_H

#include <stdbool.h>

#include "solbench/fleet.h"
#include "solbench/store.h"

typedef struct sb_cli_fleet_out {
    const char *json;  /* FILE or "-" (stdout), NULL none */
    const char *junit; /* FILE, NULL none */
    const char *html;  /* FILE, NULL none */
    bool quiet;        /* the verdict only */
} sb_cli_fleet_out;

/* The output files checked before anything is measured or read (each
 * writable, no two the same): 0, or 2 after one line. */
int sb_cli_fleet_check_outs(const sb_cli_fleet_out *o);
/* The report printed (to stderr when the JSON goes to stdout) and
 * written; the exit code: 0 healthy, 1 unhealthy, 2 an output failed.
 * seconds: the run's, for the JUnit file. */
int sb_cli_fleet_emit(const sb_fleet_report *r, const sb_cli_fleet_out *o,
                      double seconds);
/* A fleet by reference: a file (a solbench.fleet/1 document) where ref
 * names one, else a stored fleet in st ("last", a fleet baseline, an id
 * or its prefix). */
int sb_cli_fleet_load(sb_store *st, const char *ref, sb_fleet_report *r,
                      sb_err *err);

/* The store of stored fleets, opened SB_STORE_RO or SB_STORE_RW, only
 * where it exists (a command that reads or names fleets makes none):
 * else SB_EINVAL, "holds no fleet runs yet". */
int sb_cli_fleet_store(const char *db, int mode, sb_store **st, sb_err *err);

/* A reference that names a file rather than a stored fleet: one that
 * exists, a path with '/', a name ending in .json. */
bool sb_cli_fleet_is_file(const char *ref);

int sb_cmd_fleet_show(int argc, char **argv);
int sb_cmd_fleet_list(int argc, char **argv);
int sb_cmd_fleet_baseline(int argc, char **argv);

#endif
