/*
 * trace_nsys.c — Nsight Systems' SQLite export (`nsys export --type
 * sqlite`) as a trace: kernels, memcpy and memset (CUPTI_ACTIVITY_KIND_*),
 * the runtime calls that launched them, NVTX ranges (PyTorch's
 * emit_nvtx(record_shapes=True) writes "aten::addmm, seq = 5, op_id = 9,
 * sizes = [[4096], [8, 1024], [1024, 4096], [], []]"; other ranges are
 * annotations, "ProfilerStep#N" a step) and the GPU's name. Times are ns.
 * A kernel is joined to the innermost operator range around the runtime
 * call that launched it (same thread), as Kineto's External id does.
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_int.h"

/* Tables whose absence is not an error: an export has the ones its
 * capture had. */
static bool has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' "
                           "AND name = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    bool ok = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_finalize(s);
    return ok;
}

typedef struct nsrc {
    sqlite3 *db;
    sb_trace *t;
    const char *label;
    sb_err *err;
} nsrc;

static int fail_db(nsrc *n, const char *what)
{
    return sb_fail(n->err, SB_EINVAL, "%s: Nsight Systems export: %s: %s",
                   n->label, what, sqlite3_errmsg(n->db));
}

static int add(nsrc *n, sqlite3_stmt *s, sb_tr_kind kind, int64_t pid,
               int64_t tid, const char *name, sb_tr_event **e)
{
    double a = (double)sqlite3_column_int64(s, 0),
           b = (double)sqlite3_column_int64(s, 1);
    n->t->n_total++;
    if (sqlite3_column_type(s, 1) == SQLITE_NULL || b < a)
        return 1; /* a range never closed: skipped */
    if (a < 0 || a > 1e21 || b - a > 3.2e16)
        return sb_fail(n->err, SB_EINVAL,
                       "%s: Nsight Systems export: an event from %.0f to "
                       "%.0f ns: not a time",
                       n->label, a, b);
    int rc = sb_trace_push(n->t, a / 1e3, (b - a) / 1e3, pid, tid,
                           name ? name : "?", kind, e);
    if (rc)
        return sb_fail(n->err, rc, "%s: %s", n->label,
                       rc == SB_ENOMEM ? "out of memory" : "too many events");
    return 0;
}

static const char *memcpy_name(int kind)
{
    switch (kind) {
    case 1:
        return "Memcpy HtoD";
    case 2:
        return "Memcpy DtoH";
    case 8:
        return "Memcpy DtoD";
    case 9:
        return "Memcpy HtoH";
    case 10:
        return "Memcpy PtoP";
    default:
        return "Memcpy";
    }
}

/* Runs `q` and hands each row to `fn` (0: go on; < 0: stop with that
 * error); `what` names the table in an error. */
typedef int (*row_fn)(nsrc *n, sqlite3_stmt *s);

static int each_row(nsrc *n, const char *q, const char *what, row_fn fn)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(n->db, q, -1, &s, NULL) != SQLITE_OK)
        return fail_db(n, what);
    int rc = 0, step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW && (rc = fn(n, s)) >= 0)
        ;
    if (rc >= 0 && step != SQLITE_DONE)
        rc = fail_db(n, what);
    sqlite3_finalize(s);
    return rc < 0 ? rc : 0;
}

/* A device activity: columns start, end, deviceId, streamId,
 * correlationId (then its own). An NCCL kernel's collective comes from
 * its name when the devices are marked (sb_trace_mark_devices). */
static int device_row(nsrc *n, sqlite3_stmt *s, sb_tr_kind kind,
                      const char *name, sb_tr_event **e)
{
    int rc = add(n, s, kind, (int64_t)1 << 41 | sqlite3_column_int64(s, 2),
                 sqlite3_column_int64(s, 3), name, e);
    if (rc == 0)
        (*e)->corr = sqlite3_column_int64(s, 4);
    return rc;
}

static int kernel_row(nsrc *n, sqlite3_stmt *s)
{
    sb_tr_event *e;
    int rc = device_row(n, s, SB_TK_KERNEL,
                        (const char *)sqlite3_column_text(s, 5), &e);
    return rc < 0 ? rc : 0;
}

