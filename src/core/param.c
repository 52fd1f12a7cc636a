/*
 * param.c — parsing parameter values, sizes, lists and ranges, and the
 * expansion of a benchmark's parameters into sweep points.
 *
 * Everything here runs before any benchmark allocates memory, so a wrong
 * key, unit or value stops the run with one line naming the parameter.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "solbench/param.h"

/* Largest number of points one benchmark's sweep may expand to. */
#define SB_MAX_POINTS 4096

/* ---- scalar values ------------------------------------------------------- */

static const struct {
    const char *unit;
    double mult;
} size_units[] = {
    {"B", 1.0},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"PiB", 1125899906842624.0},
    {"KB", 1e3},
    {"kB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
};

int sb_parse_size(const char *s, double *bytes, const char *what, sb_err *err)
{
    const char *w = what ? what : "size";
    if (!s || !*s)
        return sb_fail(err, SB_EINVAL, "%s: empty size", w);
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || strpbrk(s, "xX"))
        return sb_fail(err, SB_EINVAL, "%s: '%s' is not a size", w, s);
    while (*end == ' ')
        end++;
    double mult = 1.0;
    if (*end) {
        mult = 0.0;
        for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++)
            if (strcmp(end, size_units[i].unit) == 0)
                mult = size_units[i].mult;
        if (mult == 0.0)
            return sb_fail(err, SB_EINVAL,
                           "%s: unknown unit '%s' in '%s' (use B, KiB, MiB, "
                           "GiB, TiB, KB, MB, GB, TB)",
                           w, end, s);
    }
    if (v < 0)
        return sb_fail(err, SB_EINVAL, "%s: negative size '%s'", w, s);
    double b = v * mult;
    if (b != floor(b))
        return sb_fail(err, SB_EINVAL,
                       "%s: '%s' is not a whole number of "
                       "bytes",
                       w, s);
    if (b > 9.0e18)
        return sb_fail(err, SB_EINVAL, "%s: '%s' is too large", w, s);
    *bytes = b;
    return 0;
}

const char *sb_fmt_size(double bytes, char *buf, int len)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    double v = bytes;
    while (v >= 1024.0 && i < 5) {
        v /= 1024.0;
        i++;
    }
    if (v == floor(v))
        snprintf(buf, (size_t)len, "%.0f%s", v, u[i]);
    else
        snprintf(buf, (size_t)len, "%.3g%s", v, u[i]);
    return buf;
}

const char *sb_fmt_si(double v, const char *unit, int sig, char *buf,
                      size_t len)
{
    const char *pre[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (fabs(v) >= 1000 && i < 5) {
        v /= 1000;
        i++;
    }
    snprintf(buf, len, "%.*g %s%s", sig, v, pre[i], unit);
    return buf;
}

static int parse_bool(const char *s, bool *out)
{
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

static bool has_bounds(const sb_param_def *d)
{
    return d->min != 0 || d->max != 0;
}

static int check_bounds(const sb_param_def *d, double v, const char *s,
                        sb_err *err)
{
    if (!has_bounds(d))
        return 0;
    if (v < d->min || v > d->max) {
        char lo[32], hi[32];
        if (d->type == SB_P_SIZE) {
            sb_fmt_size(d->min, lo, sizeof lo);
            sb_fmt_size(d->max, hi, sizeof hi);
        } else {
            /* the shortest text that reads back as the bound */
            snprintf(lo, sizeof lo, "%.17g", d->min);
            snprintf(hi, sizeof hi, "%.17g", d->max);
            for (int prec = 15; prec <= 17; prec++) {
                char a[32], b[32];
                snprintf(a, sizeof a, "%.*g", prec, d->min);
                snprintf(b, sizeof b, "%.*g", prec, d->max);
                if (strtod(a, NULL) == d->min && strtod(b, NULL) == d->max) {
                    snprintf(lo, sizeof lo, "%s", a);
                    snprintf(hi, sizeof hi, "%s", b);
                    break;
                }
            }
        }
        return sb_fail(err, SB_EINVAL, "parameter %s=%s: out of range [%s, %s]",
                       d->name, s, lo, hi);
    }
    return 0;
}

static bool choice_ok(const char *choices, const char *s)
{
    size_t n = strlen(s);
    const char *c = choices;
    while (c && *c) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, s, n) == 0)
            return true;
        c = bar ? bar + 1 : NULL;
    }
    return false;
}

bool sb_list_has_empty(const char *list, char sep)
{
    const size_t n = strlen(list);
    const char twice[3] = {sep, sep, 0};
    return n > 0 && (list[0] == sep || list[n - 1] == sep ||
                     strstr(list, twice) != NULL);
}

