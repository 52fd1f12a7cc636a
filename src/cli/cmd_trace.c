/*
 * cmd_trace.c — `solbench trace import|show|diff|list|rm`: a profiler
 * trace held against a machine model (docs/TRACE.md).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/cli.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/store.h"
#include "solbench/trace.h"

static const char trace_help[] =
    "usage: solbench trace import FILE [--name NAME] [--db PATH]\n"
    "       solbench trace show NAME|FILE [--run ID | --results FILE] "
    "[--hw NAME]\n"
    "                          [--top N] [--json FILE] [--csv FILE] "
    "[--db PATH]\n"
    "       solbench trace diff A B [--top N] [--db PATH]\n"
    "       solbench trace list [--db PATH]\n"
    "       solbench trace rm NAME [--db PATH]\n"
    "  FILE is a PyTorch profiler (Kineto) or JAX/XLA profiler Chrome trace,\n"
    "  plain or gzip'd; NAME a trace stored by import (default name: the\n"
    "  file's name without its extensions).\n"
    "  show places each op under the binding ceiling of a machine model:\n"
    "  --run/--results (a run's measured ceilings), --hw (a datasheet spec;\n"
    "  both: the run overrides the spec). Without any: the spec of the\n"
    "  trace's GPU where one is known, else the store's newest run, else\n"
    "  none (no %SOL).\n"
    "  --top N         rows of the op table (default 25; 0: all)\n"
    "  --json FILE     the whole analysis (schema solbench.trace/1)\n"
    "  --csv FILE      one line per op\n"
    "  --hlo FILE      the compiled XLA module's text (jax: jit(f).lower(...)\n"
    "                  .compile().as_text()): shapes for a JAX trace's ops\n"
    "  --calibration-out FILE  the efficiencies the trace shows against a\n"
    "                  datasheet (--hw, or the trace's GPU) as a calibration\n"
    "                  file for predict --calibration (docs/WORKLOAD.md)\n";

typedef struct opts {
    const char *db, *name, *run, *results, *hw, *json, *csv, *hlo, *calib;
    int top;
    const char *pos[3];
    int npos;
} opts;

static int parse(const char *cmd, int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 25;
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(trace_help, stdout);
            return -1;
        }
        if ((m = sb_cli_opt(argc, argv, &i, "--db", &o->db)) ||
            (m = sb_cli_opt(argc, argv, &i, "--name", &o->name)) ||
            (m = sb_cli_opt(argc, argv, &i, "--run", &o->run)) ||
            (m = sb_cli_opt(argc, argv, &i, "--results", &o->results)) ||
            (m = sb_cli_opt(argc, argv, &i, "--hw", &o->hw)) ||
            (m = sb_cli_opt(argc, argv, &i, "--json", &o->json)) ||
            (m = sb_cli_opt(argc, argv, &i, "--csv", &o->csv)) ||
            (m = sb_cli_opt(argc, argv, &i, "--hlo", &o->hlo)) ||
            (m = sb_cli_opt(argc, argv, &i, "--calibration-out", &o->calib))) {
            if (m < 0)
                return 2;
            continue;
        }
        if ((m = sb_cli_opt(argc, argv, &i, "--top", &v))) {
            if (m < 0 || sb_cli_int(cmd, "--top", v, 0, 1000000, &o->top))
                return 2;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return sb_cli_usage(cmd, "unknown option '%s' (trace --help)",
                                argv[i]);
        if (o->npos == 3)
            return sb_cli_usage(cmd, "too many arguments ('%s')", argv[i]);
        o->pos[o->npos++] = argv[i];
    }
    return 0;
}

/* ---- import ----------------------------------------------------------------
 */

/* The file's bytes gzip'd: as they are when the file is gzip already. */
static int gz_bytes(const char *path, unsigned char **out, size_t *len,
                    sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "rb", &f, err);
    if (rc)
        return rc;
    unsigned char head[2] = {0};
    size_t h = fread(head, 1, 2, f);
    rewind(f);
    bool gz = h == 2 && head[0] == 0x1f && head[1] == 0x8b;
    size_t cap = 1u << 20, n = 0;
    unsigned char *buf = malloc(cap);
    unsigned char *in = malloc(1u << 16);
    z_stream zs = {0};
    bool zinit = false;
    if (!buf || !in)
        goto oom;
    if (!gz) {
        if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK)
            goto oom;
        zinit = true;
    }
    for (;;) {
        size_t r = fread(in, 1, 1u << 16, f);
        if (ferror(f)) {
            rc = sb_fail(err, SB_EIO, "%s: read failed", path);
            goto out;
        }
        bool last = r < (1u << 16);
        if (gz) {
            if (n + r > (size_t)SB_STORE_TRACE_MAX)
                goto big;
            if (n + r > cap) {
                while (n + r > cap)
                    cap *= 2;
                unsigned char *p = realloc(buf, cap);
                if (!p)
                    goto oom;
                buf = p;
            }
            memcpy(buf + n, in, r);
            n += r;
        } else {
            zs.next_in = in;
            zs.avail_in = (uInt)r;
            int zr;
            do {
                if (cap - n < (1u << 16)) {
                    if (cap > (size_t)SB_STORE_TRACE_MAX)
                        goto big;
                    cap *= 2;
                    unsigned char *p = realloc(buf, cap);
                    if (!p)
                        goto oom;
                    buf = p;
                }
                zs.next_out = buf + n;
                zs.avail_out = (uInt)(cap - n);
                zr = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
                n = cap - zs.avail_out;
            } while (zs.avail_out == 0 || (last && zr != Z_STREAM_END));
        }
        if (last)
            break;
    }
    *out = buf;
    *len = n;
    buf = NULL;
    rc = 0;
    goto out;
