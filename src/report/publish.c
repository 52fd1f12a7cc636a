/*
 * publish.c — the store's history as a static site (publish.h): index.html
 * (a table per machine of its series: latest figure, sparkline, trend,
 * newest change point; then the stored traces), one p-<hash>.html per
 * series (its timeline as inline SVG with the p10-p90 band and the change
 * points, a table of its change points and one of its runs) and one
 * shared style.css. No script and nothing fetched from elsewhere: the
 * pages read the same from file:// and from a web server. Every text that
 * comes from the store (names, parameters, run ids, commits, host names)
 * is HTML-escaped on its way out.
 */
#include "solbench/publish.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "report/publish_int.h"
#include "solbench/changes.h"
#include "solbench/fileio.h"
#include "solbench/output.h"
#include "solbench/stats.h"

/* A change point this many runs from a series' end is shown on the
 * index. */
#define RECENT_RUNS 10
/* The trend compares the latest figure with the median of this many runs
 * before it. */
#define TREND_RUNS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- options --------------------------------------------------------------
 */

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static int num(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = 10 * v + (s[i] - '0');
    return v;
}

/* --since as the prefix of a stored start time it compares against
 * ("2026-01-01", "2026-01-01T10:00", "2026-01-01T10:00:30"): 0, or
 * SB_EINVAL. */
static int parse_since(const char *s, char *out, size_t len, sb_err *err)
{
    size_t l = strlen(s);
    if (l >= 2 && (s[l - 1] == 'd' || s[l - 1] == 'h') &&
        strspn(s, "0123456789") == l - 1 && l - 1 <= 6) {
        long n = strtol(s, NULL, 10);
        time_t t = time(NULL) - (time_t)n * (s[l - 1] == 'd' ? 86400 : 3600);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
        return 0;
    }
    /* YYYY-MM-DD[(T| )hh:mm[:ss]][Z] */
    bool ok = l >= 10 && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) &&
              s[7] == '-' && digits(s + 8, 2);
    size_t k = 10;
    if (ok && l > 10 && (s[10] == 'T' || s[10] == ' ')) {
        ok = l >= 16 && digits(s + 11, 2) && s[13] == ':' && digits(s + 14, 2);
        k = 16;
        if (ok && l >= 19 && s[16] == ':') {
            ok = digits(s + 17, 2);
            k = 19;
        }
        ok = ok && num(s + 11, 2) < 24 && num(s + 14, 2) < 60 &&
             (k < 19 || num(s + 17, 2) <= 60);
    }
    if (ok && l == k + 1 && s[k] == 'Z')
        l = k;
    ok = ok && l == k && num(s + 5, 2) >= 1 && num(s + 5, 2) <= 12 &&
         num(s + 8, 2) >= 1 && num(s + 8, 2) <= 31;
    if (!ok)
        return sb_fail(err, SB_EINVAL,
                       "--since '%s': not a UTC time (YYYY-MM-DD, "
                       "YYYY-MM-DDThh:mm[:ss], or Nd / Nh for N days or hours "
                       "ago)",
                       s);
    snprintf(out, len, "%.*s", (int)k, s);
    out[10] = out[10] ? 'T' : '\0';
    return 0;
}

int sb_publish_check(const char *dir, const sb_publish_opts *o, sb_err *err)
{
    if (!dir || !dir[0])
        return sb_fail(err, SB_EINVAL, "publish: no folder given");
    if (o && o->last < 0)
        return sb_fail(err, SB_EINVAL, "publish: --last %d: not a count",
                       o->last);
    char since[32];
    if (o && o->since && parse_since(o->since, since, sizeof since, err))
        return SB_EINVAL;
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return sb_fail(err, SB_EINVAL, "%s: exists and is %s, not a folder",
                       dir, sb_file_kind(sb.st_mode));
    return 0;
}

/* ---- files ----------------------------------------------------------------
 */

/* Creates dir and its missing parents, mode 0755. */
static int make_dir(const char *dir, sb_err *err)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return sb_fail(err, SB_EINVAL, "%s: path too long", dir);
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c)
            continue;
        char keep = *c;
        *c = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return sb_fail(err, SB_EIO, "%s: cannot create: %s", p,
                           strerror(errno));
        *c = keep;
        if (!keep)
            break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return sb_fail(err, SB_EINVAL, "%s: not a folder", dir);
    return 0;
}

