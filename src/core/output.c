/*
 * output.c — the run document (schema "solbench.run/1") in JSON and CSV,
 * and the human tables printed after a run.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/output.h"
#include "solbench/stability.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* ---- the run ------------------------------------------------------------- */

void sb_run_init(sb_run *run)
{
    memset(run, 0, sizeof *run);
    run->system = json_object();
    run->config = json_object();
    run->tags = json_object();
}

void sb_run_free(sb_run *run)
{
    json_decref(run->system);
    json_decref(run->config);
    json_decref(run->tags);
    sb_results_free(&run->results);
    memset(run, 0, sizeof *run);
}

void sb_utc_now(char *out, int len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, (size_t)len, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

void sb_run_new_id(char *out, int len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y%m%dT%H%M%SZ", &tm);
    uint64_t seed =
        (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ sb_now_ns();
    snprintf(out, (size_t)len, "%s-%06llx", base,
             (unsigned long long)(sb_rng_next(&seed) & 0xffffff));
}

/* ---- results to JSON ----------------------------------------------------- */

/* JSON has no NaN or infinity: those become null. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *params_to_json(const sb_params *p)
{
    json_t *o = json_object();
    for (int i = 0; i < p->n; i++) {
        const sb_pval *v = &p->v[i];
        json_t *j;
        switch (v->type) {
        case SB_P_INT:
        case SB_P_SIZE:
            /* a double holds every integer up to 2^53 exactly; beyond, the
             * cast to a 64-bit integer may overflow (undefined), so such a
             * value is written as the number it is */
            j = fabs(v->num) <= 9007199254740992.0
                    ? json_integer((json_int_t)v->num)
                    : num(v->num);
            break;
        case SB_P_FLOAT:
            j = num(v->num);
            break;
        case SB_P_BOOL:
            j = json_boolean(v->num != 0.0);
            break;
        default:
            j = json_string(v->text);
            break;
        }
        json_object_set_new(o, v->name, j);
    }
    return o;
}

json_t *sb_result_to_json(const sb_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "bench", json_string(r->bench));
    json_object_set_new(o, "area", json_string(r->area));
    json_object_set_new(o, "backend", json_string(r->backend));
    json_object_set_new(o, "params", params_to_json(&r->params));
    json_t *s = json_array();
    for (size_t i = 0; i < r->n_samples; i++)
        json_array_append_new(s, num(r->samples_s[i]));
    json_object_set_new(o, "samples_s", s);
    json_t *st = json_object();
    json_object_set_new(st, "n", json_integer((json_int_t)r->stats.n));
    json_object_set_new(st, "min", num(r->stats.min));
    json_object_set_new(st, "p10", num(r->stats.p10));
    json_object_set_new(st, "p50", num(r->stats.p50));
    json_object_set_new(st, "p90", num(r->stats.p90));
    json_object_set_new(st, "p99", num(r->stats.p99));
    json_object_set_new(st, "max", num(r->stats.max));
    json_object_set_new(st, "mean", num(r->stats.mean));
    json_object_set_new(st, "stddev", num(r->stats.stddev));
    json_object_set_new(st, "cv", num(r->stats.cv));
    json_object_set_new(o, "stats", st);
    json_t *m = json_object();
    for (int i = 0; i < r->n_metrics; i++) {
        json_t *mv = json_object();
        json_object_set_new(mv, "value", num(r->metrics[i].value));
        json_object_set_new(mv, "unit", json_string(r->metrics[i].unit));
        json_object_set_new(m, r->metrics[i].name, mv);
    }
    json_object_set_new(o, "metrics", m);
    json_object_set_new(o, "valid", json_boolean(r->valid));
    json_object_set_new(o, "skipped", json_boolean(r->skipped));
    if (r->stab_judged) {
        /* the stability verdict and what it saw (stability.h) */
        json_object_set_new(o, "stable", json_boolean(r->stable));
        json_t *why = json_array();
        char buf[sizeof r->stab_why];
        snprintf(buf, sizeof buf, "%s", r->stab_why);
        for (char *save = NULL, *t = strtok_r(buf, ";", &save); t;
             t = strtok_r(NULL, ";", &save)) {
            while (*t == ' ')
                t++;
            if (*t)
                json_array_append_new(why, json_string(t));
        }
        json_object_set_new(o, "stability", why);
    }
    json_t *n = json_array();
    for (int i = 0; i < r->n_notes; i++)
        json_array_append_new(n, json_string(r->notes[i]));
    json_object_set_new(o, "notes", n);
    return o;
}

