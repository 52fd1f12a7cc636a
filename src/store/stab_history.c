/*
 * stab_history.c — a run's results held against their point's history on
 * the same machine (stability.h, docs/METRICS.md "Stability"). A result
 * whose own samples and probes look steady may still come from a stretch
 * in which the whole machine ran slower or faster: its median then sits
 * away from the point's earlier medians. And the first runs of a point
 * have no history: a later run, with more evidence, may find an earlier
 * stable mark wrong and withdraw it.
 *
 * The reference is the point's newest results that were steady by their
 * own evidence (samples, load, probes: stable, or unstable for their
 * history alone), at most SB_STAB_HISTORY_WINDOW of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/stability.h"
#include "solbench/store.h"

#define HIST_MAX 20

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Steady by its own evidence: stable, or unstable for its history alone. */
static bool own_steady(const sb_point_hist *h)
{
    return h->stable || h->flags == SB_UNSTABLE_HISTORY;
}

int sb_store_judge_history(sb_store *st, sb_run *run, int *withdrawn,
                           sb_err *err)
{
    *withdrawn = 0;
    const char *fp =
        json_string_value(json_object_get(run->system, "fingerprint"));
    if (!fp)
        return 0;
    sb_point_hist *h = malloc(sizeof *h * HIST_MAX);
    if (!h)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < run->results.n && !rc; i++) {
        sb_result *r = &run->results.items[i];
        if (!r->stab_judged || !r->valid || !(r->stats.p50 > 0))
            continue;
        char key[1024];
        sb_point_key(r, key, sizeof key);
        int n = 0;
        if ((rc = sb_store_point_history(st, key, fp, run->run_id, h, HIST_MAX,
                                         &n, err)))
            break;
        double ref[SB_STAB_HISTORY_WINDOW + 1];
        int nref = 0;
        for (int k = 0; k < n && nref < SB_STAB_HISTORY_WINDOW; k++)
            if (own_steady(&h[k]))
                ref[nref++] = h[k].p50;
        bool steady = r->stable;
        if (steady)
            sb_stability_history(r, ref, nref);
        /* the point's median now: its newest steady results, this one
         * among them when steady */
        double pool[SB_STAB_HISTORY_WINDOW + 1];
        int np = 0;
        if (steady)
            pool[np++] = r->stats.p50;
        for (int k = 0; k < nref && np < SB_STAB_HISTORY_WINDOW; k++)
            pool[np++] = ref[k];
        if (np < SB_STAB_HISTORY_RETRO_MIN)
            continue;
        double m = median(pool, np);
        for (int k = 0; k < n && !rc; k++) {
            if (!h[k].stable || !(h[k].p50 > 0))
                continue;
            double d = m / h[k].p50 - 1; /* as a rate */
            if (fabs(d) <= SB_STAB_HISTORY_RETRO)
                continue;
            char why[200];
            snprintf(why, sizeof why,
                     SB_STAB_WITHDRAWN
                     "%s: %.0f%% %s than the point's "
                     "median over its newest %d steady runs on this machine",
                     run->run_id, 100 * fabs(d), d > 0 ? "faster" : "slower",
                     np);
            rc = sb_store_withdraw_stable(st, h[k].run_id, h[k].idx, why, err);
            if (!rc)
                (*withdrawn)++;
        }
    }
    free(h);
    return rc;
}