/* Writes b as dir/name: into a hidden file beside it, then renamed over
 * it, so a reader (a web server, a browser reloading) sees the old page or
 * the new one, never half of one. */
static int write_file(const char *dir, const char *name, const sb_buf *b,
                      sb_publish_stats *st, sb_err *err)
{
    if (b->oom)
        return sb_fail(err, SB_ENOMEM, "publish: out of memory");
    char final[4096], tmp[4096];
    if (snprintf(final, sizeof final, "%s/%s", dir, name) >=
            (int)sizeof final ||
        snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, name,
                 (long)getpid()) >= (int)sizeof tmp)
        return sb_fail(err, SB_EINVAL, "%s: path too long", dir);
    int fd =
        open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return sb_fail(err, SB_EIO, "%s: cannot write: %s", tmp,
                       strerror(errno));
    size_t done = 0;
    while (done < b->n) {
        ssize_t w = write(fd, b->s + done, b->n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int e = errno;
    if (close(fd) != 0 && done == b->n) {
        done = 0;
        e = errno;
    }
    if (done != b->n || rename(tmp, final) != 0) {
        if (done == b->n)
            e = errno;
        unlink(tmp);
        return sb_fail(err, SB_EIO, "%s: write failed: %s", final, strerror(e));
    }
    st->bytes += b->n;
    return 0;
}

static const char style_css[] =
    "body{font-family:Helvetica,Arial,sans-serif;margin:20px auto;"
    "max-width:1100px;padding:0 12px;color:#222;background:#fafafa}\n"
    "h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin-top:24px;"
    "border-bottom:2px solid #ddd;padding-bottom:3px}\n"
    "small,.m{color:#707070;font-weight:normal}h1 small,h2 small{"
    "font-size:13px}\n"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}\n"
    "th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;"
    "vertical-align:middle}th{background:#f0f0f0}\n"
    ".n{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}\n"
    ".bad{color:#b00020;font-weight:bold}.good{color:#207020;"
    "font-weight:bold}\n"
    "a{color:#1f5fa8;text-decoration:none}a:hover{text-decoration:"
    "underline}\n"
    "svg{background:#fff;display:block}svg text{font-family:Helvetica,"
    "Arial,sans-serif;font-size:11px;fill:#333}\n"
    "svg .ax{stroke:#888;fill:none}svg .gr{stroke:#ececec}\n"
    "svg .ln{fill:none;stroke:#1f77b4;stroke-width:1.2}\n"
    "svg .pt{fill:#1f77b4}svg .pt.u{fill:#fff;stroke:#1f77b4}\n"
    "svg .band{fill:#1f77b4;fill-opacity:.15;stroke:none}\n"
    "svg .cp{stroke-dasharray:5 4;stroke-width:1.5}\n"
    "svg .cp.bad{stroke:#b00020}svg .cp.good{stroke:#207020}\n"
    "svg text.bad{fill:#b00020}svg text.good{fill:#207020}\n"
    "svg.spark{background:none;display:inline}\n";

/* ---- series ---------------------------------------------------------------
 */

/* A series' page: FNV-1a 64 of its point key and fingerprint, so the
 * name holds only hex digits whatever the key holds, and stays the same
 * from one publication to the next. */
static void page_name(const sb_series *s, char *out, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    const char *parts[2] = {s->key, s->fingerprint};
    for (int k = 0; k < 2; k++) {
        for (const unsigned char *p = (const unsigned char *)parts[k]; *p;
             p++) {
            h ^= *p;
            h *= UINT64_C(0x100000001b3);
        }
        h ^= 0x1f; /* the two parts cannot run into each other */
        h *= UINT64_C(0x100000001b3);
    }
    snprintf(out, len, "p-%016llx.html", (unsigned long long)h);
}

/* strcmp with runs of digits compared as numbers: "size=65536" before
 * "size=102400". */
static int cmp_natural(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
        } else if (*a != *b) {
            break;
        } else {
            a++;
            b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

/* Machines apart, then benchmarks by name, then their points. */
static int cmp_series(const void *a, const void *b)
{
    const sb_series *x = a, *y = b;
    int c = strcmp(x->fingerprint, y->fingerprint);
    if (!c)
        c = strcmp(x->bench, y->bench);
    if (!c)
        c = strcmp(x->backend, y->backend);
    if (!c)
        c = cmp_natural(x->params, y->params);
    return c;
}

/* Keeps the runs started at or after `since`, and the series left with
 * any. */
static void drop_before(sb_series_set *set, const char *since)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++) {
        sb_series *s = &set->s[i];
        size_t first = 0;
        while (first < s->n && strcmp(s->runs[first].started_at, since) < 0)
            first++;
        if (first)
            memmove(s->runs, s->runs + first, (s->n - first) * sizeof *s->runs);
        s->n -= first;
        if (!s->n) {
            free(s->runs);
            free(s->cps);
            continue;
        }
        if (kept != i)
            set->s[kept] = *s;
        kept++;
    }
    set->n = kept;
}

