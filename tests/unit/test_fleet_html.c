/*
 * test_fleet_html.c — the fleet's HTML page (sb_fleet_write_html): every
 * host name and reason escaped (none of it raw), the flagged cells of the
 * hosts x metrics heat map and of the link matrix, and no other, framed;
 * a worse figure red whichever way its metric points; the N x N link and
 * latency cells with the diagonal and the unmeasured links; the failed
 * host's reason, the unjudged host, the collectives; more than 40 metrics
 * cut to the widest spreads with the flagged one kept; a healthy fleet
 * called healthy; a path that cannot be written is an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/fleet.h"
#include "solbench/report.h"

#define NH 4

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *ns = realloc(s, cap);
            if (!ns) {
                free(s);
                fclose(f);
                return NULL;
            }
            s = ns;
        }
        size_t k = fread(s + n, 1, 4096, f);
        n += k;
        if (k == 0)
            break;
    }
    fclose(f);
    s[n] = 0;
    return s;
}

/* occurrences of needle in [s, end) (end NULL: to the string's end) */
static int count(const char *s, const char *end, const char *needle)
{
    int c = 0;
    size_t len = strlen(needle);
    for (const char *p = strstr(s, needle); p && (!end || p + len <= end);
         p = strstr(p + len, needle))
        c++;
    return c;
}

/* The table that starts at `id` (e.g. "id=\"heat\""): *end its </table>. */
static const char *table(const char *page, const char *id, const char **end)
{
    const char *a = strstr(page, id);
    *end = a ? strstr(a, "</table>") : NULL;
    return *end ? a : NULL;
}

/* The <td ...> tag of the cell whose title starts with `title` inside
 * [a, end), as a copy (empty when none). */
static void cell(const char *a, const char *end, const char *title, char *out,
                 size_t len)
{
    out[0] = 0;
    char key[128];
    snprintf(key, sizeof key, "title=\"%s", title);
    const char *p = strstr(a, key);
    if (!p || p >= end)
        return;
    const char *td = p;
    while (td > a && strncmp(td, "<td", 3) != 0)
        td--;
    const char *close = strchr(p, '>');
    size_t n = (size_t)(close - td);
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), td);
}

/* The background colour of a cell's tag. */
static bool bg(const char *td, int *r, int *g, int *b)
{
    const char *p = strstr(td, "background:#");
    unsigned x, y, z;
    if (!p || sscanf(p + 12, "%2x%2x%2x", &x, &y, &z) != 3)
        return false;
    *r = (int)x;
    *g = (int)y;
    *b = (int)z;
    return true;
}

static void host(sb_fleet_host *h, const char *name, const char *cls)
{
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->cls, sizeof h->cls, "%s", cls);
    h->ranks = 2;
}

static void value(sb_fleet_value *v, int h, const char *metric, double x,
                  bool higher_better)
{
    memset(v, 0, sizeof *v);
    v->host = h;
    snprintf(v->metric, sizeof v->metric, "%s", metric);
    v->value = x;
    v->higher_better = higher_better;
}

