/*
 * cmd_validate.c — `solbench validate [WORKLOAD] [--dtype fp32|bf16]
 * [--batch N] [--prompt P] [--output O] [--requests N] [--quick]
 * [--threads N] [--trace FILE] [--json FILE] [--db PATH] [--no-store]
 * [--strict]`: parses, runs the steps of src/validate (the reference
 * decoder sized by a workload, the ceilings predict needs measured in the
 * same run, a serving run, the prediction against those ceilings) and
 * prints prediction beside measurement per phase and in total
 * (docs/VALIDATE.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cli/cli.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/util.h"
#include "validate/validate.h"

static const char validate_help[] =
    "usage: solbench validate [WORKLOAD] [--dtype fp32|bf16] [--batch N]\n"
    "                         [--prompt P] [--output O] [--requests N] "
    "[--quick]\n"
    "                         [--threads N] [--trace FILE] [--json FILE] "
    "[--db PATH]\n"
    "                         [--rounds N] [--serves N] [--no-store] "
    "[--strict]\n"
    "  WORKLOAD     a workload file or preset (default validate-dense; "
    "validate-moe)\n"
    "  --dtype      fp32 (default) or bf16 weights and matmul inputs\n"
    "  --batch N    concurrent sequences for TPOT (default the workload's); "
    "the\n"
    "               serving loads are closed loops of 1, a quarter of max(16, "
    "N) and max(16, N)\n"
    "  --prompt P, --output O  mean prompt and output tokens (default the "
    "workload's)\n"
    "  --requests N requests each serving load completes (default 2 x its "
    "concurrency,\n"
    "               at least 8)\n"
    "  --quick      a few seconds in all: short samples, prompts of at most "
    "64 and\n"
    "               outputs of at most 16 tokens unless given, the light "
    "load alone\n"
    "  --trace F    the last serving load's timeline as a Chrome trace (trace "
    "show reads it)\n"
    "  --json F     prediction beside measurement, per phase, as JSON\n"
    "  --rounds N   the interleaved samples split in N rounds in time order\n"
    "               (default 5, --quick 3): the ratios are given as their\n"
    "               median and range over the rounds whose ceilings were\n"
    "               stable (over all when too few were)\n"
    "  --serves N   times each serving load is served (default 3, --quick "
    "1), spread\n"
    "               over the points' rounds (after the points when they "
    "run one by one);\n"
    "               each figure the median of them\n"
    "  --strict     exit 1 when TTFT or TPOT (calibrated) is off by more than "
    "20%\n"
    "  --force      run a reference that needs more than 80% of the memory "
    "available\n";

/* Phases off by more than this factor are named when they hold more than
 * SB__VAL_SHARE of their stage. */
#define SB__VAL_PHASE_TOL 1.30
#define SB__VAL_SHARE 0.10
#define SB__VAL_TOTAL_TOL 0.20

typedef struct sb__vopts {
    const char *file, *trace, *json, *db;
    bool bf16, quick, no_store, strict, force;
    int batch, prompt, output, requests, threads, rounds, serves;
} sb__vopts;

static const char *sb__t(double s, char *buf, size_t len)
{
    return sb_fmt_time(s, "us", buf, len);
}

/* What the ceilings were measured at, for the reasons given. */
typedef struct sb__vshape {
    int prompt, batch, experts, top_k;
} sb__vshape;

/* Why a phase is off, as far as the run can tell: a product with fewer
 * rows than the ceiling's, the attention kernel's way, or in general a
 * kernel below its ceiling (ratio > 1) or a ceiling below what the phase
 * gets (ratio < 1). */
