/*
 * trace_chrome.c — Chrome-trace events reduced to sb_tr_event (the
 * scanner of trace_read.c hands each one over parsed): complete events
 * with their ids, shapes, collectives and sizes checked, metadata (process
 * and thread names), the top-level keys Kineto writes, and, once all is
 * read, the trace's format and its device tracks.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_int.h"

/* A JSON real as an integer id; -1 when it is not one. */
static int64_t real_id(double x)
{
    return isfinite(x) && fabs(x) < 9e15 ? (int64_t)x : -1;
}

static int64_t id_of(sb_trace *t, json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return real_id(json_real_value(v));
    if (json_is_string(v)) /* a named track: ids past any number */
        return (int64_t)1 << 40 | sb_trace_intern(t, json_string_value(v));
    return 0;
}

static sb_tr_kind kind_of(const char *cat, bool *known)
{
    static const struct {
        const char *cat;
        sb_tr_kind k;
    } m[] = {{"cpu_op", SB_TK_CPU_OP},
             {"operator", SB_TK_CPU_OP},
             {"Operator", SB_TK_CPU_OP},
             {"kernel", SB_TK_KERNEL},
             {"Kernel", SB_TK_KERNEL},
             {"gpu_memcpy", SB_TK_MEMCPY},
             {"Memcpy", SB_TK_MEMCPY},
             {"gpu_memset", SB_TK_MEMSET},
             {"Memset", SB_TK_MEMSET},
             {"cuda_runtime", SB_TK_RUNTIME},
             {"cuda_driver", SB_TK_RUNTIME},
             {"Runtime", SB_TK_RUNTIME},
             {"user_annotation", SB_TK_ANNOT},
             {"gpu_user_annotation", SB_TK_GPU_ANNOT},
             {"python_function", SB_TK_OTHER},
             {"python_function", SB_TK_OTHER},
             {"cuda_profiler_range", SB_TK_OTHER},
             {"Trace", SB_TK_OTHER},
             {"overhead", SB_TK_OTHER}};
    *known = true;
    if (!cat || !*cat)
        return SB_TK_OTHER;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(cat, m[i].cat) == 0)
            return m[i].k;
    *known = false;
    return SB_TK_OTHER;
}

static int64_t int_arg(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return real_id(json_real_value(v));
    if (json_is_string(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (end != json_string_value(v) && *end == '\0')
            return x;
    }
    return -1;
}

static double num_arg(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    if (json_is_number(v))
        return json_number_value(v);
    if (json_is_string(v))
        return strtod(json_string_value(v), NULL);
    return 0;
}

/* Sizes a profiler records: whole numbers of elements or bytes, none over
 * 1e15 (a petabyte of bytes), no tensor over 1e18 elements. Larger or
 * negative ones are not sizes; costed, they become FLOP counts of -9e18
 * and bandwidths of 1e287 B/s. */
#define SIZE_MAX_ONE 1e15
#define SIZE_MAX_TENSOR 1e18

static bool size_ok(double x)
{
    return isfinite(x) && x >= 0 && x <= SIZE_MAX_ONE && x == floor(x);
}

/* Input Dims: shapes (arrays of numbers), lists of shapes for tensor
 * lists, and anything else for non-tensors. true when every shape is
 * one. */
static bool dims_ok(json_t *v, int depth)
{
    if (!json_is_array(v))
        return true;
    if (depth > 4)
        return false;
    size_t n = json_array_size(v);
    bool shape = n > 0;
    for (size_t i = 0; i < n; i++)
        shape = shape && json_is_number(json_array_get(v, i));
    if (!shape) {
        for (size_t i = 0; i < n; i++)
            if (!dims_ok(json_array_get(v, i), depth + 1))
                return false;
        return true;
    }
    double numel = 1;
    for (size_t i = 0; i < n; i++) {
        double x = json_number_value(json_array_get(v, i));
        if (!size_ok(x))
            return false;
        numel *= x;
    }
    return numel <= SIZE_MAX_TENSOR;
}

static int err_event(sb_trace_reader *r, size_t idx, const char *name,
                     const char *why)
{
    char nm[80];
    sb_err_escape(nm, sizeof nm, name ? name : "?");
    return sb_fail(r->err, SB_EINVAL,
                   "%s: event %zu ('%s', ending at byte %llu): %s", r->t->label,
                   idx, nm, *r->off, why);
}

static int on_meta(sb_trace_reader *r, json_t *e)
{
    sb_trace *t = r->t;
    const char *name = json_string_value(json_object_get(e, "name"));
    json_t *args = json_object_get(e, "args");
    const char *v = json_string_value(json_object_get(args, "name"));
    if (!name || !v)
        return 0;
    int64_t pid = id_of(t, json_object_get(e, "pid"));
    if (strcmp(name, "process_name") == 0) {
        if (r->npn == r->pncap) {
            size_t cap = r->pncap ? r->pncap * 2 : 16;
            sb_trace_pname *p = realloc(r->pn, cap * sizeof *p);
            if (!p)
                return SB_ENOMEM;
            r->pn = p;
            r->pncap = cap;
        }
        int32_t id = sb_trace_intern(t, v);
        if (id < 0)
            return SB_ENOMEM;
        r->pn[r->npn++] = (sb_trace_pname){pid, id};
    } else if (strcmp(name, "thread_name") == 0) {
        int32_t k = sb_trace_track(t, pid, id_of(t, json_object_get(e, "tid")));
        int32_t id = sb_trace_intern(t, v);
        if (k < 0 || id < 0)
            return SB_ENOMEM;
        t->tracks[k].tname = id;
    }
    return 0;
}

static int32_t dump_id(sb_trace *t, json_t *v)
{
    if (!v)
        return -1;
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s)
        return -1;
    int32_t id = sb_trace_intern(t, s);
    free(s);
    return id;
}

