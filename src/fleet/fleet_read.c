/*
 * fleet_read.c — a fleet run's document (solbench.fleet/1) read back: from
 * the store or a file `fleet run --json` wrote, for `fleet show`, which
 * judges it again (its rules, or new ones) and against a baseline fleet.
 * Every size is checked before it is used: a document cannot make it
 * allocate more than its own size says.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/fleet.h"
#include "solbench/output.h"
#include "solbench/util.h"

/* A string member into out (len bytes): 0, or SB_EINVAL naming it. */
static int str_of(const json_t *o, const char *key, bool required, char *out,
                  size_t len, const char *at, sb_err *err)
{
    const json_t *x = json_object_get(o, key);
    out[0] = 0;
    if (!x && !required)
        return 0;
    if (!json_is_string(x))
        return sb_fail(err, SB_EINVAL, "%s.%s: %s", at, key,
                       x ? "not a string" : "missing");
    if (json_string_length(x) >= len)
        return sb_fail(err, SB_EINVAL, "%s.%s: longer than %zu characters", at,
                       key, len - 1);
    memcpy(out, json_string_value(x), json_string_length(x) + 1);
    return 0;
}

/* One N x N matrix of numbers or nulls (NaN) into *m (malloc'ed). */
static int matrix_of(const json_t *a, int n, const char *at, double **m,
                     sb_err *err)
{
    if (!json_is_array(a) || json_array_size(a) != (size_t)n)
        return sb_fail(err, SB_EINVAL, "%s: not %d rows", at, n);
    /* every row's length first: the matrix is allocated for what the
     * document holds, not for what it says */
    for (int i = 0; i < n; i++) {
        const json_t *row = json_array_get(a, i);
        if (!json_is_array(row) || json_array_size(row) != (size_t)n)
            return sb_fail(err, SB_EINVAL, "%s[%d]: not %d columns", at, i, n);
    }
    *m = malloc((size_t)n * n * sizeof **m);
    if (!*m)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", at);
    for (int i = 0; i < n; i++) {
        const json_t *row = json_array_get(a, i);
        if (!json_is_array(row) || json_array_size(row) != (size_t)n)
            return sb_fail(err, SB_EINVAL, "%s[%d]: not %d columns", at, i, n);
        for (int j = 0; j < n; j++) {
            const json_t *x = json_array_get(row, j);
            if (!json_is_null(x) && !json_is_number(x))
                return sb_fail(err, SB_EINVAL, "%s[%d][%d]: not a number", at,
                               i, j);
            (*m)[(size_t)i * n + j] =
                json_is_null(x) ? NAN : json_number_value(x);
        }
    }
    return 0;
}

static int read_rules(const json_t *d, sb_fleet_rules *r, sb_err *err)
{
    sb_fleet_rules_default(r);
    const json_t *o = json_object_get(d, "rules");
    if (!o)
        return 0;
    struct {
        const char *key;
        double *v;
        double lo, hi;
    } f[] = {{"floor_pct", &r->floor_pct, 0, 1000},
             {"latency_floor_pct", &r->latency_floor_pct, 0, 1000},
             {"k_mad", &r->k_mad, 0, 100}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const json_t *x = json_object_get(o, f[i].key);
        if (!x)
            continue;
        double v = json_number_value(x);
        if (!json_is_number(x) || !(v >= f[i].lo && v <= f[i].hi))
            return sb_fail(err, SB_EINVAL,
                           "$.rules.%s: not a number in "
                           "[%g, %g]",
                           f[i].key, f[i].lo, f[i].hi);
        *f[i].v = v;
    }
    const json_t *x = json_object_get(o, "min_peers");
    if (x) {
        json_int_t v = json_integer_value(x);
        if (!json_is_integer(x) || v < 2 || v > SB_FLEET_MAX_HOSTS)
            return sb_fail(err, SB_EINVAL,
                           "$.rules.min_peers: not an integer in [2, %d]",
                           SB_FLEET_MAX_HOSTS);
        r->min_peers = (int)v;
    }
    return 0;
}

