/*
 * attention.c — the backend-independent half of the attention primitives:
 * FLOP and byte accounting, ragged batch construction (lengths, query
 * offsets, shuffled page tables), the double-precision reference and the
 * verification every backend's output goes through. See
 * include/solbench/attention.h for the layouts.
 */
#include "solbench/attention.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/util.h"

/* ---- accounting ---------------------------------------------------------- */

double sb_attn_pairs(int64_t sq, int64_t skv, bool causal)
{
    if (sq <= 0 || skv <= 0)
        return 0.0;
    if (!causal)
        return (double)sq * (double)skv;
    /* Query i sees clamp(i + off + 1, 0, skv) keys, off = skv - sq: sum the
     * arithmetic run in closed form instead of looping over 8192 queries. */
    int64_t off = skv - sq;
    double total = 0.0;
    /* i from i0 (first with >= 1 key) to i1 (last below full skv). */
    int64_t i0 = off >= 0 ? 0 : -off; /* i + off + 1 >= 1 */
    int64_t ifull = skv - off - 1;    /* i + off + 1 >= skv */
    if (ifull < i0)
        ifull = i0;
    int64_t a = i0, b = (ifull < sq ? ifull : sq); /* [a, b): partial */
    if (b > a) {
        double first = (double)(a + off + 1), last = (double)(b - 1 + off + 1);
        total += (first + last) * (double)(b - a) / 2.0;
    }
    if (sq > b)
        total += (double)(sq - b) * (double)skv;
    return total;
}

sb_bmm_shape sb_bmm_shape_of(const sb_params *p)
{
    sb_bmm_shape s = {sb_p_int(p, "batch"), sb_p_int(p, "m"), sb_p_int(p, "n"),
                      sb_p_int(p, "k")};
    const char *shape = sb_p_str(p, "shape");
    int64_t seq = sb_p_int(p, "seq"), d = sb_p_int(p, "head_dim");
    if (strcmp(shape, "qk") == 0) {
        s.m = seq;
        s.n = seq;
        s.k = d;
    } else if (strcmp(shape, "pv") == 0) {
        s.m = seq;
        s.n = d;
        s.k = seq;
    }
    return s;
}

int sb_attn_check_heads(const char *bench, int64_t hq, int64_t hkv, int64_t d,
                        sb_err *err)
{
    if (hq < 1)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter q_heads=%lld: must be "
                       ">= 1",
                       bench, (long long)hq);
    if (hkv < 1)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter kv_heads=%lld: must be "
                       ">= 1",
                       bench, (long long)hkv);
    if (hq % hkv)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter kv_heads=%lld must "
                       "divide q_heads=%lld (GQA groups)",
                       bench, (long long)hkv, (long long)hq);
    if (d < 1)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter head_dim=%lld: must be "
                       ">= 1",
                       bench, (long long)d);
    return 0;
}

int sb_paged_shape_of(const sb_params *p, sb_paged_shape *s, sb_err *err)
{
    static const char b[] = "attention.paged_decode";
    memset(s, 0, sizeof *s);
    int64_t hq = sb_p_int(p, "q_heads"), hkv = sb_p_int(p, "kv_heads");
    int64_t d = sb_p_int(p, "head_dim"), ps = sb_p_int(p, "page_size");
    int rc = sb_attn_check_heads(b, hq, hkv, d, err);
    if (rc)
        return rc;
    if (ps < 1)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter page_size=%lld: must be "
                       ">= 1",
                       b, (long long)ps);
    int64_t *len = malloc(SB_PAGED_MAX_BATCH * sizeof *len);
    if (!len)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", b);
    int64_t batch = sb_p_int(p, "batch");
    rc = sb_paged_parse_lens(sb_p_str(p, "lens"), &batch,
                             (uint64_t)sb_p_int(p, "seed"), len, "lens", err);
    if (!rc)
        rc = sb_paged_shape_init(s, batch, len, hq, hkv, d, ps,
                                 sb_p_int(p, "chunk"),
                                 sb_p_int(p, "chunk_every"), err);
    free(len);
    /* the KV cache's element type, where the backend takes one */
    const char *kv = sb_p_find(p, "kv_dtype") ? sb_p_str(p, "kv_dtype") : NULL;
    if (!rc)
        s->kv_bytes = kv && strcmp(kv, "bf16") == 0  ? 2
                      : kv && strcmp(kv, "fp8") == 0 ? 1
                                                     : 4;
    return rc;
}