json_t *sb_run_to_json(const sb_run *run)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(SB_SCHEMA));
    json_object_set_new(o, "run_id", json_string(run->run_id));
    json_object_set_new(o, "started_at", json_string(run->started_at));
    json_object_set_new(o, "ended_at", json_string(run->ended_at));
    json_object_set(o, "system", run->system ? run->system : json_object());
    json_object_set(o, "config", run->config ? run->config : json_object());
    json_object_set(o, "tags", run->tags ? run->tags : json_object());
    json_t *a = json_array();
    for (size_t i = 0; i < run->results.n; i++)
        json_array_append_new(a, sb_result_to_json(&run->results.items[i]));
    json_object_set_new(o, "results", a);
    return o;
}

/* ---- JSON to results ----------------------------------------------------- */

static bool sb__digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* A run id: sb_run_new_id makes YYYYMMDDTHHMMSSZ-xxxxxx; a document
 * written by hand may name its run otherwise, in up to 39 letters, digits,
 * '.', '_', ':' or '-' (a letter or digit first): no path separators, no
 * spaces or newlines, nothing cut short by the store's 40 bytes. */
static bool sb__is_run_id(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 39 || !isalnum((unsigned char)s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._:-", s[i]))
            return false;
    return true;
}

/* YYYY-MM-DDTHH:MM:SS, then .mmm (any number of digits) or nothing, then Z,
 * with the fields in range. */
static bool sb__is_utc_time(const char *s)
{
    size_t n = strlen(s);
    if (n < 20 || !sb__digits(s, 4) || s[4] != '-' || !sb__digits(s + 5, 2) ||
        s[7] != '-' || !sb__digits(s + 8, 2) || s[10] != 'T' ||
        !sb__digits(s + 11, 2) || s[13] != ':' || !sb__digits(s + 14, 2) ||
        s[16] != ':' || !sb__digits(s + 17, 2) || s[n - 1] != 'Z')
        return false;
    if (n > 20 && (s[19] != '.' || n == 21 || n > 30 ||
                   !sb__digits(s + 20, (int)(n - 21))))
        return false;
    const int mo = atoi(s + 5), dd = atoi(s + 8), hh = atoi(s + 11),
              mi = atoi(s + 14), ss = atoi(s + 17);
    return mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && hh <= 23 && mi <= 59 &&
           ss <= 60;
}

static int need(json_t *o, const char *key, json_type t, const char *path,
                json_t **out, sb_err *err)
{
    static const char *tn[] = {"an object",  "an array", "a string",
                               "an integer", "a number", "true",
                               "false",      "null"};
    json_t *v = json_object_get(o, key);
    if (!v)
        return sb_fail(err, SB_EINVAL, "%s.%s: missing", path, key);
    bool ok = json_typeof(v) == t || (t == JSON_REAL && json_is_number(v)) ||
              (t == JSON_TRUE && json_is_boolean(v));
    if (!ok)
        return sb_fail(err, SB_EINVAL, "%s.%s: expected %s", path, key,
                       t == JSON_TRUE ? "a boolean" : tn[t]);
    *out = v;
    return 0;
}

static double jnum(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* strict: a document read from a file (import, compare, roofline); the
 * store's own rows are read leniently, as they were written (a run
 * imported before these checks may hold a non-string note or tag, which
 * would otherwise make it unreadable). */
static int result_from_json(json_t *o, const char *path, sb_result *r,
                            bool strict, sb_err *err)
{
    json_t *v = NULL;
    if (!json_is_object(o))
        return sb_fail(err, SB_EINVAL, "%s: expected an object", path);
    if (need(o, "bench", JSON_STRING, path, &v, err))
        return SB_EINVAL;
    const char *bench = json_string_value(v);
    if (need(o, "area", JSON_STRING, path, &v, err))
        return SB_EINVAL;
    const char *area = json_string_value(v);
    json_t *be = json_object_get(o, "backend");
    sb_result_init(r, bench, area,
                   json_is_string(be) ? json_string_value(be) : "cpu");
    json_t *params;
    if (need(o, "params", JSON_OBJECT, path, &params, err))
        return SB_EINVAL;
    const char *key;
    json_t *pv;
    json_object_foreach(params, key, pv)
    {
        if (r->params.n >= SB_MAX_PARAMS)
            return sb_fail(err, SB_EINVAL, "%s.params: too many", path);
        sb_pval *p = &r->params.v[r->params.n++];
        snprintf(p->name, sizeof p->name, "%s", key);
        if (json_is_integer(pv)) {
            json_int_t iv = json_integer_value(pv);
            /* parameters are held as doubles: beyond 2^53 the value read
             * would not be the value written */
            if (iv > 9007199254740992LL || iv < -9007199254740992LL)
                return sb_fail(err, SB_EINVAL,
                               "%s.params.%s: integer %lld "
                               "is beyond 2^53, more than a parameter can "
                               "hold exactly",
                               path, key, (long long)iv);
            p->type = SB_P_INT;
            p->num = (double)iv;
            snprintf(p->text, sizeof p->text, "%.0f", p->num);
        } else if (json_is_real(pv)) {
            p->type = SB_P_FLOAT;
            p->num = json_real_value(pv);
            if (p->num == floor(p->num) && fabs(p->num) < 9e15)
                snprintf(p->text, sizeof p->text, "%.0f", p->num);
            else
                snprintf(p->text, sizeof p->text, "%.17g", p->num);
        } else if (json_is_boolean(pv)) {
            p->type = SB_P_BOOL;
            p->num = json_is_true(pv) ? 1.0 : 0.0;
            snprintf(p->text, sizeof p->text, "%s", p->num ? "true" : "false");
        } else if (json_is_string(pv)) {
            p->type = SB_P_STR;
            snprintf(p->text, sizeof p->text, "%s", json_string_value(pv));
        } else {
            return sb_fail(err, SB_EINVAL,
                           "%s.params.%s: expected a number, "
                           "boolean or string",
                           path, key);
        }
    }
    json_t *samples;
    if (need(o, "samples_s", JSON_ARRAY, path, &samples, err))
        return SB_EINVAL;
    if (json_array_size(samples) > SB_RUN_MAX_SAMPLES)
        return sb_fail(err, SB_EINVAL,
                       "%s.samples_s: %zu samples, more than "
                       "the %d a result may hold",
                       path, json_array_size(samples), SB_RUN_MAX_SAMPLES);
    size_t i;
    json_array_foreach(samples, i, v)
    {
        if (!json_is_number(v) || (strict && !(json_number_value(v) >= 0)))
            return sb_fail(err, SB_EINVAL,
                           "%s.samples_s[%zu]: expected a "
                           "time in seconds (a number >= 0)",
                           path, i);
        if (sb_result_add_sample(r, json_number_value(v)))
            return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    json_t *stats;
    if (need(o, "stats", JSON_OBJECT, path, &stats, err))
        return SB_EINVAL;
    sb_result_finish_stats(r);
    json_t *metrics;
    if (need(o, "metrics", JSON_OBJECT, path, &metrics, err))
        return SB_EINVAL;
    json_object_foreach(metrics, key, v)
    {
        if (!json_is_object(v))
            return sb_fail(err, SB_EINVAL, "%s.metrics.%s: expected an object",
                           path, key);
        json_t *u = json_object_get(v, "unit"),
               *val = json_object_get(v, "value");
        if (strict && (!val || !(json_is_number(val) || json_is_null(val))))
            return sb_fail(err, SB_EINVAL,
                           "%s.metrics.%s.value: expected a "
                           "number or null",
                           path, key);
        if (strict && u && !json_is_string(u))
            return sb_fail(err, SB_EINVAL,
                           "%s.metrics.%s.unit: expected a "
                           "string",
                           path, key);
        sb_result_metric(r, key, jnum(val),
                         json_is_string(u) ? json_string_value(u) : "");
    }
    if (need(o, "valid", JSON_TRUE, path, &v, err))
        return SB_EINVAL;
    r->valid = json_is_true(v);
    json_t *sk = json_object_get(o, "skipped");
    r->skipped = json_is_true(sk);
    /* the stability verdict, in documents that have one */
    json_t *stv = json_object_get(o, "stable");
    if (stv && !json_is_boolean(stv) && strict)
        return sb_fail(err, SB_EINVAL, "%s.stable: expected true or false",
                       path);
    if (json_is_boolean(stv)) {
        r->stab_judged = true;
        r->stable = json_is_true(stv);
        json_t *why = json_object_get(o, "stability");
        if (why && !json_is_array(why) && strict)
            return sb_fail(err, SB_EINVAL,
                           "%s.stability: expected an array of reasons", path);
        json_array_foreach(why, i, v)
        {
            if (strict && !json_is_string(v))
                return sb_fail(err, SB_EINVAL,
                               "%s.stability[%zu]: expected a string", path, i);
            if (!json_is_string(v))
                continue;
            size_t l = strlen(r->stab_why);
            snprintf(r->stab_why + l, sizeof r->stab_why - l, "%s%s",
                     l ? "; " : "", json_string_value(v));
        }
    }
    json_t *notes;
    if (need(o, "notes", JSON_ARRAY, path, &notes, err))
        return SB_EINVAL;
    json_array_foreach(notes, i, v)
    {
        if (strict && !json_is_string(v))
            return sb_fail(err, SB_EINVAL, "%s.notes[%zu]: expected a string",
                           path, i);
        if (json_is_string(v))
            sb_result_note(r, "%s", json_string_value(v));
    }
    return 0;
}

static int run_from_json(json_t *doc, sb_run *run, bool strict, sb_err *err);

int sb_run_from_json(json_t *doc, sb_run *run, sb_err *err)
{
    return run_from_json(doc, run, false, err);
}

static int run_from_json(json_t *doc, sb_run *run, bool strict, sb_err *err)
{
    sb_run_init(run);
    json_t *v = NULL;
    if (!json_is_object(doc))
        return sb_fail(err, SB_EINVAL, "$: expected a run object");
    if (need(doc, "schema", JSON_STRING, "$", &v, err))
        goto fail;
    if (strcmp(json_string_value(v), SB_SCHEMA) != 0) {
        sb_fail(err, SB_EINVAL, "$.schema: '%s' is not %s",
                json_string_value(v), SB_SCHEMA);
        goto fail;
    }
    if (need(doc, "run_id", JSON_STRING, "$", &v, err))
        goto fail;
    /* A document from a file names its run as solbench does (the id and
     * times order the store's history and decide `last`); the store's own
     * rows need only fit. */
    const char *id = json_string_value(v);
    if (strict ? !sb__is_run_id(id) : strlen(id) >= sizeof run->run_id) {
        sb_fail(err, SB_EINVAL,
                "$.run_id: not a run id (1-39 letters, "
                "digits, '.', '_', ':' or '-')");
        goto fail;
    }
    snprintf(run->run_id, sizeof run->run_id, "%s", id);
    const char *times[] = {"started_at", "ended_at"};
    char *dst_t[] = {run->started_at, run->ended_at};
    for (int k = 0; k < 2; k++) {
        v = json_object_get(doc, times[k]);
        if (!v && k == 1)
            break; /* ended_at is optional */
        const char *tv = json_is_string(v) ? json_string_value(v) : NULL;
        if (!tv || strlen(tv) >= sizeof run->started_at ||
            (strict && (k == 0 || *tv) && !sb__is_utc_time(tv))) {
            sb_fail(err, SB_EINVAL, "$.%s: %s", times[k],
                    v ? "not a UTC time (YYYY-MM-DDTHH:MM:SS[.mmm]Z)"
                      : "missing");
            goto fail;
        }
        snprintf(dst_t[k], sizeof run->started_at, "%s", tv);
    }
    const char *objs[] = {"system", "config", "tags"};
    json_t **dst[] = {&run->system, &run->config, &run->tags};
    for (int k = 0; k < 3; k++) {
        if (need(doc, objs[k], JSON_OBJECT, "$", &v, err))
            goto fail;
        json_decref(*dst[k]);
        *dst[k] = json_deep_copy(v);
    }
    const char *tk;
    json_object_foreach(run->tags, tk, v) if (strict && !json_is_string(v))
    {
        sb_fail(err, SB_EINVAL, "$.tags.%.60s: expected a string", tk);
        goto fail;
    }
    json_t *results;
    if (need(doc, "results", JSON_ARRAY, "$", &results, err))
        goto fail;
    if (json_array_size(results) > SB_RUN_MAX_RESULTS) {
        sb_fail(err, SB_EINVAL,
                "$.results: %zu results, more than the %d a "
                "run may hold",
                json_array_size(results), SB_RUN_MAX_RESULTS);
        goto fail;
    }
    size_t i;
    json_array_foreach(results, i, v)
    {
        char path[48];
        snprintf(path, sizeof path, "$.results[%zu]", i);
        sb_result *r = sb_results_push(&run->results);
        if (!r) {
            sb_fail(err, SB_ENOMEM, "out of memory");
            goto fail;
        }
        if (result_from_json(v, path, r, strict, err))
            goto fail;
    }
    return 0;
fail:
    sb_run_free(run);
    sb_run_init(run);
    return SB_EINVAL;
}

int sb_run_write_json(const sb_run *run, const char *path, sb_err *err)
{
    FILE *f;
    bool out = strcmp(path, "-") == 0; /* stdout, for a pipe */
    int rc = out ? (f = stdout, 0) : sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    json_t *doc = sb_run_to_json(run);
    rc = json_dumpf(doc, f,
                    JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(doc);
    if (out)
        fputc('\n', f);
    int werr = ferror(f) ? errno : 0;
    if ((out ? fflush(f) : fclose(f)) != 0 || rc) {
        int e = werr ? werr : errno;
        return sb_fail(err, SB_EIO, "%s: cannot write the JSON results%s%s",
                       out ? "stdout" : path, e ? ": " : "",
                       e ? strerror(e) : "");
    }
    return 0;
}

int sb_run_read_json(const char *path, sb_run *run, sb_err *err)
{
    json_error_t je;
    struct stat st;
    FILE *f;
    sb_run_init(run); /* what a caller frees, whatever happens */
    /* A regular file only: a FIFO or a device would block or never end. */
    int rc = sb_file_fopen(path, "r", &f, err);
    if (rc)
        return rc;
    if (fstat(fileno(f), &st) == 0 && st.st_size > SB_RUN_MAX_DOC_BYTES) {
        fclose(f);
        return sb_fail(err, SB_EINVAL,
                       "%s: %.1f MiB, more than the %ld MiB "
                       "a run document may have",
                       path, (double)st.st_size / 1048576.0,
                       SB_RUN_MAX_DOC_BYTES >> 20);
    }
    /* A key given twice is refused, as the workload and hardware readers
     * do: jansson would keep the last one, so a document could say two
     * things (two run_ids) and mean either. */
    json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!doc)
        return sb_fail(err, SB_EINVAL, "%s:%d:%d: %s", path, je.line, je.column,
                       je.text);
    sb_run_free(run);
    sb_err inner = {0};
    rc = run_from_json(doc, run, true, &inner);
    json_decref(doc);
    if (rc)
        return sb_fail(err, rc, "%s: %s", path, inner.msg);
    return 0;
}

/* ---- CSV ----------------------------------------------------------------- */

void sb_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int sb_run_write_csv(const sb_run *run, const char *path, sb_err *err)
{
    FILE *f;
    bool out = strcmp(path, "-") == 0; /* stdout, for a pipe */
    int rc = out ? (f = stdout, 0) : sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    static const char *cols[] = {"GBps",        "GBps_best",  "GFLOPs",
                                 "GFLOPs_best", "latency_us", "algbw_GBps",
                                 "busbw_GBps"};
    fputs("run_id,bench,area,backend,params,valid,skipped,n,p50_s,min_s,"
          "max_s,mean_s,cv,headline,headline_value,headline_unit",
          f);
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
        fprintf(f, ",%s", cols[c]);
    fputs(",notes\n", f);
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        char pbuf[512];
        pbuf[0] = 0;
        for (int k = 0; k < r->params.n; k++) {
            size_t l = strlen(pbuf);
            snprintf(pbuf + l, sizeof pbuf - l, "%s%s=%s", k ? ";" : "",
                     r->params.v[k].name, r->params.v[k].text);
        }
        sb_csv_field(f, run->run_id);
        fputc(',', f);
        sb_csv_field(f, r->bench);
        fprintf(f, ",%s,%s,", r->area, r->backend);
        sb_csv_field(f, pbuf);
        fprintf(f, ",%s,%s,%zu,%.9g,%.9g,%.9g,%.9g,%.6g,",
                r->valid ? "true" : "false", r->skipped ? "true" : "false",
                r->stats.n, r->stats.p50, r->stats.min, r->stats.max,
                r->stats.mean, r->stats.cv);
        const sb_metric *h = sb_result_headline(r, NULL);
        if (h)
            fprintf(f, "%s,%.9g,%s", h->name, h->value, h->unit);
        else
            fputs(",,", f);
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            const sb_metric *m = sb_result_get(r, cols[c]);
            if (m)
                fprintf(f, ",%.9g", m->value);
            else
                fputc(',', f);
        }
        fputc(',', f);
        char notes[2048] = "";
        for (int k = 0; k < r->n_notes; k++) {
            if (k)
                strncat(notes, " | ", sizeof notes - strlen(notes) - 1);
            strncat(notes, r->notes[k], sizeof notes - strlen(notes) - 1);
        }
        sb_csv_field(f, notes);
        fputc('\n', f);
    }
    if ((out ? fflush(f) : fclose(f)) != 0)
        return sb_fail(err, SB_EIO, "%s: cannot write the CSV results",
                       out ? "stdout" : path);
    return 0;
}

