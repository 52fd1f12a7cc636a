/*
 * predict_capacity.c — predict's SLO lines and capacity search
 * (--slo, --capacity; docs/SERVING.md): what the simulation gives against
 * each objective, the largest rate within them for one workload, and a
 * table of it over a sweep with the cheapest variant named.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/predict_capacity.h"
#include "solbench/util.h"

static const char *fmt_s(double s, char *buf, size_t len)
{
    return sb_fmt_time(s, "us", buf, len);
}

/* "ttft_p90" */
static const char *term_name(const sb_slo_term *t, char *buf, size_t len)
{
    static const char *const m[] = {"ttft", "tpot", "itl", "latency", "queue"};
    if (t->pct)
        snprintf(buf, len, "%s_p%d", m[t->metric], t->pct);
    else
        snprintf(buf, len, "%s_mean", m[t->metric]);
    return buf;
}

json_t *sb_cli_slo_report(FILE *f, const sb_slo *slo, const sb_sim_out *o)
{
    json_t *arr = json_array();
    char name[32], v[32], l[32];
    fprintf(f, "\nSLOs on the simulated requests:\n");
    for (int i = 0; i < slo->n; i++) {
        const sb_slo_term *t = &slo->t[i];
        double x = sb_slo_value(o, t);
        bool met = x <= t->limit_s;
        fprintf(f, "  %-14s %12s  (at most %s)  %s\n",
                term_name(t, name, sizeof name), fmt_s(x, v, sizeof v),
                fmt_s(t->limit_s, l, sizeof l), met ? "met" : "MISSED");
        json_t *j = json_object();
        json_object_set_new(j, "term", json_string(name));
        json_object_set_new(j, "limit_s", json_real(t->limit_s));
        json_object_set_new(j, "value_s", json_real(x));
        json_object_set_new(j, "met", json_boolean(met));
        json_array_append_new(arr, j);
    }
    return arr;
}

json_t *sb_cli_capacity_json(const sb_slo *slo, const sb_capacity *cap,
                             double measured)
{
    char text[256];
    json_t *j = json_object();
    json_object_set_new(j, "slo",
                        json_string(sb_slo_text(slo, text, sizeof text)));
    json_object_set_new(j, "found", json_boolean(cap->found));
    json_object_set_new(j, "simulations", json_integer(cap->simulations));
    if (!cap->found) {
        if (cap->simulations) /* else nothing is served: no rate tried */
            json_object_set_new(j, "lowest_rate_tried",
                                json_real(cap->lowest_tried));
        return j;
    }
    json_object_set_new(j, "requests_per_s", json_real(cap->rate));
    json_object_set_new(j, "tokens_per_s", json_real(cap->tokens_per_s));
    if (measured > 0) {
        json_object_set_new(j, "measured_tokens_per_s", json_real(measured));
        json_object_set_new(j, "vs_measured",
                            json_real(cap->tokens_per_s / measured));
    }
    if (cap->cost_per_mtok > 0)
        json_object_set_new(j, "cost_per_mtok", json_real(cap->cost_per_mtok));
    json_t *at = json_object();
    for (int i = 0; i < slo->n; i++) {
        char name[32];
        json_object_set_new(at, term_name(&slo->t[i], name, sizeof name),
                            json_real(sb_slo_value(&cap->at, &slo->t[i])));
    }
    json_object_set_new(j, "at_capacity", at);
    return j;
}

void sb_cli_capacity_print(FILE *f, const sb_slo *slo, const sb_capacity *cap,
                           double measured)
{
    char text[256], a[32];
    fprintf(f,
            "\ncapacity under %s (%d requests a rate, Poisson arrivals; %d "
            "simulations):\n",
            sb_slo_text(slo, text, sizeof text), cap->requests,
            cap->simulations);
    if (!cap->found) {
        if (cap->simulations)
            fprintf(f, "  none: even %.3g requests/s misses them\n",
                    cap->lowest_tried);
        else
            fprintf(f, "  none: nothing is served (the prediction says why)\n");
        return;
    }
    fprintf(f, "  %.4g requests/s, %.4g output tokens/s", cap->rate,
            cap->tokens_per_s);
    if (cap->cost_per_mtok > 0)
        fprintf(f, ", $%.4g per million output tokens", cap->cost_per_mtok);
    fprintf(f, "\n  at that rate:");
    for (int i = 0; i < slo->n; i++) {
        char name[32];
        fprintf(f, "%s %s %s", i ? "," : "",
                term_name(&slo->t[i], name, sizeof name),
                fmt_s(sb_slo_value(&cap->at, &slo->t[i]), a, sizeof a));
    }
    fputc('\n', f);
    if (measured > 0)
        fprintf(f,
                "  vs measured      %.2fx the %.4g output tokens/s measured "
                "under the same objectives\n",
                cap->tokens_per_s / measured, measured);
}

void sb_cli_capacity_calibrated_print(FILE *f, const sb_capacity *cap,
                                      double measured)
{
    if (!cap->found) {
        fprintf(f, "  calibrated: none within the objectives\n");
        return;
    }
    fprintf(f, "  calibrated: %.4g requests/s, %.4g output tokens/s", cap->rate,
            cap->tokens_per_s);
    if (measured > 0)
        fprintf(f, " (%.2fx measured)", cap->tokens_per_s / measured);
    fputc('\n', f);
}

int sb_cli_capacity_table(FILE *f, const sb_slo *slo, const char *keys, int kw,
                          char (*labels)[600], const sb_capacity *cap,
                          const bool *ran, int n)
{
    char text[256];
    fprintf(f, "\ncapacity under %s (Poisson arrivals):\n",
            sb_slo_text(slo, text, sizeof text));
    fprintf(f, "  %-*s %12s %14s %12s\n", kw, keys, "requests/s",
            "out tokens/s", "$/Mtok");
    for (int i = 0; i < n; i++) {
        if (!ran[i])
            continue;
        if (!cap[i].found) {
            fprintf(f, "  %-*s %12s %14s %12s  (%s)\n", kw, labels[i], "-", "-",
                    "-",
                    cap[i].simulations ? "no rate meets the SLOs"
                                       : "nothing is served");
            continue;
        }
        char cost[32] = "-";
        if (cap[i].cost_per_mtok > 0)
            snprintf(cost, sizeof cost, "%.4g", cap[i].cost_per_mtok);
        fprintf(f, "  %-*s %12.4g %14.4g %12s\n", kw, labels[i], cap[i].rate,
                cap[i].tokens_per_s, cost);
    }
    int best = sb_capacity_best(cap, ran, n);
    if (best >= 0)
        fprintf(f, "best: %s (%s)\n", labels[best],
                cap[best].cost_per_mtok > 0
                    ? "the least per million output tokens at its capacity"
                    : "the most requests/s");
    else
        fprintf(f, "best: none meets the SLOs\n");
    return best;
}