double sb_paged_footprint(const sb_paged_shape *s)
{
    /* K and V pools, Q and O, and the page table. */
    double pool = (double)s->total_pages * s->hkv * s->page_size * s->d;
    double kvb = s->kv_bytes > 0 ? s->kv_bytes : 4;
    return kvb * 2.0 * pool + 4.0 * 2.0 * (double)s->total_q * s->hq * s->d +
           4.0 * (double)s->total_pages;
}

double sb_bmm_flops(const sb_bmm_shape *s)
{
    return 2.0 * (double)s->batch * (double)s->m * (double)s->n * (double)s->k;
}

double sb_bmm_bytes(const sb_bmm_shape *s, int elem_bytes)
{
    double bt = (double)s->batch;
    return bt *
           ((double)s->m * (double)s->k + (double)s->k * (double)s->n +
            (double)s->m * (double)s->n) *
           (double)elem_bytes;
}

double sb_prefill_flops(const sb_prefill_shape *s)
{
    return 4.0 * (double)s->batch * (double)s->hq * (double)s->d *
           sb_attn_pairs(s->sq, s->skv, s->causal);
}

double sb_prefill_bytes(const sb_prefill_shape *s)
{
    double q = (double)s->batch * (double)s->hq * (double)s->sq * (double)s->d;
    double kv =
        (double)s->batch * (double)s->hkv * (double)s->skv * (double)s->d;
    return 4.0 * (2.0 * q + 2.0 * kv);
}

double sb_paged_flops(const sb_paged_shape *s)
{
    double pairs = 0.0;
    for (int64_t i = 0; i < s->batch; i++)
        for (int64_t u = 0; u < sb_paged_qlen(s, i); u++)
            pairs += (double)sb_paged_keys(s, i, u);
    return 4.0 * (double)s->hq * (double)s->d * pairs;
}

double sb_paged_bytes(const sb_paged_shape *s)
{
    double kv = 2.0 * (double)s->total_keys * (double)s->hkv * (double)s->d;
    double qo = 2.0 * (double)s->total_q * (double)s->hq * (double)s->d;
    double kvb = s->kv_bytes > 0 ? s->kv_bytes : 4;
    return kvb * kv + 4.0 * qo + 4.0 * (double)s->total_pages;
}

/* ---- ragged batches ------------------------------------------------------ */

int sb_paged_parse_lens(const char *spec, int64_t *batch, uint64_t seed,
                        int64_t *len, const char *what, sb_err *err)
{
    if (!spec || !*spec)
        return sb_fail(err, SB_EINVAL, "parameter %s: empty", what);
    if (strncmp(spec, "uniform:", 8) == 0) {
        char *end;
        errno = 0;
        long long lo = strtoll(spec + 8, &end, 10);
        if (end == spec + 8 || *end != ':')
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: want uniform:LO:HI", what, spec);
        const char *p2 = end + 1;
        long long hi = strtoll(p2, &end, 10);
        if (end == p2 || *end || errno)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: want uniform:LO:HI", what, spec);
        if (lo < 0 || hi < lo || hi > SB_PAGED_MAX_LEN)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: need 0 <= LO <= HI <= %d", what,
                           spec, SB_PAGED_MAX_LEN);
        if (*batch < 1 || *batch > SB_PAGED_MAX_BATCH)
            return sb_fail(err, SB_EINVAL,
                           "parameter batch=%lld: need 1..%d with %s=uniform",
                           (long long)*batch, SB_PAGED_MAX_BATCH, what);
        uint64_t st = seed ^ 0x6c656e73ULL;
        for (int64_t i = 0; i < *batch; i++)
            len[i] = lo + (int64_t)(sb_rng_next(&st) % (uint64_t)(hi - lo + 1));
        return 0;
    }
    /* An explicit list, separated by ',' (or '/', for sweeps that already
     * split on commas). */
    int64_t n = 0;
    const char *p = spec;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0 || v > SB_PAGED_MAX_LEN)
            return sb_fail(err, SB_EINVAL,
                           "parameter %s=%s: want uniform:LO:HI or a list of "
                           "lengths in 0..%d",
                           what, spec, SB_PAGED_MAX_LEN);
        if (n >= SB_PAGED_MAX_BATCH)
            return sb_fail(err, SB_EINVAL, "parameter %s: more than %d lengths",
                           what, SB_PAGED_MAX_BATCH);
        len[n++] = v;
        if (*end == ',' || *end == '/' || *end == ':')
            end++;
        else if (*end)
            return sb_fail(err, SB_EINVAL, "parameter %s=%s: unexpected '%c'",
                           what, spec, *end);
        p = end;
    }
    if (*batch > 0 && *batch != n)
        return sb_fail(err, SB_EINVAL,
                       "parameter %s=%s: %lld lengths for batch=%lld (set "
                       "batch=0 to take the list's count)",
                       what, spec, (long long)n, (long long)*batch);
    *batch = n;
    return 0;
}