/* A decimal number as strtod reads it, with nothing after it but
 * spaces; not the hexadecimal forms, infinities or NaNs strtod also takes
 * ("0x10", "inf"). *range: the number is beyond a double (too large, or
 * too small to be a normal one). */
bool sb_parse_decimal(const char *s, double *v, bool *range)
{
    while (*s == ' ')
        s++;
    *range = false;
    for (const char *c = s; *c; c++)
        if (!strchr("0123456789+-.eE ", *c))
            return false;
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (end == s)
        return false;
    while (*end == ' ')
        end++;
    if (*end)
        return false;
    *range = errno == ERANGE;
    return true;
}

int sb_parse_value(const sb_param_def *d, const char *s, sb_pval *out,
                   sb_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", d->name);
    out->type = d->type;
    while (*s == ' ')
        s++;
    if (strlen(s) >= SB_PTEXT_LEN)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s: value too long (at most "
                       "%d characters)",
                       d->name, SB_PTEXT_LEN - 1);
    double v;
    bool range;
    switch (d->type) {
    case SB_P_INT: {
        if (!sb_parse_decimal(s, &v, &range) || (!range && v != floor(v)) ||
            (range && fabs(v) < 1.0)) /* 1e-400 underflows: no integer */
            return sb_fail(err, SB_EINVAL, "parameter %s=%s: not an integer",
                           d->name, s);
        if (range || fabs(v) > 9.0e15)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: too large for "
                           "an integer parameter",
                           d->name, s);
        if (check_bounds(d, v, s, err))
            return SB_EINVAL;
        out->num = v;
        snprintf(out->text, sizeof out->text, "%.0f", v);
        return 0;
    }
    case SB_P_SIZE: {
        char what[64];
        snprintf(what, sizeof what, "parameter %s", d->name);
        double b;
        if (sb_parse_size(s, &b, what, err))
            return SB_EINVAL;
        if (check_bounds(d, b, s, err))
            return SB_EINVAL;
        out->num = b;
        snprintf(out->text, sizeof out->text, "%.0f", b);
        return 0;
    }
    case SB_P_FLOAT: {
        if (!sb_parse_decimal(s, &v, &range))
            return sb_fail(err, SB_EINVAL, "parameter %s=%s: not a number",
                           d->name, s);
        if (range)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: outside the "
                           "normal range of a double",
                           d->name, s);
        if (check_bounds(d, v, s, err))
            return SB_EINVAL;
        out->num = v;
        snprintf(out->text, sizeof out->text, "%.17g", v);
        /* Shortest text that reads back as the same number. */
        for (int prec = 1; prec <= 17; prec++) {
            char t[40];
            snprintf(t, sizeof t, "%.*g", prec, v);
            if (strtod(t, NULL) == v) {
                snprintf(out->text, sizeof out->text, "%s", t);
                break;
            }
        }
        return 0;
    }
    case SB_P_BOOL: {
        bool b;
        if (parse_bool(s, &b))
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: not a boolean "
                           "(use 0/1, true/false, yes/no, on/off)",
                           d->name, s);
        out->num = b ? 1.0 : 0.0;
        snprintf(out->text, sizeof out->text, "%s", b ? "true" : "false");
        return 0;
    }
    case SB_P_STR:
        if (!*s)
            return sb_fail(err, SB_EINVAL, "parameter %s: empty value",
                           d->name);
        if (d->choices && !choice_ok(d->choices, s))
            return sb_fail(err, SB_EINVAL, "parameter %s=%s: not one of %s",
                           d->name, s, d->choices);
        snprintf(out->text, sizeof out->text, "%s", s);
        return 0;
    }
    return sb_fail(err, SB_EINVAL, "parameter %s: unknown type", d->name);
}

/* ---- lookup -------------------------------------------------------------- */

const sb_pval *sb_p_find(const sb_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->v[i].name, name) == 0)
            return &p->v[i];
    return NULL;
}

static const sb_pval *must_find(const sb_params *p, const char *name)
{
    const sb_pval *v = sb_p_find(p, name);
    if (!v) {
        fprintf(stderr,
                "solbench: internal error: parameter '%s' is not "
                "declared by this benchmark\n",
                name);
        abort();
    }
    return v;
}

int64_t sb_p_int(const sb_params *p, const char *name)
{
    return (int64_t)must_find(p, name)->num;
}

double sb_p_num(const sb_params *p, const char *name)
{
    return must_find(p, name)->num;
}

double sb_pval_num(const sb_pval *v)
{
    if (!v)
        return 0;
    if (v->num != 0)
        return v->num;
    char *end;
    double x = strtod(v->text, &end);
    return end != v->text && *end == '\0' ? x : 0;
}

