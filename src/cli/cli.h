/*
 * cli.h — what the subcommands share: the command table entry type and
 * small argument helpers. Each subcommand lives in src/cli/cmd_<name>.c as
 * `int sb_cmd_<name>(int argc, char **argv)` (argv[0] is the subcommand
 * name) and returns the process exit code: 0 success, 1 a check failed,
 * 2 bad usage or bad input (after printing one line to stderr).
 */
#ifndef SOLBENCH_CLI_H
#define SOLBENCH_CLI_H

#include <stdbool.h>
#include <jansson.h>

#include "solbench/error.h"
#include "solbench/hw.h"
#include "solbench/pipeline.h"

typedef int (*sb_cmd_fn)(int argc, char **argv);

#define SB_CMD(name, summary) int sb_cmd_##name(int argc, char **argv);
#include "cli/commands_core.def"
#include "cli/commands_store.def"
#include "cli/commands_model.def"
#undef SB_CMD

/* Prints "solbench: <msg>" on stderr and returns the exit code for err. */
int sb_cli_error(const sb_err *err);
/* Prints "solbench <cmd>: <fmt...>" on stderr and returns 2. */
int sb_cli_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Option parsing helper: if argv[*i] is `--name VALUE` or `--name=VALUE`
 * sets *value and advances *i past it and returns 1; returns -1 (after a
 * usage message) when the value is missing, 0 when it is another option. */
int sb_cli_opt(int argc, char **argv, int *i, const char *name,
               const char **value);

/* A number option in [lo, hi] (inclusive); prints a usage line naming the
 * option and returns 2 on anything else, 0 when *out is set. */
int sb_cli_number(const char *cmd, const char *opt, const char *s, double lo,
                  double hi, double *out);
/* The same for an integer option. */
int sb_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi,
               int *out);

struct stat;
struct json_t;
/* An output file (--json, --csv, --junit, ...) tried before a run starts:
 * fails with a message naming `opt` when it cannot be written; *id gets
 * the file's identity when it exists (see sb_cli_same_out). */
int sb_cli_check_out(const char *opt, const char *path, struct stat *id,
                     sb_err *err);
/* Whether two output paths checked so name one file. */
bool sb_cli_same_out(const char *a, const struct stat *ia, const char *b,
                     const struct stat *ib);
/* --tag key=value into `tags` (a key of up to 127 characters, given once,
 * UTF-8): 0, or 2 after a usage line. */
int sb_cli_tag(const char *cmd, const char *v, struct json_t *tags);
/* A command's text-valued options: the name and where its value goes. */
typedef struct sb_cli_val {
    const char *name; /* "--db" */
    const char **to;
} sb_cli_val;
/* argv[*i] as --help or -h (`help` printed: SB_CLI_HELP), as one of
 * `vals` (ended by {NULL}), read as sb_cli_opt reads one (taken: 1, its
 * value in *to; SB_CLI_BAD after a usage line), or 0: none of them. */
enum { SB_CLI_HELP = 2, SB_CLI_BAD = 3 };
int sb_cli_vals(int argc, char **argv, int *i, const sb_cli_val *vals,
                const char *help);
/* The run's commit into tags["commit"]: `given` (--commit), else the
 * working directory's HEAD when it is a git work tree (abbreviated to 12
 * hex digits; none where git or a repository is absent, or under
 * $SOLBENCH_NO_GIT); a --tag commit=... stands. 0, or 2 after a usage
 * line. */
int sb_cli_commit_tag(const char *cmd, const char *given, struct json_t *tags);

struct sb_run;
struct sb_ceilings;
/* Writes a JSON document to `path` (stdout when NULL) with jansson's
 * `flags`; an error names the file and `what` ("the prediction"). */
int sb_cli_write_json(const struct json_t *doc, const char *path, size_t flags,
                      const char *what, sb_err *err);
/* Writes a calibration file (docs/WORKLOAD.md) for `hardware`: the
 * efficiencies eff[4] (matmul, attention, memory, network) that are > 0,
 * clamped to [0.01, 1], the matmul's of each dtype where `by` has two or
 * more (matmul_by_dtype; NULL: none), with `source` and `notes`; to
 * stdout when `path` is NULL. */
int sb_cli_write_calibration(const char *path, const char *hardware,
                             const double eff[4], const sb_calib_dtypes *by,
                             const char *source, const char *notes,
                             sb_err *err);

/* A PJRT plugin the user named (--pjrt-plugin sets $SOLBENCH_PJRT_PLUGIN;
 * `flag` says whether it came from the option) must load: it is opened
 * now, before anything is measured, and one that does not (no file, a
 * FIFO, a truncated object, no GetPjrtApi, another API) is exit 2 with
 * the reason. 0 when none is named or it loaded; else 2 after the line. */
int sb_cli_pjrt_named(const char *cmd, bool flag);

struct sb_trace;
/* A profiler trace by file path (anything with a '/' or '.', or that
 * exists) or by the name it was stored under in the database `db`. */
int sb_cli_trace_load(const char *db, const char *ref, struct sb_trace *t,
                      sb_err *err);

/* Like with like, for compare and check: when runs a and b differ in what
 * must match (sb_runs_mismatch), lists each differing JSON path under
 * "<pair> differ in N fields (<order>):" — as a warning on stdout when
 * `allow`, else on stderr followed by the refusal and the way on (the
 * same command under mpirun with the baseline's ranks; or, for another
 * machine, `solbench baseline rebase NAME` where `baseline` names one).
 * What changed that still compares (sb_runs_soft_diff: the software
 * stack, the kernel) is listed as notes on stdout. Returns 0 when they
 * match, 1 when they differ but `allow`, 2 when refused. */
int sb_cli_like_with_like(const char *cmd, const struct sb_run *a,
                          const struct sb_run *b, const char *pair,
                          const char *order, bool allow, const char *baseline);

/* `history --changes` (history_changes.c): the change points of the
 * series of the `last` newest runs (0: all) holding `bench` (a glob, NULL:
 * all), printed, or written as JSON to json_path ("-": stdout). The exit
 * code. */
struct sb_store;
struct sb_cp_opts;
int sb_cli_history_changes(struct sb_store *st, const char *path,
                           const char *bench, int last, const char *json_path,
                           const struct sb_cp_opts *o);

#endif
