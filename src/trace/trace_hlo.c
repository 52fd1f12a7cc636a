/*
 * trace_hlo.c — shapes for XLA ops from the compiled module's HLO text.
 *
 * JAX's profiler writes an op's name (its HLO instruction) but, on CPU and
 * often elsewhere, not its shapes. The text of the compiled module
 * (`jax.jit(f).lower(...).compile().as_text()`, or XLA's
 * --xla_dump_to) has every instruction with its operand and output
 * shapes: each instruction's cost is computed from its line, and a
 * fusion's FLOPs are those of the dots and convolutions of the
 * computation it calls (and of the fusions that one calls), its bytes
 * its own operands and outputs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "solbench/fileio.h"
#include "solbench/trace.h"

/* The largest HLO text read. */
#define HLO_MAX_BYTES (256L << 20)

typedef struct instr {
    const char *name; /* into the text, NUL-terminated in place */
    size_t nlen;
    const char *line;
    int comp; /* computation index */
} instr;

typedef struct comp {
    char name[160];
    size_t first, n; /* its instructions */
} comp;

static const char *skip_pct(const char *p)
{
    return *p == '%' ? p + 1 : p;
}

static int find_comp(const comp *c, int nc, const char *name, size_t len)
{
    for (int i = 0; i < nc; i++)
        if (strlen(c[i].name) == len && strncmp(c[i].name, name, len) == 0)
            return i;
    return -1;
}

/* The output shape text of an instruction line ("f32[32,64]{1,0}", or a
 * tuple "(f32[2]{0}, s32[])"): *len its length. */
static const char *out_shape(const char *line, size_t *len)
{
    const char *p = strstr(line, " = ");
    if (!p) {
        *len = 0;
        return line;
    }
    p += 3;
    if (*p == '(') {
        int d = 0;
        const char *q = p;
        for (; *q; q++) {
            d += *q == '(';
            d -= *q == ')';
            if (d == 0)
                break;
        }
        *len = (size_t)(q - p) + (*q ? 1 : 0);
    } else {
        *len = strcspn(p, " ");
    }
    return p;
}

/* The line with each operand's shape written before it, as XLA prints
 * operands in the long form ("dot(f32[32,64]{1,0} %a, ...)"): the
 * compiled module's text names operands alone ("dot(%a, %b)"); their
 * shapes are those of the instructions of the same computation that
 * define them. malloc'ed; NULL when out of memory. */
static char *expand(const instr *in, const comp *c, const instr *self)
{
    const char *line = self->line;
    const char *eq = strstr(line, " = ");
    const char *open = eq ? eq + 3 : NULL;
    if (open) { /* past the output shape and its layout ({1,0:T(8,128)}) */
        size_t l;
        out_shape(line, &l);
        open += l;
    }
    open = open ? strchr(open, '(') : NULL;
    if (!open)
        return strdup(line);
    size_t cap = strlen(line) * 2 + 256, n = 0;
    char *o = malloc(cap);
    if (!o)
        return NULL;
#define PUT(s, l)                                                              \
    do {                                                                       \
        size_t l_ = (l);                                                       \
        if (n + l_ + 1 > cap) {                                                \
            cap = (n + l_ + 1) * 2;                                            \
            char *q_ = realloc(o, cap);                                        \
            if (!q_) {                                                         \
                free(o);                                                       \
                return NULL;                                                   \
            }                                                                  \
            o = q_;                                                            \
        }                                                                      \
        memcpy(o + n, (s), l_);                                                \
        n += l_;                                                               \
    } while (0)
    PUT(line, (size_t)(open - line) + 1);
    const char *p = open + 1;
    int depth = 0;
    while (*p) {
        /* one operand: up to ',' or ')' at depth 0 (XLA writes a
         * comment, index=5, before every fifth: skipped) */
        while (*p == ' ')
            p++;
        if (p[0] == '/' && p[1] == '*' && strstr(p, "*/")) {
            p = strstr(p, "*/") + 2;
            while (*p == ' ')
                p++;
        }
        const char *a = p;
        for (; *p; p++) {
            if (*p == '(' || *p == '{' || *p == '[')
                depth++;
            else if (*p == ')' || *p == '}' || *p == ']') {
                if (depth == 0)
                    break;
                depth--;
            } else if (*p == ',' && depth == 0)
                break;
        }
        size_t al = (size_t)(p - a);
        if (al && (a[0] == '%' || isalpha((unsigned char)a[0])) &&
            !memchr(a, '[', al) && !memchr(a, ' ', al)) {
            const char *nm = skip_pct(a);
            size_t nl = al - (size_t)(nm - a);
            for (size_t k = c[self->comp].first;
                 k < c[self->comp].first + c[self->comp].n; k++)
                if (in[k].nlen == nl && strncmp(in[k].name, nm, nl) == 0) {
                    size_t sl;
                    const char *sh = out_shape(in[k].line, &sl);
                    PUT(sh, sl);
                    PUT(" ", 1);
                    break;
                }
        }
        PUT(a, al);
        if (*p == ',') {
            PUT(", ", 2);
            p++;
            continue;
        }
        break;
    }
    PUT(p, strlen(p));
    o[n] = '\0';
#undef PUT
    return o;
}