/* ---- human tables -------------------------------------------------------- */

static void fmt_value(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= 1000)
        snprintf(buf, len, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

/* Whether v is its definition's single default (a list default never is:
 * the value then says which of the list's points this is). */
static bool param_is_default(const sb_bench *b, const sb_impl *im,
                             const sb_pval *v)
{
    const sb_param_def *d = b ? sb_param_find(b, im, v->name) : NULL;
    if (!d || !d->def || strchr(d->def, ',') || strstr(d->def, ".."))
        return false;
    sb_pval dv;
    return sb_parse_value(d, d->def, &dv, NULL) == 0 &&
           strcmp(dv.text, v->text) == 0;
}

const char *sb_params_fmt_changed(const sb_bench *b, const sb_impl *im,
                                  const sb_params *p, char *buf, int len)
{
    sb_params shown = {0};
    for (int i = 0; i < p->n; i++)
        if (!param_is_default(b, im, &p->v[i]))
            shown.v[shown.n++] = p->v[i];
    return sb_params_fmt(&shown, buf, len);
}

const char *sb_params_text_compact(const char *bench, const char *backend,
                                   const char *text, char *buf, size_t len)
{
    const sb_bench *b = sb_bench_find(bench, backend);
    const sb_impl *im = b ? sb_impl_find(b, backend) : NULL;
    size_t used = 0;
    buf[0] = 0;
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ')
            p++;
        size_t tl = strcspn(p, " ");
        if (!tl)
            break;
        char tok[SB_PNAME_LEN + SB_PTEXT_LEN + 2];
        snprintf(tok, sizeof tok, "%.*s", (int)tl, p);
        p += tl;
        char *eq = strchr(tok, '=');
        bool keep = true;
        if (eq && b) {
            *eq = 0;
            const sb_param_def *d = sb_param_find(b, im, tok);
            sb_pval v;
            if (d && sb_parse_value(d, eq + 1, &v, NULL) == 0)
                keep = !param_is_default(b, im, &v);
            *eq = '=';
        }
        if (!keep)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", tok);
        if (w < 0 || used + (size_t)w >= len) {
            buf[used] = 0; /* a whole pair or none: never cut mid-value */
            break;
        }
        used += (size_t)w;
    }
    return buf;
}