static void sb__why(const sb_phase *pc, const char *stage, double ratio,
                    const sb__vshape *v, char *out, size_t len)
{
    bool prefill = strcmp(stage, "prefill") == 0;
    int rows = prefill ? v->prompt : v->batch;
    double per_expert =
        v->experts > 0 ? (double)rows * v->top_k / v->experts : rows;
    if (strcmp(pc->name, "experts") == 0 && per_expert < rows &&
        !strchr(pc->ceiling, '@'))
        snprintf(out, len,
                 "its products have %.3g rows an expert, the %s ceiling "
                 "was measured at %d: a GEMM's rate depends on its rows "
                 "(%s here)",
                 per_expert, pc->ceiling, rows,
                 ratio > 1 ? "fewer rows, less of the peak"
                           : "fewer rows, fewer FLOPs a weight byte");
    else if (strcmp(pc->name, "attention core") == 0 && prefill && ratio > 1)
        snprintf(out, len,
                 "the paged kernel runs prompt chunks on vector FMAs; the "
                 "ceiling is the GEMM's (%.0f%% of it reached)",
                 100.0 / ratio);
    else if (ratio > 1)
        snprintf(out, len,
                 "the kernel runs below its ceiling: it reaches %.0f%% of "
                 "%s at its %s bound",
                 100.0 / ratio, pc->ceiling, sb_bound_name(pc->bound));
    else
        snprintf(out, len,
                 "%s understates what it gets here: data reused from "
                 "cache, or a faster unit than the ceiling's",
                 pc->ceiling);
}

/* Prints one stage's table and adds it to out; returns the phases off
 * (1000 more when the stage's total misses the target). */
static int sb__stage(const char *stage, const char *title,
                     const sb_prediction *sol, const sb_prediction *cal,
                     const sb_result *r, double measured, const sb__vshape *v,
                     json_t *out, char *off, size_t off_len)
{
    char a[32], b[32], c[32];
    printf("\n%s:\n", title);
    printf("  %-22s %11s %11s %11s %9s  %-8s %s\n", "phase", "SOL",
           "calibrated", "measured", "meas/cal", "class", "binding ceiling");
    json_t *rows = json_array();
    int n_off = 0;
    for (int i = 0; i < cal->n; i++) {
        const sb_phase *pc = &cal->ph[i], *ps = &sol->ph[i];
        if (strcmp(pc->stage, stage) != 0)
            continue;
        double m = sb_validate_measured(r, pc->name);
        if (m < 0)
            continue; /* not a part of the reference (input transfer) */
        double ratio = pc->t > 0 && m > 0 ? m / pc->t : 0;
        bool big = measured > 0 && m / measured > SB__VAL_SHARE;
        bool bad = big && ratio > 0 &&
                   (ratio > SB__VAL_PHASE_TOL || ratio < 1 / SB__VAL_PHASE_TOL);
        printf("  %-22s %11s %11s %11s %8.2fx  %-8s %s%s\n", pc->name,
               sb__t(ps->t, a, sizeof a), sb__t(pc->t, b, sizeof b),
               sb__t(m, c, sizeof c), ratio, sb_bound_name(pc->bound),
               pc->ceiling, bad ? "  <- off" : "");
        char why[240] = "";
        if (bad) {
            n_off++;
            sb__why(pc, stage, ratio, v, why, sizeof why);
            size_t l = strlen(off);
            snprintf(off + l, off_len - l,
                     "  %s (%s): measured %.2fx the calibrated prediction:\n"
                     "    %s\n",
                     pc->name, stage, ratio, why);
        }
        json_array_append_new(
            rows, json_pack("{s:s,s:f,s:f,s:f,s:f,s:s,s:s,s:b,s:s}", "phase",
                            pc->name, "sol_s", ps->t, "calibrated_s", pc->t,
                            "measured_s", m, "ratio", ratio, "class",
                            sb_bound_name(pc->bound), "ceiling", pc->ceiling,
                            "off", bad, "why", why));
    }
    double ts = strcmp(stage, "prefill") == 0 ? sol->ttft_s : sol->tpot_s;
    double tc = strcmp(stage, "prefill") == 0 ? cal->ttft_s : cal->tpot_s;
    double ratio = tc > 0 ? measured / tc : 0;
    bool ok = fabs(ratio - 1.0) <= SB__VAL_TOTAL_TOL;
    printf("  %-22s %11s %11s %11s %8.2fx  %s\n",
           strcmp(stage, "prefill") == 0 ? "TTFT" : "TPOT",
           sb__t(ts, a, sizeof a), sb__t(tc, b, sizeof b),
           sb__t(measured, c, sizeof c), ratio,
           ok ? "within 20%" : "OFF by more than 20%");
    json_object_set_new(out, stage,
                        json_pack("{s:f,s:f,s:f,s:f,s:b,s:o}", "sol_s", ts,
                                  "calibrated_s", tc, "measured_s", measured,
                                  "ratio", ratio, "within", ok, "phases",
                                  rows));
    return ok ? n_off : n_off + 1000;
}

