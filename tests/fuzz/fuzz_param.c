/*
 * fuzz_param.c — libFuzzer harness of the parameter parser (src/core/param.c)
 * as `solbench run` drives it, over the real benchmarks of sb_registry().
 *
 * The input is text, one directive a line, in the words of the command line:
 *
 *   --bench memory.triad,ops.softmax   the selection (sb_select); also
 *   --area ops                         --suite quick|full, --backend cpu,
 *   --interleave                       and --interleave
 *   -p ops:dtype=bf16                  one -p setting (sb_pset_add)
 *   --all size=1MiB dtype=fp32         suite-default form (sb_pset_add_all),
 *                                      expanded over one registry bench
 *   4KiB..1GiB:x2                      any other line: the scalar parsers
 *                                      (sb_parse_size, sb_parse_decimal,
 *                                      sb_parse_value, sb_expand_values)
 *
 * With a selection or a -p line, the plan is built as `run` builds it
 * (sb_plan_build: expansion, each bench's check and footprint), and each
 * point's flops/bytes are asked for as the runner does.
 *
 * Invariant checked (abort = finding): a value's canonical text
 * (sb_pval.text) parses back to the same value and the same text.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "solbench/bench.h"
#include "solbench/param.h"
#include "solbench/runner.h"

/* Definitions of every type, bounded and not (as tests/unit/test_params.c). */
static const sb_param_def fz_defs[] = {
    {"size", SB_P_SIZE, "64MiB", 0, 0, NULL, "bytes"},
    {"bsize", SB_P_SIZE, "4KiB", 1024, 1073741824.0, NULL, "bounded bytes"},
    {"n", SB_P_INT, "4", 1, 1024, NULL, "count"},
    {"i", SB_P_INT, "0", 0, 0, NULL, "any integer"},
    {"alpha", SB_P_FLOAT, "0.5", 0, 0, NULL, "a real"},
    {"skew", SB_P_FLOAT, "0", 0, 1, NULL, "a bounded real"},
    {"mode", SB_P_STR, "a", 0, 0, "a|b|c", "a choice"},
    {"text", SB_P_STR, "x", 0, 0, NULL, "free text"},
    {"nt", SB_P_BOOL, "false", 0, 0, NULL, "a flag"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static sb_ctx fz_ctx;
static int fz_nbench;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sb_ctx_defaults(&fz_ctx);
    fz_ctx.progress = false;
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        fz_nbench++;
    return 0;
}

/* The canonical text of a parsed value reads back as the same value. */
static void fz_canonical(const sb_param_def *d, const sb_pval *v)
{
    sb_pval again;
    sb_err e = {0};
    int rc = sb_parse_value(d, v->text, &again, &e);
    FZ_INVARIANT(rc == 0,
                 "parameter %s: canonical text '%s' does not parse "
                 "back: %s",
                 d->name, v->text, e.msg);
    FZ_INVARIANT(again.num == v->num,
                 "parameter %s: '%s' reads back as "
                 "%.17g, not %.17g",
                 d->name, v->text, again.num, v->num);
    FZ_INVARIANT(strcmp(again.text, v->text) == 0,
                 "parameter %s: '%s' reads "
                 "back as '%s'",
                 d->name, v->text, again.text);
}

static void fz_scalar(const char *s)
{
    sb_err e = {0};
    double b = 0, v = 0;
    bool range = false;
    if (sb_parse_size(s, &b, "size", &e) == 0) {
        FZ_INVARIANT(b >= 0 && b == floor(b) && b <= 9.0e18,
                     "size '%s' gave %.17g bytes", s, b);
        char buf[64];
        sb_fmt_size(b, buf, sizeof buf);
    }
    (void)sb_parse_decimal(s, &v, &range);
    static sb_pval out[SB_MAX_SWEEP_VALUES];
    for (const sb_param_def *d = fz_defs; d->name; d++) {
        sb_pval pv;
        if (sb_parse_value(d, s, &pv, &e) == 0)
            fz_canonical(d, &pv);
        int n = sb_expand_values(d, s, out, SB_MAX_SWEEP_VALUES, &e);
        FZ_INVARIANT(n <= SB_MAX_SWEEP_VALUES, "%d values from '%s'", n, s);
        for (int i = 0; i < n; i++)
            fz_canonical(d, &out[i]);
    }
}

/* Suite-default form over one bench of the registry (picked by the text),
 * strict as sb_plan_build reads a bench's own suite defaults. */
static void fz_suite_spec(const char *spec)
{
    sb_err e = {0};
    sb_pset all = {0};
    if (sb_pset_add_all(&all, spec, &e))
        return;
    unsigned h = 5381;
    for (const char *c = spec; *c; c++)
        h = h * 33u + (unsigned char)*c;
    const sb_bench *b = sb_registry()[h % (unsigned)fz_nbench];
    sb_pset mine;
    sb_pset_for_bench(&all, b->name, &mine);
    const sb_pset *layers[1] = {&mine};
    const bool lenient[1] = {false};
    sb_params *pts = NULL;
    int npts = 0;
    sb_param_def defs[SB_MAX_PARAMS + 1];
    sb_params_of(b, sb_bench_impls(b)[0], defs, SB_MAX_PARAMS + 1);
    if (sb_params_expand(b->name, defs, layers, lenient, 1, &pts, &npts, &e) ==
        0) {
        char label[400];
        for (int j = 0; j < npts; j++) {
            sb_params_fmt(&pts[j], label, sizeof label);
            for (int i = 0; i < pts[j].n; i++)
                fz_canonical(&defs[i], &pts[j].v[i]);
        }
        free(pts);
    }
}

static void fz_plan(const char *areas, const char *names, sb_suite suite,
                    const char *backend, bool interleave, const sb_pset *user)
{
    sb_err e = {0};
    sb_selection sel;
    if (sb_select(areas, names, suite, backend, &sel, &e))
        return;
    sb_ctx ctx = fz_ctx;
    ctx.suite = suite;
    ctx.interleave = interleave;
    sb_plan plan;
    if (sb_plan_build(&sel, user, &ctx, &plan, &e) == 0) {
        char label[400];
        for (int k = 0; k < plan.n; k++) {
            const sb_plan_item *it = &plan.items[k];
            sb_params_fmt(&it->point, label, sizeof label);
            sb_param_def defs[SB_MAX_PARAMS + 1];
            sb_params_of(it->bench, it->impl, defs, SB_MAX_PARAMS + 1);
            for (int i = 0; i < it->point.n; i++)
                fz_canonical(&defs[i], &it->point.v[i]);
            sb_point pt;
            if (sb_point_make(it->bench, it->impl, &it->point, &pt, &e) == 0) {
                (void)sb_point_flops(&pt);
                (void)sb_point_bytes(&pt);
                sb_point_release(&pt);
            }
        }
        sb_plan_free(&plan);
    }
    sb_selection_free(&sel);
}

static bool fz_opt(const char *line, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(line, name, n) != 0 || line[n] != ' ')
        return false;
    *value = line + n + 1;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0; /* a command line, not a file */
    char *text = fz_strdup(data, size);
    sb_pset user = {0};
    const char *areas = NULL, *names = NULL, *backend = NULL, *v;
    sb_suite suite = SB_SUITE_QUICK;
    bool interleave = false, plan = false, user_ok = true;
    sb_err e = {0};
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (fz_opt(line, "-p", &v)) {
            plan = true;
            if (sb_pset_add(&user, v, &e))
                user_ok = false; /* the CLI stops here: usage error */
        } else if (fz_opt(line, "--bench", &v)) {
            names = v;
            plan = true;
        } else if (fz_opt(line, "--area", &v)) {
            areas = v;
            plan = true;
        } else if (fz_opt(line, "--backend", &v)) {
            backend = v;
        } else if (fz_opt(line, "--suite", &v)) {
            suite = strcmp(v, "full") == 0 ? SB_SUITE_FULL : SB_SUITE_QUICK;
            plan = true;
        } else if (strcmp(line, "--interleave") == 0) {
            interleave = true;
        } else if (fz_opt(line, "--all", &v)) {
            fz_suite_spec(v);
        } else {
            fz_scalar(line);
        }
    }
    if (plan && user_ok)
        fz_plan(areas, names, suite, backend, interleave, &user);
    free(text);
    return 0;
}