/* The latest figure against the median of the TREND_RUNS before it, in
 * %; NaN with fewer than two runs. */
static double trend_pct(const sb_series *s)
{
    if (s->n < 2)
        return NAN;
    double prev[TREND_RUNS];
    size_t k = 0;
    for (size_t i = s->n - 1; i-- > 0 && k < TREND_RUNS;)
        prev[k++] = s->runs[i].value;
    qsort(prev, k, sizeof *prev, cmp_double);
    double med = sb_percentile_sorted(prev, k, 0.5);
    return med > 0 ? 100.0 * (s->runs[s->n - 1].value - med) / med : NAN;
}

/* The machine a fingerprint names, in words: the host name and CPU model
 * its newest run recorded. */
typedef struct machine {
    char fingerprint[80];
    char host[128];
    char cpu[128];
} machine;

static void machine_of(sb_store *st, const sb_series *s, machine *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->fingerprint, sizeof m->fingerprint, "%s", s->fingerprint);
    sb_run run;
    sb_err e = {0};
    if (s->n &&
        sb_store_load_run(st, s->runs[s->n - 1].run_id, &run, &e) == 0) {
        json_t *os = json_object_get(run.system, "os");
        json_t *cpu = json_object_get(run.system, "cpu");
        const char *h = json_string_value(json_object_get(os, "hostname"));
        const char *c = json_string_value(json_object_get(cpu, "model"));
        snprintf(m->host, sizeof m->host, "%s", h ? h : "");
        snprintf(m->cpu, sizeof m->cpu, "%s", c ? c : "");
    }
    sb_run_free(&run);
}

/* "memory.read" or "attention.decode@cuda". */
static void series_name(sb_buf *b, const sb_series *s)
{
    sb_buf_esc(b, s->bench);
    if (strcmp(s->backend, "cpu") != 0 && s->backend[0]) {
        sb_buf_put(b, "@");
        sb_buf_esc(b, s->backend);
    }
}

static void series_params(sb_buf *b, const sb_series *s)
{
    char params[512];
    sb_params_text_compact(s->bench, s->backend, s->params, params,
                           sizeof params);
    sb_buf_esc(b, params[0] ? params : "-");
}

/* ---- pages ----------------------------------------------------------------
 */

static void page_head(sb_buf *b, const char *title_a, const char *title_b)
{
    sb_buf_put(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                  "charset=\"utf-8\"><meta name=\"viewport\" "
                  "content=\"width=device-width\"><title>");
    sb_buf_esc(b, title_a);
    if (title_b && title_b[0]) {
        sb_buf_put(b, " ");
        sb_buf_esc(b, title_b);
    }
    sb_buf_put(b, "</title><link rel=\"stylesheet\" href=\"style.css\">"
                  "</head>\n<body>\n");
}

static void machine_text(sb_buf *b, const machine *m)
{
    sb_buf_esc(b, m->host[0]          ? m->host
                  : m->fingerprint[0] ? m->fingerprint
                                      : "unknown machine");
}

/* A table row's first cells for run r, numbered `num`: the number, its
 * id, start time and commit. */
static void run_cells(sb_buf *b, const sb_series_run *r, size_t num)
{
    char when[24];
    sb_buf_printf(b, "<tr><td class=\"n\">%zu<td>", num);
    sb_buf_esc(b, r->run_id);
    sb_buf_put(b, "<td>");
    sb_buf_esc(b, sb_pub_time(r->started_at, when, sizeof when));
    sb_buf_put(b, "<td>");
    sb_buf_esc(b, r->commit[0] ? r->commit : "-");
}

/* One series' page: what it is, the timeline, its change points, its
 * runs newest first. */