static int sb__parse(int argc, char **argv, sb__vopts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(validate_help, stdout);
            return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--dtype", &v))) {
            if (m < 0)
                return 2;
            if (strcmp(v, "fp32") && strcmp(v, "bf16"))
                return sb_cli_usage("validate",
                                    "--dtype %s: expected fp32 or bf16", v);
            o->bf16 = strcmp(v, "bf16") == 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--batch", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--batch", v, 1, 1024, &o->batch))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--prompt", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--prompt", v, 1, 65536, &o->prompt))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--output", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--output", v, 1, 65536, &o->output))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--requests", &v))) {
            if (m < 0 || sb_cli_int("validate", "--requests", v, 1, 100000,
                                    &o->requests))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threads", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--threads", v, 1, 4096, &o->threads))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--rounds", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--rounds", v, 1, 20, &o->rounds))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--serves", &v))) {
            if (m < 0 || sb_cli_int("validate", "--serves", v, 1,
                                    SB_VALIDATE_MAX_SERVES, &o->serves))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--trace", &v))) {
            if (m < 0)
                return 2;
            o->trace = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return 2;
            o->json = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            o->db = v;
        } else if (strcmp(argv[i], "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(argv[i], "--no-store") == 0) {
            o->no_store = true;
        } else if (strcmp(argv[i], "--strict") == 0) {
            o->strict = true;
        } else if (strcmp(argv[i], "--force") == 0) {
            o->force = true;
        } else if (argv[i][0] == '-') {
            return sb_cli_usage("validate",
                                "unknown option '%s' (see 'solbench "
                                "validate --help')",
                                argv[i]);
        } else if (o->file) {
            return sb_cli_usage("validate", "one workload only ('%s')",
                                argv[i]);
        } else {
            o->file = argv[i];
        }
    }
    return 0;
}

/* Tries the --json and --trace files before anything runs; returns 0 or
 * the exit code (the error said). */
static int sb__check_outputs(const sb__vopts *o, sb_err *err)
{
    struct stat jid, tid;
    if ((o->json && sb_cli_check_out("--json", o->json, &jid, err)) ||
        (o->trace && sb_cli_check_out("--trace", o->trace, &tid, err)))
        return sb_cli_error(err);
    if (o->json && o->trace && sb_cli_same_out(o->json, &jid, o->trace, &tid))
        return sb_cli_usage("validate", "--json and --trace name one file");
    return 0;
}

/* The library's options from the command line's; label (the trace's
 * title) must outlive vo. */
static void sb__validate_opts(const sb__vopts *o, char *label, size_t len,
                              sb_validate_opts *vo)
{
    snprintf(label, len, "solbench validate %s",
             o->file ? o->file : "validate-dense");
    *vo = (sb_validate_opts){.workload = o->file,
                             .bf16 = o->bf16,
                             .quick = o->quick,
                             .force = o->force,
                             .batch = o->batch,
                             .prompt = o->prompt,
                             .output = o->output,
                             .requests = o->requests,
                             .threads = o->threads,
                             .rounds = o->rounds,
                             .serves = o->serves,
                             .trace_events = o->trace ? 2000000 : 0,
                             .trace_label = label};
}

/* Names on stderr each point skipped or failing its verification. */
static void sb__report_points(const sb_validate *v)
{
    for (size_t i = 0; i < v->run.results.n; i++) {
        const sb_result *r = &v->run.results.items[i];
        if (r->skipped)
            fprintf(stderr, "solbench validate: %s skipped: %s\n", r->bench,
                    r->n_notes ? r->notes[0] : "");
        else if (!r->valid)
            fprintf(stderr, "solbench validate: %s failed its verification\n",
                    r->bench);
    }
}