const char *sb_p_str(const sb_params *p, const char *name)
{
    return must_find(p, name)->text;
}

bool sb_p_bool(const sb_params *p, const char *name)
{
    return must_find(p, name)->num != 0.0;
}

int sb_p_set(sb_params *p, const char *name, const char *text, sb_err *err)
{
    for (int i = 0; i < p->n; i++) {
        if (strcmp(p->v[i].name, name) != 0)
            continue;
        sb_param_def d = {.name = p->v[i].name, .type = p->v[i].type};
        sb_pval nv;
        if (sb_parse_value(&d, text, &nv, err))
            return SB_EINVAL;
        p->v[i] = nv;
        return 0;
    }
    return sb_fail(err, SB_EINVAL, "unknown parameter '%s'", name);
}

/* ---- user settings ------------------------------------------------------- */

/* Sets key (its first klen characters) to value, over an earlier setting
 * of the same key; false when the set is full. */
static bool pset_put(sb_pset *ps, const char *key, size_t klen,
                     const char *value)
{
    int slot = ps->n;
    for (int i = 0; i < ps->n; i++)
        if (strlen(ps->kv[i].key) == klen &&
            strncmp(ps->kv[i].key, key, klen) == 0)
            slot = i;
    if (slot == ps->n) {
        if (ps->n >= SB_MAX_PARAMS)
            return false;
        ps->n++;
    }
    snprintf(ps->kv[slot].key, sizeof ps->kv[slot].key, "%.*s", (int)klen, key);
    snprintf(ps->kv[slot].value, sizeof ps->kv[slot].value, "%s", value);
    return true;
}

int sb_pset_add(sb_pset *ps, const char *kv, sb_err *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return sb_fail(err, SB_EINVAL, "-p %s: expected key=value", kv);
    size_t klen = (size_t)(eq - kv);
    if (klen >= SB_PKEY_LEN)
        return sb_fail(err, SB_EINVAL, "-p %s: key too long", kv);
    const char *colon = memchr(kv, ':', klen); /* SCOPE:key */
    if (colon && (colon == kv || colon + 1 == eq ||
                  memchr(colon + 1, ':', (size_t)(eq - colon - 1))))
        return sb_fail(err, SB_EINVAL,
                       "-p %s: expected SCOPE:key=value "
                       "(a benchmark or an area, then the key)",
                       kv);
    if (strlen(eq + 1) >= sizeof ps->kv[0].value)
        return sb_fail(err, SB_EINVAL,
                       "-p %.*s: value too long (at most %zu "
                       "characters)",
                       (int)klen, kv, sizeof ps->kv[0].value - 1);
    if (!eq[1])
        return sb_fail(err, SB_EINVAL, "-p %s: empty value", kv);
    if (!pset_put(ps, kv, klen, eq + 1))
        return sb_fail(err, SB_EINVAL, "too many -p settings");
    return 0;
}

void sb_pset_key_split(const char *key, char *scope, size_t scope_len,
                       const char **name)
{
    const char *colon = strchr(key, ':');
    size_t n = colon ? (size_t)(colon - key) : 0;
    snprintf(scope, scope_len, "%.*s", (int)n, key);
    *name = colon ? colon + 1 : key;
}

bool sb_pscope_covers(const char *scope, const char *bench)
{
    if (!scope[0] || strcmp(scope, bench) == 0)
        return true;
    size_t n = strlen(scope);
    return strncmp(scope, bench, n) == 0 && bench[n] == '.'; /* its area */
}

void sb_pset_for_bench(const sb_pset *user, const char *bench, sb_pset *out)
{
    memset(out, 0, sizeof *out);
    for (int pass = 0; pass < 2 && user; pass++)
        for (int k = 0; k < user->n; k++) {
            char scope[SB_PKEY_LEN];
            const char *name;
            sb_pset_key_split(user->kv[k].key, scope, sizeof scope, &name);
            /* out never holds more keys than user: always room */
            if ((pass == 0) == (scope[0] == 0) &&
                sb_pscope_covers(scope, bench))
                (void)pset_put(out, name, strlen(name), user->kv[k].value);
        }
}

int sb_pset_add_all(sb_pset *ps, const char *spec, sb_err *err)
{
    char buf[1024];
    if (!spec)
        return 0;
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save))
        if (sb_pset_add(ps, tok, err))
            return SB_EINVAL;
    return 0;
}

/* ---- lists and ranges ---------------------------------------------------- */

#define SB__RANGE_STEPS 65536

