/*
 * trace_read.c — the streaming reader of Chrome-trace JSON (PyTorch /
 * Kineto, JAX / XLA, generic), plain or gzip'd.
 *
 * The file is read through zlib in 64 KiB pieces (gzread reads a plain
 * file as it is). A small scanner walks the top-level object; each value
 * other than traceEvents, and each event of traceEvents, is cut out on
 * its own (brackets and strings tracked, at most SB_TRACE_MAX_EVENT
 * bytes) and parsed by jansson, then reduced to a 64-byte sb_tr_event.
 * Memory is the events kept plus one event's text, whatever the file's
 * size.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "solbench/fileio.h"
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

/* ---- the byte source ----------------------------------------------------- */

#define SRC_BUF (64u << 10)

typedef struct src {
    gzFile gz;                /* a file */
    const unsigned char *mem; /* or memory */
    size_t mlen, mpos;
    z_stream zs; /* memory that is gzip'd */
    bool zmem, zdone;
    unsigned char buf[SRC_BUF];
    size_t pos, len;
    unsigned long long off; /* bytes taken (uncompressed) */
    bool eof;
    const char *label;
    sb_err *err;
    int failed; /* an error was reported */
} src;

static int src_fail(src *s, const char *fmt, const char *detail)
{
    /* zlib names the stream "<fd:N>: " in its messages: the file is named
     * already */
    if (detail && strncmp(detail, "<fd:", 4) == 0 && strstr(detail, ">: "))
        detail = strstr(detail, ">: ") + 3;
    if (!s->failed)
        sb_fail(s->err, SB_EINVAL, "%s: byte %llu: %s%s", s->label, s->off, fmt,
                detail ? detail : "");
    s->failed = 1;
    s->eof = true;
    return -1;
}

static void src_fill(src *s)
{
    s->pos = s->len = 0;
    if (s->eof)
        return;
    if (s->off >= SB_TRACE_MAX_TEXT) {
        src_fail(s,
                 "over 8 GiB of trace text (unpacked): split the trace "
                 "or profile fewer steps",
                 NULL);
        return;
    }
    if (s->gz) {
        int n = gzread(s->gz, s->buf, SRC_BUF);
        if (n < 0) {
            int zerr;
            const char *m = gzerror(s->gz, &zerr);
            src_fail(s, "cannot be read: ", m);
            return;
        }
        if (n == 0) {
            int zerr;
            const char *m = gzerror(s->gz, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END)
                src_fail(s, "the gzip data is cut short or corrupt: ", m);
            s->eof = true;
        }
        s->len = (size_t)n;
        return;
    }
    if (!s->zmem) {
        size_t n = s->mlen - s->mpos;
        if (n > SRC_BUF)
            n = SRC_BUF;
        memcpy(s->buf, s->mem + s->mpos, n);
        s->mpos += n;
        s->len = n;
        s->eof = n == 0;
        return;
    }
    if (s->zdone) {
        s->eof = true;
        return;
    }
    s->zs.next_out = s->buf;
    s->zs.avail_out = SRC_BUF;
    while (s->zs.avail_out == SRC_BUF) {
        int rc = inflate(&s->zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            /* another gzip member may follow (gzip of parts, cat) */
            if (s->zs.avail_in >= 2 && s->zs.next_in[0] == 0x1f &&
                s->zs.next_in[1] == 0x8b && inflateReset(&s->zs) == Z_OK) {
                if (s->zs.avail_out < SRC_BUF)
                    break;
                continue;
            }
            s->zdone = true;
            break;
        }
        if (rc == Z_BUF_ERROR && s->zs.avail_in == 0) {
            src_fail(s, "the gzip data is cut short", NULL);
            return;
        }
        if (rc != Z_OK) {
            src_fail(s, "the gzip data is corrupt: ",
                     s->zs.msg ? s->zs.msg : "inflate failed");
            return;
        }
        if (s->zs.avail_in == 0 && s->zs.avail_out == SRC_BUF) {
            src_fail(s, "the gzip data is cut short", NULL);
            return;
        }
    }
    s->len = SRC_BUF - s->zs.avail_out;
    if (s->len == 0)
        s->eof = true;
}

