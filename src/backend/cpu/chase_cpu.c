/*
 * chase_cpu.c — the CPU's pointer chase (chase_cpu.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hwloc.h>

#include "backend/cpu/chase_cpu.h"
#include "solbench/util.h"

void sb_chase_cpu_run(void *state, uint64_t iters)
{
    sb_chase_state *s = state;
    s->cur = sb_chase_run(s->cur, iters);
    s->hops += iters;
}

int sb_chase_cpu_verify(void *state, sb_result *r)
{
    sb_chase_state *s = state;
    uint64_t want = sb_chase_expect(&s->chain, s->hops);
    r->valid = (uint64_t)(uintptr_t)s->cur == want;
    sb_result_metric(r, "hops", (double)s->hops, "");
    if (!r->valid)
        sb_result_note(
            r,
            "after %llu hops the chase stands at slot %lld, not "
            "at slot %llu of the visiting order",
            (unsigned long long)s->hops,
            (long long)(((uint64_t)(uintptr_t)s->cur - s->chain.base) /
                        s->chain.stride),
            (unsigned long long)((want - s->chain.base) / s->chain.stride));
    return 0;
}

void sb_chase_cpu_teardown(void *state)
{
    sb_chase_state *s = state;
    if (!s)
        return;
    sb_chase_free(&s->chain);
    if (s->map)
        munmap(s->map, s->map_len);
    free(s);
}

#define HUGE_ALIGN (2u << 20)

int sb_chase_cpu_setup(const sb_chase_shape *sh, bool huge, int numa,
                       sb_chase_state **out, sb_err *err)
{
    sb_chase_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->huge = huge;
    s->numa = numa;
    s->bytes = sh->bytes;
    /* Its own mapping, so the page policy and the binding hold before
     * any page is touched; huge: room to start on a 2 MiB boundary. */
    s->map_len = sh->bytes + (huge ? HUGE_ALIGN : 0);
    void *m = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(s);
        return sb_fail(err, SB_ENOMEM, "cannot map %zu bytes", sh->bytes);
    }
    s->map = m;
    uintptr_t a = (uintptr_t)m;
    if (huge)
        a = (a + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
    s->buf = (void *)a;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    /* advice: a kernel without transparent huge pages has 4 KiB ones */
    madvise(s->buf, sh->bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
    if (numa >= 0) {
        hwloc_topology_t topo = sb_topology();
        hwloc_obj_t node =
            topo ? hwloc_get_numanode_obj_by_os_index(topo, (unsigned)numa)
                 : NULL;
        if (!node || hwloc_set_area_membind(topo, s->buf, sh->bytes,
                                            node->nodeset, HWLOC_MEMBIND_BIND,
                                            HWLOC_MEMBIND_BYNODESET) != 0) {
            sb_chase_cpu_teardown(s);
            return sb_fail(err, SB_EUNSUP,
                           "cannot bind the buffer to NUMA node %d", numa);
        }
    }
    memset(s->buf, 0, sh->bytes); /* first touch, by the thread that chases */
    int rc = sb_chase_build(s->buf, sh->bytes, sh->stride, sh->pattern,
                            (uint64_t)(uintptr_t)s->buf, SB_CHASE_SEED,
                            &s->chain, err);
    if (rc) {
        sb_chase_cpu_teardown(s);
        return rc;
    }
    s->cur = (const void *)(uintptr_t)sb_chase_expect(&s->chain, 0);
    *out = s;
    return 0;
}

int sb_chase_cpu_setup_point(const sb_point *pt, const sb_ctx *ctx,
                             void **state, sb_err *err)
{
    (void)ctx;
    const sb_params *p = pt->params;
    /* the host backend's one device is device 0 */
    if (sb_p_find(p, "device") && sb_p_int(p, "device") != 0)
        return sb_fail(err, SB_EUNSUP,
                       "the host backend has one device (device 0), not "
                       "device %lld",
                       (long long)sb_p_int(p, "device"));
    sb_chase_state *s = NULL;
    int rc = sb_chase_cpu_setup(
        pt->shape, strcmp(sb_p_str(p, "pages"), "huge") == 0,
        sb_p_find(p, "numa") ? (int)sb_p_int(p, "numa") : -1, &s, err);
    *state = s;
    return rc;
}

void sb_chase_cpu_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    (void)pt;
    (void)ctx;
    sb_chase_state *s = state;
    sb_chase_report_latency(r, true);
    sb_result_metric(r, "working_set", (double)s->bytes, "B");
    sb_chase_level_note(r, s->bytes);
    char where[48] = "placed by first touch";
    if (s->numa >= 0)
        snprintf(where, sizeof where, "bound to NUMA node %d", s->numa);
    sb_result_note(r,
                   "one CPU thread chases %zu slots %zu B apart in a buffer "
                   "%s, %s",
                   s->chain.nodes, s->chain.stride, where,
                   s->huge ? "huge pages asked for"
                           : "4 KiB pages (huge pages refused)");
}
