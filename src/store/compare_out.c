/*
 * compare_out.c — renderings of a comparison: the human table, a JSON
 * document ("solbench.compare/1"), JUnit XML for CI test reports and a
 * Markdown table for a CI comment.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/compare.h"
#include "solbench/fileio.h"
#include "solbench/util.h"

/* "regressed", "mismatched (regressed)", "not comparable (missing in B)". */
static const char *verdict_text(const sb_cmp_line *L, char *buf, size_t len)
{
    const char *v = sb_verdict_name(L->verdict);
    if (L->verdict == SB_VERDICT_NOT_COMPARABLE && L->why[0])
        snprintf(buf, len, "%s%s (%s)", L->mismatched ? "mismatched: " : "", v,
                 L->why);
    else if (L->mismatched)
        snprintf(buf, len, "mismatched (%s)", v);
    else
        snprintf(buf, len, "%s", v);
    return buf;
}

static const char *fmt_num(double v, char *buf, size_t len)
{
    if (!(v > 0.0) && v != 0.0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

static const char *fmt_p(const sb_cmp_line *L, char *buf, size_t len)
{
    if (!L->tested)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2g%s", L->test.p, L->test.exact ? "" : "*");
    return buf;
}

static bool has_values(const sb_cmp_line *L)
{
    return L->ia >= 0 && L->ib >= 0 && L->a_value > 0.0 && L->b_value > 0.0;
}

void sb_cmp_print(FILE *f, const sb_cmp *c)
{
    fprintf(f, "A = %s\nB = %s\n", c->a_id, c->b_id);
    fprintf(f,
            "two-sided Mann-Whitney U on samples; alpha %g, threshold "
            "%g %% (* = normal approximation)\n\n",
            c->alpha, c->threshold_pct);
    int wb = 9, wp = 5, wm = 6;
    for (size_t i = 0; i < c->n; i++) {
        int lb = (int)strlen(c->lines[i].bench),
            lp = (int)strlen(c->lines[i].params),
            lm = (int)strlen(c->lines[i].metric);
        wb = lb > wb ? lb : wb;
        wp = lp > wp ? lp : wp;
        wm = lm > wm ? lm : wm;
    }
    fprintf(f, "%-*s  %-*s  %-*s %11s %11s %8s %8s  %s\n", wb, "benchmark", wp,
            "point", wm, "metric", "A", "B", "change", "p", "verdict");
    bool any_few = false;
    for (size_t i = 0; i < c->n; i++) {
        const sb_cmp_line *L = &c->lines[i];
        char a[32], b[32], ch[32], p[32], v[256], metric[64];
        if (has_values(L)) {
            fmt_num(L->a_value, a, sizeof a);
            fmt_num(L->b_value, b, sizeof b);
            snprintf(ch, sizeof ch, "%+.1f%%", L->change_pct);
            snprintf(metric, sizeof metric, "%s", L->metric);
        } else {
            snprintf(a, sizeof a, "-");
            snprintf(b, sizeof b, "-");
            snprintf(ch, sizeof ch, "-");
            snprintf(metric, sizeof metric, "-");
        }
        fmt_p(L, p, sizeof p);
        verdict_text(L, v, sizeof v);
        fprintf(f, "%-*s  %-*s  %-*s %11s %11s %8s %8s  %s\n", wb, L->bench, wp,
                L->params[0] ? L->params : "-", wm, metric, a, b, ch, p, v);
        if (L->why[0] && L->verdict != SB_VERDICT_NOT_COMPARABLE)
            fprintf(f, "%*s  note: %s\n", wb, "", L->why);
        any_few |= L->few_samples && L->tested;
    }
    fprintf(f,
            "\n%d regressed, %d improved, %d unchanged, %d not "
            "comparable%s\n",
            c->count[SB_VERDICT_REGRESSED], c->count[SB_VERDICT_IMPROVED],
            c->count[SB_VERDICT_UNCHANGED], c->count[SB_VERDICT_NOT_COMPARABLE],
            c->mismatched ? " (runs mismatched: configs or machines differ)"
                          : "");
    if (any_few)
        fprintf(f,
                "warning: too few samples for the test on some points "
                "(fewer than %d per side): the test cannot reach alpha; "
                "use --repeat\n",
                SB_CMP_MIN_SAMPLES);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int sb_cmp_write_json(const sb_cmp *c, const char *path, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("solbench.compare/1"));
    json_object_set_new(o, "a", json_string(c->a_id));
    json_object_set_new(o, "b", json_string(c->b_id));
    json_object_set_new(o, "alpha", json_real(c->alpha));
    json_object_set_new(o, "threshold_pct", json_real(c->threshold_pct));
    json_object_set_new(o, "mismatched", json_boolean(c->mismatched));
    json_t *sum = json_object();
    for (int v = 0; v < 4; v++)
        json_object_set_new(sum, sb_verdict_name((sb_verdict)v),
                            json_integer(c->count[v]));
    json_object_set_new(o, "summary", sum);
    json_t *lines = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const sb_cmp_line *L = &c->lines[i];
        json_t *l = json_object();
        json_object_set_new(l, "bench", json_string(L->bench));
        json_object_set_new(l, "backend", json_string(L->backend));
        json_object_set_new(l, "params", json_string(L->params));
        json_object_set_new(l, "key", json_string(L->key));
        json_object_set_new(l, "metric", json_string(L->metric));
        json_object_set_new(l, "unit", json_string(L->unit));
        json_object_set_new(l, "higher_better", json_boolean(L->higher_better));
        json_object_set_new(l, "a",
                            has_values(L) ? jnum(L->a_value) : json_null());
        json_object_set_new(l, "b",
                            has_values(L) ? jnum(L->b_value) : json_null());
        json_object_set_new(l, "change_pct",
                            has_values(L) ? jnum(L->change_pct) : json_null());
        json_object_set_new(l, "p", L->tested ? jnum(L->test.p) : json_null());
        json_object_set_new(l, "u", L->tested ? jnum(L->test.u1) : json_null());
        json_object_set_new(l, "exact", json_boolean(L->test.exact));
        json_object_set_new(l, "n_a", json_integer((json_int_t)L->na));
        json_object_set_new(l, "n_b", json_integer((json_int_t)L->nb));
        json_object_set_new(l, "verdict",
                            json_string(sb_verdict_name(L->verdict)));
        json_object_set_new(l, "mismatched", json_boolean(L->mismatched));
        json_object_set_new(l, "few_samples", json_boolean(L->few_samples));
        if (L->base_runs >= 2) {
            json_object_set_new(l, "baseline_runs", json_integer(L->base_runs));
            json_object_set_new(l, "baseline_aside",
                                json_integer(L->base_aside));
            json_object_set_new(l, "baseline_spread_pct",
                                json_real(L->spread_pct));
            json_object_set_new(l, "threshold_pct",
                                json_real(L->threshold_used));
        }
        json_object_set_new(l, "note", json_string(L->why));
        json_array_append_new(lines, l);
    }
    json_object_set_new(o, "lines", lines);
    rc = json_dumpf(o, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (fclose(f) != 0 || rc)
        return sb_fail(err, SB_EIO, "%s: cannot write the comparison", path);
    return 0;
}

/* ---- JUnit XML ----------------------------------------------------------- */

/* Writes s with the five XML entities escaped; control characters (not
 * allowed in XML 1.0) become spaces. */
static void line_message(const sb_cmp_line *L, double alpha, double thr,
                         char *buf, size_t len)
{
    if (has_values(L) && L->tested)
        snprintf(buf, len,
                 "%s: %s %.4g -> %.4g %s (%+.1f%%, %s is better), p = %.3g "
                 "(alpha %g, threshold %g%%, n = %zu/%zu)",
                 sb_verdict_name(L->verdict), L->metric, L->a_value, L->b_value,
                 L->unit, L->change_pct, L->higher_better ? "higher" : "lower",
                 L->test.p, alpha, thr, L->na, L->nb);
    else
        snprintf(buf, len, "%s: %s", sb_verdict_name(L->verdict),
                 L->why[0] ? L->why : "-");
}

int sb_cmp_write_junit(const sb_cmp *c, const char *suite, double seconds,
                       const char *path, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    int fails = c->count[SB_VERDICT_REGRESSED];
    int skips = c->count[SB_VERDICT_NOT_COMPARABLE];
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"solbench\" tests=\"%zu\" failures=\"%d\" "
            "errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            c->n, fails, skips, seconds);
    fprintf(f, "  <testsuite name=\"");
    sb_xml_text(f, suite ? suite : "solbench.check");
    fprintf(f,
            "\" tests=\"%zu\" failures=\"%d\" errors=\"0\" "
            "skipped=\"%d\" time=\"%.3f\">\n",
            c->n, fails, skips, seconds);
    fprintf(f, "    <properties>\n      <property name=\"baseline\" "
               "value=\"");
    sb_xml_text(f, c->a_id);
    fprintf(f, "\"/>\n      <property name=\"run\" value=\"");
    sb_xml_text(f, c->b_id);
    fprintf(f,
            "\"/>\n      <property name=\"alpha\" value=\"%g\"/>\n"
            "      <property name=\"threshold_pct\" value=\"%g\"/>\n"
            "    </properties>\n",
            c->alpha, c->threshold_pct);
    for (size_t i = 0; i < c->n; i++) {
        const sb_cmp_line *L = &c->lines[i];
        char msg[512];
        line_message(L, c->alpha, c->threshold_pct, msg, sizeof msg);
        fprintf(f, "    <testcase classname=\"");
        sb_xml_text(f, L->bench);
        fprintf(f, "\" name=\"");
        sb_xml_text(f, L->params[0] ? L->params : L->bench);
        fprintf(f, "\" time=\"0\">");
        if (L->verdict == SB_VERDICT_REGRESSED) {
            fprintf(f, "\n      <failure type=\"regression\" message=\"");
            sb_xml_text(f, msg);
            fprintf(f, "\">");
            sb_xml_text(f, L->key);
            fprintf(f, "</failure>\n    ");
        } else if (L->verdict == SB_VERDICT_NOT_COMPARABLE) {
            fprintf(f, "\n      <skipped message=\"");
            sb_xml_text(f, msg);
            fprintf(f, "\"/>\n    ");
        } else {
            fprintf(f, "\n      <system-out>");
            sb_xml_text(f, msg);
            fprintf(f, "</system-out>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: cannot write the JUnit report", path);
    return 0;
}

/* ---- Markdown ------------------------------------------------------------ */

/* A table cell: '|' would end the cell early, so it is escaped. */
static void md_cell(FILE *f, const char *s)
{
    fputs("| ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
    fputc(' ', f);
}

int sb_cmp_write_markdown(const sb_cmp *c, const char *title, const char *path,
                          sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    int reg = c->count[SB_VERDICT_REGRESSED];
    fprintf(f, "### %s %s\n\n", reg ? ":x:" : ":white_check_mark:",
            title ? title : "solbench comparison");
    fprintf(f,
            "Baseline `%s`, run `%s`. Two-sided Mann-Whitney U test; a "
            "change counts when p < %g and |change| > %g %%.\n\n",
            c->a_id, c->b_id, c->alpha, c->threshold_pct);
    fprintf(f, "| benchmark | point | metric | baseline | now | change | p "
               "| verdict |\n|---|---|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < c->n; i++) {
        const sb_cmp_line *L = &c->lines[i];
        char a[32] = "-", b[32] = "-", ch[32] = "-", p[32], v[256];
        char metric[64] = "-";
        if (has_values(L)) {
            fmt_num(L->a_value, a, sizeof a);
            fmt_num(L->b_value, b, sizeof b);
            snprintf(ch, sizeof ch, "%+.1f%%", L->change_pct);
            snprintf(metric, sizeof metric, "%s %s", L->metric, L->unit);
        }
        fmt_p(L, p, sizeof p);
        verdict_text(L, v, sizeof v);
        if (L->verdict == SB_VERDICT_REGRESSED) {
            char bold[300];
            snprintf(bold, sizeof bold, "**%s**", v);
            snprintf(v, sizeof v, "%s", bold);
        }
        md_cell(f, L->bench);
        md_cell(f, L->params[0] ? L->params : "-");
        md_cell(f, metric);
        md_cell(f, a);
        md_cell(f, b);
        md_cell(f, ch);
        md_cell(f, p);
        md_cell(f, v);
        fputs("|\n", f);
    }
    fprintf(f,
            "\n**%d regressed**, %d improved, %d unchanged, %d not "
            "comparable.\n",
            reg, c->count[SB_VERDICT_IMPROVED], c->count[SB_VERDICT_UNCHANGED],
            c->count[SB_VERDICT_NOT_COMPARABLE]);
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: cannot write the Markdown report",
                       path);
    return 0;
}

int sb_junit_write_error(const char *path, const char *suite, const char *name,
                         const char *message, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"solbench\" tests=\"1\" failures=\"0\" "
               "errors=\"1\" skipped=\"0\" time=\"0\">\n  <testsuite "
               "name=\"");
    sb_xml_text(f, suite ? suite : "solbench.check");
    fprintf(f, "\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" "
               "time=\"0\">\n    <testcase classname=\"solbench\" name=\"");
    sb_xml_text(f, name);
    fprintf(f, "\" time=\"0\">\n      <error type=\"not-comparable\" "
               "message=\"");
    sb_xml_text(f, message);
    fprintf(f, "\"/>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: cannot write the JUnit report", path);
    return 0;
}