/* The JAX named scope of an instruction, from its metadata's op_name
 * ("jit(train_step)/transpose(jvp(attention))/dot_general" ->
 * "attention (backward)"): the function and the primitive dropped, the
 * transformations (jvp, transpose, vmap, remat, ...) unwrapped, einsum
 * specs and empty ones left out. "" when it names none. */
static void scope_of(const char *line, char *out, size_t len)
{
    out[0] = '\0';
    const char *m = strstr(line, "op_name=\"");
    if (!m)
        return;
    m += 9;
    size_t ml = strcspn(m, "\";");
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s",
             (int)(ml < sizeof buf ? ml : sizeof buf - 1), m);
    /* components at depth 0 */
    char *part[32];
    int nc = 0, depth = 0;
    char *start = buf;
    for (char *p = buf;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == '/' && depth == 0) || *p == '\0') {
            bool end = *p == '\0';
            *p = '\0';
            if (nc < 32)
                part[nc++] = start;
            start = p + 1;
            if (end)
                break;
        }
    }
    bool bwd = false;
    size_t n = 0;
    /* the first (the jitted function) and the last (the primitive) go */
    for (int i = 1; i + 1 < nc; i++) {
        char *c = part[i];
        char *open;
        while ((open = strchr(c, '(')) && c[strlen(c) - 1] == ')') {
            if (strncmp(c, "transpose(", 10) == 0)
                bwd = true;
            c[strlen(c) - 1] = '\0';
            c = open + 1;
        }
        if (!*c || strpbrk(c, ",->() "))
            continue;
        int w = snprintf(out + n, len - n, "%s%s", n ? "/" : "", c);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (n && bwd)
        snprintf(out + n, len - n, " (backward)");
}

/* The cost of one instruction, its operands' shapes found. */
static void instr_cost(const instr *in, const comp *c, const instr *self,
                       sb_tr_cost *x)
{
    char nm[256];
    snprintf(nm, sizeof nm, "%.*s", (int)self->nlen, self->name);
    char *l = expand(in, c, self);
    sb_tr_cost_hlo(nm, l ? l : self->line, x);
    free(l);
}

/* FLOPs of the dots and convolutions of computation `ci`, with the
 * fusions and calls in it, to a depth of 8. */