/* Whether parameter `name` takes more than one value among the results of
 * r's benchmark and backend in l (one that lacks it counts as a value). */
static bool param_varies(const sb_result_list *l, const sb_result *r,
                         const char *name)
{
    const sb_pval *first = NULL;
    bool seen = false;
    for (size_t i = 0; i < l->n; i++) {
        const sb_result *q = &l->items[i];
        if (q->skipped || strcmp(q->bench, r->bench) != 0 ||
            strcmp(q->backend, r->backend) != 0)
            continue;
        const sb_pval *v = sb_p_find(&q->params, name);
        if (!seen) {
            first = v;
            seen = true;
        } else if (!v != !first || (v && strcmp(v->text, first->text) != 0)) {
            return true;
        }
    }
    return false;
}

/* The parameters a table shows for r: every one that tells r from the
 * other results of its benchmark in l (a 256MiB row of a size sweep shows
 * its size although 256MiB is the default), and every one not at its
 * default. Values are whole, never cut (the column widens). */
const char *sb_result_params_shown(const sb_result_list *l, const sb_result *r,
                                   char *buf, int len)
{
    const sb_bench *b = sb_bench_find(r->bench, r->backend);
    const sb_impl *im = b ? sb_impl_find(b, r->backend) : NULL;
    sb_params shown = {0};
    for (int i = 0; i < r->params.n; i++) {
        const sb_pval *v = &r->params.v[i];
        if (!param_is_default(b, im, v) || param_varies(l, r, v->name)) {
            shown.v[shown.n] = *v;
            /* a run read back from JSON has its sizes as plain numbers:
             * the definition says they are sizes (64MiB, not 67108864) */
            const sb_param_def *d = b ? sb_param_find(b, im, v->name) : NULL;
            if (d && d->type == SB_P_SIZE && v->num > 0)
                shown.v[shown.n].type = SB_P_SIZE;
            shown.n++;
        }
    }
    return sb_params_fmt(&shown, buf, len);
}