/* Expands one "lo..hi[:xF|:+S]" item. */
static int expand_range(const sb_param_def *d, const char *item,
                        const char *dots, sb_pval *out, int max_out, int *n,
                        sb_err *err)
{
    if (d->type != SB_P_INT && d->type != SB_P_SIZE && d->type != SB_P_FLOAT)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s: a range needs a "
                       "numeric parameter",
                       d->name);
    char lo_s[128], hi_s[128], step_s[64] = "";
    snprintf(lo_s, sizeof lo_s, "%.*s", (int)(dots - item), item);
    const char *hi_start = dots + 2;
    const char *colon = strchr(hi_start, ':');
    if (colon) {
        snprintf(hi_s, sizeof hi_s, "%.*s", (int)(colon - hi_start), hi_start);
        snprintf(step_s, sizeof step_s, "%s", colon + 1);
    } else {
        snprintf(hi_s, sizeof hi_s, "%s", hi_start);
    }
    sb_pval lo, hi;
    if (sb_parse_value(d, lo_s, &lo, err) || sb_parse_value(d, hi_s, &hi, err))
        return SB_EINVAL;
    if (hi.num < lo.num)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: range ends below "
                       "its start",
                       d->name, item);
    bool geometric = d->type == SB_P_SIZE;
    double step = geometric ? 2.0 : 1.0;
    if (step_s[0]) {
        bool ok = true, range = false;
        if (step_s[0] == 'x' || step_s[0] == '*') {
            geometric = true;
            ok = sb_parse_decimal(step_s + 1, &step, &range);
        } else if (step_s[0] == '+') {
            geometric = false;
            if (d->type == SB_P_SIZE) {
                if (sb_parse_size(step_s + 1, &step, d->name, err))
                    return SB_EINVAL;
            } else {
                ok = sb_parse_decimal(step_s + 1, &step, &range);
            }
        } else {
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: step must be "
                           "xFACTOR or +STEP",
                           d->name, item);
        }
        if (!ok || range)
            return sb_fail(err, SB_EINVAL, "parameter %s=%s: bad step '%s'",
                           d->name, item, step_s);
    }
    if ((geometric && (step <= 1.0 || lo.num <= 0)) ||
        (!geometric && step <= 0))
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: the range does not "
                       "advance (factor must be > 1 from a positive start, "
                       "step > 0)",
                       d->name, item);
    /* Steps so small that the range would take more than SB__RANGE_STEPS of
     * them (most rounding to values already taken, for an integer) are
     * refused before the walk: 1..16:+1e-20 would never end. */
    const double steps =
        geometric ? log(hi.num / lo.num) / log(step) : (hi.num - lo.num) / step;
    /* every step a new value: a float, or whole steps of a whole range */
    const bool distinct =
        d->type == SB_P_FLOAT ||
        (geometric ? lo.num * (step - 1.0) >= 1.0 : step >= 1.0);
    if (distinct && steps + 1 > max_out - *n)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: more than %d "
                       "values",
                       d->name, item, max_out);
    if (!(steps <= SB__RANGE_STEPS))
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: the step is too "
                       "small (%.3g steps; at most %d)",
                       d->name, item, steps, SB__RANGE_STEPS);
    double v = lo.num;
    double last = 0.0;
    bool first = true;
    while (v <= hi.num * (1 + 1e-12)) {
        double x = v;
        if (d->type != SB_P_FLOAT)
            x = floor(x + 0.5);
        if (first || x != last) {
            first = false;
            if (*n >= max_out)
                return sb_fail(err, SB_EINVAL,
                               "parameter %s=%s: more than "
                               "%d values",
                               d->name, item, max_out);
            char t[64];
            snprintf(t, sizeof t, "%.17g", x);
            if (sb_parse_value(d, t, &out[*n], err))
                return SB_EINVAL;
            (*n)++;
            last = x;
        }
        const double next = geometric ? v * step : v + step;
        if (next == v)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: the step is "
                           "below the precision of %.17g",
                           d->name, item, v);
        v = next;
    }
    return 0;
}

int sb_expand_values(const sb_param_def *d, const char *spec, sb_pval *out,
                     int max_out, sb_err *err)
{
    char buf[512];
    if (strlen(spec) >= sizeof buf)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s: value list too long "
                       "(at most %zu characters)",
                       d->name, sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    int n = 0;
    /* A free-text string parameter is one value even with commas in it
     * only when it declares no choices and is not a list type; lists are
     * the common case, so commas always split. */
    if (sb_list_has_empty(buf, ','))
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: an empty item in "
                       "the list",
                       d->name, spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        const char *dots = strstr(item, "..");
        if (dots) {
            if (expand_range(d, item, dots, out, max_out, &n, err))
                return SB_EINVAL;
            continue;
        }
        if (n >= max_out)
            return sb_fail(err, SB_EINVAL, "parameter %s: more than %d values",
                           d->name, max_out);
        if (sb_parse_value(d, item, &out[n], err))
            return SB_EINVAL;
        n++;
    }
    if (n == 0)
        return sb_fail(err, SB_EINVAL, "parameter %s: no value", d->name);
    return n;
}