/* Prints the ceilings measured in this run, the calibration they give and
 * the reference's kernels. */
static void sb__print_machine(const sb_validate *v)
{
    double gb = sb_validate_metric(v->gl, "GFLOPs_best");
    double db = sb_validate_metric(v->gd, "weight_GBps_best");
    double rb = sb_validate_metric(v->mr, "GBps_best");
    const sb_workload *wc = &v->wc;
    char a[32], b[32], x[32];
    printf("\nmachine (measured in this run): %s %s at the prefill shape, "
           "%s B/s weights streamed at the decode shape, %s B/s memory.read",
           sb_fmt_eng(gb * 1e9, a, sizeof a), "FLOP/s",
           sb_fmt_eng(db * 1e9, b, sizeof b),
           sb_fmt_eng(rb * 1e9, x, sizeof x));
    if (v->pa)
        printf(
            ", paged attention %s B/s",
            sb_fmt_eng(sb_validate_metric(v->pa, "GBps") * 1e9, a, sizeof a));
    const sb_result *nz =
        sb_validate_find(&v->run, "compute.noise", NULL, NULL);
    if (nz && sb_result_get(nz, "interrupts_per_s"))
        printf(", interruptions %.1f a second (p50 %.2f ms, p99 %.2f ms, "
               "max %.1f ms; %.1f %% of the time lost%s)",
               sb_validate_metric(nz, "interrupts_per_s"),
               sb_validate_metric(nz, "interrupt_p50_us") * 1e-3,
               sb_validate_metric(nz, "interrupt_p99_us") * 1e-3,
               sb_validate_metric(nz, "interrupt_max_us") * 1e-3,
               sb_validate_metric(nz, "noise_pct"),
               nz->stab_judged && !nz->stable ? "; unstable" : "");
    printf("\ncalibrated: %s (median over best: prefill GEMM %.2f, "
           "decode GEMM %.2f; paged attention at %.2f of memory.read)\n",
           wc->calib_source, v->eff[0], v->eff[1], v->eff[2]);
    for (int i = 0; i < v->rp->n_notes; i++)
        if (strncmp(v->rp->notes[i], "kernels: ", 9) == 0)
            printf("%s\n", v->rp->notes[i]);
}

/* The JSON document's head: the workload, its shape and the calibration. */
static json_t *sb__json_head(const sb_validate *v)
{
    json_t *out = json_pack(
        "{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:s}", "schema", "solbench.validate/1",
        "workload", v->w.name, "dtype", v->dtype, "batch", v->B, "prompt", v->P,
        "output", v->O, "context", v->C, "run_id", v->run.run_id);
    json_object_set_new(out, "calibration",
                        json_pack("{s:f,s:f,s:f}", "matmul", v->eff[0],
                                  "memory", v->eff[1], "attention", v->eff[2]));
    return out;
}

/* Prints the prefill and decode tables (sb__stage), the phases off added
 * to off; returns their count (1000 more a stage whose total misses). */
static int sb__stages(const sb_validate *v, json_t *out, char *off,
                      size_t off_len)
{
    char title[160];
    snprintf(title, sizeof title, "prefill of one %d-token prompt (TTFT)",
             v->P);
    sb__vshape vs = {v->P, v->B, v->cfg.experts, v->cfg.top_k};
    int bad = sb__stage("prefill", title, v->sol, v->cal, v->rp,
                        v->rp->stats.p50, &vs, out, off, off_len);
    snprintf(title, sizeof title,
             "decode step, %d sequence%s at %d keys (TPOT)", v->B,
             v->B > 1 ? "s" : "", v->C);
    bad += sb__stage("decode", title, v->sol, v->cal, v->rd, v->rd->stats.p50,
                     &vs, out, off, off_len);
    return bad;
}

/* The figures each load is held to: measured over predicted within 10 %
 * (throughput, the medians) or 20 % (the tails). */
typedef struct sb__serve_fig {
    const char *name, *key;
    double pred, meas, tol;
    bool time;
} sb__serve_fig;

