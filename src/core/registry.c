/*
 * registry.c — the table of benchmarks a program runs, and what a
 * benchmark's definition and one backend's impl of it make together: its
 * parameters, its hooks, its flags. The list itself lives above the
 * benchmarks (src/bench/library.c, one list file per area) and is
 * installed here (sb_registry_use): the core names no benchmark. Its
 * order is the run order: compute first, so that later benchmarks find
 * the measured peaks and bandwidths in the context.
 */
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "solbench/bench.h"

static const char *const areas[] = {"compute",   "memory",  "transfer",
                                    "attention", "moe",     "ops",
                                    "llm",       "network", NULL};

/* The definitions this build has an impl of, in run order, from the list
 * installed by sb_registry_use (the library's: sb_library_init), each
 * with its impls: its own, then those the installed backends register. */
#define REGISTRY_MAX 256
#define IMPLS_MAX 16
static const sb_bench *registry[REGISTRY_MAX + 1];
static const sb_impl *impls_of[REGISTRY_MAX][IMPLS_MAX + 1];

void sb_registry_use(const sb_bench *const *all)
{
    int n = 0;
    for (const sb_bench *const *b = all; b && *b && n < REGISTRY_MAX; b++) {
        const sb_impl **list = impls_of[n];
        int k = 0;
        for (const sb_impl *const *im = (*b)->impls; im && *im; im++)
            if (k < IMPLS_MAX)
                list[k++] = *im;
        for (const sb_backend *const *be = sb_backends(); *be; be++)
            for (const sb_impl_entry *e = (*be)->impls; e && e->bench; e++)
                if (strcmp(e->bench, (*b)->name) == 0 && k < IMPLS_MAX)
                    list[k++] = e->impl;
        list[k] = NULL;
        if (k > 0)
            registry[n++] = *b;
    }
    registry[n] = NULL;
}

const sb_impl *const *sb_bench_impls(const sb_bench *b)
{
    for (int i = 0; registry[i]; i++)
        if (registry[i] == b)
            return impls_of[i];
    return b->impls;
}

const sb_bench *const *sb_registry(void)
{
    return registry;
}

const char *const *sb_areas(void)
{
    return areas;
}

const sb_impl *sb_impl_find(const sb_bench *b, const char *backend)
{
    for (const sb_impl *const *im = sb_bench_impls(b); im && *im; im++)
        if (!backend || !*backend || strcmp((*im)->backend, backend) == 0)
            return *im;
    return NULL;
}

const char *sb_suite_spec(const sb_bench *b, const sb_impl *im, sb_suite suite)
{
    const char *c = im && im->suite_spec ? im->suite_spec(suite) : NULL;
    if (c)
        return c;
    const char *quick = im && im->quick ? im->quick : b->quick;
    const char *full = im && im->full ? im->full : b->full;
    return suite == SB_SUITE_FULL && full ? full : quick;
}

const sb_bench *sb_bench_find(const char *name, const char *backend)
{
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        if (strcmp((*b)->name, name) == 0 && sb_impl_find(*b, backend))
            return *b;
    return NULL;
}

const sb_param_def *sb_param_find(const sb_bench *b, const sb_impl *im,
                                  const char *name)
{
    for (const sb_param_def *d = im ? im->params : NULL; d && d->name; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    for (const sb_param_def *d = b->params; d && d->name; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

int sb_params_of(const sb_bench *b, const sb_impl *im, sb_param_def *out,
                 int cap)
{
    int n = 0;
    for (const sb_param_def *d = b->params; d && d->name && n < cap - 1; d++)
        out[n++] = *sb_param_find(b, im, d->name);
    for (const sb_param_def *d = im ? im->params : NULL;
         d && d->name && n < cap - 1; d++) {
        bool shared = false;
        for (const sb_param_def *e = b->params; e && e->name && !shared; e++)
            shared = strcmp(e->name, d->name) == 0;
        if (!shared)
            out[n++] = *d;
    }
    memset(&out[n], 0, sizeof out[n]);
    return n;
}

unsigned sb_impl_flags(const sb_bench *b, const sb_impl *im)
{
    return b->flags | (im ? im->flags : 0u);
}

double sb_point_flops(const sb_point *pt)
{
    if (pt->impl && pt->impl->flops)
        return pt->impl->flops(pt);
    return pt->bench->flops ? pt->bench->flops(pt) : 0.0;
}

double sb_point_bytes(const sb_point *pt)
{
    if (pt->impl && pt->impl->bytes)
        return pt->impl->bytes(pt);
    return pt->bench->bytes ? pt->bench->bytes(pt) : 0.0;
}

double sb_point_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    if (pt->impl && pt->impl->footprint)
        return pt->impl->footprint(pt, ctx);
    return pt->bench->footprint ? pt->bench->footprint(pt, ctx) : 0.0;
}

int sb_point_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    int rc = pt->bench->check ? pt->bench->check(pt, ctx, err) : 0;
    if (rc == 0 && pt->impl && pt->impl->check)
        rc = pt->impl->check(pt, ctx, err);
    return rc;
}

int sb_point_make(const sb_bench *b, const sb_impl *im, const sb_params *p,
                  sb_point *pt, sb_err *err)
{
    memset(pt, 0, sizeof *pt);
    pt->bench = b;
    pt->impl = im;
    pt->params = p;
    if (!b->decode)
        return 0;
    void *shape = calloc(1, b->shape_size ? b->shape_size : 1);
    if (!shape)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = b->decode(b, p, shape, err);
    if (rc) {
        if (b->shape_free)
            b->shape_free(shape);
        free(shape);
        return rc;
    }
    pt->shape = shape;
    return 0;
}

void sb_point_release(sb_point *pt)
{
    void *shape = (void *)pt->shape;
    if (shape && pt->bench->shape_free)
        pt->bench->shape_free(shape);
    free(shape);
    pt->shape = NULL;
}
