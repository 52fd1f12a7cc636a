/*
 * main.c — the solbench command: one dispatch table by command name. Each
 * command parses its own arguments, calls libsolbench and prints.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "solbench/library.h"
#include "solbench/compare.h"
#include "solbench/fileio.h"
#include "solbench/sysinfo.h"
#include "solbench/util.h"

typedef struct sb_command {
    const char *name;
    sb_cmd_fn fn;
    const char *summary;
} sb_command;

#define SB_CMD(n, s) {#n, sb_cmd_##n, s},
static const sb_command commands[] = {
#include "cli/commands_core.def"
#include "cli/commands_store.def"
#include "cli/commands_model.def"
    {NULL, NULL, NULL}};
#undef SB_CMD

/* Every error line on stderr is printed here: "<prefix>: <message>" and
 * one newline, the message's control characters escaped (sb_err_escape),
 * so a newline in an argument the message quotes cannot make it two
 * lines. */
static void sb__say(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void sb__say(const char *prefix, const char *fmt, va_list ap)
{
    char raw[2048], line[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
    sb_err_escape(line, sizeof line, raw);
    fprintf(stderr, "%s: %s\n", prefix, line);
}

static void sb__sayf(const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb__sayf(const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb__say(prefix, fmt, ap);
    va_end(ap);
}

int sb_cli_error(const sb_err *err)
{
    sb__sayf("solbench", "%s", err->msg[0] ? err->msg : "error");
    return sb_exit_code(err->code ? err->code : SB_EINVAL);
}

int sb_cli_usage(const char *cmd, const char *fmt, ...)
{
    /* a usage error comes from parsing, the same on every rank of a
     * launch: rank 0 alone says it */
    if (sb_launcher_rank() > 0)
        return 2;
    char prefix[160];
    char safe[64];
    sb_err_escape(safe, sizeof safe, cmd);
    snprintf(prefix, sizeof prefix, "solbench %s", safe);
    va_list ap;
    va_start(ap, fmt);
    sb__say(prefix, fmt, ap);
    va_end(ap);
    return 2;
}

int sb_cli_opt(int argc, char **argv, int *i, const char *name,
               const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc || argv[*i + 1] == NULL) {
        sb_cli_usage(argv[0], "%s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* An output file must be writable before the run starts, not after it.
 * A new file is made and removed again (O_EXCL: only what this call made);
 * an existing one is opened for appending, which changes nothing; a
 * symbolic link to nowhere is left as it is (the write will create its
 * target). Only a regular file passes: a FIFO, a device or a socket is
 * refused without blocking (sb_file_open), as the writer itself would
 * refuse it after the run. *id gets the file's device and inode when it
 * exists. */
int sb_cli_check_out(const char *opt, const char *path, struct stat *id,
                     sb_err *err)
{
    memset(id, 0, sizeof *id);
    if (!*path)
        return sb_fail(err, SB_EINVAL, "%s: empty path", opt);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return sb_fail(err, SB_EINVAL, "%s %s: is a directory", opt, path);
    int fd =
        open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd >= 0) {
        close(fd);
        remove(path);
        return 0;
    }
    if (errno == EEXIST) {
        sb_err inner = {0};
        if (sb_file_open(path, O_WRONLY | O_APPEND, &fd, &inner) == 0) {
            fstat(fd, id);
            close(fd);
            return 0;
        }
        if (errno == ENOENT) /* a dangling symbolic link */
            return 0;
        if (inner.code != SB_EIO) /* not a regular file; names the path */
            return sb_fail(err, SB_EINVAL, "%s %s", opt, inner.msg);
    }
    return sb_fail(err, SB_EINVAL, "%s %s: cannot write: %s", opt, path,
                   strerror(errno));
}

/* Whether two output paths name one file: the same existing file, or the
 * same name in the same folder. */
bool sb_cli_same_out(const char *a, const struct stat *ia, const char *b,
                     const struct stat *ib)
{
    if (ia->st_ino && ib->st_ino)
        return ia->st_dev == ib->st_dev && ia->st_ino == ib->st_ino;
    char ra[4096], rb[4096], da[4096], db[4096];
    snprintf(da, sizeof da, "%s", a);
    snprintf(db, sizeof db, "%s", b);
    char *sa = strrchr(da, '/'), *sb = strrchr(db, '/');
    const char *na = sa ? sa + 1 : da, *nb = sb ? sb + 1 : db;
    if (sa)
        *sa = 0;
    if (sb)
        *sb = 0;
    if (!realpath(sa ? (da[0] ? da : "/") : ".", ra) ||
        !realpath(sb ? (db[0] ? db : "/") : ".", rb))
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

/* --tag key=value into the object `tags`: a key of up to 127 characters,
 * given once, key and value UTF-8 (jansson refuses other text). */
int sb_cli_vals(int argc, char **argv, int *i, const sb_cli_val *vals,
                const char *help)
{
    if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0) {
        fputs(help, stdout);
        return SB_CLI_HELP;
    }
    for (const sb_cli_val *o = vals; o->name; o++) {
        const char *v = NULL;
        int m = sb_cli_opt(argc, argv, i, o->name, &v);
        if (m > 0)
            *o->to = v;
        if (m)
            return m < 0 ? SB_CLI_BAD : 1;
    }
    return 0;
}

int sb_cli_commit_tag(const char *cmd, const char *given, json_t *tags)
{
    if (given) {
        if (json_object_get(tags, "commit"))
            return sb_cli_usage(cmd, "--commit and --tag commit=...: give one");
        if (!*given || strlen(given) > 64)
            return sb_cli_usage(cmd, "--commit '%.64s': 1 to 64 characters",
                                given);
        char tag[80];
        snprintf(tag, sizeof tag, "commit=%s", given);
        return sb_cli_tag(cmd, tag, tags);
    }
    if (json_object_get(tags, "commit") || getenv("SOLBENCH_NO_GIT"))
        return 0;
    /* the working directory's commit, when it is a git work tree */
    FILE *p = popen("git rev-parse --verify --quiet HEAD 2>/dev/null", "r");
    if (!p)
        return 0;
    char line[80] = "";
    if (!fgets(line, sizeof line, p))
        line[0] = '\0';
    int st = pclose(p);
    line[strcspn(line, "\r\n")] = '\0';
    size_t n = strlen(line);
    bool hex = n >= 7 && n <= 64;
    for (size_t i = 0; hex && i < n; i++)
        hex = (line[i] >= '0' && line[i] <= '9') ||
              (line[i] >= 'a' && line[i] <= 'f');
    if (st == 0 && hex) {
        line[12] = '\0'; /* abbreviated as git log --oneline shows it */
        json_object_set_new(tags, "commit", json_string(line));
    }
    return 0;
}

int sb_cli_tag(const char *cmd, const char *v, json_t *tags)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v)
        return sb_cli_usage(cmd, "--tag %s: expected key=value", v);
    if (eq - v > 127)
        return sb_cli_usage(cmd,
                            "--tag %.40s...: key longer than 127 "
                            "characters",
                            v);
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - v), v);
    if (json_object_get(tags, key))
        return sb_cli_usage(cmd, "--tag %s: given twice", key);
    json_t *val = json_string(eq + 1);
    if (!val || json_object_set_new(tags, key, val))
        return sb_cli_usage(cmd,
                            "--tag %s: key and value must be UTF-8 "
                            "text",
                            key);
    return 0;
}