static void point_page(sb_buf *b, const sb_series *s, const machine *m)
{
    char params[512], fig[32], pct[32];
    sb_params_text_compact(s->bench, s->backend, s->params, params,
                           sizeof params);
    page_head(b, s->bench, params);
    sb_buf_put(b,
               "<p><a href=\"index.html\">\u2190 every series</a></p>\n<h1>");
    series_name(b, s);
    sb_buf_put(b, " <small>");
    series_params(b, s);
    sb_buf_put(b, "</small></h1>\n<p class=\"m\">on ");
    machine_text(b, m);
    if (m->cpu[0]) {
        sb_buf_put(b, " \u00b7 ");
        sb_buf_esc(b, m->cpu);
    }
    sb_buf_put(b, " \u00b7 fingerprint ");
    sb_buf_esc(b, s->fingerprint[0] ? s->fingerprint : "-");
    sb_buf_printf(
        b, " \u00b7 %zu run%s \u00b7 %zu change point%s \u00b7 key <code>",
        s->n, s->n == 1 ? "" : "s", s->n_cps, s->n_cps == 1 ? "" : "s");
    sb_buf_esc(b, s->key);
    sb_buf_put(b, "</code></p>\n");
    sb_pub_timeline(b, s);

    sb_buf_put(b,
               "<h2>Change points <small>E-Divisive means with a permutation "
               "test (docs/HISTORY.md); the run is the first after the change"
               "</small></h2>\n");
    if (!s->n_cps) {
        sb_buf_put(b, "<p class=\"m\">None found.</p>\n");
    } else {
        sb_buf_put(b,
                   "<table><tr><th class=\"n\">run<th>run id<th>started (UTC)"
                   "<th>commit<th class=\"n\">median before<th class=\"n\">"
                   "median after<th class=\"n\">change<th class=\"n\">p<th>"
                   "verdict</tr>\n");
        for (size_t k = 0; k < s->n_cps; k++) {
            const sb_cp_point *cp = &s->cps[k];
            const sb_series_run *r = &s->runs[cp->index];
            bool reg = sb_series_regressed(s, cp);
            run_cells(b, r, cp->index + 1);
            sb_buf_printf(b, "<td class=\"n\">%s",
                          sb_pub_fig(cp->before, fig, sizeof fig));
            sb_buf_printf(b, "<td class=\"n\">%s",
                          sb_pub_fig(cp->after, fig, sizeof fig));
            sb_buf_printf(b,
                          "<td class=\"n %s\">%s<td class=\"n\">%.3g<td "
                          "class=\"%s\">%s</tr>\n",
                          reg ? "bad" : "good",
                          sb_pub_pct(cp->change_pct, pct, sizeof pct), cp->p,
                          reg ? "bad" : "good",
                          reg ? "regression" : "improvement");
        }
        sb_buf_put(b, "</table>\n");
    }

    sb_buf_put(b, "<h2>Runs <small>newest first</small></h2>\n<table><tr><th "
                  "class=\"n\">run<th>run id<th>started (UTC)<th>commit<th "
                  "class=\"n\">");
    sb_buf_esc(b, s->metric);
    sb_buf_put(b, " (");
    sb_buf_esc(b, s->unit);
    sb_buf_put(b, ")<th class=\"n\">p10\u2013p90<th class=\"n\">cv<th>"
                  "stable</tr>\n");
    for (size_t i = s->n; i-- > 0;) {
        const sb_series_run *r = &s->runs[i];
        run_cells(b, r, i + 1);
        sb_buf_printf(b, "<td class=\"n\">%s",
                      sb_pub_fig(r->value, fig, sizeof fig));
        if (isfinite(r->lo) && isfinite(r->hi)) {
            sb_buf_printf(b, "<td class=\"n\">%s",
                          sb_pub_fig(r->lo, fig, sizeof fig));
            sb_buf_printf(b, "\u2013%s", sb_pub_fig(r->hi, fig, sizeof fig));
        } else {
            sb_buf_put(b, "<td class=\"n\">-");
        }
        if (r->cv > 0 && isfinite(r->cv))
            sb_buf_printf(b, "<td class=\"n\">%.2f\u00a0%%", 100 * r->cv);
        else
            sb_buf_put(b, "<td class=\"n\">-");
        sb_buf_printf(b, "<td>%s</tr>\n",
                      r->stable > 0    ? "yes"
                      : r->stable == 0 ? "<span class=\"bad\">no</span>"
                                       : "-");
    }
    sb_buf_put(b, "</table>\n</body></html>\n");
}