static int copy_row(nsrc *n, sqlite3_stmt *s, bool memset)
{
    sb_tr_event *e;
    int rc = device_row(
        n, s, memset ? SB_TK_MEMSET : SB_TK_MEMCPY,
        memset ? "Memset" : memcpy_name(sqlite3_column_int(s, 6)), &e);
    if (rc == 0) {
        double by = sqlite3_column_double(s, 5);
        if (!isfinite(by) || by < 0 || by > 1e15)
            return sb_fail(n->err, SB_EINVAL,
                           "%s: Nsight Systems export: a copy or set of %g "
                           "bytes: not a size (0 to 1e15)",
                           n->label, by);
        e->aux = by;
    }
    return rc < 0 ? rc : 0;
}

static int memcpy_row(nsrc *n, sqlite3_stmt *s)
{
    return copy_row(n, s, false);
}

static int memset_row(nsrc *n, sqlite3_stmt *s)
{
    return copy_row(n, s, true);
}

static int runtime_row(nsrc *n, sqlite3_stmt *s)
{
    sb_tr_event *e;
    int64_t tid = sqlite3_column_int64(s, 2);
    int rc = add(n, s, SB_TK_RUNTIME, tid >> 24, tid,
                 (const char *)sqlite3_column_text(s, 4), &e);
    if (rc == 0)
        e->corr = sqlite3_column_int64(s, 3);
    return rc < 0 ? rc : 0;
}

/* "aten::addmm, seq = 5, op_id = 9, sizes = [[4096], [8, 1024], []]":
 * the operator's name (*len) and its sizes' text (*sizes); false when
 * the text is another range. */
static bool torch_range(const char *x, size_t *len, const char **sizes)
{
    const char *c = strstr(x, ", ");
    const char *ns = strstr(x, "::");
    if (!c || !ns || ns > c)
        return false;
    *len = (size_t)(c - x);
    const char *sz = strstr(c, "sizes = [");
    *sizes = sz ? sz + 8 : NULL;
    return true;
}

/* The length of the bracketed list at s ("[[4096], [8, 1024]]" and not
 * what follows it: ", input_op_ids = [...]"); 0 when it does not close. */
static size_t list_len(const char *s)
{
    int d = 0;
    for (size_t i = 0; s[i]; i++) {
        d += s[i] == '[';
        d -= s[i] == ']';
        if (d == 0)
            return i + 1;
    }
    return 0;
}

static int nvtx_row(nsrc *n, sqlite3_stmt *s)
{
    char name[256];
    int rc;
    const char *x = (const char *)sqlite3_column_text(s, 3);
    if (!x)
        x = "?";
    size_t len;
    const char *sizes = NULL;
    bool op = torch_range(x, &len, &sizes);
    if (!op) /* emit_nvtx's record_function ranges: "mlp, op_id = 22" */
        len = strcspn(x, ",");
    snprintf(name, sizeof name, "%.*s", (int)len, x);
    sb_utf8_trim(name);
    int64_t tid = sqlite3_column_int64(s, 2);
    sb_tr_event *e;
    if ((rc = add(n, s, op ? SB_TK_CPU_OP : SB_TK_ANNOT, tid >> 24, tid, name,
                  &e)) < 0)
        return rc;
    if (rc)
        return 0;
    if (!op && strncmp(name, "ProfilerStep#", 13) == 0)
        e->flags |= SB_TEF_STEP;
    if (op && sizes && list_len(sizes)) {
        /* [sizes] is the signature's dims; no types are recorded */
        size_t sl = list_len(sizes);
        char *sig = malloc(sl + 3);
        if (!sig)
            return sb_fail(n->err, SB_ENOMEM, "out of memory");
        sig[0] = '[';
        memcpy(sig + 1, sizes, sl);
        sig[sl + 1] = ']';
        sig[sl + 2] = '\0';
        e->sig = sb_trace_intern(n->t, sig);
        free(sig);
    }
    return 0;
}