/* The next byte without taking it; -1 at the end. */
static inline int src_peek(src *s)
{
    if (s->pos == s->len) {
        src_fill(s);
        if (s->len == 0)
            return -1;
    }
    return s->buf[s->pos];
}

static inline int src_get(src *s)
{
    int c = src_peek(s);
    if (c >= 0) {
        s->pos++;
        s->off++;
    }
    return c;
}

static int skip_ws(src *s)
{
    int c;
    size_t run = 0;
    while ((c = src_peek(s)) == ' ' || c == '\n' || c == '\r' || c == '\t') {
        src_get(s);
        if (++run > SB_TRACE_MAX_BLANK)
            return src_fail(s,
                            "over 16 MiB of blank space in a row: not a "
                            "trace a profiler wrote",
                            NULL);
    }
    return c;
}

/* ---- cutting one value out ----------------------------------------------- */

typedef struct text {
    char *b;
    size_t n, cap;
} text;

static int text_put(text *x, int c)
{
    if (x->n + 1 >= x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 4096;
        if (cap > SB_TRACE_MAX_EVENT + 2)
            cap = SB_TRACE_MAX_EVENT + 2;
        if (x->n + 1 >= cap)
            return -1;
        char *p = realloc(x->b, cap);
        if (!p)
            return -1;
        x->b = p;
        x->cap = cap;
    }
    x->b[x->n++] = (char)c;
    return 0;
}

/* Cuts the next JSON value into x (not checked: jansson parses it). */
static int cut_value(src *s, text *x)
{
    x->n = 0;
    int c = skip_ws(s);
    if (c < 0)
        return src_fail(s,
                        "the file ends where a value was expected (is "
                        "it cut short?)",
                        NULL);
    int depth = 0;
    bool str = false, esc = false;
    do {
        c = src_get(s);
        if (c < 0)
            return src_fail(s,
                            "the file ends inside a value (is it cut "
                            "short?)",
                            NULL);
        if (text_put(x, c))
            return src_fail(s, "one event is larger than 16 MiB", NULL);
        if (str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                str = false;
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
        if (depth == 0 && !str) {
            int p = src_peek(s);
            /* a scalar ends at a delimiter; a container or a string at
             * its own close */
            if (c == '}' || c == ']' || c == '"' || p < 0 || p == ',' ||
                p == '}' || p == ']' || p == ' ' || p == '\n' || p == '\r' ||
                p == '\t')
                break;
        }
        if (depth < 0)
            return src_fail(s, "unbalanced bracket", NULL);
    } while (1);
    x->b[x->n] = '\0';
    return 0;
}

/* ---- events ---------------------------------------------------------------
 */

typedef struct pname {
    int64_t pid;
    int32_t name;
} pname;

typedef struct reader {
    sb_trace *t;
    src *s;
    pname *pn; /* process names (metadata may come after the events) */
    size_t npn, pncap;
    bool kineto_keys;
} reader;

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
        return (int64_t)1 << 40 | intern(t, json_string_value(v));
    return 0;
}

static int32_t track_of(sb_trace *t, int64_t pid, int64_t tid)
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

static int err_event(reader *r, size_t idx, const char *name, const char *why)
{
    char nm[80];
    sb_err_escape(nm, sizeof nm, name ? name : "?");
    return sb_fail(r->s->err, SB_EINVAL,
                   "%s: event %zu ('%s', ending at byte %llu): %s", r->t->label,
                   idx, nm, r->s->off, why);
}