int sb_cli_number(const char *cmd, const char *opt, const char *s, double lo,
                  double hi, double *out)
{
    double v;
    bool range;
    if (!sb_parse_decimal(s, &v, &range) || range || !(v >= lo) || !(v <= hi))
        return sb_cli_usage(cmd, "%s %s: expected a number in [%g, %g]", opt, s,
                            lo, hi);
    *out = v;
    return 0;
}

int sb_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi,
               int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return sb_cli_usage(cmd, "%s %s: expected an integer in [%d, %d]", opt,
                            s, lo, hi);
    *out = (int)v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: solbench <command> [options]\n\n"
               "Finds the bottleneck of LLM training and inference by "
               "measurement.\n\ncommands:\n");
    for (const sb_command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f,
            "\n'solbench <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
    /* A file size limit (ulimit -f) makes a write fail with EFBIG, which
     * the store and the writers report (the run is kept elsewhere), not a
     * signal that ends the process with the run unsaved. */
    signal(SIGXFSZ, SIG_IGN);
    sb_library_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc == 3) { /* help COMMAND */
        for (const sb_command *c = commands; c->name; c++)
            if (strcmp(c->name, argv[2]) == 0) {
                char *hargv[] = {argv[2], "--help", NULL};
                return c->fn(2, hargv);
            }
        sb__sayf("solbench",
                 "help %s: unknown command (see 'solbench "
                 "--help')",
                 argv[2]);
        return 2;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
        strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("solbench %s (%s)\n", sb_version(), sb_git_commit());
        return 0;
    }
    for (const sb_command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn(argc - 1, argv + 1);
    sb__sayf("solbench", "unknown command '%s' (see 'solbench --help')", name);
    return 2;
}

