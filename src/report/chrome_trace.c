/*
 * chrome_trace.c — a run as a Chrome trace (the Trace Event Format that
 * Perfetto and chrome://tracing open): one process for the run, one track
 * per benchmark, each sample of each point one complete ("X") slice, a
 * result without samples (skipped, or a sweep's summary) one instant
 * ("i") event.
 *
 * A run document keeps how long each sample took per iteration, not when
 * it was taken, so the timeline is synthetic: on each benchmark's track,
 * from 0, the samples of its points are laid end to end in result order,
 * with a gap after each point. Lengths are true, positions are not.
 * docs/SCHEMA.md ("Chrome trace export") describes the layout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/report.h"

#define SB__TRACE_TIMELINE                                                     \
    "synthetic: samples laid end to end per benchmark, in result order"

/* The gap after a point, so that points stand apart on their track: a
 * tenth of the point's own length, at least 1 µs (a point of 1 ns
 * samples would otherwise touch its neighbour). */
#define SB__TRACE_GAP_FRAC 0.1
#define SB__TRACE_GAP_MIN_US 1.0

/* One track: a benchmark name, its thread id and where its next slice
 * starts (µs). */
typedef struct sb__track {
    const char *bench;
    double cursor_us;
} sb__track;

/* A JSON string from text that may have been cut inside a UTF-8
 * sequence (fixed-size fields): bytes above 0x7f become '?' when jansson
 * refuses the text as it is. */
static json_t *sb__jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *c = strdup(s);
    if (!c)
        return NULL;
    for (char *p = c; *p; p++)
        if ((unsigned char)*p > 0x7f)
            *p = '?';
    j = json_string(c);
    free(c);
    return j;
}

/* A number, or null where JSON has none (NaN, infinity). */
static json_t *sb__jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Writes one event as a line of the traceEvents array and drops it. */
static int sb__emit(FILE *f, json_t *ev, bool *first)
{
    int rc = -1;
    if (ev) {
        if (!*first)
            fputs(",\n", f);
        *first = false;
        rc = json_dumpf(ev, f, JSON_COMPACT | JSON_REAL_PRECISION(15));
        json_decref(ev);
    }
    return rc;
}

/* An event's common fields, in the order a reader expects them. */
static json_t *sb__event(const char *name, const char *cat, const char *ph,
                         double ts, int tid)
{
    json_t *ev = json_object();
    json_object_set_new(ev, "name", sb__jstr(name));
    if (cat)
        json_object_set_new(ev, "cat", json_string(cat));
    json_object_set_new(ev, "ph", json_string(ph));
    if (ts >= 0)
        json_object_set_new(ev, "ts", json_real(ts));
    json_object_set_new(ev, "pid", json_integer(1));
    if (tid > 0)
        json_object_set_new(ev, "tid", json_integer(tid));
    return ev;
}

/* The metadata events: the process's name, each track's name and place. */
static int sb__emit_meta(FILE *f, const sb_run *run, const sb__track *tracks,
                         int ntracks, bool *first)
{
    char name[96];
    snprintf(name, sizeof name, "solbench run %s", run->run_id);
    json_t *ev = sb__event("process_name", NULL, "M", -1, 0);
    json_object_set_new(ev, "args", json_pack("{s:o}", "name", sb__jstr(name)));
    int rc = sb__emit(f, ev, first);
    for (int t = 0; t < ntracks && !rc; t++) {
        ev = sb__event("thread_name", NULL, "M", -1, t + 1);
        json_object_set_new(
            ev, "args", json_pack("{s:o}", "name", sb__jstr(tracks[t].bench)));
        rc = sb__emit(f, ev, first);
        ev = sb__event("thread_sort_index", NULL, "M", -1, t + 1);
        json_object_set_new(ev, "args",
                            json_pack("{s:i}", "sort_index", t + 1));
        rc = rc ? rc : sb__emit(f, ev, first);
    }
    return rc;
}

/* The headline metric of a result as {name, value, unit}, NULL when it
 * has no metrics. */
static json_t *sb__headline(const sb_result *r)
{
    const sb_metric *m = sb_result_headline(r, NULL);
    if (!m)
        return NULL;
    return json_pack("{s:o,s:o,s:o}", "name", sb__jstr(m->name), "value",
                     sb__jnum(m->value), "unit", sb__jstr(m->unit));
}

/* The events of one result on its track: one slice per sample, or one
 * instant for a result without samples — a skipped point (cat "skipped",
 * args.reason its first note) or a summary of other points, such as a
 * sweep's plateaus (cat "summary", args.note its first note). */
