/*
 * trace_events.c — a trace in memory: its string table (every name and
 * signature interned once), its tracks (pid, tid), its events, the tracks
 * that hold device work, and the names of its formats and kinds. The
 * readers (trace_read.c, trace_chrome.c, trace_nsys.c) fill it.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_int.h"

/* ---- the string table ---------------------------------------------------- */

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int rehash(sb_trace *t)
{
    size_t cap = t->hcap ? t->hcap * 2 : 1024;
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return SB_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        h[i] = -1;
    for (size_t i = 0; i < t->nstr; i++) {
        size_t k = fnv(t->str[i], strlen(t->str[i])) & (cap - 1);
        while (h[k] >= 0)
            k = (k + 1) & (cap - 1);
        h[k] = (int32_t)i;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = cap;
    return 0;
}

/* The id of string s[0..n), added when new; -1 when out of memory. */
static int32_t intern_n(sb_trace *t, const char *s, size_t n)
{
    if ((t->nstr + 1) * 2 > t->hcap && rehash(t))
        return -1;
    size_t k = fnv(s, n) & (t->hcap - 1);
    while (t->hash[k] >= 0) {
        const char *o = t->str[t->hash[k]];
        if (strncmp(o, s, n) == 0 && o[n] == '\0')
            return t->hash[k];
        k = (k + 1) & (t->hcap - 1);
    }
    if (t->nstr == t->scap) {
        size_t cap = t->scap ? t->scap * 2 : 256;
        char **p = realloc(t->str, cap * sizeof *p);
        if (!p)
            return -1;
        t->str = p;
        t->scap = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return -1;
    memcpy(c, s, n);
    c[n] = '\0';
    t->str[t->nstr] = c;
    t->hash[k] = (int32_t)t->nstr;
    return (int32_t)t->nstr++;
}

static int32_t intern(sb_trace *t, const char *s)
{
    return intern_n(t, s, strlen(s));
}

int32_t sb_trace_intern(sb_trace *t, const char *s)
{
    return intern(t, s);
}

int32_t sb_trace_str_id(const sb_trace *t, const char *s)
{
    if (!t->hcap)
        return -1;
    size_t n = strlen(s);
    for (size_t k = fnv(s, n) & (t->hcap - 1); t->hash[k] >= 0;
         k = (k + 1) & (t->hcap - 1))
        if (strcmp(t->str[t->hash[k]], s) == 0)
            return t->hash[k];
    return -1;
}

const char *sb_trace_str(const sb_trace *t, int32_t id)
{
    return id >= 0 && (size_t)id < t->nstr ? t->str[id] : "";
}

void sb_trace_init(sb_trace *t)
{
    memset(t, 0, sizeof *t);
    t->rank = t->world = -1;
}

void sb_trace_free(sb_trace *t)
{
    for (size_t i = 0; i < t->nstr; i++)
        free(t->str[i]);
    free(t->str);
    free(t->hash);
    free(t->ev);
    free(t->tracks);
    free(t->hlo);
    free(t->hlo_scope);
    sb_trace_init(t);
}

const char *sb_tr_format_name(sb_tr_format f)
{
    switch (f) {
    case SB_TR_KINETO:
        return "pytorch";
    case SB_TR_JAX:
        return "jax";
    case SB_TR_NSYS:
        return "nsys";
    default:
        return "chrome";
    }
}

const char *sb_tr_kind_name(sb_tr_kind k)
{
    static const char *const n[SB_TK_NKINDS] = {
        "other",  "cpu_op",  "kernel",     "memcpy",
        "memset", "runtime", "annotation", "gpu_annotation"};
    return (unsigned)k < SB_TK_NKINDS ? n[k] : "?";
}

/* ---- tracks and events --------------------------------------------------- */

int32_t sb_trace_track(sb_trace *t, int64_t pid, int64_t tid)
{
    /* the last track found is the likeliest: events come in runs */
    static __thread size_t last;
    if (last < t->ntracks && t->tracks[last].pid == pid &&
        t->tracks[last].tid == tid)
        return (int32_t)last;
    for (size_t i = 0; i < t->ntracks; i++)
        if (t->tracks[i].pid == pid && t->tracks[i].tid == tid)
            return (int32_t)(last = i);
    if (t->ntracks == t->tcap) {
        size_t cap = t->tcap ? t->tcap * 2 : 16;
        if (cap > 1u << 20)
            return -1;
        sb_tr_track *p = realloc(t->tracks, cap * sizeof *p);
        if (!p)
            return -1;
        t->tracks = p;
        t->tcap = cap;
    }
    t->tracks[t->ntracks] =
        (sb_tr_track){.pid = pid, .tid = tid, .pname = -1, .tname = -1};
    return (int32_t)(last = t->ntracks++);
}

int sb_trace_push(sb_trace *t, double ts, double dur, int64_t pid, int64_t tid,
                  const char *name, sb_tr_kind kind, sb_tr_event **out)
{
    if (t->n >= SB_TRACE_MAX_EVENTS)
        return SB_EINVAL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap + t->cap / 2 : 4096;
        sb_tr_event *p = realloc(t->ev, cap * sizeof *p);
        if (!p)
            return SB_ENOMEM;
        t->ev = p;
        t->cap = cap;
    }
    sb_tr_event *ev = &t->ev[t->n];
    memset(ev, 0, sizeof *ev);
    ev->ts = ts;
    ev->dur = dur;
    ev->kind = (uint8_t)kind;
    ev->name = intern(t, name);
    ev->sig = ev->coll = -1;
    ev->corr = ev->ext = -1;
    ev->track = sb_trace_track(t, pid, tid);
    if (ev->name < 0 || ev->track < 0)
        return SB_ENOMEM;
    t->n_by_kind[kind]++;
    t->n++;
    *out = ev;
    return 0;
}

void sb_trace_mark_devices(sb_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        sb_tr_event *e = &t->ev[i];
        /* an NCCL kernel recorded without its args: the collective its
         * name says, without a size (timed, not placed) */
        if (e->kind == SB_TK_KERNEL && e->coll < 0) {
            const char *c = sb_tr_nccl_coll(sb_trace_str(t, e->name));
            if (c)
                e->coll = intern(t, c);
        }
        if (e->kind == SB_TK_KERNEL || e->kind == SB_TK_MEMCPY ||
            e->kind == SB_TK_MEMSET || e->kind == SB_TK_GPU_ANNOT)
            t->tracks[e->track].device = true;
    }
}