/* lowset: the lower-is-better figures' names as an object's keys */
static int read_hosts(const json_t *d, const json_t *lowset, sb_fleet_report *r,
                      sb_err *err)
{
    const json_t *hs = json_object_get(d, "hosts");
    size_t n = json_array_size(hs);
    if (!json_is_array(hs) || n == 0 || n > SB_FLEET_MAX_HOSTS)
        return sb_fail(err, SB_EINVAL, "$.hosts: not an array of 1 to %d hosts",
                       SB_FLEET_MAX_HOSTS);
    r->nhosts = (int)n;
    r->hosts = calloc(n, sizeof *r->hosts);
    r->run_ids = calloc(n, sizeof *r->run_ids);
    if (!r->hosts || !r->run_ids)
        return sb_fail(err, SB_ENOMEM, "$.hosts: out of memory");
    size_t cap = 0;
    for (size_t h = 0; h < n; h++) {
        const json_t *o = json_array_get(hs, h);
        char at[48];
        snprintf(at, sizeof at, "$.hosts[%zu]", h);
        sb_fleet_host *x = &r->hosts[h];
        int rc;
        if (!json_is_object(o))
            return sb_fail(err, SB_EINVAL, "%s: not an object", at);
        if ((rc = str_of(o, "host", true, x->name, sizeof x->name, at, err)) ||
            (rc = str_of(o, "class", true, x->cls, sizeof x->cls, at, err)) ||
            (rc = str_of(o, "why", false, x->why, sizeof x->why, at, err)) ||
            (rc = str_of(o, "run", false, r->run_ids[h], sizeof r->run_ids[h],
                         at, err)))
            return rc;
        const json_t *k = json_object_get(o, "ranks");
        json_int_t ranks = json_integer_value(k);
        if (!json_is_integer(k) || ranks < 1 || ranks > 1 << 20)
            return sb_fail(err, SB_EINVAL, "%s.ranks: not a count of ranks",
                           at);
        x->ranks = (int)ranks;
        x->failed = json_is_true(json_object_get(o, "failed"));
        const json_t *m = json_object_get(o, "metrics");
        if (!json_is_object(m))
            return sb_fail(err, SB_EINVAL, "%s.metrics: not an object", at);
        const char *key;
        const json_t *val;
        json_object_foreach((json_t *)m, key, val)
        {
            if (json_is_null(val))
                continue;
            if (!json_is_number(val))
                return sb_fail(err, SB_EINVAL, "%s.metrics.%.80s: not a number",
                               at, key);
            if (strlen(key) >= SB_FLEET_METRIC)
                return sb_fail(err, SB_EINVAL,
                               "%s.metrics: a name longer than %d characters",
                               at, SB_FLEET_METRIC - 1);
            if (r->nv == cap) {
                size_t nc = cap ? 2 * cap : 64;
                sb_fleet_value *t = realloc(r->v, nc * sizeof *t);
                if (!t)
                    return sb_fail(err, SB_ENOMEM, "%s: out of memory", at);
                r->v = t;
                cap = nc;
            }
            sb_fleet_value *v = &r->v[r->nv++];
            memset(v, 0, sizeof *v);
            v->host = (int)h;
            memcpy(v->metric, key, strlen(key) + 1);
            v->value = json_number_value(val);
            v->higher_better = !json_object_get(lowset, key);
        }
    }
    return 0;
}

static int read_links(const json_t *d, sb_fleet_report *r, sb_err *err)
{
    const json_t *m = json_object_get(d, "link_matrix");
    if (!m)
        return 0;
    int n = r->nhosts, rc;
    const json_t *names = json_object_get(m, "hosts");
    if (!json_is_array(names) || json_array_size(names) != (size_t)n)
        return sb_fail(err, SB_EINVAL, "$.link_matrix.hosts: not the %d hosts",
                       n);
    for (int h = 0; h < n; h++) {
        const char *s = json_string_value(json_array_get(names, h));
        if (!s || strcmp(s, r->hosts[h].name) != 0)
            return sb_fail(err, SB_EINVAL,
                           "$.link_matrix.hosts[%d]: not $.hosts[%d].host", h,
                           h);
    }
    if ((rc = matrix_of(json_object_get(m, "bw_Bps"), n, "$.link_matrix.bw_Bps",
                        &r->bw, err)))
        return rc;
    if (json_object_get(m, "bibw_Bps") &&
        (rc = matrix_of(json_object_get(m, "bibw_Bps"), n,
                        "$.link_matrix.bibw_Bps", &r->bibw, err)))
        return rc;
    if (json_object_get(m, "latency_s") &&
        (rc = matrix_of(json_object_get(m, "latency_s"), n,
                        "$.link_matrix.latency_s", &r->lat, err)))
        return rc;
    return 0;
}

static int read_colls(const json_t *d, sb_fleet_report *r, sb_err *err)
{
    const json_t *a = json_object_get(d, "collectives");
    if (!a)
        return 0;
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n > 4096)
        return sb_fail(err, SB_EINVAL,
                       "$.collectives: not an array of at most 4096");
    if (n == 0)
        return 0;
    r->coll = calloc(n, sizeof *r->coll);
    if (!r->coll)
        return sb_fail(err, SB_ENOMEM, "$.collectives: out of memory");
    for (size_t k = 0; k < n; k++) {
        const json_t *o = json_array_get(a, k);
        sb_fleet_coll *c = &r->coll[k];
        char at[48];
        snprintf(at, sizeof at, "$.collectives[%zu]", k);
        int rc;
        if (!json_is_object(o))
            return sb_fail(err, SB_EINVAL, "%s: not an object", at);
        if ((rc = str_of(o, "level", true, c->level, sizeof c->level, at,
                         err)) ||
            (rc = str_of(o, "op", true, c->op, sizeof c->op, at, err)))
            return rc;
        const json_t *b = json_object_get(o, "bytes"),
                     *t = json_object_get(o, "seconds"),
                     *p = json_object_get(o, "predicted_s"),
                     *q = json_object_get(o, "ranks");
        if (!json_is_number(b) || !json_is_number(t) || !json_is_integer(q) ||
            (p && !json_is_null(p) && !json_is_number(p)))
            return sb_fail(err, SB_EINVAL,
                           "%s: bytes, seconds and ranks are numbers, "
                           "predicted_s a number or null",
                           at);
        c->valid = !json_is_false(json_object_get(o, "valid"));
        json_int_t ph = json_integer_value(json_object_get(o, "per_host"));
        c->per_host = ph > 0 && ph < 1 << 20 ? (int)ph : 0;
        c->bytes = json_number_value(b);
        c->seconds = json_number_value(t);
        c->predicted_s = p ? json_number_value(p) : 0;
        json_int_t ranks = json_integer_value(q);
        c->ranks = ranks > 0 && ranks < 1 << 24 ? (int)ranks : 0;
        r->ncoll++;
    }
    return 0;
}