static int sb__emit_result(FILE *f, const sb_result *r, size_t index, int tid,
                           sb__track *track, bool *first)
{
    char params[SB_MAX_PARAMS * (SB_PNAME_LEN + SB_PTEXT_LEN)];
    char name[sizeof params + 80];
    sb_params_fmt(&r->params, params, sizeof params);
    snprintf(name, sizeof name, "%s%s%s", r->bench, params[0] ? " " : "",
             params);
    const char *note = r->n_notes > 0 && r->notes[0] ? r->notes[0] : NULL;
    const double start = track->cursor_us;
    int rc = 0;
    if (r->skipped || r->n_samples == 0) {
        json_t *ev = sb__event(name, r->skipped ? "skipped" : "summary", "i",
                               start, tid);
        json_object_set_new(ev, "s", json_string("t"));
        json_t *args =
            json_pack("{s:I,s:o,s:o}", "point", (json_int_t)index, "params",
                      sb__jstr(params), "backend", sb__jstr(r->backend));
        if (r->skipped) {
            json_object_set_new(args, "reason",
                                sb__jstr(note ? note : "skipped"));
        } else {
            json_object_set_new(args, "valid", json_boolean(r->valid));
            if (note)
                json_object_set_new(args, "note", sb__jstr(note));
            json_t *head = sb__headline(r);
            if (head)
                json_object_set_new(args, "headline", head);
        }
        json_object_set_new(ev, "args", args);
        rc = sb__emit(f, ev, first);
        track->cursor_us = start + SB__TRACE_GAP_MIN_US;
        return rc;
    }
    const char *cat = r->valid ? "sample" : "invalid";
    double ts = start;
    for (size_t j = 0; j < r->n_samples && !rc; j++) {
        double s = r->samples_s[j];
        double dur = s > 0 && isfinite(s * 1e6) ? s * 1e6 : 0.0;
        json_t *ev = sb__event(name, cat, "X", ts, tid);
        json_object_set_new(ev, "dur", json_real(dur));
        json_t *args = json_pack(
            "{s:I,s:I,s:o,s:o,s:o,s:b}", "point", (json_int_t)index, "sample",
            (json_int_t)j, "params", sb__jstr(params), "backend",
            sb__jstr(r->backend), "seconds", sb__jnum(s), "valid", r->valid);
        json_t *head = sb__headline(r);
        if (head)
            json_object_set_new(args, "headline", head);
        json_object_set_new(ev, "args", args);
        rc = sb__emit(f, ev, first);
        ts += dur;
    }
    double gap = SB__TRACE_GAP_FRAC * (ts - start);
    track->cursor_us =
        ts + (gap > SB__TRACE_GAP_MIN_US ? gap : SB__TRACE_GAP_MIN_US);
    return rc;
}

/* The track of a benchmark, made on first sight (tracks are in run
 * order). Returns its tid (1-based), or 0 when the table cannot grow. */
static int sb__track_of(sb__track **tracks, int *n, int *cap, const char *b)
{
    for (int t = 0; t < *n; t++)
        if (strcmp((*tracks)[t].bench, b) == 0)
            return t + 1;
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        sb__track *g = realloc(*tracks, (size_t)ncap * sizeof *g);
        if (!g)
            return 0;
        *tracks = g;
        *cap = ncap;
    }
    (*tracks)[*n] = (sb__track){.bench = b, .cursor_us = 0.0};
    return ++*n;
}

static json_t *sb__other_data(const sb_run *run)
{
    json_t *os = json_object_get(run->system, "os");
    json_t *host = json_object_get(os, "hostname");
    json_t *o = json_object();
    json_object_set_new(o, "solbench_run", sb__jstr(run->run_id));
    json_object_set_new(o, "started_at", sb__jstr(run->started_at));
    json_object_set_new(o, "ended_at", sb__jstr(run->ended_at));
    json_object_set_new(o, "host",
                        json_is_string(host) ? json_copy(host) : json_null());
    json_object_set_new(o, "timeline", json_string(SB__TRACE_TIMELINE));
    return o;
}

int sb_run_write_chrome_trace(const sb_run *run, const char *path, sb_err *err)
{
    if (!run || !path)
        return sb_fail(err, SB_EINVAL, "chrome trace: no run or no path");
    /* The tracks first: the metadata naming them comes before any slice. */
    sb__track *tracks = NULL;
    int ntracks = 0, cap = 0;
    int *tid = malloc((run->results.n ? run->results.n : 1) * sizeof *tid);
    if (!tid)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < run->results.n; i++) {
        tid[i] =
            sb__track_of(&tracks, &ntracks, &cap, run->results.items[i].bench);
        if (!tid[i]) {
            free(tid);
            free(tracks);
            return sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
        }
    }

    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc) {
        free(tid);
        free(tracks);
        return rc;
    }
    bool first = true;
    json_t *other = sb__other_data(run);
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":", f);
    rc = json_dumpf(other, f, JSON_COMPACT);
    json_decref(other);
    fputs(",\"traceEvents\":[\n", f);
    if (!rc)
        rc = sb__emit_meta(f, run, tracks, ntracks, &first);
    for (size_t i = 0; i < run->results.n && !rc; i++)
        rc = sb__emit_result(f, &run->results.items[i], i, tid[i],
                             &tracks[tid[i] - 1], &first);
    fputs("\n]}\n", f);
    free(tid);
    free(tracks);
    if (ferror(f))
        rc = -1;
    if (fclose(f) != 0 || rc)
        return sb_fail(err, SB_EIO, "%s: cannot write the Chrome trace", path);
    return 0;
}