/* Prints each serving load's figures beside the simulator's prediction
 * and adds them to out as the array "serve". */
static void sb__print_serving(const sb_validate *v, json_t *out)
{
    json_t *arr = json_array();
    printf("\nserving under load (closed loops at a constant concurrency, "
           "ragged lengths; predicted by the serving simulator, "
           "calibrated by this run):\n");
    /* when the loads were served: after which of the points' rounds (-1:
     * after every point) */
    json_t *at = json_array();
    char when[200] = "";
    size_t wl = 0;
    int among = 0;
    for (int j = 0; j < v->served; j++) {
        json_array_append_new(at, json_integer(v->serve_round[j]));
        among += v->serve_round[j] >= 0;
    }
    for (int j = 0, k = 0; j < v->served && wl < sizeof when; j++)
        if (v->serve_round[j] >= 0) {
            wl += (size_t)snprintf(when + wl, sizeof when - wl, "%s%d",
                                   k == 0           ? ""
                                   : k == among - 1 ? " and "
                                                    : ", ",
                                   v->serve_round[j]);
            k++;
        }
    printf("  each load served %d time%s", v->served, v->served > 1 ? "s" : "");
    if (among > 0)
        printf(", after round%s %s of the points' %d (the stretches their "
               "ceilings were measured in)",
               among > 1 ? "s" : "", when, v->points_rounds);
    if (among < v->served)
        printf("%s%d after every point", among > 0 ? " and " : ", ",
               v->served - among);
    printf("%s\n", v->served > 1 ? "; each figure the median of them" : "");
    json_object_set_new(
        out, "serve_rounds",
        json_pack("{s:o,s:i}", "after", at, "of", v->points_rounds));
    for (int k = 0; k < v->n_loads; k++) {
        const sb_validate_load *l = &v->load[k];
        const sb_serve_stats *m = &l->ms;
        const sb_sim_out *p = &l->pred;
        printf("  %s: concurrency %d, %d request%s, %d iteration%s (%.0f "
               "output and %.0f prompt tokens)\n",
               l->name, l->concurrency, l->requests,
               l->requests == 1 ? "" : "s", m->iterations,
               m->iterations == 1 ? "" : "s", m->tokens, m->prefill_tokens);
        if (l->settle_s >= 0)
            printf("    served after %.1f s in which the host took back %.0f "
                   "MiB of freed memory (free page reporting), %.0f MiB "
                   "while it ran%s\n",
                   l->settle_s, l->settle_kib / 1024,
                   fmax(0, l->during_kib) / 1024,
                   l->during_kib > 64 * 1024 ? ": its vCPUs stalled then" : "");
        else if (l->during_kib >= 0)
            printf("    the host took back %.0f MiB of freed memory while it "
                   "ran (free page reporting)%s\n",
                   l->during_kib / 1024,
                   l->during_kib > 64 * 1024 ? ": its vCPUs stalled then" : "");
        if (l->n_runs > 1) {
            char a[32], b[32];
            printf("    its %d servings: %.4g-%.4g output tokens/s, TPOT p50 "
                   "%s-%s%s\n",
                   l->n_runs, l->tps_range[0], l->tps_range[1],
                   sb__t(l->tpot_range[0], a, sizeof a),
                   sb__t(l->tpot_range[1], b, sizeof b),
                   l->servings_stable
                       ? ""
                       : " (apart by more than 10 % of the median: unstable)");
        }
        if (p->requests > 0 && p->interrupts > 0)
            printf("    the simulator's run met %zu of the machine's "
                   "interruptions (compute.noise), %s in all\n",
                   p->interrupts, sb__t(p->noise_s, (char[32]){0}, 32));
        const sb__serve_fig f[] = {
            {"output tokens/s", "tokens_per_s", p->tokens_per_s,
             m->tokens_per_s, 0.10, false},
            {"TTFT p50", "ttft_p50_s", p->ttft.p50, m->ttft.p50, 0.10, true},
            {"TTFT p90", "ttft_p90_s", p->ttft.p90, m->ttft.p90, 0.20, true},
            {"TPOT p50", "tpot_p50_s", p->itl.p50, m->tpot.p50, 0.10, true},
            {"TPOT p99", "tpot_p99_s", p->itl.p99, m->tpot.p99, 0.20, true},
            {"latency p50", "latency_p50_s", p->e2e.p50, m->latency.p50, 0.10,
             true},
        };
        json_t *jp = json_object(), *jm = json_object();
        if (p->requests == 0) {
            printf("    no prediction: %s\n", l->why[0] ? l->why : "-");
        } else {
            printf("    %-18s %11s %11s %10s\n", "", "predicted", "measured",
                   "meas/pred");
        }
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            char a[32], b[32];
            /* a figure the requests do not have (no gap between tokens
             * where each has one output token) is null, not 0 */
            json_object_set_new(jm, f[i].key,
                                f[i].meas > 0 ? json_real(f[i].meas)
                                              : json_null());
            if (p->requests == 0)
                continue;
            json_object_set_new(jp, f[i].key,
                                f[i].pred > 0 ? json_real(f[i].pred)
                                              : json_null());
            double r = f[i].pred > 0 ? f[i].meas / f[i].pred : 0;
            if (!(f[i].pred > 0) || !(f[i].meas > 0))
                printf("    %-18s %11s %11s %10s  (none: %s)\n", f[i].name,
                       f[i].pred > 0 ? sb__t(f[i].pred, a, sizeof a) : "-",
                       f[i].meas > 0 ? sb__t(f[i].meas, b, sizeof b) : "-", "-",
                       v->O < 2 && strncmp(f[i].key, "tpot", 4) == 0
                           ? "one output token a request, no gap between "
                             "tokens"
                           : "nothing to time");
            else if (f[i].time)
                printf("    %-18s %11s %11s %9.2fx  %s\n", f[i].name,
                       sb__t(f[i].pred, a, sizeof a),
                       sb__t(f[i].meas, b, sizeof b), r,
                       fabs(r - 1) <= f[i].tol ? "" : "(off)");
            else
                printf("    %-18s %11.4g %11.4g %9.2fx  %s\n", f[i].name,
                       f[i].pred, f[i].meas, r,
                       fabs(r - 1) <= f[i].tol ? "" : "(off)");
        }
        json_object_set_new(jm, "output_tokens", json_real(m->tokens));
        json_object_set_new(jm, "prompt_tokens", json_real(m->prefill_tokens));
        json_t *j = json_object();
        json_object_set_new(j, "load", json_string(l->name));
        json_object_set_new(j, "concurrency", json_integer(l->concurrency));
        json_object_set_new(j, "requests", json_integer(l->requests));
        json_object_set_new(j, "iterations", json_integer(m->iterations));
        if (l->settle_s >= 0 || l->during_kib >= 0)
            json_object_set_new(j, "host_reclaim",
                                json_pack("{s:f,s:f,s:f}", "settle_s",
                                          fmax(0, l->settle_s), "before_kib",
                                          fmax(0, l->settle_kib), "during_kib",
                                          fmax(0, l->during_kib)));
        json_object_set_new(
            j, "servings",
            json_pack("{s:i,s:[f,f],s:[f,f],s:b}", "n", l->n_runs,
                      "tokens_per_s", l->tps_range[0], l->tps_range[1],
                      "tpot_p50_s", l->tpot_range[0], l->tpot_range[1],
                      "stable", l->servings_stable));
        json_object_set_new(j, "measured", jm);
        if (p->requests > 0)
            json_object_set_new(j, "predicted", jp);
        else
            json_decref(jp);
        json_array_append_new(arr, j);
    }
    printf("  (off: outside 10 %% for throughput and the medians, 20 %% for "
           "the p90 and p99)\n");
    json_object_set_new(out, "serve", arr);
}