/* The index's row of one series. */
static void index_row(sb_buf *b, const sb_series *s, const char *page)
{
    char fig[32], pct[32];
    const sb_series_run *last = &s->runs[s->n - 1];
    sb_buf_printf(b, "<tr><td><a href=\"%s\">", page);
    series_name(b, s);
    sb_buf_put(b, "</a><td>");
    series_params(b, s);
    sb_buf_printf(b, "<td class=\"n\">%zu<td class=\"n\"><a href=\"%s\">%s ",
                  s->n, page, sb_pub_fig(last->value, fig, sizeof fig));
    sb_buf_esc(b, s->unit);
    sb_buf_put(b, "</a><td>");
    sb_pub_sparkline(b, s);
    sb_buf_printf(
        b,
        "<td class=\"n\" title=\"the latest figure against the median "
        "of the %d runs before it\">%s",
        TREND_RUNS, s->n > 1 ? sb_pub_pct(trend_pct(s), pct, sizeof pct) : "-");
    sb_buf_put(b, "<td>");
    /* the newest change point within the last RECENT_RUNS runs */
    const sb_cp_point *recent = NULL;
    size_t older = 0;
    for (size_t k = 0; k < s->n_cps; k++) {
        if (s->cps[k].index + RECENT_RUNS >= s->n)
            recent = &s->cps[k];
        else
            older++;
    }
    if (recent) {
        bool reg = sb_series_regressed(s, recent);
        sb_buf_printf(b,
                      "<a class=\"%s\" href=\"%s\" title=\"%s: change point "
                      "before run %zu of %zu\">%s %s at run %zu</a>",
                      reg ? "bad" : "good", page,
                      reg ? "regression" : "improvement", recent->index + 1,
                      s->n, recent->change_pct < 0 ? "\u25bc" : "\u25b2",
                      sb_pub_pct(recent->change_pct, pct, sizeof pct),
                      recent->index + 1);
    }
    if (older)
        sb_buf_printf(b, "%s<span class=\"m\">%zu earlier</span>",
                      recent ? " " : "", older);
    sb_buf_put(b, "</tr>\n");
}

typedef struct trace_ctx {
    sb_buf *b;
    size_t n;
} trace_ctx;

static int trace_row(const sb_store_trace *t, void *arg)
{
    trace_ctx *c = arg;
    sb_buf *b = c->b;
    char when[24];
    if (!c->n++)
        sb_buf_put(b, "<table><tr><th>name<th>format<th class=\"n\">events<th "
                      "class=\"n\">stored bytes<th>imported (UTC)<th>from "
                      "file</tr>\n");
    sb_buf_put(b, "<tr><td>");
    sb_buf_esc(b, t->name);
    sb_buf_put(b, "<td>");
    sb_buf_esc(b, t->format);
    sb_buf_printf(b, "<td class=\"n\">%ld<td class=\"n\">%lld<td>", t->events,
                  t->bytes);
    sb_buf_esc(b, sb_pub_time(t->imported_at ? t->imported_at : "", when,
                              sizeof when));
    sb_buf_put(b, "<td>");
    sb_buf_esc(b, t->source);
    sb_buf_put(b, "</tr>\n");
    return 0;
}

/* ---- the site -------------------------------------------------------------
 */