big:
    rc = sb_fail(err, SB_EINVAL,
                 "%s: more than %ld bytes gzip'd: too large "
                 "to store (show reads it from the file)",
                 path, SB_STORE_TRACE_MAX);
    goto out;
oom:
    rc = sb_fail(err, SB_ENOMEM, "out of memory reading %s", path);
out:
    if (zinit)
        deflateEnd(&zs);
    fclose(f);
    free(buf);
    free(in);
    return rc;
}

static int cmd_import(const opts *o)
{
    if (o->npos != 1)
        return sb_cli_usage("trace", "usage: trace import FILE [--name NAME]");
    const char *path = o->pos[0];
    char name[SB_STORE_NAME_MAX + 2];
    if (o->name)
        snprintf(name, sizeof name, "%s", o->name);
    else
        sb_trace_default_name(path, name, sizeof name);
    sb_err err = {0};
    sb_trace t;
    /* read first: what cannot be analysed is not stored */
    if (sb_trace_read(path, &t, &err))
        return sb_cli_error(&err);
    if (t.n == 0) {
        sb_fail(&err, SB_EINVAL,
                "%s: no complete events (ph X) among its %zu: nothing to "
                "analyse, not stored",
                path, t.n_total);
        sb_trace_free(&t);
        return sb_cli_error(&err);
    }
    unsigned char *gz = NULL;
    size_t len = 0;
    sb_store *st = NULL;
    int rc = gz_bytes(path, &gz, &len, &err);
    if (!rc)
        rc = sb_store_open_default_mode(o->db, SB_STORE_RW, &st, NULL, 0, &err);
    if (!rc)
        rc = sb_store_trace_put(st, name, path, sb_tr_format_name(t.format),
                                (long)t.n_total, gz, len, &err);
    if (!rc)
        printf("trace '%s' stored (%s, %zu events, %zu bytes gzip'd) in %s\n",
               name, sb_tr_format_name(t.format), t.n_total, len,
               sb_store_file(st));
    if (st)
        sb_store_close(st);
    free(gz);
    sb_trace_free(&t);
    return rc ? sb_cli_error(&err) : 0;
}

/* ---- reading one: a file or a stored name ----------------------------------
 */

int sb_cli_trace_load(const char *db, const char *ref, sb_trace *t, sb_err *err)
{
    /* a file that exists is read; else a stored trace of that name; else
     * the file's error when the name looks like a path */
    struct stat sb;
    if (stat(ref, &sb) == 0)
        return sb_trace_read(ref, t, err);
    char path[4096];
    int rc = sb_store_path(db, path, sizeof path, err);
    if (rc)
        return rc;
    if (!sb_store_exists(path)) {
        if (strchr(ref, '/') || strchr(ref, '.'))
            return sb_trace_read(ref, t, err);
        return sb_fail(err, SB_EINVAL,
                       "trace '%s': no such file, and no database (%s) to "
                       "hold a trace of that name",
                       ref, path);
    }
    sb_store *st;
    if ((rc = sb_store_open_default_mode(db, SB_STORE_RO, &st, NULL, 0, err)))
        return rc;
    void *data;
    size_t len;
    sb_err serr = {0};
    rc = sb_store_trace_get(st, ref, &data, &len, &serr);
    sb_store_close(st);
    if (rc) {
        if (rc == SB_EINVAL && (strchr(ref, '/') || strchr(ref, '.')))
            return sb_trace_read(ref, t, err); /* the file's error */
        *err = serr;
        return rc;
    }
    rc = sb_trace_read_mem(data, len, ref, t, err);
    free(data);
    return rc;
}