int sb_paged_shape_init(sb_paged_shape *s, int64_t batch, const int64_t *len,
                        int64_t hq, int64_t hkv, int64_t d, int64_t page_size,
                        int64_t chunk, int64_t chunk_every, sb_err *err)
{
    memset(s, 0, sizeof *s);
    if (batch < 1 || hq < 1 || hkv < 1 || d < 1 || page_size < 1)
        return sb_fail(err, SB_EINVAL, "paged attention: empty shape");
    if (hq % hkv)
        return sb_fail(err, SB_EINVAL,
                       "parameter kv_heads=%lld: must divide q_heads=%lld",
                       (long long)hkv, (long long)hq);
    s->batch = batch;
    s->hq = hq;
    s->hkv = hkv;
    s->d = d;
    s->page_size = page_size;
    s->len = malloc((size_t)batch * sizeof *s->len);
    s->cu_q = malloc((size_t)(batch + 1) * sizeof *s->cu_q);
    s->cu_pages = malloc((size_t)(batch + 1) * sizeof *s->cu_pages);
    if (!s->len || !s->cu_q || !s->cu_pages) {
        sb_paged_shape_free(s);
        return sb_fail(err, SB_ENOMEM, "paged attention: out of memory");
    }
    s->cu_q[0] = 0;
    s->cu_pages[0] = 0;
    for (int64_t i = 0; i < batch; i++) {
        int64_t q = 1;
        if (chunk > 0 && chunk_every > 0 && i % chunk_every == 0) {
            q = chunk < len[i] ? chunk : len[i];
            if (q < 1)
                q = 1;
        }
        s->len[i] = len[i];
        s->cu_q[i + 1] = s->cu_q[i] + q;
        s->cu_pages[i + 1] =
            s->cu_pages[i] + (len[i] + page_size - 1) / page_size;
        s->total_keys += len[i];
        if (len[i] > s->max_len)
            s->max_len = len[i];
    }
    s->total_q = s->cu_q[batch];
    s->total_pages = s->cu_pages[batch];
    return 0;
}

void sb_paged_shape_free(sb_paged_shape *s)
{
    free(s->len);
    free(s->cu_q);
    free(s->cu_pages);
    s->len = s->cu_q = s->cu_pages = NULL;
}

void sb_paged_shuffle_table(int32_t *table, int64_t total_pages, uint64_t seed)
{
    for (int64_t i = 0; i < total_pages; i++)
        table[i] = (int32_t)i;
    uint64_t st = seed ^ 0x70616765ULL;
    for (int64_t i = total_pages - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(sb_rng_next(&st) % (uint64_t)(i + 1));
        int32_t t = table[i];
        table[i] = table[j];
        table[j] = t;
    }
}

/* Uniform values in [-1, 1) from seed into f (fp32) or h (rounded to
 * bf16). Each block of 4096 elements has its own stream, so the values
 * do not depend on how many threads fill them. */
static void attn_fill(float *f, uint16_t *h, size_t n, uint64_t seed)
{
    const size_t blk = 4096;
    size_t nblk = (n + blk - 1) / blk;
#pragma omp parallel for schedule(static)
    for (size_t b = 0; b < nblk; b++) {
        uint64_t st = seed * 0x9e3779b97f4a7c15ULL + b;
        size_t end = (b + 1) * blk < n ? (b + 1) * blk : n;
        for (size_t i = b * blk; i < end; i++) {
            float v = (float)(2.0 * sb_rng_unif(&st) - 1.0);
            if (h)
                h[i] = sb_bf16_from_f32(v);
            else
                f[i] = v;
        }
    }
}