/* A summary row (a sweep's plateaus, the network's alpha-beta fit: no
 * samples of its own) as one line of its figures: "L1 204.2 GB/s, L2
 * 112.1 GB/s" — the byte bounds of its ranges left to the notes. */
static void summary_text(const sb_result *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < r->n_metrics && used + 1 < len; i++) {
        const sb_metric *m = &r->metrics[i];
        if (strcmp(m->unit, "B") == 0 || !isfinite(m->value))
            continue;
        char name[40], val[32];
        snprintf(name, sizeof name, "%s", m->name);
        static const char *const tails[] = {"_GBps", "_us", "_s", "_Bps"};
        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
            size_t nl = strlen(name), tl = strlen(tails[t]);
            if (nl > tl && strcmp(name + nl - tl, tails[t]) == 0) {
                name[nl - tl] = 0;
                break;
            }
        }
        fmt_value(val, sizeof val, m->value);
        int w = snprintf(buf + used, len - used, "%s%s %s%s%s",
                         used ? ", " : "", name, val, m->unit[0] ? " " : "",
                         strcmp(m->unit, "ratio") ? m->unit : "");
        if (w < 0)
            break;
        used += (size_t)w;
        if (used >= len)
            used = len - 1;
    }
    if (!buf[0])
        snprintf(buf, len, "%s", r->n_notes ? r->notes[0] : "-");
}