static void test_page(const char *dir)
{
    sb_fleet_host hosts[NH];
    host(&hosts[0], "node-a", "odd-one"); /* alone in its class */
    host(&hosts[1], "n<b>&\"x'", "A");    /* failed */
    host(&hosts[2], "node-c", "A");       /* flagged: compute.peak */
    host(&hosts[3], "node-d", "A");       /* its links slow */
    hosts[0].unjudged = true;
    hosts[1].failed = true;
    snprintf(hosts[1].why, sizeof hosts[1].why,
             "no reply <in 30 s> & \"gave up\"");

    sb_fleet_value v[12];
    size_t nv = 0;
    static const int live[3] = {0, 2, 3};
    static const double peak[3] = {100, 60, 101};
    static const double mem[3] = {20e9, 20.5e9, 19.5e9};
    static const double lat[3] = {2e-6, 2.1e-6, 3e-6};
    for (int i = 0; i < 3; i++) {
        value(&v[nv++], live[i], "compute.peak GFLOPs", peak[i], true);
        value(&v[nv++], live[i], "memory.read size=1GiB GBps", mem[i], true);
        value(&v[nv++], live[i], "network.pingpong s", lat[i], false);
    }

    sb_fleet_flag flag;
    memset(&flag, 0, sizeof flag);
    flag.host = 2;
    snprintf(flag.metric, sizeof flag.metric, "compute.peak GFLOPs");
    flag.value = 60;
    flag.median = 100.5;
    flag.deviation_pct = -40.3;
    flag.threshold_pct = 10;
    flag.peers = 3;

    /* host 3's row and column at half the rest; one link, 0 to 1, not
     * measured (host 1 failed its suite, not its link rounds) */
    double bw[NH * NH], ltm[NH * NH];
    for (int i = 0; i < NH; i++)
        for (int j = 0; j < NH; j++) {
            bool slow = i == 3 || j == 3;
            bw[i * NH + j] = i == j ? 0 : slow ? 0.5e9 : 1e9;
            ltm[i * NH + j] = i == j ? 0 : slow ? 4e-6 : 2e-6;
        }
    bw[0 * NH + 1] = NAN;
    ltm[0 * NH + 1] = 0;
    sb_fleet_link_flag link = {.from = 3,
                               .to = 0,
                               .bw_Bps = 0.5e9,
                               .reference_Bps = 1e9,
                               .deviation_pct = -50,
                               .threshold_pct = 10,
                               .cause = 3};
    sb_fleet_coll coll = {.level = "hosts",
                          .op = "allreduce",
                          .bytes = 1048576,
                          .ranks = 3,
                          .seconds = 2.5e-3,
                          .predicted_s = 2e-3};

    sb_fleet_report r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "fleet-<id>");
    snprintf(r.started_at, sizeof r.started_at, "2024-05-01T10:00:00Z");
    snprintf(r.launcher, sizeof r.launcher, "mpirun");
    snprintf(r.baseline, sizeof r.baseline, "base&1");
    r.nhosts = NH;
    r.nranks = 8;
    r.rounds = 3;
    r.hosts = hosts;
    r.v = v;
    r.nv = nv;
    sb_fleet_rules_default(&r.rules);
    r.flags = &flag;
    r.nflags = 1;
    r.bw = bw;
    r.lat = ltm;
    r.links = &link;
    r.nlinks = 1;
    r.coll = &coll;
    r.ncoll = 1;

    char path[4200];
    snprintf(path, sizeof path, "%s/fleet.html", dir);
    sb_err err = {0};
    CHECK(sb_fleet_write_html(&r, path, &err) == 0);
    char *page = slurp(path);
    CHECK(page != NULL);
    if (!page)
        return;

    /* escaped, never raw */
    CHECK(strstr(page, "<title>solbench fleet fleet-&lt;id&gt;</title>"));
    CHECK(strstr(page, "n&lt;b&gt;&amp;&quot;x&#39;"));
    CHECK(!strstr(page, "<b>"));
    CHECK(!strstr(page, "n<b"));
    CHECK(!strstr(page, "fleet-<id>"));
    CHECK(strstr(page, "base&amp;1"));
    CHECK(!strstr(page, "base&1"));
    CHECK(strstr(page, "node-a") && strstr(page, "node-c") &&
          strstr(page, "node-d"));
    /* no script, nothing fetched */
    CHECK(!strstr(page, "<script"));
    CHECK(!strstr(page, "http://") && !strstr(page, "https://"));
    CHECK(strstr(page, "<style>"));

    /* the verdict */
    CHECK(strstr(page, "1 flagged host"));
    CHECK(strstr(page, "1 slow link"));
    CHECK(strstr(page, "1 failed"));
    CHECK(strstr(page, "1 not judged"));

    /* the heat map: a row per host, one flagged cell */
    const char *end;
    const char *heat = table(page, "id=\"heat\"", &end);
    CHECK(heat != NULL);
    if (heat) {
        CHECK(count(heat, end, "<tr") == 1 + NH);
        CHECK(count(heat, end, "class=\"hv flag\"") == 1);
        CHECK(count(heat, end, " flag\"") == 1);
        CHECK(count(heat, end, "<th class=\"v\"") == 3);
        /* the failed host's reason, escaped, in its row */
        CHECK(count(heat, end,
                    "no reply &lt;in 30 s&gt; &amp; "
                    "&quot;gave up&quot;") == 1);
        CHECK(count(heat, end, "<tr class=\"failed\">") == 1);
        CHECK(count(heat, end, "<tr class=\"unj\">") == 1);
        CHECK(count(heat, end, "(not judged)") == 1);
        char td[512];
        /* 60 GFLOPs, 40 % under the median: flagged and full red */
        cell(heat, end, "60,", td, sizeof td);
        CHECK(strstr(td, "flag") && strstr(td, "#e05a5a"));
        CHECK(strstr(td, "bar 10.0 %") && strstr(td, "median 100.5"));
        /* lower is better: 3 us against 2.1 us is red, 2 us is not */
        cell(heat, end, "3e-06,", td, sizeof td);
        CHECK(strstr(td, "#e05a5a") && !strstr(td, "flag"));
        cell(heat, end, "2e-06,", td, sizeof td);
        int rr = 0, gg = 0, bb = 0;
        CHECK(bg(td, &rr, &gg, &bb) && gg > rr && gg > bb);
        cell(heat, end, "3e-06,", td, sizeof td);
        CHECK(bg(td, &rr, &gg, &bb) && rr > gg && rr > bb);
        /* the flag also in words */
        CHECK(strstr(page, "median of 3 peers"));
    }
    CHECK(!strstr(page, "vs baseline"));

    /* the link matrix: N x N cells, the diagonal, the unmeasured links,
     * the one slow link framed */
    const char *lk = table(page, "id=\"bw\"", &end);
    CHECK(lk != NULL);
    if (lk) {
        CHECK(count(lk, end, "<td class=\"lk") == NH * NH);
        CHECK(count(lk, end, "<td class=\"lk diag\"") == NH);
        CHECK(count(lk, end, "<td class=\"lk na\"") == 1);
        CHECK(count(lk, end, "<td class=\"lk flag\"") == 1);
        CHECK(count(lk, end, " flag\"") == 1);
        CHECK(count(lk, end, "&ndash;") == 1);
        /* the typical link 1000 MB/s, host 3's half of it: red */
        CHECK(strstr(page, "The typical link (the median over the hosts of "
                           "each host's median link): 1000 MB/s"));
        char td[512];
        cell(lk, end, "node-d &rarr; node-a", td, sizeof td);
        CHECK(strstr(td, "lk flag") && strstr(td, "cause node-d"));
        CHECK(strstr(td, "#e05a5a"));
        cell(lk, end, "node-c &rarr; node-d", td, sizeof td);
        CHECK(strstr(td, "#e05a5a") && !strstr(td, "flag"));
        cell(lk, end, "node-a &rarr; node-c", td, sizeof td);
        CHECK(strstr(td, "#ffffff") && !strstr(td, "flag"));
        cell(lk, end, "n&lt;b&gt;&amp;&quot;x&#39; &rarr; node-a", td,
             sizeof td);
        CHECK(strstr(td, "#ffffff"));
    }
    const char *lt = table(page, "id=\"lat\"", &end);
    CHECK(lt != NULL);
    if (lt) {
        CHECK(count(lt, end, "<td class=\"lt") == NH * NH);
        CHECK(count(lt, end, "<td class=\"lt na\"") == 1);
        /* lower is better: host 3's 4 us against 2 us is red */
        char td[512];
        cell(lt, end, "node-d &rarr; node-c", td, sizeof td);
        CHECK(strstr(td, "#e05a5a"));
        cell(lt, end, "node-a &rarr; node-c", td, sizeof td);
        CHECK(strstr(td, "#ffffff"));
    }
    /* the slow links listed with their cause */
    const char *slow = table(page, "id=\"slow\"", &end);
    CHECK(slow != NULL);
    if (slow) {
        CHECK(count(slow, end, "<tr>") == 2);
        CHECK(count(slow, end, "<strong>node-d</strong>") == 1);
    }
    /* the collectives */
    CHECK(strstr(page, "id=\"collectives\""));
    CHECK(strstr(page, "allreduce") && strstr(page, "1MiB"));
    CHECK(strstr(page, ">1.25</td>"));
    CHECK(strstr(page, "id=\"legend\""));
    free(page);

    /* vs baseline: said in the cell's title */
    flag.vs_baseline = true;
    CHECK(sb_fleet_write_html(&r, path, &err) == 0);
    page = slurp(path);
    CHECK(page && strstr(page, "vs baseline fleet base&amp;1"));
    free(page);

    /* a path that cannot be written */
    char bad[4300];
    snprintf(bad, sizeof bad, "%s/no/such/dir/fleet.html", dir);
    memset(&err, 0, sizeof err);
    CHECK(sb_fleet_write_html(&r, bad, &err) == SB_EIO);
    CHECK(err.code == SB_EIO && strstr(err.msg, "no/such/dir"));
    memset(&err, 0, sizeof err);
    CHECK(sb_fleet_write_html(&r, dir, &err) != 0); /* a directory */
    CHECK(err.msg[0] != 0);
    CHECK(sb_fleet_write_html(NULL, path, &err) == SB_EINVAL);
}