static int on_meta(reader *r, json_t *e)
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
            pname *p = realloc(r->pn, cap * sizeof *p);
            if (!p)
                return SB_ENOMEM;
            r->pn = p;
            r->pncap = cap;
        }
        int32_t id = intern(t, v);
        if (id < 0)
            return SB_ENOMEM;
        r->pn[r->npn++] = (pname){pid, id};
    } else if (strcmp(name, "thread_name") == 0) {
        int32_t k = track_of(t, pid, id_of(t, json_object_get(e, "tid")));
        int32_t id = intern(t, v);
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
    int32_t id = intern(t, s);
    free(s);
    return id;
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
    ev->track = track_of(t, pid, tid);
    if (ev->name < 0 || ev->track < 0)
        return SB_ENOMEM;
    t->n_by_kind[kind]++;
    t->n++;
    *out = ev;
    return 0;
}

static int on_complete(reader *r, json_t *e, size_t idx)
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
        ev->sig =
            intern(t, json_string_value(json_object_get(args, "long_name")));
    } else if (json_is_string(json_object_get(args, "hlo_op"))) {
        ev->sig = intern(t, json_string_value(json_object_get(args, "hlo_op")));
    }
    const char *coll =
        json_string_value(json_object_get(args, "Collective name"));
    if (coll) {
        ev->coll = intern(t, coll);
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
            ev->sig = intern(t, dt);
    } else if (k == SB_TK_MEMCPY || k == SB_TK_MEMSET) {
        ev->aux = num_arg(args, "bytes");
        if (!size_ok(ev->aux))
            return err_event(r, idx, name, "'bytes' is not a size (0 to 1e15)");
    }
    t->n_by_kind[k]++;
    return 0;
}

