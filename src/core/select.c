/*
 * select.c — what a run measures: the benchmarks and backends a selection
 * takes (--area, --bench, --suite, --backend), the session a backend that
 * spans processes starts for them, and the plan (every point expanded and
 * checked, its footprint against the memory, before anything is
 * allocated). runner.c runs the plan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"
#include "solbench/output.h"
#include "solbench/roofline.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* ---- selection ----------------------------------------------------------- */

static bool in_list(const char *list, const char *item)
{
    if (!list)
        return false;
    size_t n = strlen(item);
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, item, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

/* Calls fn(item) for each element of a comma-separated list; stops at the
 * first non-zero return. */
static int each_item(const char *list, int (*fn)(const char *, void *),
                     void *arg)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        int rc = fn(t, arg);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_area(const char *a, void *arg)
{
    sb_err *err = arg;
    for (const char *const *k = sb_areas(); *k; k++)
        if (strcmp(*k, a) == 0)
            return 0;
    return sb_fail(err, SB_EINVAL,
                   "--area %s: unknown area (areas: compute, "
                   "memory, transfer, attention, moe, ops, network)",
                   a);
}

static int check_name(const char *n, void *arg)
{
    sb_err *err = arg;
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        if (strcmp((*b)->name, n) == 0)
            return 0;
    if (strncmp(n, "network.", 8) == 0)
        return sb_fail(err, SB_EINVAL,
                       "--bench %s: this build has no network "
                       "area (MPI was not found when it was built)",
                       n);
    return sb_fail(err, SB_EINVAL,
                   "--bench %s: unknown benchmark (see "
                   "'solbench list')",
                   n);
}

/* A comma-separated list with no empty item, short enough to walk. */
static int check_list(const char *opt, const char *list, sb_err *err)
{
    size_t n = strlen(list);
    if (n >= 1024)
        return sb_fail(err, SB_EINVAL, "%s: list longer than 1023 characters",
                       opt);
    if (n == 0 || sb_list_has_empty(list, ','))
        return sb_fail(err, SB_EINVAL, "%s '%s': an empty item in the list",
                       opt, list);
    return 0;
}

/* Where a backend's benchmarks run in a plan: the host's first (phase 0:
 * cpu, host, mpi), then each device backend's; one this build does not
 * know last. */
static int backend_phase(const char *be)
{
    const sb_backend *d = sb_backend_find(be);
    return d ? d->phase : 99;
}

/* Whether --backend `want` takes an impl on backend `be`: its own, and
 * for cpu what runs on the host without an accelerator too (the MPI
 * collectives, host-to-host transfers). */
static bool backend_takes(const char *want, const char *be)
{
    if (!want || !*want)
        return true;
    return strcmp(be, want) == 0 ||
           (strcmp(want, "cpu") == 0 && sb_backend_is_host(be));
}

/* Whether a plan under --backend `want` runs backend d's impls. */
static bool backend_wanted(const sb_backend *d, const char *want)
{
    if (!d)
        return false;
    if (want && *want)
        return backend_takes(want, d->name);
    /* "every backend present": one without a device now runs only when
     * --backend names it (and then reports why it is skipped); one on
     * request only when its own wanted() says so */
    if (d->devices && d->devices() == 0)
        return false;
    if (d->caps & SB_BK_ON_REQUEST)
        return d->wanted && d->wanted();
    return true;
}

bool sb_backend_wanted(const char *name, const char *want)
{
    return backend_wanted(sb_backend_find(name), want);
}

int sb_select(const char *areas, const char *names, sb_suite suite,
              const char *backend, sb_selection *sel, sb_err *err)
{
    memset(sel, 0, sizeof *sel);
    if (areas &&
        (check_list("--area", areas, err) || each_item(areas, check_area, err)))
        return SB_EINVAL;
    if (names && (check_list("--bench", names, err) ||
                  each_item(names, check_name, err)))
        return SB_EINVAL;
    const sb_backend *chosen = backend ? sb_backend_find(backend) : NULL;
    if (backend && (!chosen || !(chosen->caps & SB_BK_SELECT))) {
        char have[200] = "";
        for (const sb_backend *const *d = sb_backends(); *d; d++)
            if ((*d)->caps & SB_BK_SELECT) {
                size_t used = strlen(have);
                snprintf(have + used, sizeof have - used, "%s%s",
                         used ? ", " : "", (*d)->name);
            }
        return sb_fail(err, SB_EINVAL,
                       "--backend '%s': unknown backend (this build has %s)",
                       backend, have[0] ? have : "none");
    }

    int cap = 0;
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        for (const sb_impl *const *im = sb_bench_impls(*b); *im; im++)
            cap++;
    sel->named = (areas && *areas) || (names && *names);
    sel->items = calloc((size_t)cap + 1, sizeof *sel->items);
    if (!sel->items)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    unsigned want =
        suite == SB_SUITE_FULL ? (SB_BF_QUICK | SB_BF_FULL) : SB_BF_QUICK;
    /* the installed backends' phases in order (backend.h): the host's
     * first, then each device's */
    int last_phase = 0;
    for (const sb_backend *const *d = sb_backends(); *d; d++)
        if ((*d)->phase > last_phase)
            last_phase = (*d)->phase;
    for (int phase = 0; phase <= last_phase; phase++)
        for (const sb_bench *const *b = sb_registry(); *b; b++)
            for (const sb_impl *const *im = sb_bench_impls(*b); *im; im++) {
                const char *be = (*im)->backend;
                if (backend_phase(be) != phase ||
                    !backend_wanted(sb_backend_find(be), backend))
                    continue;
                unsigned flags = sb_impl_flags(*b, *im);
                bool pick;
                if (names)
                    pick = in_list(names, (*b)->name) ||
                           (areas && in_list(areas, (*b)->area));
                else if (areas)
                    pick = in_list(areas, (*b)->area) && (flags & want);
                else
                    pick = (flags & want) != 0;
                if (pick)
                    sel->items[sel->n++] = (sb_sel_item){*b, *im};
            }
    if (sel->n == 0) {
        sb_selection_free(sel);
        return sb_fail(err, SB_EINVAL, "no benchmark matches the selection%s",
                       backend && *backend ? " and backend" : "");
    }
    return 0;
}

void sb_selection_free(sb_selection *sel)
{
    free(sel->items);
    memset(sel, 0, sizeof *sel);
}

bool sb_selection_needs_mpi(const sb_selection *sel)
{
    if (!sel->named)
        return false;
    for (int i = 0; i < sel->n; i++)
        if (sb_impl_flags(sel->items[i].bench, sel->items[i].impl) &
            SB_BF_NEEDS_MPI)
            return true;
    return false;
}

/* The backend that spans processes (MPI), when this build has one. */
static const sb_backend *session_backend(void)
{
    for (const sb_backend *const *d = sb_backends(); *d; d++)
        if ((*d)->session_begin)
            return *d;
    return NULL;
}

int sb_session_begin(const sb_selection *sel, int *argc, char ***argv,
                     sb_ctx *ctx, sb_err *err)
{
    const sb_backend *d = session_backend();
    if (d)
        return d->session_begin(argc, argv, sb_selection_needs_mpi(sel), ctx,
                                err);
    ctx->rank = 0;
    ctx->nranks = 1;
    return 0;
}

void sb_session_end(void)
{
    const sb_backend *d = session_backend();
    if (d && d->session_end)
        d->session_end();
}

void sb_session_abort(const char *msg, int code)
{
    const sb_backend *d = session_backend();
    if (d && d->session_abort)
        d->session_abort(msg, code);
    fprintf(stderr, "solbench: %s\n", msg);
    exit(code);
}

/* ---- planning ------------------------------------------------------------ */

int sb_plan_build(const sb_selection *sel, const sb_pset *user,
                  const sb_ctx *ctx, sb_plan *plan, sb_err *err)
{
    memset(plan, 0, sizeof *plan);
    /* Every -p key must mean something to at least one selected bench
     * (that its scope, if it has one, covers). */
    for (int k = 0; user && k < user->n; k++) {
        bool used = false, covered = false;
        char scope[SB_PKEY_LEN];
        const char *name;
        sb_pset_key_split(user->kv[k].key, scope, sizeof scope, &name);
        for (int i = 0; i < sel->n && !used; i++) {
            const sb_sel_item *si = &sel->items[i];
            bool c = sb_pscope_covers(scope, si->bench->name);
            covered |= c;
            used = c && sb_param_find(si->bench, si->impl, name);
        }
        if (!used && scope[0] && !covered)
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark is "
                           "or belongs to '%s'",
                           user->kv[k].key, scope);
        if (!used && scope[0])
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark in "
                           "'%s' takes a parameter '%s' (see 'solbench list')",
                           user->kv[k].key, scope, name);
        if (!used) {
            if (sel->n == 1) {
                char names[400] = "";
                sb_param_def defs[SB_MAX_PARAMS + 1];
                sb_params_of(sel->items[0].bench, sel->items[0].impl, defs,
                             SB_MAX_PARAMS + 1);
                for (const sb_param_def *d = defs; d->name; d++) {
                    if (names[0])
                        strncat(names, ", ", sizeof names - strlen(names) - 1);
                    strncat(names, d->name, sizeof names - strlen(names) - 1);
                }
                return sb_fail(err, SB_EINVAL,
                               "-p %s: unknown parameter '%s' "
                               "for %s (it takes: %s)",
                               user->kv[k].key, user->kv[k].key,
                               sel->items[0].bench->name,
                               names[0] ? names : "no parameters");
            }
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark takes "
                           "a parameter '%s' (see 'solbench list')",
                           user->kv[k].key, user->kv[k].key);
        }
    }

    int cap = 0;
    double together = 0.0; /* bytes the points hold at once, interleaved */
    for (int i = 0; i < sel->n; i++) {
        const sb_bench *b = sel->items[i].bench;
        const sb_impl *im = sel->items[i].impl;
        if (ctx->interleave &&
            (!im->run || im->drive || im->timer || im->summarize ||
             (sb_impl_flags(b, im) & SB_BF_NEEDS_MPI))) {
            bool cpu = strcmp(im->backend, "cpu") == 0;
            /* a device's benchmarks leave with --backend cpu; the host's
             * transfers and the MPI ones come with it, so name them */
            bool cuda = !sb_backend_is_host(im->backend);
            sb_fail(err, SB_EINVAL,
                    "--interleave: %s%s%s takes its own "
                    "samples, so it cannot share rounds with other points%s",
                    b->name, cpu ? "" : " on ", cpu ? "" : im->backend,
                    cuda && !ctx->backend[0]
                        ? " (--backend cpu leaves it out)"
                        : " (leave it out of --bench or --area)");
            goto fail;
        }
        sb_pset suite_defaults = {0};
        const char *spec = sb_suite_spec(b, im, ctx->suite);
        if (sb_pset_add_all(&suite_defaults, spec, err))
            goto fail;
        sb_pset mine;
        sb_pset_for_bench(user, b->name, &mine);
        const sb_pset *layers[2] = {&suite_defaults, &mine};
        const bool lenient[2] = {false, true};
        sb_param_def defs[SB_MAX_PARAMS + 1];
        sb_params_of(b, im, defs, SB_MAX_PARAMS + 1);
        sb_params *pts = NULL;
        int npts = 0;
        if (sb_params_expand(b->name, defs, layers, lenient, 2, &pts, &npts,
                             err))
            goto fail;
        for (int j = 0; j < npts; j++) {
            char where[512], pbuf[400];
            sb_params_fmt(&pts[j], pbuf, sizeof pbuf);
            snprintf(where, sizeof where, "%s %s", b->name, pbuf);
            sb_point pt;
            if (sb_point_make(b, im, &pts[j], &pt, err)) {
                free(pts);
                goto fail;
            }
            int crc = sb_point_check(&pt, ctx, err);
            double need = crc ? 0.0 : sb_point_footprint(&pt, ctx);
            sb_point_release(&pt);
            if (crc) {
                free(pts);
                goto fail;
            }
            /* one rule (util.h): a footprint above SB_MEM_SHARE of the
             * memory available when the run began is refused */
            double have = ctx->force ? 0 : ctx->mem_avail;
            if (sb_mem_fits(need, have, where, err)) {
                free(pts);
                goto fail;
            }
            together += need;
            if (ctx->interleave) {
                char w2[600];
                snprintf(w2, sizeof w2,
                         "--interleave: the points up to %s, together,", where);
                if (sb_mem_fits(together, have, w2, err)) {
                    free(pts);
                    goto fail;
                }
            }
            if (plan->n == cap) {
                cap = cap ? 2 * cap : 32;
                sb_plan_item *it =
                    realloc(plan->items, (size_t)cap * sizeof *it);
                if (!it) {
                    free(pts);
                    sb_fail(err, SB_ENOMEM, "out of memory");
                    goto fail;
                }
                plan->items = it;
            }
            plan->items[plan->n].bench = b;
            plan->items[plan->n].impl = im;
            plan->items[plan->n].point = pts[j];
            plan->n++;
        }
        free(pts);
    }
    return 0;
fail:
    sb_plan_free(plan);
    return err ? (err->code ? err->code : SB_EINVAL) : SB_EINVAL;
}

void sb_plan_free(sb_plan *plan)
{
    free(plan->items);
    memset(plan, 0, sizeof *plan);
}