/* Prints the reference against its own ceilings and adds it to out: the
 * decode's stream over memory.read; the prefill's weight matmuls over the
 * time they would take at the GEMM ceilings of their shapes (each
 * phase's, at its rows: the speed-of-light prediction's matmul terms). */
static void sb__print_reference(const sb_validate *v, json_t *out)
{
    const sb_prediction *sol = v->sol;
    double rb = sb_validate_metric(v->mr, "GBps_best");
    double stream = sb_validate_metric(v->rd, "stream_GBps");
    double mm_sol = 0, mm_meas = 0;
    for (int i = 0; i < sol->n; i++) {
        const sb_phase *ph = &sol->ph[i];
        double meas = sb_validate_measured(v->rp, ph->name);
        if (strcmp(ph->stage, "prefill") == 0 && ph->work == SB_WORK_MATMUL &&
            ph->bound == SB_BOUND_COMPUTE && meas > 0) {
            mm_sol += ph->t_compute;
            mm_meas += meas;
        }
    }
    double mm_eff = mm_meas > 0 ? mm_sol / mm_meas : 0;
    char a[32];
    printf("\nthe reference against the ceilings: decode streams weights and "
           "KV at %.2f of memory.read (%s B/s)%s; prefill's compute-bound "
           "matmuls run at %.2f of the GEMM ceilings at their shapes\n",
           rb > 0 ? stream / rb : 0, sb_fmt_eng(stream * 1e9, a, sizeof a),
           v->B > 1 ? " (a batch: its products need not stream, batch 1 "
                      "tells the stream)"
                    : "",
           mm_eff);
    json_object_set_new(out, "reference",
                        json_pack("{s:f,s:f}", "decode_stream_of_read",
                                  rb > 0 ? stream / rb : 0,
                                  "prefill_matmul_of_gemm", mm_eff));
}