int sb_publish(sb_store *st, const char *dir, const sb_publish_opts *o,
               sb_publish_stats *out, sb_err *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sb_publish_opts def = {0};
    if (!o)
        o = &def;
    sb_publish_stats stats = {0};
    int rc = sb_publish_check(dir, o, err);
    if (rc)
        return rc;
    char since[32] = "";
    if (o->since && (rc = parse_since(o->since, since, sizeof since, err)))
        return rc;
    sb_series_set set;
    if ((rc = sb_series_load(st, o->bench, o->last, &set, err)))
        return rc;
    sb_buf b = {0};
    machine *machines = NULL;
    size_t n_machines = 0;
    if (since[0])
        drop_before(&set, since);
    if ((rc = sb_series_detect(&set, o->cp, err)) || (rc = make_dir(dir, err)))
        goto out;
    if (set.n > 1)
        qsort(set.s, set.n, sizeof *set.s, cmp_series);
    machines = calloc(set.n ? set.n : 1, sizeof *machines);
    if (!machines) {
        rc = sb_fail(err, SB_ENOMEM, "publish: out of memory");
        goto out;
    }

    sb_buf_put(&b, style_css);
    if ((rc = write_file(dir, "style.css", &b, &stats, err)))
        goto out;

    /* a page per series, and each machine's name once */
    char page[40];
    const char *first = NULL, *last = NULL;
    for (size_t i = 0; i < set.n; i++) {
        sb_series *s = &set.s[i];
        if (!n_machines ||
            strcmp(machines[n_machines - 1].fingerprint, s->fingerprint) != 0)
            machine_of(st, s, &machines[n_machines++]);
        if (!first || strcmp(s->runs[0].started_at, first) < 0)
            first = s->runs[0].started_at;
        if (!last || strcmp(s->runs[s->n - 1].started_at, last) > 0)
            last = s->runs[s->n - 1].started_at;
        stats.change_points += s->n_cps;
        page_name(s, page, sizeof page);
        b.n = 0;
        point_page(&b, s, &machines[n_machines - 1]);
        if ((rc = write_file(dir, page, &b, &stats, err)))
            goto out;
        stats.pages++;
    }
    stats.series = set.n;

    /* the index */
    b.n = 0;
    char now[40], when0[24], when1[24];
    sb_utc_now(now, sizeof now);
    page_head(&b, "solbench history", NULL);
    sb_buf_printf(&b,
                  "<h1>solbench history</h1>\n<p class=\"m\">%zu series on %zu "
                  "machine%s \u00b7 %zu change point%s",
                  set.n, n_machines, n_machines == 1 ? "" : "s",
                  stats.change_points, stats.change_points == 1 ? "" : "s");
    if (first) {
        sb_buf_put(&b, " \u00b7 runs from ");
        sb_buf_esc(&b, sb_pub_time(first, when0, sizeof when0));
        sb_buf_put(&b, " to ");
        sb_buf_esc(&b, sb_pub_time(last, when1, sizeof when1));
        sb_buf_put(&b, " UTC");
    }
    if (o->bench) {
        sb_buf_put(&b, " \u00b7 benchmarks ");
        sb_buf_esc(&b, o->bench);
    }
    sb_buf_put(&b, " \u00b7 published ");
    sb_buf_esc(&b, sb_pub_time(now, when0, sizeof when0));
    sb_buf_printf(
        &b,
        " UTC</p>\n<p class=\"m\">A series is one point on one machine, "
        "its runs oldest first. Trend: the latest figure against the "
        "median of the %d runs before it. A marker: a change point in "
        "the last %d runs (\u25bc the figure fell, \u25b2 it rose; "
        "<span class=\"bad\">red</span> a regression, <span "
        "class=\"good\">green</span> an improvement).</p>\n",
        TREND_RUNS, RECENT_RUNS);
    if (!set.n)
        sb_buf_put(&b, "<p>No valid runs stored.</p>\n");
    for (size_t i = 0, mi = 0; i < set.n; mi++) {
        const machine *m = &machines[mi];
        sb_buf_put(&b, "<h2>");
        machine_text(&b, m);
        sb_buf_put(&b, " <small>");
        if (m->cpu[0]) {
            sb_buf_esc(&b, m->cpu);
            sb_buf_put(&b, " \u00b7 ");
        }
        sb_buf_put(&b, "fingerprint ");
        sb_buf_esc(&b, m->fingerprint[0] ? m->fingerprint : "-");
        sb_buf_put(&b, "</small></h2>\n<table><tr><th>benchmark<th>point<th "
                       "class=\"n\">runs<th class=\"n\">latest<th>history<th "
                       "class=\"n\">trend<th>change</tr>\n");
        for (; i < set.n && strcmp(set.s[i].fingerprint, m->fingerprint) == 0;
             i++) {
            page_name(&set.s[i], page, sizeof page);
            index_row(&b, &set.s[i], page);
        }
        sb_buf_put(&b, "</table>\n");
    }
    sb_buf_put(&b, "<h2 id=\"traces\">Stored traces</h2>\n");
    trace_ctx tc = {.b = &b};
    if ((rc = sb_store_trace_list(st, trace_row, &tc, err)))
        goto out;
    sb_buf_put(&b, tc.n ? "</table>\n" : "<p class=\"m\">None stored.</p>\n");
    sb_buf_put(&b, "</body></html>\n");
    stats.traces = tc.n;
    if ((rc = write_file(dir, "index.html", &b, &stats, err)))
        goto out;
    stats.pages++;
out:
    sb_buf_free(&b);
    free(machines);
    sb_series_free(&set);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    stats.seconds = (double)(t1.tv_sec - t0.tv_sec) +
                    1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (out)
        *out = stats;
    return rc;
}