void sb_attn_fill_bf16(uint16_t *x, size_t n, uint64_t seed)
{
    attn_fill(NULL, x, n, seed);
}

void sb_attn_fill(float *x, size_t n, uint64_t seed)
{
    attn_fill(x, NULL, n, seed);
}

/* ---- reference ----------------------------------------------------------- */

void sb_attn_ref_row(const float *q, const float *k, const float *v, int64_t n,
                     int64_t kstride, int64_t vstride, int64_t d, double scale,
                     double *out)
{
    for (int64_t c = 0; c < d; c++)
        out[c] = 0.0;
    if (n <= 0)
        return;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return;
    double mx = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        double acc = 0.0;
        for (int64_t c = 0; c < d; c++)
            acc += (double)q[c] * (double)k[j * kstride + c];
        s[j] = acc * scale;
        if (s[j] > mx)
            mx = s[j];
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t c = 0; c < d; c++)
            out[c] += s[j] * (double)v[j * vstride + c];
    for (int64_t c = 0; c < d; c++)
        out[c] /= sum;
    free(s);
}

static void check_init(sb_attn_check *c)
{
    memset(c, 0, sizeof *c);
    c->first_bad = -1;
}

/* Compares one output element against the reference. */
static void check_elem(sb_attn_check *c, double o, double ref, int64_t idx)
{
    double diff = fabs(o - ref);
    double atol = c->atol > SB_ATTN_ATOL ? c->atol : SB_ATTN_ATOL;
    double lim = atol + SB_ATTN_RTOL * fabs(ref);
    c->checked++;
    if (diff > c->max_abs)
        c->max_abs = diff;
    if (diff / lim > c->max_rel)
        c->max_rel = diff / lim;
    if (!(diff <= lim)) { /* NaN fails too */
        if (c->bad == 0)
            c->first_bad = idx;
        c->bad++;
    }
}

void sb_bmm_verify(const sb_bmm_shape *s, const float *a, const float *b,
                   const float *c, int64_t samples, uint64_t seed,
                   sb_attn_check *out)
{
    check_init(out);
    int64_t total = s->batch * s->m * s->n;
    out->total = total;
    bool all = samples >= total;
    int64_t count = all ? total : samples;
    uint64_t st = seed ^ 0x626d6dULL;
    for (int64_t t = 0; t < count; t++) {
        int64_t idx = all ? t : (int64_t)(sb_rng_next(&st) % (uint64_t)total);
        int64_t bt = idx / (s->m * s->n), rem = idx % (s->m * s->n);
        int64_t i = rem / s->n, j = rem % s->n;
        const float *ar = a + (bt * s->m + i) * s->k;
        const float *bc = b + bt * s->k * s->n + j;
        double acc = 0.0, mag = 0.0;
        for (int64_t kk = 0; kk < s->k; kk++) {
            double p = (double)ar[kk] * (double)bc[kk * s->n];
            acc += p;
            mag += fabs(p);
        }
        double diff = fabs((double)c[idx] - acc);
        double lim = SB_BMM_TOL * mag + 1e-30;
        out->checked++;
        if (diff > out->max_abs)
            out->max_abs = diff;
        if (diff / lim > out->max_rel)
            out->max_rel = diff / lim;
        if (!(diff <= lim)) {
            if (out->bad == 0)
                out->first_bad = idx;
            out->bad++;
        }
    }
}

/* Picks which rows of `rows` to check: all, or the first and last row of
 * groups of `group` rows, spread evenly over all groups (so a sequence or
 * head late in the batch is reached), plus random ones, up to max_rows.
 * Calls fn per row. */