/* Prints the run-to-run spread of the ratios, round by round, and adds it
 * to out. */
static void sb__print_spread(const sb_validate_spread *sp, json_t *out)
{
    printf("\nrun-to-run spread: the samples in %d rounds in time order, "
           "%d with stable ceilings; the ratios over %s:\n",
           sp->n, sp->nstable,
           sp->use_stable ? "those" : "all of them (too few were stable)");
    json_t *jr = json_array();
    for (int i = 0; i < sp->n; i++) {
        printf("  round %d: TTFT %.2fx, TPOT %.2fx; calibration matmul "
               "%.2f, memory %.2f, attention %.2f%s%s%s\n",
               i + 1, sp->r[i].ttft, sp->r[i].tpot, sp->r[i].eff[0],
               sp->r[i].eff[1], sp->r[i].eff[2],
               sp->r[i].stable ? "" : "; unstable: ", sp->r[i].why,
               sp->r[i].used ? "" : " (left out)");
        json_array_append_new(
            jr, json_pack("{s:f,s:f,s:f,s:f,s:f,s:b,s:b,s:s}", "ttft_ratio",
                          sp->r[i].ttft, "tpot_ratio", sp->r[i].tpot,
                          "eff_matmul", sp->r[i].eff[0], "eff_memory",
                          sp->r[i].eff[1], "eff_attention", sp->r[i].eff[2],
                          "stable", sp->r[i].stable, "used", sp->r[i].used,
                          "unstable", sp->r[i].why));
    }
    printf("  TTFT measured/calibrated: median %.2fx, range %.2f-%.2f\n"
           "  TPOT measured/calibrated: median %.2fx, range %.2f-%.2f\n",
           sp->ttft[1], sp->ttft[0], sp->ttft[2], sp->tpot[1], sp->tpot[0],
           sp->tpot[2]);
    if (!sp->use_stable)
        printf("  the ceilings were unstable in most rounds: the spread "
               "is the machine's, not the model's (quiet the machine)\n");
    json_object_set_new(out, "rounds", jr);
    json_object_set_new(out, "ttft_ratio",
                        json_pack("{s:f,s:f,s:f}", "min", sp->ttft[0], "median",
                                  sp->ttft[1], "max", sp->ttft[2]));
    json_object_set_new(out, "tpot_ratio",
                        json_pack("{s:f,s:f,s:f}", "min", sp->tpot[0], "median",
                                  sp->tpot[1], "max", sp->tpot[2]));
}

/* Stores the run (unless a point was skipped) and writes --json; returns
 * code, or the exit code of a step that failed. */