/* 45 metrics over 3 hosts: the 40 with the widest spread shown, the
 * flagged one kept though its spread is the narrowest; a fleet with no
 * flag, no link and every host judged is healthy. */
static void test_many_metrics(const char *dir)
{
    enum { NM = 45, N3 = 3 };
    sb_fleet_host hosts[N3];
    for (int h = 0; h < N3; h++) {
        char name[16];
        snprintf(name, sizeof name, "h%d", h);
        host(&hosts[h], name, "A");
    }
    sb_fleet_value *v = calloc((size_t)NM * N3, sizeof *v);
    CHECK(v != NULL);
    if (!v)
        return;
    size_t nv = 0;
    for (int m = 0; m < NM; m++) {
        char name[32];
        snprintf(name, sizeof name, "bench.m%02d GBps", m);
        /* spread grows with m; m00 the narrowest */
        for (int h = 0; h < N3; h++)
            value(&v[nv++], h, name, 100 + (h == 1 ? 0.01 + m : 0), true);
    }
    sb_fleet_flag flag;
    memset(&flag, 0, sizeof flag);
    flag.host = 2;
    snprintf(flag.metric, sizeof flag.metric, "bench.m00 GBps");
    flag.median = 100;
    flag.threshold_pct = 10;
    flag.peers = 3;
    sb_fleet_report r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "many");
    r.nhosts = N3;
    r.nranks = N3;
    r.rounds = 1;
    r.hosts = hosts;
    r.v = v;
    r.nv = nv;
    sb_fleet_rules_default(&r.rules);
    r.flags = &flag;
    r.nflags = 1;

    char path[4200];
    snprintf(path, sizeof path, "%s/many.html", dir);
    sb_err err = {0};
    CHECK(sb_fleet_write_html(&r, path, &err) == 0);
    char *page = slurp(path);
    CHECK(page != NULL);
    if (page) {
        const char *end;
        const char *heat = table(page, "id=\"heat\"", &end);
        CHECK(heat != NULL);
        if (heat) {
            CHECK(count(heat, end, "<th class=\"v\"") == 40);
            CHECK(count(heat, end, "class=\"hv flag\"") == 1);
            CHECK(count(heat, end, ">bench.m00 GBps</th>") == 1);
            CHECK(count(heat, end, ">bench.m44 GBps</th>") == 1);
            /* the narrowest unflagged ones left out */
            CHECK(count(heat, end, "bench.m01 GBps") == 0);
            CHECK(count(heat, end, "bench.m05 GBps") == 0);
            CHECK(count(heat, end, ">bench.m06 GBps</th>") == 1);
        }
        CHECK(strstr(page, "5 left out"));
        CHECK(!strstr(page, "id=\"links\""));
        CHECK(!strstr(page, "id=\"collectives\""));
    }
    free(page);

    r.nflags = 0;
    CHECK(sb_fleet_write_html(&r, path, &err) == 0);
    page = slurp(path);
    CHECK(page && strstr(page, ">healthy<"));
    CHECK(page && count(page, NULL, "<td class=\"hv flag\"") == 0);
    free(page);
    free(v);
}

int main(void)
{
    char dir[4096];
    if (!sb_test_scratch(dir, sizeof dir, "fleet-html"))
        return 1;
    test_page(dir);
    test_many_metrics(dir);
    return sb_test_scratch_done(dir);
}