typedef void (*row_fn)(void *ctx, int64_t row);
static int for_sample_rows(int64_t rows, int64_t group, int64_t max_rows,
                           uint64_t seed, row_fn fn, void *ctx)
{
    if (rows <= max_rows) {
        for (int64_t r = 0; r < rows; r++)
            fn(ctx, r);
        return 0;
    }
    /* Half the budget on group edges (first and last row of a head or a
     * token: where masks and page boundaries bite), half at random. */
    int64_t *seen = malloc((size_t)max_rows * sizeof *seen), done = 0;
    if (!seen)
        return -1;
    const int64_t ng = rows / group, ne = ng < max_rows / 4 ? ng : max_rows / 4;
    for (int64_t i = 0; i < ne; i++) {
        /* from the first group to the last, distinct as ne <= ng */
        const int64_t g = ne > 1 ? i * (ng - 1) / (ne - 1) : 0;
        seen[done++] = g * group;
        if (group > 1)
            seen[done++] = g * group + group - 1;
    }
    /* the rest at random, each row once (rows > max_rows: there is room) */
    uint64_t st = seed ^ 0x726f7773ULL;
    while (done < max_rows) {
        const int64_t r = (int64_t)(sb_rng_next(&st) % (uint64_t)rows);
        bool dup = false;
        for (int64_t j = 0; j < done && !dup; j++)
            dup = seen[j] == r;
        if (!dup)
            seen[done++] = r;
    }
    for (int64_t j = 0; j < done; j++)
        fn(ctx, seen[j]);
    free(seen);
    return 0;
}

typedef struct prefill_vctx {
    const sb_prefill_shape *s;
    const float *q, *k, *v, *o;
    double *ref;
    sb_attn_check *out;
} prefill_vctx;

static void prefill_row(void *vc, int64_t row)
{
    prefill_vctx *c = vc;
    const sb_prefill_shape *s = c->s;
    int64_t i = row % s->sq, bh = row / s->sq;
    int64_t b = bh / s->hq, h = bh % s->hq;
    int64_t kvh = h / (s->hq / s->hkv);
    int64_t n = s->causal ? sb_attn_causal_keys(i, s->sq, s->skv) : s->skv;
    const float *kb = c->k + (b * s->hkv + kvh) * s->skv * s->d;
    const float *vb = c->v + (b * s->hkv + kvh) * s->skv * s->d;
    sb_attn_ref_row(c->q + row * s->d, kb, vb, n, s->d, s->d, s->d,
                    1.0 / sqrt((double)s->d), c->ref);
    for (int64_t x = 0; x < s->d; x++)
        check_elem(c->out, c->o[row * s->d + x], c->ref[x], row * s->d + x);
}

void sb_prefill_verify(const sb_prefill_shape *s, const float *q,
                       const float *k, const float *v, const float *o,
                       int64_t max_rows, uint64_t seed, sb_attn_check *out)
{
    sb_prefill_verify_tol(s, q, k, v, o, max_rows, seed, 0, out);
}

void sb_prefill_verify_tol(const sb_prefill_shape *s, const float *q,
                           const float *k, const float *v, const float *o,
                           int64_t max_rows, uint64_t seed, double atol,
                           sb_attn_check *out)
{
    check_init(out);
    out->atol = atol;
    out->total = s->batch * s->hq * s->sq * s->d;
    double *ref = malloc((size_t)s->d * sizeof *ref);
    if (!ref) {
        out->bad = 1;
        return;
    }
    prefill_vctx c = {s, q, k, v, o, ref, out};
    if (for_sample_rows(s->batch * s->hq * s->sq, s->sq, max_rows, seed,
                        prefill_row, &c))
        out->bad = 1; /* nothing checked: not valid */
    free(ref);
}

typedef struct paged_vctx {
    const sb_paged_shape *s;
    const float *q;
    const void *kp, *vp; /* elements of eb bytes: 4 fp32, 2 bf16 */
    int eb;
    const float *o;
    const int32_t *table;
    double *ref;
    float *kg, *vg; /* gathered contiguous K, V of one sequence and head */
    sb_attn_check *out;
} paged_vctx;