static int on_complete(sb_trace_reader *r, json_t *e, size_t idx)
{
    sb_trace *t = r->t;
    const char *name = json_string_value(json_object_get(e, "name"));
    json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
    if (!json_is_number(ts))
        return err_event(r, idx, name,
                         "a complete event (ph X) without a "
                         "number 'ts'");
    if (!json_is_number(dur))
        return err_event(r, idx, name,
                         "a complete event (ph X) without a "
                         "number 'dur'");
    double tsv = json_number_value(ts), durv = json_number_value(dur);
    if (!isfinite(tsv) || !isfinite(durv) || durv < 0 || tsv < 0)
        return err_event(r, idx, name,
                         "a negative or non-finite 'dur' or "
                         "'ts'");
    /* a year in µs: no op of a profiled step lasts longer */
    if (durv > 3.2e13 || fabs(tsv) > 1e18)
        return err_event(r, idx, name,
                         "'dur' over a year or 'ts' beyond 1e18 us: not a "
                         "time in microseconds");
    const char *cat = json_string_value(json_object_get(e, "cat"));
    bool known;
    sb_tr_kind k = kind_of(cat, &known);
    if (!known)
        t->n_unknown_cat++;
    sb_tr_event *ev;
    int prc = sb_trace_push(t, tsv, durv, id_of(t, json_object_get(e, "pid")),
                            id_of(t, json_object_get(e, "tid")),
                            name ? name : "?", k, &ev);
    if (prc == SB_EINVAL)
        return err_event(r, idx, name,
                         "more than 10 million complete "
                         "events: split the trace");
    if (prc)
        return prc;
    t->n_by_kind[k]--; /* counted again below, once its kind is final */
    json_t *args = json_object_get(e, "args");
    if ((name && strncmp(name, "ProfilerStep#", 13) == 0) ||
        json_object_get(args, "step_num")) {
        ev->flags |= SB_TEF_STEP;
        /* a step is an annotation whatever its category says */
        if (ev->kind != SB_TK_GPU_ANNOT)
            ev->kind = SB_TK_ANNOT;
        k = (sb_tr_kind)ev->kind;
    }
    ev->corr = int_arg(args, "correlation");
    ev->ext = int_arg(args, "External id");
    json_t *dims = json_object_get(args, "Input Dims");
    if (dims && !dims_ok(dims, 0))
        return err_event(r, idx, name,
                         "'Input Dims' holds a size that is not one (a "
                         "dimension below 0 or over 1e15, a tensor over "
                         "1e18 elements)");
    if (dims) {
        json_t *sig = json_array();
        json_array_append(sig, dims);
        json_t *types = json_object_get(args, "Input type");
        if (types)
            json_array_append(sig, types);
        ev->sig = dump_id(t, sig);
        json_decref(sig);
    } else if (json_is_string(json_object_get(args, "long_name"))) {
        ev->sig = sb_trace_intern(
            t, json_string_value(json_object_get(args, "long_name")));
    } else if (json_is_string(json_object_get(args, "hlo_op"))) {
        ev->sig = sb_trace_intern(
            t, json_string_value(json_object_get(args, "hlo_op")));
    }
    const char *coll =
        json_string_value(json_object_get(args, "Collective name"));
    if (coll) {
        ev->coll = sb_trace_intern(t, coll);
        double in = num_arg(args, "In msg nelems"),
               out = num_arg(args, "Out msg nelems");
        if (!size_ok(in) || !size_ok(out))
            return err_event(r, idx, name,
                             "'In msg nelems' or 'Out msg nelems' is not "
                             "a message size (0 to 1e15 elements)");
        ev->aux = in > out ? in : out;
        int64_t g = int_arg(args, "Group size");
        ev->group = (int16_t)(g > 0 && g < 32768 ? g : 0);
        const char *dt = json_string_value(json_object_get(args, "dtype"));
        if (dt)
            ev->sig = sb_trace_intern(t, dt);
    } else if (k == SB_TK_MEMCPY || k == SB_TK_MEMSET) {
        ev->aux = num_arg(args, "bytes");
        if (!size_ok(ev->aux))
            return err_event(r, idx, name, "'bytes' is not a size (0 to 1e15)");
    }
    t->n_by_kind[k]++;
    return 0;
}