static int sb__save(const sb__vopts *o, const sb_validate *v, sb_store *st,
                    const json_t *out, int code, sb_err *err)
{
    if (st && code != 2) {
        if (sb_store_save_run(st, &v->run, err))
            code = sb_cli_error(err);
        else
            printf("\nstored as run %s in %s (solbench check gates "
                   "llm.decode's tokens/s)\n",
                   v->run.run_id, sb_store_file(st));
    }
    if (o->json &&
        sb_cli_write_json(out, o->json, JSON_INDENT(2), "the validation", err))
        code = sb_cli_error(err);
    return code;
}

int sb_cmd_validate(int argc, char **argv)
{
    sb__vopts o = {0};
    int prc = sb__parse(argc, argv, &o);
    if (prc)
        return prc < 0 ? 0 : prc;
    sb_err err = {0};
    if ((prc = sb__check_outputs(&o, &err)))
        return prc;

    char label[1200];
    sb_validate_opts vo;
    sb__validate_opts(&o, label, sizeof label, &vo);
    static sb_validate v;
    int rc = sb_validate_prepare(&vo, &v, &err);
    if (rc) {
        sb_validate_free(&v);
        return rc == SB_EINVAL ? sb_cli_usage("validate", "%s", err.msg)
                               : sb_cli_error(&err);
    }
    if (!v.ctx.interleave)
        printf("note: the points run one after the other (two copies of "
               "the model and the ceilings' buffers do not fit in memory "
               "together)\n");

    sb_store *st = NULL;
    char db_file[1024] = "";
    if (!o.no_store && (sb_store_path(o.db, db_file, sizeof db_file, &err) ||
                        sb_store_open(db_file, &st, &err) ||
                        sb_store_check_writable(st, 16.0 * 1048576.0, &err))) {
        sb_store_close(st);
        sb_validate_free(&v);
        return sb_cli_error(&err);
    }

    char loads[160] = "";
    for (int k = 0; k < v.n_loads; k++)
        snprintf(loads + strlen(loads), sizeof loads - strlen(loads), "%s%d",
                 k ? ", " : "", v.load[k].concurrency);
    printf("validate %s (%s, %.2fB parameters): prefill of %d tokens, "
           "decode of %d sequences at %d keys, serving at concurrency %s\n",
           v.w.name, v.dtype,
           sb_ref_weight_bytes(&v.cfg) / (o.bf16 ? 2.0 : 4.0) / 1e9, v.P, v.B,
           v.C, loads);
    fflush(stdout);
    if (sb_validate_measure(&v, &err)) {
        sb_store_close(st);
        sb_validate_free(&v);
        return sb_cli_error(&err);
    }
    int code = v.code;
    sb__report_points(&v);
    if (!v.complete) {
        sb_store_close(st);
        sb_validate_free(&v);
        if (code == 0)
            fprintf(stderr, "solbench validate: a measurement is missing\n");
        return code ? code : 2;
    }
    if (sb_validate_serve_predict(&v, &err) ||
        (o.trace && sb_cli_write_json(v.trace, o.trace, JSON_COMPACT,
                                      "the trace", &err))) {
        sb_store_close(st);
        sb_validate_free(&v);
        return sb_cli_error(&err);
    }

    sb__print_machine(&v);
    json_t *out = sb__json_head(&v);
    char off[4000] = "";
    int bad = sb__stages(&v, out, off, sizeof off);
    sb__print_serving(&v, out);
    sb__print_reference(&v, out);
    if (off[0])
        printf("\nphases with more than %.0f%% of their stage off by more "
               "than %.0f%%:\n%s",
               100 * SB__VAL_SHARE, 100 * (SB__VAL_PHASE_TOL - 1), off);
    if (v.sp.n > 0)
        sb__print_spread(&v.sp, out);
    if (bad >= 1000 && o.strict && code == 0)
        code = 1;
    code = sb__save(&o, &v, st, out, code, &err);
    if (o.trace)
        printf("timeline of the serving run: %s (solbench trace show %s)\n",
               o.trace, o.trace);
    json_decref(out);
    sb_store_close(st);
    sb_validate_free(&v);
    return code;
}