/* Shapes for a JAX trace's ops from HLO text; says how many it gave. */
static int add_hlo(const char *path, sb_trace *t, sb_err *err)
{
    int matched;
    int rc = sb_trace_add_hlo(t, path, &matched, err);
    if (!rc)
        printf("hlo: %d op events of %s got shapes from %s\n", matched,
               t->label, path);
    return rc;
}

/* The machine model of `show`; *spec_used (may be NULL) gets the
 * datasheet it is when it is one alone (no measured ceilings), else NULL. */
static int machine(const opts *o, const sb_trace *t, sb_ceilings *c, char *desc,
                   size_t len, const char **spec_used, sb_err *err)
{
    memset(c, 0, sizeof *c);
    if (spec_used)
        *spec_used = NULL;
    if (o->hw || o->run || o->results) {
        if (spec_used && !o->run && !o->results)
            *spec_used = o->hw;
        return sb_machine_open(o->hw, o->results, o->run, o->db, c, NULL, NULL,
                               NULL, desc, len, err);
    }
    const char *spec = sb_hw_spec_for_device(t->device_name);
    if (spec) {
        if (spec_used)
            *spec_used = spec;
        return sb_machine_open(spec, NULL, NULL, o->db, c, NULL, NULL, NULL,
                               desc, len, err);
    }
    bool has_device = false;
    for (size_t i = 0; i < t->ntracks; i++)
        has_device |= t->tracks[i].device;
    if (!has_device) {
        /* a host trace: the newest measured run of this store, if any */
        sb_err quiet = {0};
        char db[4096];
        if (sb_store_path(o->db, db, sizeof db, &quiet) == 0 &&
            sb_store_exists(db) &&
            sb_machine_open(NULL, NULL, "last", o->db, c, NULL, NULL, NULL,
                            desc, len, &quiet) == 0)
            return 0;
        memset(c, 0, sizeof *c);
    }
    snprintf(desc, len, "none (no %%SOL: give --run, --results or --hw)");
    return 0;
}

/* A calibration file (docs/WORKLOAD.md) from the trace's efficiencies
 * against the datasheet `spec`. */
static int write_calibration(const sb_trace *t, const sb_tr_analysis *a,
                             const char *spec, const char *path, sb_err *err)
{
    double eff[SB_TR_EFF_N], ts[SB_TR_EFF_N];
    long n[SB_TR_EFF_N];
    sb_tr_efficiencies(a, eff, ts, n);
    static const char *const key[SB_TR_EFF_N] = {"matmul", "attention",
                                                 "memory", "network"};
    char src[400];
    size_t l = (size_t)snprintf(src, sizeof src, "trace %s:", t->label);
    int kinds = 0;
    for (int k = 0; k < SB_TR_EFF_N; k++) {
        if (!(ts[k] > 0)) {
            eff[k] = 0; /* none: left out of the file */
            continue;
        }
        if (l < sizeof src)
            l += (size_t)snprintf(
                src + l, sizeof src - l, "%s %s %.3f over %ld ops (%.3g s)",
                kinds ? ";" : "", key[k], eff[k], n[k], ts[k]);
        eff[k] = eff[k] < 0.01 ? 0.01 : eff[k]; /* placed: kept */
        kinds++;
    }
    if (!kinds)
        return sb_fail(err, SB_EINVAL,
                       "--calibration-out %s: no op of the trace could be "
                       "placed under a ceiling of %s",
                       path, spec);
    int rc = sb_cli_write_calibration(
        path, spec, eff, NULL, src,
        "written by solbench trace show --calibration-out: the time the ops "
        "would take at their ceilings over the time they took",
        err);
    if (rc == 0)
        printf("calibration written to %s (%s)\n", path, src);
    return rc;
}