int sb_fleet_from_json(const json_t *d, sb_fleet_report *r, sb_err *err)
{
    memset(r, 0, sizeof *r);
    const char *schema = json_string_value(json_object_get(d, "schema"));
    if (!json_is_object(d) || !schema ||
        strcmp(schema, "solbench.fleet/1") != 0)
        return sb_fail(err, SB_EINVAL,
                       "$.schema: not a fleet run's document "
                       "(solbench.fleet/1)");
    int rc;
    const char *at = "$";
    const json_t *lower = json_object_get(d, "lower_better");
    if (lower && !json_is_array(lower))
        return sb_fail(err, SB_EINVAL, "$.lower_better: not an array");
    /* as a set: a name looked up, not the list scanned for each value */
    json_t *lowset = json_object();
    size_t li;
    const json_t *l;
    json_array_foreach(lower, li, l) if (json_is_string(l))
        json_object_set_new(lowset, json_string_value(l), json_true());
    if ((rc = str_of(d, "fleet", true, r->id, sizeof r->id, at, err)) ||
        (rc = str_of(d, "started_at", false, r->started_at,
                     sizeof r->started_at, at, err)) ||
        (rc = str_of(d, "launcher", false, r->launcher, sizeof r->launcher, at,
                     err)) ||
        (rc = read_rules(d, &r->rules, err)) ||
        (rc = read_hosts(d, lowset, r, err)) || (rc = read_links(d, r, err)) ||
        (rc = read_colls(d, r, err))) {
        json_decref(lowset);
        sb_fleet_report_free(r);
        return rc;
    }
    json_decref(lowset);
    /* the figures per level are worked out again from the matrix and
     * the collectives (sb_fleet_predict_colls), not read */
    json_int_t x = json_integer_value(json_object_get(d, "ranks"));
    r->nranks = x > 0 && x < 1 << 24 ? (int)x : r->nhosts;
    x = json_integer_value(json_object_get(d, "rounds"));
    r->rounds = x > 0 && x < 1 << 20 ? (int)x : 1;
    sb_fleet_predict_colls(r);
    return 0;
}

int sb_fleet_read_text(const char *text, const char *where, sb_fleet_report *r,
                       sb_err *err)
{
    json_error_t je;
    json_t *d = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    memset(r, 0, sizeof *r);
    if (!d)
        return sb_fail(err, SB_EINVAL, "%s:%d:%d: %s", where, je.line,
                       je.column, je.text);
    sb_err inner = {0};
    int rc = sb_fleet_from_json(d, r, &inner);
    json_decref(d);
    if (rc)
        return sb_fail(err, rc, "%s: %s", where, inner.msg);
    return 0;
}

int sb_fleet_read_file(const char *path, sb_fleet_report *r, sb_err *err)
{
    FILE *f;
    struct stat st;
    memset(r, 0, sizeof *r);
    int rc = sb_file_fopen(path, "r", &f, err);
    if (rc)
        return rc;
    if (fstat(fileno(f), &st) == 0 && st.st_size > SB_RUN_MAX_DOC_BYTES) {
        fclose(f);
        return sb_fail(err, SB_EINVAL,
                       "%s: %.1f MiB, more than the %ld MiB a fleet "
                       "document may have",
                       path, (double)st.st_size / 1048576.0,
                       SB_RUN_MAX_DOC_BYTES >> 20);
    }
    json_error_t je;
    json_t *d = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!d)
        return sb_fail(err, SB_EINVAL, "%s:%d:%d: %s", path, je.line, je.column,
                       je.text);
    sb_err inner = {0};
    rc = sb_fleet_from_json(d, r, &inner);
    json_decref(d);
    if (rc)
        return sb_fail(err, rc, "%s: %s", path, inner.msg);
    return 0;
}

int sb_fleet_compare_baseline(sb_fleet_report *r, const sb_fleet_report *base,
                              sb_err *err)
{
    snprintf(r->baseline, sizeof r->baseline, "%s", base->id);
    return sb_fleet_diagnose_baseline(
        r->hosts, r->nhosts, r->v, r->nv, base->hosts, base->nhosts, base->v,
        base->nv, &r->rules, &r->flags, &r->nflags, err);
}