static bool is_summary(const sb_result *r)
{
    return !r->skipped && r->n_samples == 0;
}

/* One area's rows: column widths from the longest name and parameters. */
static void print_area(FILE *f, const sb_result_list *l, const char *area)
{
    int wname = 24, wpar = 20;
    bool any = false;
    for (size_t i = 0; i < l->n; i++) {
        const sb_result *r = &l->items[i];
        if (strcmp(r->area, area) != 0)
            continue;
        any = true;
        char pbuf[400];
        int nl = (int)strlen(r->bench) +
                 (strcmp(r->backend, "cpu") ? 1 + (int)strlen(r->backend) : 0);
        if (is_summary(r))
            nl += (int)strlen(" (summary)");
        if (nl > wname)
            wname = nl;
        int pl = (int)strlen(sb_result_params_shown(l, r, pbuf, sizeof pbuf));
        if (!r->skipped && !is_summary(r) && pl > wpar)
            wpar = pl < 64 ? pl : 64; /* longer ones push their row only */
    }
    if (!any)
        return;
    fprintf(f, "\n== %s\n", area);
    fprintf(f, "%-*s %-*s %14s %-8s %12s %7s %5s %-5s %s\n", wname, "bench",
            wpar, "params", "median", "unit", "best", "cv%", "n", "valid",
            "stable");
    for (size_t i = 0; i < l->n; i++) {
        const sb_result *r = &l->items[i];
        if (strcmp(r->area, area) != 0)
            continue;
        char pbuf[400];
        sb_result_params_shown(l, r, pbuf, sizeof pbuf);
        char name[96];
        snprintf(name, sizeof name, "%s%s%s%s", r->bench,
                 strcmp(r->backend, "cpu") ? "@" : "",
                 strcmp(r->backend, "cpu") ? r->backend : "",
                 is_summary(r) ? " (summary)" : "");
        if (r->skipped) {
            /* Consecutive points skipped for one reason: one line. */
            const char *why = r->n_notes ? r->notes[0] : "skipped";
            size_t j = i + 1;
            while (j < l->n && l->items[j].skipped &&
                   strcmp(l->items[j].bench, r->bench) == 0 &&
                   strcmp(l->items[j].backend, r->backend) == 0 &&
                   l->items[j].n_notes &&
                   strcmp(l->items[j].notes[0], why) == 0)
                j++;
            fprintf(f, "%-*s %-*s %s\n", wname, name, wpar,
                    j - i > 1 ? "(all points)" : pbuf, why);
            i = j - 1;
            continue;
        }
        if (is_summary(r)) {
            /* set apart: its figures in words, no median, spread or n */
            char sum[400];
            summary_text(r, sum, sizeof sum);
            fprintf(f, "%-*s %-*s   %s%s\n", wname, name, wpar, pbuf, sum,
                    r->valid ? "" : "  (from invalid points)");
            continue;
        }
        bool hb = true;
        const sb_metric *h = sb_result_headline(r, &hb);
        char med[32] = "-", best[32] = "-";
        const char *unit = "";
        if (h) {
            fmt_value(med, sizeof med, h->value);
            unit = h->unit;
            char bname[48];
            snprintf(bname, sizeof bname, "%s_best", h->name);
            const sb_metric *b = sb_result_get(r, bname);
            if (b)
                fmt_value(best, sizeof best, b->value);
            else if (strcmp(h->name, "latency_us") == 0 && r->stats.n)
                fmt_value(best, sizeof best, r->stats.min * 1e6);
        }
        fprintf(f, "%-*s %-*s %14s %-8s %12s %7.2f %5zu %-5s %s\n", wname, name,
                wpar, pbuf, med, unit, best, 100.0 * r->stats.cv, r->stats.n,
                r->valid ? "yes" : "NO",
                !r->stab_judged ? "-"
                : r->stable     ? "yes"
                                : "NO");
    }
}