int sb_params_expand(const char *bench, const sb_param_def *defs,
                     const sb_pset *const *layers, const bool *lenient,
                     int nlayers, sb_params **points, int *npoints, sb_err *err)
{
    int ndefs = 0;
    while (defs && defs[ndefs].name)
        ndefs++;
    if (ndefs > SB_MAX_PARAMS)
        return sb_fail(err, SB_EINVAL, "%s: too many parameters", bench);

    /* Unknown keys in strict layers. */
    for (int l = 0; l < nlayers; l++) {
        if (!layers[l] || (lenient && lenient[l]))
            continue;
        for (int k = 0; k < layers[l]->n; k++) {
            bool known = false;
            for (int i = 0; i < ndefs; i++)
                if (strcmp(defs[i].name, layers[l]->kv[k].key) == 0)
                    known = true;
            if (!known) {
                char names[512] = "";
                for (int i = 0; i < ndefs; i++) {
                    strncat(names, defs[i].name,
                            sizeof names - strlen(names) - 3);
                    if (i + 1 < ndefs)
                        strncat(names, ", ", sizeof names - strlen(names) - 1);
                }
                return sb_fail(err, SB_EINVAL,
                               "unknown parameter '%s' for %s "
                               "(it takes: %s)",
                               layers[l]->kv[k].key, bench,
                               ndefs ? names : "no parameters");
            }
        }
    }

    sb_pval *vals[SB_MAX_PARAMS] = {0};
    int nvals[SB_MAX_PARAMS] = {0};
    long total = 1;
    int rc = 0;
    for (int i = 0; i < ndefs; i++) {
        const char *spec = defs[i].def ? defs[i].def : "";
        for (int l = 0; l < nlayers; l++)
            for (int k = 0; layers[l] && k < layers[l]->n; k++)
                if (strcmp(layers[l]->kv[k].key, defs[i].name) == 0)
                    spec = layers[l]->kv[k].value;
        vals[i] = malloc(SB_MAX_SWEEP_VALUES * sizeof(sb_pval));
        if (!vals[i]) {
            rc = sb_fail(err, SB_ENOMEM, "out of memory");
            goto out;
        }
        int n =
            sb_expand_values(&defs[i], spec, vals[i], SB_MAX_SWEEP_VALUES, err);
        if (n < 0) {
            rc = n;
            goto out;
        }
        nvals[i] = n;
        total *= n;
        if (total > SB_MAX_POINTS) {
            rc = sb_fail(err, SB_EINVAL,
                         "%s: the sweep has more than %d "
                         "points",
                         bench, SB_MAX_POINTS);
            goto out;
        }
    }

    sb_params *pts = calloc((size_t)total, sizeof *pts);
    if (!pts) {
        rc = sb_fail(err, SB_ENOMEM, "out of memory");
        goto out;
    }
    /* Cartesian product: the first declared parameter is the outermost
     * loop, the last varies fastest. */
    for (long p = 0; p < total; p++) {
        long rem = p;
        pts[p].n = ndefs;
        for (int i = ndefs - 1; i >= 0; i--) {
            pts[p].v[i] = vals[i][rem % nvals[i]];
            rem /= nvals[i];
        }
    }
    *points = pts;
    *npoints = (int)total;
out:
    for (int i = 0; i < ndefs; i++)
        free(vals[i]);
    return rc;
}

const char *sb_params_fmt(const sb_params *p, char *buf, int len)
{
    buf[0] = 0;
    size_t used = 0;
    for (int i = 0; i < p->n && used + 1 < (size_t)len; i++) {
        char v[SB_PTEXT_LEN];
        if (p->v[i].type == SB_P_SIZE) {
            /* a label must name the point exactly: 1025B is not 1KiB */
            sb_fmt_size(p->v[i].num, v, sizeof v);
            double back;
            sb_err ignore;
            if (sb_parse_size(v, &back, NULL, &ignore) || back != p->v[i].num)
                snprintf(v, sizeof v, "%.0fB", p->v[i].num);
        } else
            snprintf(v, sizeof v, "%s", p->v[i].text);
        int w = snprintf(buf + used, (size_t)len - used, "%s%s=%s",
                         i ? " " : "", p->v[i].name, v);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}