static int cmp_op(const void *pa, const void *pb, void *arg)
{
    const sb_tr_event *ev = arg;
    const sb_tr_event *a = &ev[*(const size_t *)pa],
                      *b = &ev[*(const size_t *)pb];
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* Each runtime call gets the External id of the innermost operator range
 * around it on its thread (an operator's id: its index + 1). */
static int link(sb_trace *t)
{
    size_t nop = 0;
    for (size_t i = 0; i < t->n; i++)
        nop += t->ev[i].kind == SB_TK_CPU_OP;
    size_t *op = malloc((nop ? nop : 1) * sizeof *op);
    if (!op)
        return SB_ENOMEM;
    nop = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].kind == SB_TK_CPU_OP) {
            op[nop++] = i;
            t->ev[i].ext = (int64_t)i + 1;
        }
    qsort_r(op, nop, sizeof *op, cmp_op, t->ev);
    for (size_t i = 0; i < t->n; i++) {
        sb_tr_event *r = &t->ev[i];
        if (r->kind != SB_TK_RUNTIME)
            continue;
        size_t lo = 0, hi = nop;
        while (lo < hi) { /* the first op after (track, ts) */
            size_t mid = (lo + hi) / 2;
            const sb_tr_event *o = &t->ev[op[mid]];
            if (o->track < r->track || (o->track == r->track && o->ts <= r->ts))
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo, m = 0; k-- > 0 && m < 256; m++) {
            const sb_tr_event *o = &t->ev[op[k]];
            if (o->track != r->track)
                break;
            if (o->ts + o->dur >= r->ts) {
                r->ext = o->ext;
                break;
            }
        }
    }
    free(op);
    return 0;
}

int sb_trace_read_nsys_db(sqlite3 *db, const char *label, sb_trace *t,
                          sb_err *err)
{
    nsrc n = {db, t, label, err};
    if (!has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL") &&
        !has_table(db, "NVTX_EVENTS"))
        return sb_fail(err, SB_EINVAL,
                       "%s: an SQLite file, but not an Nsight Systems "
                       "export (no CUPTI_ACTIVITY_KIND_KERNEL or NVTX_EVENTS "
                       "table)",
                       label);
    if (!has_table(db, "StringIds"))
        return sb_fail(err, SB_EINVAL,
                       "%s: Nsight Systems export without its StringIds "
                       "table",
                       label);
    int rc = 0;
    /* the tables an export has, each read by one row reader; times ns */
    static const struct {
        const char *table, *query;
        row_fn fn;
    } tab[] = {
        {"CUPTI_ACTIVITY_KIND_KERNEL",
         /* demangledName where the export has it, shortName else */
         "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, "
         "COALESCE(d.value, sn.value) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
         "LEFT JOIN StringIds d ON d.id = k.demangledName "
         "LEFT JOIN StringIds sn ON sn.id = k.shortName",
         kernel_row},
        {"CUPTI_ACTIVITY_KIND_MEMCPY",
         "SELECT start, end, deviceId, streamId, correlationId, bytes, "
         "copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY",
         memcpy_row},
        {"CUPTI_ACTIVITY_KIND_MEMSET",
         "SELECT start, end, deviceId, streamId, correlationId, bytes, 0 "
         "FROM CUPTI_ACTIVITY_KIND_MEMSET",
         memset_row},
        {"CUPTI_ACTIVITY_KIND_RUNTIME",
         "SELECT r.start, r.end, r.globalTid, r.correlationId, v.value FROM "
         "CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds v ON "
         "v.id = r.nameId",
         runtime_row},
        {"NVTX_EVENTS",
         /* push/pop (59) and start/end (60) ranges */
         "SELECT e.start, e.end, e.globalTid, COALESCE(e.text, v.value) "
         "FROM NVTX_EVENTS e LEFT JOIN StringIds v ON v.id = e.textId "
         "WHERE e.eventType IN (59, 60)",
         nvtx_row}};
    for (size_t i = 0; !rc && i < sizeof tab / sizeof tab[0]; i++)
        if (has_table(db, tab[i].table))
            rc = each_row(&n, tab[i].query, tab[i].table, tab[i].fn);
    if (!rc && link(t))
        rc = sb_fail(err, SB_ENOMEM, "%s: out of memory", label);
    if (!rc && has_table(db, "TARGET_INFO_GPU")) {
        sqlite3_stmt *s;
        if (sqlite3_prepare_v2(db, "SELECT name FROM TARGET_INFO_GPU LIMIT 1",
                               -1, &s, NULL) == SQLITE_OK) {
            if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
                snprintf(t->device_name, sizeof t->device_name, "%s",
                         (const char *)sqlite3_column_text(s, 0));
            sqlite3_finalize(s);
        }
    }
    t->format = SB_TR_NSYS;
    return rc;
}