void sb_print_results(FILE *f, const sb_result_list *l)
{
    const char *const *areas = sb_areas();
    for (const char *const *a = areas; *a; a++)
        print_area(f, l, *a);
    /* Notes, each distinct (bench, note) once: a sweep repeats them. */
    for (size_t i = 0; i < l->n; i++) {
        const sb_result *r = &l->items[i];
        for (int k = 0; k < r->n_notes && !r->skipped; k++) {
            bool seen = false;
            for (size_t j = 0; j < i && !seen; j++) {
                const sb_result *q = &l->items[j];
                if (q->skipped || strcmp(q->bench, r->bench) != 0)
                    continue;
                for (int m = 0; m < q->n_notes && !seen; m++)
                    seen = strcmp(q->notes[m], r->notes[k]) == 0;
            }
            if (!seen)
                fprintf(f, "  note: %s: %s\n", r->bench, r->notes[k]);
        }
    }
}

int sb_print_stability(FILE *f, const sb_result_list *l)
{
    int bad = 0, judged = 0;
    unsigned flags = 0;
    for (size_t i = 0; i < l->n; i++) {
        const sb_result *r = &l->items[i];
        judged += r->stab_judged;
        if (r->stab_judged && !r->stable) {
            bad++;
            flags |= r->stab_flags;
        }
    }
    if (!bad)
        return 0;
    fprintf(f, "\nwarning: %d of %d results unstable (they may not repeat):\n",
            bad, judged);
    int shown = 0;
    for (size_t i = 0; i < l->n && shown < 12; i++) {
        const sb_result *r = &l->items[i];
        if (!r->stab_judged || r->stable)
            continue;
        char pbuf[400];
        sb_result_params_shown(l, r, pbuf, sizeof pbuf);
        fprintf(f, "  %s%s%s: %s\n", r->bench, pbuf[0] ? " " : "", pbuf,
                r->stab_why);
        shown++;
    }
    if (bad > shown)
        fprintf(f,
                "  ... and %d more (the stable column; --json has every "
                "reason)\n",
                bad - shown);
    char rem[512];
    sb_stab_remedy(flags, rem, sizeof rem);
    if (rem[0])
        fprintf(f, "  remedy: %s\n", rem);
    return bad;
}