static int on_event(reader *r, json_t *e, size_t idx)
{
    if (!json_is_object(e))
        return sb_fail(r->s->err, SB_EINVAL,
                       "%s: event %zu (ending at byte %llu): not a JSON "
                       "object",
                       r->t->label, idx, r->s->off);
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

static void on_top(reader *r, const char *key, json_t *v)
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

static int events_array(reader *r, text *x)
{
    src *s = r->s;
    if (skip_ws(s) == ']') {
        src_get(s);
        return 0;
    }
    for (;;) {
        if (cut_value(s, x))
            return SB_EINVAL;
        json_error_t je;
        json_t *e = json_loadb(x->b, x->n, JSON_DECODE_ANY, &je);
        size_t idx = r->t->n_total++;
        if (!e)
            return sb_fail(s->err, SB_EINVAL,
                           "%s: event %zu (ending at byte %llu): not valid "
                           "JSON: %s",
                           r->t->label, idx, s->off, je.text);
        int rc = on_event(r, e, idx);
        json_decref(e);
        if (rc == SB_ENOMEM)
            return sb_fail(s->err, SB_ENOMEM, "%s: out of memory at event %zu",
                           r->t->label, idx);
        if (rc)
            return rc;
        int c = skip_ws(s);
        src_get(s);
        if (c == ']')
            return 0;
        if (c != ',')
            return c < 0 ? src_fail(s,
                                    "the file ends inside traceEvents (is "
                                    "it cut short?)",
                                    NULL)
                         : src_fail(s, "expected ',' or ']' after an event",
                                    NULL);
    }
}

static int read_key(src *s, char *key, size_t len)
{
    size_t n = 0;
    bool esc = false;
    for (;;) {
        int c = src_get(s);
        if (c < 0)
            return src_fail(s, "the file ends inside a key", NULL);
        if (!esc && c == '"')
            break;
        esc = !esc && c == '\\';
        if (n + 1 < len)
            key[n++] = (char)c;
    }
    key[n] = '\0';
    return 0;
}

static int parse_top(reader *r)
{
    src *s = r->s;
    text x = {0};
    int rc = 0;
    int c = skip_ws(s);
    if (c == '[') {
        src_get(s);
        rc = events_array(r, &x);
        goto out;
    }
    if (c != '{') {
        rc = c < 0 ? src_fail(s, "empty file: not a trace", NULL)
                   : src_fail(s,
                              "not a Chrome trace (JSON object with "
                              "traceEvents, or an array of events)",
                              NULL);
        goto out;
    }
    src_get(s);
    bool have_events = false;
    for (;;) {
        c = skip_ws(s);
        src_get(s);
        if (c == '}')
            break;
        if (c != '"') {
            rc = src_fail(s,
                          c < 0 ? "the file ends inside the top-level "
                                  "object (is it cut short?)"
                                : "expected a key in the top-level object",
                          NULL);
            goto out;
        }
        char key[128];
        if ((rc = read_key(s, key, sizeof key)))
            goto out;
        if (skip_ws(s) != ':') {
            rc = src_fail(s, "expected ':' after a key", NULL);
            goto out;
        }
        src_get(s);
        if (strcmp(key, "traceEvents") == 0) {
            if (have_events) {
                rc = src_fail(s,
                              "traceEvents given twice (which one is the "
                              "trace?)",
                              NULL);
                goto out;
            }
            if (skip_ws(s) != '[') {
                rc = src_fail(s, "traceEvents is not an array", NULL);
                goto out;
            }
            src_get(s);
            if ((rc = events_array(r, &x)))
                goto out;
            have_events = true;
        } else {
            if ((rc = cut_value(s, &x)))
                goto out;
            json_error_t je;
            json_t *v = json_loadb(x.b, x.n, JSON_DECODE_ANY, &je);
            if (!v) {
                rc = sb_fail(s->err, SB_EINVAL,
                             "%s: byte %llu: the value of '%s' is not valid "
                             "JSON: %s",
                             r->t->label, s->off, key, je.text);
                goto out;
            }
            on_top(r, key, v);
            json_decref(v);
        }
        c = skip_ws(s);
        src_get(s);
        if (c == '}')
            break;
        if (c != ',') {
            rc = src_fail(s,
                          c < 0 ? "the file ends inside the top-level "
                                  "object (is it cut short?)"
                                : "expected ',' or '}' in the top-level "
                                  "object",
                          NULL);
            goto out;
        }
    }
    if (!have_events)
        rc = sb_fail(s->err, SB_EINVAL,
                     "%s: no traceEvents: not a Chrome trace", r->t->label);
out:
    free(x.b);
    if (!rc && !s->failed) {
        c = skip_ws(s);
        if (c >= 0)
            rc = src_fail(s, "data after the end of the trace", NULL);
    }
    if (!rc && s->failed)
        rc = SB_EINVAL;
    return rc;
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

/* Format, process names and device tracks, once everything is read. */
static void finish(reader *r)
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

static int run_reader(sb_trace *t, src *s)
{
    reader r = {.t = t, .s = s};
    int rc = parse_top(&r);
    if (!rc)
        finish(&r);
    free(r.pn);
    return rc;
}

static const char sqlite_magic[16] = "SQLite format 3";

static int read_sqlite(sqlite3 *db, const char *label, sb_trace *t, sb_err *err)
{
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", label);
    int rc = sb_trace_read_nsys_db(db, label, t, err);
    if (!rc)
        sb_trace_mark_devices(t);
    else
        sb_trace_free(t);
    return rc;
}

/* An SQLite file held in memory (sqlite3_malloc'ed; SQLite frees it,
 * whatever happens). */
static int read_sqlite_bytes(unsigned char *db_bytes, size_t db_len,
                             const char *label, sb_trace *t, sb_err *err)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(":memory:", &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY,
                        NULL) != SQLITE_OK) {
        sqlite3_free(db_bytes); /* not handed to SQLite */
        sqlite3_close(db);
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", label);
    }
    if (sqlite3_deserialize(db, "main", db_bytes, (sqlite3_int64)db_len,
                            (sqlite3_int64)db_len,
                            SQLITE_DESERIALIZE_FREEONCLOSE |
                                SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
        sqlite3_close(db);
        return sb_fail(err, SB_EINVAL, "%s: cannot be read as SQLite", label);
    }
    int rc = read_sqlite(db, label, t, err);
    sqlite3_close(db);
    return rc;
}

/* A gzip'd file unpacked into memory, for an SQLite file (at most 4 GiB):
 * *out is sqlite3_malloc'ed. */
static int gz_slurp(gzFile gz, const char *path, unsigned char **out,
                    size_t *olen, sb_err *err)
{
    size_t cap = 1u << 20, n = 0;
    unsigned char *o = sqlite3_malloc64(cap);
    if (!o)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
    for (;;) {
        if (n == cap) {
            if (cap >= (1ull << 32)) {
                sqlite3_free(o);
                return sb_fail(err, SB_EINVAL, "%s: over 4 GiB unpacked", path);
            }
            unsigned char *p = sqlite3_realloc64(o, cap * 2);
            if (!p) {
                sqlite3_free(o);
                return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
            }
            o = p;
            cap *= 2;
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int got = gzread(gz, o + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *m = gzerror(gz, &zerr);
            sqlite3_free(o);
            return sb_fail(err, SB_EINVAL, "%s: the gzip data is corrupt: %s",
                           path, m);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *out = o;
    *olen = n;
    return 0;
}

int sb_trace_read(const char *path, sb_trace *t, sb_err *err)
{
    int fd;
    int rc = sb_file_open(path, O_RDONLY, &fd, err);
    if (rc)
        return rc;
    /* an SQLite file: Nsight Systems' export */
    char head[16] = {0};
    ssize_t hn = read(fd, head, sizeof head);
    if (hn == (ssize_t)sizeof head && memcmp(head, sqlite_magic, 16) == 0) {
        close(fd);
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
            SQLITE_OK) {
            rc = sb_fail(err, SB_EINVAL, "%s: cannot be opened as SQLite: %s",
                         path, db ? sqlite3_errmsg(db) : "out of memory");
            sqlite3_close(db);
            return rc;
        }
        rc = read_sqlite(db, path, t, err);
        sqlite3_close(db);
        return rc;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return sb_fail(err, SB_EINVAL,
                       "%s: cannot be read again from its "
                       "start",
                       path);
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        return sb_fail(err, SB_ENOMEM, "%s: cannot be read (zlib)", path);
    }
    gzbuffer(gz, 256u << 10);
    if (hn >= 2 && (unsigned char)head[0] == 0x1f &&
        (unsigned char)head[1] == 0x8b) {
        /* gzip'd: an Nsight Systems export stored packed is SQLite */
        unsigned char zh[16];
        int zn = gzread(gz, zh, sizeof zh);
        if (zn == (int)sizeof zh && memcmp(zh, sqlite_magic, 16) == 0) {
            unsigned char *db_bytes = NULL;
            size_t db_len = 0;
            if (gzrewind(gz) != 0 ||
                (rc = gz_slurp(gz, path, &db_bytes, &db_len, err)) != 0) {
                gzclose(gz);
                return rc ? rc
                          : sb_fail(err, SB_EINVAL,
                                    "%s: cannot be read again from its start",
                                    path);
            }
            gzclose(gz);
            return read_sqlite_bytes(db_bytes, db_len, path, t, err);
        }
        if (gzrewind(gz) != 0) {
            gzclose(gz);
            return sb_fail(err, SB_EINVAL,
                           "%s: cannot be read again from its start", path);
        }
    }
    src *s = calloc(1, sizeof *s);
    if (!s) {
        gzclose(gz);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    s->gz = gz;
    s->label = path;
    s->err = err;
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", path);
    rc = run_reader(t, s);
    gzclose(gz);
    free(s);
    if (rc)
        sb_trace_free(t);
    return rc;
}

/* The whole of gzip'd data in memory, when it is an SQLite file (a stored
 * Nsight Systems export): *out is sqlite3_malloc'ed. 1: not SQLite; 0:
 * *out set; < 0: an error. */
static int inflate_sqlite(const unsigned char *b, size_t len, const char *label,
                          unsigned char **out, size_t *olen, sb_err *err)
{
    z_stream zs = {0};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return sb_fail(err, SB_ENOMEM, "out of memory (zlib)");
    zs.next_in = (unsigned char *)(uintptr_t)b;
    zs.avail_in = (uInt)(len > 0xffffffffu ? 0xffffffffu : len);
    size_t cap = 1u << 20, n = 0;
    unsigned char *o = sqlite3_malloc64(cap);
    int rc = o ? 0 : SB_ENOMEM;
    while (!rc) {
        if (n == cap) {
            if (cap >= (1ull << 32)) {
                rc = sb_fail(err, SB_EINVAL, "%s: over 4 GiB unpacked", label);
                break;
            }
            unsigned char *p = sqlite3_realloc64(o, cap * 2);
            if (!p) {
                rc = SB_ENOMEM;
                break;
            }
            o = p;
            cap *= 2;
        }
        zs.next_out = o + n;
        zs.avail_out = (uInt)(cap - n);
        int z = inflate(&zs, Z_NO_FLUSH);
        n = cap - zs.avail_out;
        if (n >= 16 && memcmp(o, sqlite_magic, 16) != 0) {
            rc = 1; /* not SQLite: the JSON reader streams it */
            break;
        }
        if (z == Z_STREAM_END)
            break;
        if (z != Z_OK) {
            rc = sb_fail(err, SB_EINVAL, "%s: the gzip data is corrupt", label);
            break;
        }
    }
    inflateEnd(&zs);
    if (rc == SB_ENOMEM)
        rc = sb_fail(err, SB_ENOMEM, "%s: out of memory", label);
    if (rc == 0 && n < 16)
        rc = 1;
    if (rc) {
        sqlite3_free(o);
        return rc;
    }
    *out = o;
    *olen = n;
    return 0;
}

int sb_trace_read_mem(const void *buf, size_t len, const char *label,
                      sb_trace *t, sb_err *err)
{
    const unsigned char *b0 = buf;
    unsigned char *db_bytes = NULL;
    size_t db_len = 0;
    if (len >= 16 && memcmp(b0, sqlite_magic, 16) == 0) {
        db_bytes = sqlite3_malloc64(len);
        if (!db_bytes)
            return sb_fail(err, SB_ENOMEM, "out of memory");
        memcpy(db_bytes, b0, len);
        db_len = len;
    } else if (len >= 2 && b0[0] == 0x1f && b0[1] == 0x8b) {
        int r = inflate_sqlite(b0, len, label, &db_bytes, &db_len, err);
        if (r < 0)
            return r;
    }
    if (db_bytes)
        return read_sqlite_bytes(db_bytes, db_len, label, t, err);
    src *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->mem = buf;
    s->mlen = len;
    s->label = label;
    s->err = err;
    const unsigned char *b = buf;
    if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        s->zmem = true;
        if (inflateInit2(&s->zs, 15 + 16) != Z_OK) {
            free(s);
            return sb_fail(err, SB_ENOMEM, "out of memory (zlib)");
        }
        s->zs.next_in = (unsigned char *)(uintptr_t)buf;
        s->zs.avail_in = (uInt)(len > 0xffffffffu ? 0xffffffffu : len);
    }
    sb_trace_init(t);
    snprintf(t->label, sizeof t->label, "%s", label);
    int rc = run_reader(t, s);
    if (s->zmem)
        inflateEnd(&s->zs);
    free(s);
    if (rc)
        sb_trace_free(t);
    return rc;
}

void sb_trace_default_name(const char *path, char *out, size_t len)
{
    if (!len)
        return;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = 0;
    /* a letter first, then letters, digits, '_', '-' up to the first '.'
     * (the store's name rule), at most 64 */
    if (!isalpha((unsigned char)*b) && len > 2)
        out[n++] = 't';
    for (; *b && *b != '.' && n + 1 < len && n < 64; b++)
        out[n++] =
            (isalnum((unsigned char)*b) || *b == '_' || *b == '-') ? *b : '_';
    out[n] = '\0';
}