static double comp_flops(const comp *c, int nc, const instr *in, int ci,
                         int depth)
{
    if (ci < 0 || depth > 8)
        return 0;
    double f = 0;
    for (size_t k = c[ci].first; k < c[ci].first + c[ci].n; k++) {
        sb_tr_cost x;
        instr_cost(in, c, &in[k], &x);
        if (x.cat == SB_TC_MATMUL || x.cat == SB_TC_CONV)
            f += x.flops;
        const char *calls = strstr(in[k].line, "calls=");
        if (calls) {
            calls = skip_pct(calls + 6);
            size_t len = strcspn(calls, ", }");
            f += comp_flops(c, nc, in, find_comp(c, nc, calls, len), depth + 1);
        }
    }
    return f;
}

/* The whole of the HLO text at path, NUL-terminated, into *out
 * (malloc'ed): at most HLO_MAX_BYTES, with a 'HloModule' line. */
static int read_text(const char *path, char **out, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "r", &f, err);
    if (rc)
        return rc;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > HLO_MAX_BYTES) {
        fclose(f);
        return sb_fail(err, SB_EINVAL,
                       "%s: %lld bytes, more than the %ld an HLO text may "
                       "have here",
                       path, (long long)st.st_size, HLO_MAX_BYTES);
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return sb_fail(err, SB_ENOMEM, "out of memory reading %s", path);
    }
    size_t r;
    while ((r = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            if (cap > (size_t)HLO_MAX_BYTES) {
                free(buf);
                fclose(f);
                return sb_fail(err, SB_EINVAL, "%s: more than %ld bytes", path,
                               HLO_MAX_BYTES);
            }
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                fclose(f);
                return sb_fail(err, SB_ENOMEM, "out of memory reading %s",
                               path);
            }
            buf = p;
            cap *= 2;
        }
    }
    bool rerr = ferror(f);
    fclose(f);
    buf[n] = '\0';
    if (rerr) {
        free(buf);
        return sb_fail(err, SB_EIO, "%s: read failed", path);
    }
    if (!strstr(buf, "HloModule")) {
        free(buf);
        return sb_fail(err, SB_EINVAL,
                       "%s: not HLO text (no 'HloModule' line: write it with "
                       "jax.jit(f).lower(...).compile().as_text())",
                       path);
    }
    *out = buf;
    return 0;
}

/* A module's computations and their instructions. */
typedef struct module {
    instr *in;
    comp *c;
    size_t nin, incap;
    int nc, ccap;
} module;

/* Cuts the text into lines, in place: computations (a header ending in
 * '{') and their instructions ("[ROOT ]%name = ..."). 0 or SB_ENOMEM. */