void sb_print_profile(FILE *f, const sb_ceilings *c)
{
    if (c->n == 0)
        return;
    fprintf(f, "\n== machine profile (ceilings measured in this run)\n");
    for (int i = 0; i < c->n; i++) {
        const sb_ceiling *e = &c->c[i];
        const char *u = sb_ceil_unit(e->name);
        if (strcmp(u, "FLOP/s") == 0)
            fprintf(f, "  %-28s %12.1f GFLOP/s  (%s)\n", e->name,
                    e->value * 1e-9, e->source);
        else if (strcmp(u, "B/s") == 0)
            fprintf(f,
                    strstr(e->name, "beta") ? "  %-28s %12.2f GB/s     (%s)\n"
                                            : "  %-28s %12.1f GB/s     (%s)\n",
                    e->name, e->value * 1e-9, e->source);
        else if (strcmp(u, "s") == 0)
            fprintf(f, "  %-28s %12.2f us       (%s)\n", e->name,
                    e->value * 1e6, e->source);
        else
            fprintf(f, "  %-28s %12.4g          (%s)\n", e->name, e->value,
                    e->source);
    }
    /* Ridge points: where each measured compute peak meets each memory
     * roof, one line per peak. */
    static const char *roofs[] = {"bw.DRAM", "bw.L3",   "bw.L2",   "bw.L1",
                                  "bw.HBM",  "bw.read", "bw.triad"};
    bool header = false;
    for (int i = 0; i < c->n; i++) {
        if (strncmp(c->c[i].name, "peak.", 5) != 0 ||
            strstr(c->c[i].name, "theoretical"))
            continue;
        char line[256] = "";
        bool dram = sb_ceil_get(c, "bw.DRAM") > 0;
        for (size_t k = 0; k < sizeof roofs / sizeof roofs[0]; k++) {
            double bw = sb_ceil_get(c, roofs[k]);
            if (bw <= 0 || (dram && k >= 5))
                continue; /* read/triad only stand in for a missing DRAM */
            size_t l = strlen(line);
            snprintf(line + l, sizeof line - l, "%s%s %.2f", l ? ", " : "",
                     roofs[k] + 3, c->c[i].value / bw);
        }
        if (!line[0])
            continue;
        if (!header)
            fprintf(f, "  ridge points (FLOP/byte where the peak meets each "
                       "memory roof):\n");
        header = true;
        fprintf(f, "    %-10s %s\n", c->c[i].name + 5, line);
    }
}