int sb_trace_chrome_event(sb_trace_reader *r, json_t *e, size_t idx)
{
    if (!json_is_object(e))
        return sb_fail(r->err, SB_EINVAL,
                       "%s: event %zu (ending at byte %llu): not a JSON "
                       "object",
                       r->t->label, idx, *r->off);
    const char *ph = json_string_value(json_object_get(e, "ph"));
    if (ph && strcmp(ph, "X") == 0)
        return on_complete(r, e, idx);
    if (ph && strcmp(ph, "M") == 0)
        return on_meta(r, e);
    if (ph && (strcmp(ph, "B") == 0 || strcmp(ph, "E") == 0))
        r->t->n_begin_end++;
    else
        r->t->n_ignored++;
    return 0;
}

void sb_trace_chrome_top(sb_trace_reader *r, const char *key, json_t *v)
{
    sb_trace *t = r->t;
    if (strcmp(key, "deviceProperties") == 0) {
        r->kineto_keys = true;
        const char *n =
            json_string_value(json_object_get(json_array_get(v, 0), "name"));
        if (n)
            snprintf(t->device_name, sizeof t->device_name, "%s", n);
    } else if (strcmp(key, "distributedInfo") == 0) {
        r->kineto_keys = true;
        int64_t rk = int_arg(v, "rank"), w = int_arg(v, "world_size");
        if (rk >= 0 && rk < (1 << 24))
            t->rank = (int)rk;
        if (w > 0 && w < (1 << 24))
            t->world = (int)w;
    } else if (strcmp(key, "schemaVersion") == 0 ||
               strcmp(key, "traceName") == 0 ||
               strcmp(key, "baseTimeNanoseconds") == 0) {
        r->kineto_keys = true;
    } else if (strcmp(key, "displayTimeUnit") == 0 && json_is_string(v)) {
        snprintf(t->time_unit, sizeof t->time_unit, "%s", json_string_value(v));
    }
}

void sb_trace_chrome_finish(sb_trace_reader *r)
{
    sb_trace *t = r->t;
    bool jax = false;
    for (size_t i = 0; i < r->npn; i++) {
        const char *n = sb_trace_str(t, r->pn[i].name);
        if (strncmp(n, "/device:", 8) == 0 || strncmp(n, "/host:", 6) == 0)
            jax = true;
        for (size_t k = 0; k < t->ntracks; k++)
            if (t->tracks[k].pid == r->pn[i].pid)
                t->tracks[k].pname = r->pn[i].name;
    }
    bool kineto = r->kineto_keys || t->n_by_kind[SB_TK_CPU_OP] ||
                  t->n_by_kind[SB_TK_KERNEL] || t->n_by_kind[SB_TK_RUNTIME];
    t->format = jax ? SB_TR_JAX : kineto ? SB_TR_KINETO : SB_TR_CHROME;
    for (size_t k = 0; k < t->ntracks; k++) {
        const char *p = sb_trace_str(t, t->tracks[k].pname);
        if (jax && strncmp(p, "/device:", 8) == 0 && strstr(p, "CPU") == NULL)
            t->tracks[k].device = true;
    }
    sb_trace_mark_devices(t);
    /* a generic Chrome trace (solbench export --trace, a hand-made
     * timeline): its complete events are the ops */
    if (t->format == SB_TR_CHROME)
        t->n_unknown_cat = 0;
    for (size_t i = 0; t->format == SB_TR_CHROME && i < t->n; i++) {
        sb_tr_event *e = &t->ev[i];
        if (e->kind == SB_TK_OTHER) {
            e->kind = SB_TK_CPU_OP;
            t->n_by_kind[SB_TK_OTHER]--;
            t->n_by_kind[SB_TK_CPU_OP]++;
        }
    }
    /* XLA:CPU runs the HLO ops on the host: an event with an hlo_op is
     * an operator (its "end: <op>" marker has none) */
    for (size_t i = 0; jax && i < t->n; i++) {
        sb_tr_event *e = &t->ev[i];
        if (e->kind == SB_TK_OTHER && e->sig >= 0 &&
            !t->tracks[e->track].device) {
            e->kind = SB_TK_CPU_OP;
            t->n_by_kind[SB_TK_OTHER]--;
            t->n_by_kind[SB_TK_CPU_OP]++;
        }
    }
}