/* The ranks a run's config names (1 when it names none). */
static long config_ranks(const struct sb_run *r)
{
    json_t *t = json_object_get(r->config, "topology");
    json_t *n = json_object_get(t, "ranks");
    return json_is_integer(n) ? (long)json_integer_value(n) : 1;
}

int sb_cli_like_with_like(const char *cmd, const struct sb_run *a,
                          const struct sb_run *b, const char *pair,
                          const char *order, bool allow, const char *baseline)
{
    sb_diff_list diffs = {0};
    int rc = 0;
    if (sb_runs_mismatch(a, b, &diffs) > 0) {
        FILE *f = allow ? stdout : stderr;
        if (allow)
            fprintf(f, "warning: ");
        else
            fprintf(f, "solbench %s: ", cmd);
        fprintf(f, "%s differ in %zu field%s (%s):\n", pair, diffs.n,
                diffs.n == 1 ? "" : "s", order);
        for (size_t i = 0; i < diffs.n; i++)
            fprintf(f, "  %s\n", diffs.lines[i]);
        rc = 1;
        if (!allow) {
            long ra = config_ranks(a), rb = config_ranks(b);
            /* "baseline vs now": the first run is "the baseline" */
            char first[32];
            snprintf(first, sizeof first, "%.*s", (int)strcspn(order, " "),
                     order);
            if (ra != rb && ra > 1)
                fprintf(stderr,
                        "solbench %s: refusing to compare unlike runs: %s%s "
                        "ran on %ld MPI ranks; run this under the same launch "
                        "(mpirun -np %ld ..., srun -n %ld ...; "
                        "docs/NETWORK.md)\n",
                        cmd, strcmp(first, "A") ? "the " : "", first, ra, ra,
                        ra);
            else if (ra != rb)
                fprintf(stderr,
                        "solbench %s: refusing to compare unlike runs: %s%s "
                        "ran as one process; run this without mpirun\n",
                        cmd, strcmp(first, "A") ? "the " : "", first);
            else if (!sb_runs_same_machine_class(a, b) && baseline)
                fprintf(stderr,
                        "solbench %s: refusing to compare runs of different "
                        "machines; to make this machine's figures the "
                        "baseline: solbench baseline rebase %s (or "
                        "--allow-mismatch to compare anyway)\n",
                        cmd, baseline);
            else
                fprintf(stderr,
                        "solbench %s: refusing to compare unlike runs "
                        "(use --allow-mismatch to compare anyway)\n",
                        cmd);
            rc = 2;
        }
    }
    sb_diff_free(&diffs);
    if (rc == 2)
        return rc;
    sb_diff_list soft = {0};
    if (sb_runs_soft_diff(a, b, &soft) > 0) {
        printf("note: %s compare, but the software changed (%s); a "
               "difference may be its doing:\n",
               pair, order);
        for (size_t i = 0; i < soft.n; i++)
            printf("  %s\n", soft.lines[i]);
        if (baseline)
            printf("  (to make the new stack the normal: solbench baseline "
                   "rebase %s)\n",
                   baseline);
    }
    sb_diff_free(&soft);
    return rc;
}

int sb_cli_pjrt_named(const char *cmd, bool flag)
{
    const char *path = getenv("SOLBENCH_PJRT_PLUGIN");
    if (!path || !*path)
        return 0;
    /* the plugin's backend describes it (loading it) when it is wanted,
     * which a named plugin is */
    static sb_sysinfo si;
    memset(&si, 0, sizeof si);
    sb_sysinfo_add_backends(&si, NULL);
    if (si.has_pjrt && !si.pjrt.error[0])
        return 0;
    sb_err err = {0};
    sb_fail(&err, SB_EINVAL, "%s %s: %s", cmd,
            flag ? "--pjrt-plugin" : "$SOLBENCH_PJRT_PLUGIN",
            si.has_pjrt ? si.pjrt.error
                        : "this build has no PJRT backend (docs/PJRT.md)");
    return sb_cli_error(&err);
}