static void paged_row(void *vc, int64_t row)
{
    paged_vctx *c = vc;
    const sb_paged_shape *s = c->s;
    int64_t tok = row / s->hq, h = row % s->hq;
    int64_t seq = 0; /* binary search the sequence owning query token tok */
    int64_t lo = 0, hi = s->batch - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (s->cu_q[mid] <= tok)
            lo = mid;
        else
            hi = mid - 1;
    }
    seq = lo;
    int64_t u = tok - s->cu_q[seq];
    int64_t n = sb_paged_keys(s, seq, u);
    int64_t kvh = h / (s->hq / s->hkv), P = s->page_size, d = s->d;
    /* Gather through the page table with plain indexing, independently of
     * how a kernel walks the pages. */
    for (int64_t j = 0; j < n; j++) {
        int64_t page = c->table[s->cu_pages[seq] + j / P];
        size_t off = (size_t)(((page * s->hkv + kvh) * P + j % P) * d);
        if (c->eb == 2) {
            const uint16_t *kh = c->kp, *vh = c->vp;
            for (int64_t x = 0; x < d; x++) {
                c->kg[j * d + x] = sb_bf16_to_f32(kh[off + (size_t)x]);
                c->vg[j * d + x] = sb_bf16_to_f32(vh[off + (size_t)x]);
            }
        } else {
            memcpy(c->kg + j * d, (const float *)c->kp + off,
                   (size_t)d * sizeof(float));
            memcpy(c->vg + j * d, (const float *)c->vp + off,
                   (size_t)d * sizeof(float));
        }
    }
    sb_attn_ref_row(c->q + row * d, c->kg, c->vg, n, d, d, d,
                    1.0 / sqrt((double)d), c->ref);
    for (int64_t x = 0; x < d; x++)
        check_elem(c->out, c->o[row * d + x], c->ref[x], row * d + x);
}

void sb_paged_verify(const sb_paged_shape *s, const float *q,
                     const float *kpool, const float *vpool,
                     const int32_t *table, const float *o, int64_t max_rows,
                     uint64_t seed, sb_attn_check *out)
{
    sb_paged_verify_kv(s, q, kpool, vpool, 4, table, o, max_rows, seed, out);
}

void sb_paged_verify_kv(const sb_paged_shape *s, const float *q,
                        const void *kpool, const void *vpool, int elem_bytes,
                        const int32_t *table, const float *o, int64_t max_rows,
                        uint64_t seed, sb_attn_check *out)
{
    sb_paged_verify_kv_tol(s, q, kpool, vpool, elem_bytes, table, o, max_rows,
                           seed, 0, out);
}

void sb_paged_verify_kv_tol(const sb_paged_shape *s, const float *q,
                            const void *kpool, const void *vpool,
                            int elem_bytes, const int32_t *table,
                            const float *o, int64_t max_rows, uint64_t seed,
                            double atol, sb_attn_check *out)
{
    check_init(out);
    out->atol = atol;
    out->total = s->total_q * s->hq * s->d;
    size_t kvn = (size_t)(s->max_len > 0 ? s->max_len : 1) * (size_t)s->d;
    paged_vctx c = {.s = s,
                    .q = q,
                    .kp = kpool,
                    .vp = vpool,
                    .eb = elem_bytes == 2 ? 2 : 4,
                    .o = o,
                    .table = table,
                    .out = out};
    c.ref = malloc((size_t)s->d * sizeof *c.ref);
    c.kg = malloc(kvn * sizeof(float));
    c.vg = malloc(kvn * sizeof(float));
    if (!c.ref || !c.kg || !c.vg ||
        for_sample_rows(s->total_q * s->hq, s->hq, max_rows, seed, paged_row,
                        &c))
        out->bad = 1; /* nothing checked: not valid */
    free(c.ref);
    free(c.kg);
    free(c.vg);
}

void sb_attn_check_report(sb_result *r, const sb_attn_check *c, const char *tol)
{
    r->valid = c->checked > 0 && c->bad == 0;
    sb_result_metric(r, "max_abs_err", c->max_abs, "");
    sb_result_metric(r, "err_vs_tol", c->max_rel, "");
    if (c->bad)
        sb_result_note(r,
                       "verification: %lld of %lld elements outside %s "
                       "(first at flat index %lld, max |err| %.3g)",
                       (long long)c->bad, (long long)c->checked, tol,
                       (long long)c->first_bad, c->max_abs);
    else if (c->checked < c->total)
        sb_result_note(r,
                       "verified %lld of %lld elements (sampled rows) "
                       "against the double reference (%s; max |err| %.3g)",
                       (long long)c->checked, (long long)c->total, tol,
                       c->max_abs);
    else
        sb_result_note(r,
                       "verified %lld elements against the double "
                       "reference (%s; max |err| %.3g)",
                       (long long)c->checked, tol, c->max_abs);
}