static int cmd_show(const opts *o)
{
    if (o->npos != 1)
        return sb_cli_usage("trace", "usage: trace show NAME|FILE [--run ID "
                                     "| --hw NAME] [--json F] [--csv F]");
    sb_err err = {0};
    struct stat js, cs, ks;
    if ((o->calib &&
         sb_cli_check_out("--calibration-out", o->calib, &ks, &err)) ||
        (o->json && sb_cli_check_out("--json", o->json, &js, &err)) ||
        (o->csv && sb_cli_check_out("--csv", o->csv, &cs, &err)) ||
        (o->json && o->csv && sb_cli_same_out(o->json, &js, o->csv, &cs) &&
         sb_fail(&err, SB_EINVAL, "--json %s and --csv %s name the same file",
                 o->json, o->csv)))
        return sb_cli_error(&err);
    sb_trace t;
    if (sb_cli_trace_load(o->db, o->pos[0], &t, &err))
        return sb_cli_error(&err);
    if (o->hlo && add_hlo(o->hlo, &t, &err)) {
        sb_trace_free(&t);
        return sb_cli_error(&err);
    }
    sb_ceilings c;
    char desc[256];
    sb_tr_analysis a;
    const char *spec = NULL;
    int rc = machine(o, &t, &c, desc, sizeof desc, &spec, &err);
    if (!rc && o->calib && !spec)
        rc = sb_fail(&err, SB_EINVAL,
                     "--calibration-out %s: needs a datasheet to hold the "
                     "trace against (--hw NAME, or a trace of a GPU with a "
                     "spec), not measured ceilings",
                     o->calib);
    if (!rc)
        rc = sb_trace_analyze(&t, &c, &a, &err);
    if (rc) {
        sb_trace_free(&t);
        return sb_cli_error(&err);
    }
    printf("machine model: %s\n", desc);
    sb_tr_print(stdout, &t, &a, o->top);
    if (o->json && !rc)
        rc = sb_tr_write_json(&t, &a, desc, o->json, &err);
    if (o->csv && !rc)
        rc = sb_tr_write_csv(&a, o->csv, &err);
    if (o->calib && !rc)
        rc = write_calibration(&t, &a, spec, o->calib, &err);
    sb_tr_analysis_free(&a);
    sb_trace_free(&t);
    return rc ? sb_cli_error(&err) : 0;
}

static int cmd_diff(const opts *o)
{
    if (o->npos != 2)
        return sb_cli_usage("trace", "usage: trace diff A B (names or files)");
    sb_err err = {0};
    sb_trace ta, tb;
    sb_tr_analysis aa, ab;
    sb_ceilings c = {0};
    if (sb_cli_trace_load(o->db, o->pos[0], &ta, &err))
        return sb_cli_error(&err);
    if (sb_cli_trace_load(o->db, o->pos[1], &tb, &err)) {
        sb_trace_free(&ta);
        return sb_cli_error(&err);
    }
    if (o->hlo && (add_hlo(o->hlo, &ta, &err) || add_hlo(o->hlo, &tb, &err))) {
        sb_trace_free(&ta);
        sb_trace_free(&tb);
        return sb_cli_error(&err);
    }
    int rc = sb_trace_analyze(&ta, &c, &aa, &err);
    if (!rc && (rc = sb_trace_analyze(&tb, &c, &ab, &err)))
        sb_tr_analysis_free(&aa);
    if (!rc) {
        printf("A: %s\nB: %s\n", ta.label, tb.label);
        sb_tr_print_diff(stdout, &aa, &ab, o->top);
        sb_tr_analysis_free(&aa);
        sb_tr_analysis_free(&ab);
    }
    sb_trace_free(&ta);
    sb_trace_free(&tb);
    return rc ? sb_cli_error(&err) : 0;
}

static int list_one(const sb_store_trace *t, void *arg)
{
    int *n = arg;
    if ((*n)++ == 0)
        printf("%-24s %-20s %-8s %10s %12s  %s\n", "name", "imported", "format",
               "events", "bytes (gz)", "source");
    printf("%-24s %-20.19s %-8s %10ld %12lld  %s\n", t->name, t->imported_at,
           t->format, t->events, t->bytes, t->source);
    return 0;
}

static int cmd_list(const opts *o, bool rm)
{
    if (rm ? o->npos != 1 : o->npos != 0)
        return sb_cli_usage("trace",
                            rm ? "usage: trace rm NAME" : "usage: trace list");
    sb_err err = {0};
    sb_store *st;
    if (sb_store_open_default_mode(o->db, rm ? SB_STORE_RW : SB_STORE_RO, &st,
                                   NULL, 0, &err))
        return sb_cli_error(&err);
    int n = 0, rc;
    if (rm)
        rc = sb_store_trace_rm(st, o->pos[0], &err);
    else
        rc = sb_store_trace_list(st, list_one, &n, &err);
    if (!rc && rm)
        printf("trace '%s' removed\n", o->pos[0]);
    else if (!rc && n == 0)
        printf("no traces stored in %s\n", sb_store_file(st));
    sb_store_close(st);
    return rc ? sb_cli_error(&err) : 0;
}

int sb_cmd_trace(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        fputs(trace_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    opts o;
    int rc = parse("trace", argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (strcmp(sub, "import") == 0)
        return cmd_import(&o);
    if (strcmp(sub, "show") == 0)
        return cmd_show(&o);
    if (strcmp(sub, "diff") == 0)
        return cmd_diff(&o);
    if (strcmp(sub, "list") == 0)
        return cmd_list(&o, false);
    if (strcmp(sub, "rm") == 0)
        return cmd_list(&o, true);
    return sb_cli_usage("trace",
                        "unknown subcommand '%s' (import, show, diff, list, "
                        "rm)",
                        sub);
}