static int parse_module(char *buf, module *m)
{
    int cur = -1;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t ll = strlen(line);
        if (ll && line[ll - 1] == '\r') /* a file with CRLF lines */
            line[ll - 1] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        if (p == line && len && p[len - 1] == '{' && strchr(p, '(')) {
            if (m->nc == m->ccap) {
                m->ccap = m->ccap ? m->ccap * 2 : 64;
                comp *q = realloc(m->c, (size_t)m->ccap * sizeof *q);
                if (!q)
                    return SB_ENOMEM;
                m->c = q;
            }
            const char *h = p;
            if (strncmp(h, "ENTRY ", 6) == 0)
                h += 6;
            h = skip_pct(h);
            size_t hl = strcspn(h, " (");
            comp *c = &m->c[m->nc];
            snprintf(c->name, sizeof c->name, "%.*s", (int)hl, h);
            c->first = m->nin;
            c->n = 0;
            cur = m->nc++;
        } else if (p == line && *p == '}') {
            cur = -1;
        } else if (cur >= 0 && strstr(p, " = ")) {
            if (strncmp(p, "ROOT ", 5) == 0)
                p += 5;
            p = (char *)skip_pct(p);
            if (m->nin == m->incap) {
                m->incap = m->incap ? m->incap * 2 : 1024;
                instr *q = realloc(m->in, m->incap * sizeof *q);
                if (!q)
                    return SB_ENOMEM;
                m->in = q;
            }
            m->in[m->nin] = (instr){p, strcspn(p, " "), p, cur};
            m->c[cur].n++;
            m->nin++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Each instruction's cost and named scope into costs[id] and scopes[id],
 * id the trace's string id of its name (below nkeys: the ids the trace
 * had before the scopes); names the trace does not have are skipped, and
 * so are those an earlier module costed. */
static void module_costs(sb_trace *t, const module *m, size_t nkeys,
                         sb_tr_cost *costs, int32_t *scopes)
{
    const instr *in = m->in;
    for (size_t k = 0; k < m->nin; k++) {
        char nm[256];
        snprintf(nm, sizeof nm, "%.*s", (int)in[k].nlen, in[k].name);
        /* only names the trace has */
        int32_t id = sb_trace_str_id(t, nm);
        if (id < 0 || (size_t)id >= nkeys || costs[id].cat != SB_TC_UNKNOWN ||
            costs[id].bytes > 0)
            continue; /* not in the trace, or an earlier module's */
        sb_tr_cost x;
        instr_cost(in, m->c, &in[k], &x);
        const char *calls = strstr(in[k].line, "calls=");
        if (calls && strstr(in[k].line, " fusion(")) {
            const char *cn = skip_pct(calls + 6);
            double fl =
                comp_flops(m->c, m->nc, in,
                           find_comp(m->c, m->nc, cn, strcspn(cn, ", }")), 0);
            if (fl > 0) {
                x.cat = SB_TC_MATMUL;
                x.flops = fl;
            }
        }
        char sc[128];
        scope_of(in[k].line, sc, sizeof sc);
        scopes[id] = sc[0] ? sb_trace_intern(t, sc) : -1;
        if (x.cat == SB_TC_UNKNOWN && x.bytes <= 0)
            continue;
        costs[id] = x;
    }
}

/* The events that got a cost, by their name or their signature. */
static int count_matched(const sb_trace *t)
{
    int matched = 0;
    for (size_t i = 0; i < t->n; i++) {
        int32_t keys[2] = {t->ev[i].name, t->ev[i].sig};
        for (int q = 0; q < 2; q++) {
            int32_t k = keys[q];
            if (k >= 0 && (size_t)k < t->nhlo &&
                (t->hlo[k].cat != SB_TC_UNKNOWN || t->hlo[k].bytes > 0)) {
                matched++;
                break;
            }
        }
    }
    return matched;
}

int sb_trace_add_hlo(sb_trace *t, const char *path, int *matched, sb_err *err)
{
    *matched = 0;
    char *buf = NULL;
    int rc = read_text(path, &buf, err);
    if (rc)
        return rc;
    module m = {0};
    rc = parse_module(buf, &m);
    /* the costs, by the trace's string ids of the instruction names */
    sb_tr_cost *costs = NULL;
    int32_t *scopes = NULL;
    size_t nkeys = t->nstr; /* the ids the trace had before the scopes */
    if (!rc && m.nin) {
        costs = calloc(nkeys ? nkeys : 1, sizeof *costs);
        scopes = malloc((nkeys ? nkeys : 1) * sizeof *scopes);
        if (!costs || !scopes)
            rc = SB_ENOMEM;
        for (size_t k = 0; scopes && k < nkeys; k++)
            scopes[k] = -1;
    }
    if (!rc && m.nin)
        module_costs(t, &m, nkeys, costs, scopes);
    if (!rc) {
        free(t->hlo);
        free(t->hlo_scope);
        t->hlo = costs;
        t->hlo_scope = scopes;
        t->nhlo = costs ? nkeys : 0;
        costs = NULL;
        scopes = NULL;
        *matched = count_matched(t);
    }
    free(costs);
    free(scopes);
    free(m.in);
    free(m.c);
    free(buf);
    if (rc == SB_ENOMEM)
        return sb_fail(err, SB_ENOMEM, "out of memory reading %s", path);
    return rc;
}
