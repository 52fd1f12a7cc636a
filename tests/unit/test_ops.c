/*
 * test_ops.c — the elementwise ops: the ops table (every row complete,
 * each its benchmark in the registry and no ops benchmark without a row),
 * bf16 round-to-nearest-even, FLOP and byte formulas against
 * hand-computed values, every op in fp32 and bf16 against its reference
 * (including widths that leave vector tails), the reference catching a
 * planted wrong element, known values (softmax rows sum to 1, softmax of
 * infinities, NaN and far-apart values, rmsnorm of a constant row),
 * parameter checks, and the benchmarks run through the registry. Built again
 * with the kernels of other ISAs (tests/moe_ops.cmake: portable, AVX2, AVX-512
 * emulated with and without AVX512_BF16), each build first checking that it
 * runs the kernels it was built for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/ops/ops_cpu.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/bench.h"
#include "solbench/ops.h"

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_bf16(void)
{
    CHECK(sb_bf16_from_f32(1.0f) == 0x3f80);
    CHECK(sb_bf16_from_f32(-2.0f) == 0xc000);
    /* exactly halfway: ties go to the even neighbour */
    CHECK(sb_bf16_from_f32(f_of(0x3f808000u)) == 0x3f80);
    CHECK(sb_bf16_from_f32(f_of(0x3f818000u)) == 0x3f82);
    /* just above halfway rounds up, just below rounds down */
    CHECK(sb_bf16_from_f32(f_of(0x3f808001u)) == 0x3f81);
    CHECK(sb_bf16_from_f32(f_of(0x3f807fffu)) == 0x3f80);
    CHECK(sb_bf16_from_f32(INFINITY) == 0x7f80);
    CHECK(sb_bf16_from_f32(f_of(0x7f7fffffu)) == 0x7f80); /* FLT_MAX: inf */
    uint16_t n = sb_bf16_from_f32(NAN);
    CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);
    CHECK(sb_bf16_to_f32(0x4049) == 3.140625f);
    int roundtrip = 1;
    for (uint32_t h = 0; h < 0x7f80; h += 7)
        roundtrip &= sb_bf16_from_f32(sb_bf16_to_f32((uint16_t)h)) == h;
    CHECK(roundtrip);
}

/* The kernels this build runs: the ones its flags select (test_ops.c is
 * compiled with the library's flags, the kernels of the variants with
 * their own; tests/moe_ops.cmake). A variant whose flags stopped
 * selecting its kernels would otherwise test the wrong ones and pass. */
#ifdef SB_TEST_OPS_AVX512EMU
int sb_avx512_emu_check(void); /* tests/emu/avx512_emu_check.c */
#endif
static const char *want_isa(void)
{
#if defined(SB_TEST_PORTABLE_OPS)
    return "portable";
#elif !(defined(__AVX2__) && defined(__FMA__))
    return "portable"; /* nothing else can be built here */
#elif defined(SB_TEST_OPS_AVX2)
    return "avx2";
#elif defined(SB_TEST_OPS_AVX512EMU_NO_BF16)
    return "avx512";
#elif defined(SB_TEST_OPS_AVX512EMU)
    return "avx512+bf16";
#elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512BF16__)
    return "avx512+bf16";
#elif defined(__AVX512F__) && defined(__AVX512BW__)
    return "avx512";
#else
    return "avx2";
#endif
}

static void test_isa(void)
{
    const char *isa = sb_ops_cpu_isa(), *want = want_isa();
    printf("ops kernels: %s\n", isa);
    CHECK(strcmp(isa, want) == 0);
    if (strcmp(isa, want) != 0)
        fprintf(stderr, "ops kernels: %s, built for %s\n", isa, want);
}

/* bf16 outputs under 2^-126: the AVX-512 kernels with AVX512_BF16 store
 * them as zeros of their sign (vcvtne2ps2bf16 flushes denormals), the
 * others as sb_bf16_from_f32 rounds them; the verifier accepts both
 * (ops_cpu.c, the AVX-512 section). rmsnorm of a row of 1.0 and +-2^-133
 * (bf16 denormal codes) with g = 1: those elements come out near 2^-130.
 * rope: a row of denormal codes, whose rotations stay denormal. */
static void test_bf16_denormal_out(void)
{
    const bool ftz = strcmp(sb_ops_cpu_isa(), "avx512+bf16") == 0;
    enum { D = 64 };
    sb_ops_shape s = {SB_OP_RMSNORM, 2, D, 2, true, false, 0};
    void *st = NULL;
    sb_err err = {0, ""};
    CHECK(sb_ops_cpu_setup(&s, &st, &err) == 0);
    if (!st)
        return;
    void *vx, *vg, *vy;
    float *ct, *sn;
    sb_ops_cpu_state_buffers(st, &vx, &vg, &vy, &ct, &sn);
    uint16_t *x = vx, *g = vg, *y = vy;
    for (int i = 0; i < D; i++) {
        x[i] = x[D + i] = i == 0 ? 0x3f80 : i % 2 ? 0x0001 : 0x8001;
        g[i] = 0x3f80;
    }
    float *scratch = malloc(sb_ops_cpu_scratch(&s) + 4);
    sb_ops_cpu_run(&s, x, g, NULL, NULL, y, scratch);
    char why[320] = "";
    CHECK(sb_ops_cpu_verify_state(st, why, sizeof why) == 0);
    /* the kernels' arithmetic: the squares of 2^-133 vanish, ss = 1 */
    const float rs = 1.0f / sqrtf(1.0f / (float)D + (float)SB_OPS_EPS);
    const uint16_t up = sb_bf16_from_f32(sb_bf16_to_f32(0x0001) * rs * 1.0f),
                   dn = sb_bf16_from_f32(sb_bf16_to_f32(0x8001) * rs * 1.0f);
    CHECK(up != 0 && dn != 0x8000); /* denormal, not zero, when rounded */
    int off = 0;
    for (int r = 0; r < 2; r++)
        for (int i = 1; i < D; i++)
            off += y[r * D + i] !=
                   (ftz ? (i % 2 ? 0x0000 : 0x8000) : (i % 2 ? up : dn));
    CHECK(off == 0);
    if (off)
        fprintf(stderr, "rmsnorm bf16 (%s): %d denormal outputs off\n",
                sb_ops_cpu_isa(), off);
    sb_ops_cpu_free(st);

    sb_ops_shape r = {SB_OP_ROPE, 3, D, 32, true, false, 0};
    CHECK(sb_ops_cpu_setup(&r, &st, &err) == 0);
    if (!st) {
        free(scratch);
        return;
    }
    sb_ops_cpu_state_buffers(st, &vx, &vg, &vy, &ct, &sn);
    x = vx;
    y = vy;
    for (int i = 0; i < 3 * D; i++)
        x[i] = (uint16_t)(i % 3 ? 0x0011 : 0x8007);
    sb_ops_cpu_run(&r, x, NULL, ct, sn, y, scratch);
    CHECK(sb_ops_cpu_verify_state(st, why, sizeof why) == 0);
    int denormal = 0, nonzero = 0;
    for (int i = 0; i < 3 * D; i++) {
        denormal += (y[i] & 0x7f80) == 0 && (y[i] & 0x7f) != 0;
        nonzero += (y[i] & 0x7fff) != 0;
    }
    CHECK(ftz ? nonzero == 0 : denormal > 0);
    sb_ops_cpu_free(st);
    free(scratch);
}

/* Every row of the ops table has what the benchmarks read, and is the
 * benchmark of its kind in the registry; every ops benchmark there is a
 * row's. */
static void test_table(void)
{
    const sb_bench *const *all = sb_registry();
    int n = 0;
    for (int i = 0; all[i]; i++) {
        if (strcmp(all[i]->area, "ops") != 0)
            continue;
        const sb_op_kind k = (sb_op_kind)all[i]->kind;
        CHECK(strcmp(all[i]->name + 4, sb_ops_name(k)) == 0);
        n++;
    }
    CHECK(n == SB_OP_COUNT);
    for (int k = 0; k < SB_OP_COUNT; k++) {
        const sb_op_row *r = sb_ops_row((sb_op_kind)k);
        CHECK(r && r->name && r->verify && r->cpu && r->x_width >= 1 &&
              r->flops_elem > 0 && r->seed > 0);
        if (!r || !r->cpu)
            continue;
        /* the row's kernels for this build: in one ISA, both dtypes */
        const sb_ops_kernel *isa = r->cpu->avx512[0] ? r->cpu->avx512
                                   : r->cpu->avx2[0] ? r->cpu->avx2
                                                     : r->cpu->portable;
        CHECK(isa[0] && isa[1]);
        char name[64];
        snprintf(name, sizeof name, "ops.%s", r->name);
        const sb_bench *b = sb_bench_find(name, "cpu");
        CHECK(b && b->kind == k);
    }
    CHECK(sb_ops_row(SB_OP_COUNT) == NULL &&
          strcmp(sb_ops_name(SB_OP_COUNT), "?") == 0);
}

static void test_accounting(void)
{
    sb_ops_shape s = {SB_OP_RMSNORM, 3, 8, 4, false, false, 0};
    CHECK_NEAR(sb_ops_bytes(&s), 224.0, 0); /* 4·(2·24 + 8) */
    CHECK_NEAR(sb_ops_flops(&s), 105.0, 0); /* 4·24 + 3·3 */
    s.bf16 = true;
    CHECK_NEAR(sb_ops_bytes(&s), 112.0, 0);
    s.op = SB_OP_SWIGLU;
    s.bf16 = false;
    CHECK_NEAR(sb_ops_bytes(&s), 288.0, 0); /* 3·4·24 */
    CHECK_NEAR(sb_ops_flops(&s), 96.0, 0);
    CHECK(sb_ops_in_elems(&s) == 48 && sb_ops_out_elems(&s) == 24);
    s.op = SB_OP_ROPE;
    CHECK_NEAR(sb_ops_bytes(&s), 240.0, 0); /* 2·4·24 + 4·3·4 */
    CHECK_NEAR(sb_ops_flops(&s), 72.0, 0);
    s.bf16 = true;
    CHECK_NEAR(sb_ops_bytes(&s), 144.0, 0); /* 2·2·24 + 48 */
    s.op = SB_OP_SOFTMAX;
    s.bf16 = false;
    CHECK_NEAR(sb_ops_bytes(&s), 192.0, 0);
    CHECK_NEAR(sb_ops_flops(&s), 123.0, 0); /* 5·24 + 3 */
    s.op = SB_OP_LAYERNORM;
    CHECK_NEAR(sb_ops_bytes(&s), 256.0, 0); /* 4·(2·24 + 2·8) */
    CHECK_NEAR(sb_ops_flops(&s), 201.0, 0); /* 8·24 + 3·3 */
    CHECK(sb_ops_in_elems(&s) == 24);
}

static void test_check(void)
{
    sb_err err = {0, ""};
    sb_ops_shape s = {SB_OP_ROPE, 4, 256, 6, false, false, 0};
    CHECK(sb_ops_check(&s, &err) == SB_EINVAL && strstr(err.msg, "head_dim"));
    s.head_dim = 3;
    CHECK(sb_ops_check(&s, &err) == SB_EINVAL && strstr(err.msg, "head_dim"));
    s.head_dim = 64;
    CHECK(sb_ops_check(&s, &err) == 0);
    s.d = 0;
    CHECK(sb_ops_check(&s, &err) == SB_EINVAL && strstr(err.msg, "d=0"));
    s = (sb_ops_shape){SB_OP_SOFTMAX, 0, 16, 2, false, false, 0};
    CHECK(sb_ops_check(&s, &err) == SB_EINVAL && strstr(err.msg, "tokens"));
}

/* The benchmark's own state for shape s and its buffers; NULL (with a
 * failed check) if it cannot be set up. */
typedef struct op_bufs {
    void *x, *g, *y;
    float *ct, *sn;
    const void *b; /* layernorm's */
} op_bufs;

static void *op_state(const sb_ops_shape *s, op_bufs *b)
{
    void *st = NULL;
    sb_err err = {0, ""};
    CHECK(sb_ops_cpu_setup(s, &st, &err) == 0);
    if (st) {
        sb_ops_cpu_state_buffers(st, &b->x, &b->g, &b->y, &b->ct, &b->sn);
        b->b = sb_ops_cpu_state_io(st)->b;
    }
    return st;
}

/* Runs the op once on the state's buffers. */
static void op_exec(const sb_ops_shape *s, op_bufs *b)
{
    float *scratch = malloc(sb_ops_cpu_scratch(s) + 4);
    CHECK(scratch != NULL);
    const sb_ops_bufs io = {b->x, b->g, b->b, b->ct, b->sn, b->y};
    if (scratch)
        sb_ops_cpu_exec(s, &io, scratch);
    free(scratch);
}

/* Runs one op on the benchmark's own inputs, verifies, then plants a
 * wrong element and checks that exactly it is reported. */
static void test_op_nt(sb_op_kind op, bool bf16, int64_t T, int64_t d, int hd,
                       bool nt, int64_t chunk)
{
    sb_ops_shape s = {op, T, d, hd, bf16, nt, chunk};
    op_bufs bb;
    void *st = op_state(&s, &bb);
    if (!st)
        return;
    void *x = bb.x, *y = bb.y;
    op_exec(&s, &bb);
    char why[320] = "";
    int64_t bad = sb_ops_cpu_verify_state(st, why, sizeof why);
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr, "%s %s T=%lld d=%lld: %s\n", sb_ops_name(op),
                bf16 ? "bf16" : "fp32", (long long)T, (long long)d, why);
    const int64_t at = (T / 2) * d + d / 3;
    if (bf16) {
        uint16_t *yy = y, keep = yy[at];
        /* two bf16 ulps up (>= 2^-7 relative) are beyond the tolerance
         * (2^-8); one ulp can be 2^-8 at the top of a binade */
        yy[at] = (uint16_t)(keep + 2);
        CHECK(sb_ops_cpu_verify_state(st, why, sizeof why) == 1);
        yy[at] = keep;
    } else {
        float *yy = y, keep = yy[at];
        yy[at] = keep + 1e-3f * (1.0f + fabsf(keep));
        CHECK(sb_ops_cpu_verify_state(st, why, sizeof why) == 1);
        char want[64];
        snprintf(want, sizeof want, "[token %lld][%lld]", (long long)(T / 2),
                 (long long)(d / 3));
        CHECK(strstr(why, want) != NULL);
        yy[at] = keep;
    }
    CHECK(sb_ops_cpu_verify_state(st, NULL, 0) == 0);
    /* known values */
    if (op == SB_OP_SOFTMAX) {
        double sum = 0.0;
        for (int64_t i = 0; i < d; i++)
            sum += bf16 ? sb_bf16_to_f32(((uint16_t *)y)[i]) : ((float *)y)[i];
        CHECK_NEAR(sum, 1.0, bf16 ? 1e-2 : 1e-5);
    }
    if (op == SB_OP_ROPE && !bf16) {
        /* position 0: cos = 1, sin = 0, the row is unchanged */
        CHECK(memcmp(x, y, sizeof(float) * (size_t)d) == 0);
    }
    sb_ops_cpu_free(st);
}

/* The RoPE tables against hand-computed angles (pos · 10000^(-2i/hd)),
 * and the verifier against a wrong table: it computes its own angles. */
static void test_rope_tables(void)
{
    sb_ops_shape t = {SB_OP_ROPE, 3, 8, 4, false, false, 0};
    float ct[6], sn[6];
    sb_ops_rope_tables(&t, ct, sn);
    CHECK(ct[0] == 1.0f && sn[0] == 0.0f);      /* token 0 */
    CHECK_NEAR(ct[1 * 2 + 1], cos(0.01), 1e-7); /* token 1, i = 1 */
    CHECK_NEAR(sn[1 * 2 + 1], sin(0.01), 1e-7);
    CHECK_NEAR(sn[2 * 2 + 0], sin(2.0), 1e-7); /* token 2, i = 0 */

    for (int bf = 0; bf < 2; bf++) {
        sb_ops_shape s = {SB_OP_ROPE, 37, 256, 64, bf, false, 0};
        op_bufs b;
        void *st = op_state(&s, &b);
        if (!st)
            return;
        b.ct[5 * 32 + 3] += 0.05f; /* token 5, i = 3: 4 heads x 2 values */
        op_exec(&s, &b);
        char why[320] = "";
        const int64_t bad = sb_ops_cpu_verify_state(st, why, sizeof why);
        CHECK(bad >= 4 && bad <= 8);
        CHECK(strstr(why, "[token 5][3]") != NULL);
        sb_ops_cpu_free(st);
    }
}

/* Softmax of one element is exactly 1, whatever the element. */
static void test_softmax_one(bool bf16)
{
    sb_ops_shape s = {SB_OP_SOFTMAX, 3, 1, 2, bf16, false, 0};
    op_bufs b;
    void *st = op_state(&s, &b);
    if (!st)
        return;
    op_exec(&s, &b);
    for (int t = 0; t < 3; t++)
        CHECK(bf16 ? ((uint16_t *)b.y)[t] == 0x3f80
                   : ((float *)b.y)[t] == 1.0f);
    sb_ops_cpu_free(st);
}

/* Each op with normal stores, and with rows streamed out through
 * non-temporal stores (the path taken for outputs beyond the caches), the
 * rows in one block per thread or in chunks of 3 under a dynamic
 * schedule. */
static void test_op(sb_op_kind op, bool bf16, int64_t T, int64_t d, int hd)
{
    for (int64_t chunk = 0; chunk <= 3; chunk += 3) {
        test_op_nt(op, bf16, T, d, hd, false, chunk);
        test_op_nt(op, bf16, T, d, hd, true, chunk);
    }
}

static void test_rmsnorm_constant(void)
{
    /* a constant row c with g = 1 normalises to c / sqrt(c² + eps) ≈ ±1 */
    const int64_t d = 300;
    sb_ops_shape s = {SB_OP_RMSNORM, 1, d, 2, false, false, 0};
    float *x = malloc(sizeof(float) * d), *g = malloc(sizeof(float) * d),
          *y = malloc(sizeof(float) * d);
    for (int64_t i = 0; i < d; i++) {
        x[i] = -3.0f;
        g[i] = 1.0f;
    }
    sb_ops_cpu_run(&s, x, g, NULL, NULL, y, NULL);
    CHECK_NEAR(y[0], -3.0 / sqrt(9.0 + SB_OPS_EPS), 1e-6);
    CHECK_NEAR(y[d - 1], -1.0, 1e-6);
    free(x), free(g), free(y);
}

static int bf16_is_nan(uint16_t h)
{
    return (h & 0x7fff) > 0x7f80;
}

/* Every bf16 NaN code (254 of them, signalling ones and negative ones
 * included) in a bf16 input comes out as quiet NaNs exactly where it
 * reaches, and nowhere else: the AVX2 stores round with no NaN test
 * (ops_cpu.c, sb__bf16_bits8), which holds only because every NaN the
 * kernels make keeps the low 16 bits of its fp32 pattern zero. Row r
 * carries NaN code r at element 5 of its first (or, for swiglu's up half,
 * second) half; rmsnorm spreads it over the row, swiglu keeps it in its
 * element, rope in the element and its partner in the other half of the
 * head. Then swiglu's infinities: silu(+inf)·1 = +inf, silu(+inf)·0 and
 * (AVX2, whose table holds the reference's values) silu(-inf) NaN, as
 * the reference has them. */
static void test_bf16_specials(sb_op_kind op, int up_half)
{
    enum { NCODES = 254, D = 64 };
    sb_ops_shape s = {op, NCODES, D, 32, true, false, 0};
    op_bufs bb;
    void *st = op_state(&s, &bb);
    if (!st)
        return;
    uint16_t *xx = bb.x, *yy = bb.y;
    const int64_t in_w = op == SB_OP_SWIGLU ? 2 * D : D;
    int r = 0;
    for (uint32_t c = 0; c < 65536; c++)
        if (bf16_is_nan((uint16_t)c))
            xx[r++ * in_w + 5 + (up_half ? D : 0)] = (uint16_t)c;
    CHECK(r == NCODES);
    op_exec(&s, &bb);
    /* rmsnorm: the whole row; swiglu: that element; rope: the element and
     * its partner in the other half of its head */
    const int want = op == SB_OP_SWIGLU ? 1 : op == SB_OP_ROPE ? 2 : D;
    int rows_off = 0, loud = 0;
    for (r = 0; r < NCODES; r++) {
        int nans = 0;
        for (int i = 0; i < D; i++) {
            uint16_t h = yy[r * D + i];
            nans += bf16_is_nan(h);
            loud += bf16_is_nan(h) && !(h & 0x40);
        }
        rows_off += nans != want;
    }
    CHECK(rows_off == 0);
    CHECK(loud == 0);
    if (rows_off || loud)
        fprintf(stderr,
                "%s bf16 (NaN in the %s half): %d rows with NaNs "
                "elsewhere than %d elements, %d signalling NaNs out\n",
                sb_ops_name(op), up_half ? "second" : "first", rows_off, want,
                loud);
    if (op == SB_OP_SWIGLU && !up_half) {
        /* rows 0-2: gate +inf with up 1 and 0, gate -inf with up 1 */
        const uint16_t gate[3] = {0x7f80, 0x7f80, 0xff80},
                       up[3] = {0x3f80, 0x0000, 0x3f80};
        for (int k = 0; k < 3; k++) {
            xx[k * in_w + 5] = gate[k];
            xx[k * in_w + D + 5] = up[k];
        }
        op_exec(&s, &bb);
        CHECK(yy[5] == 0x7f80);
        CHECK(bf16_is_nan(yy[D + 5]) && (yy[D + 5] & 0x40));
#if !(defined(SB_TEST_PORTABLE_OPS) || !(defined(__AVX2__) && defined(__FMA__)))
        /* (the portable exponential clamps, so there -inf / (1 + e^88)
         * is -inf; test_swiglu_all_codes leaves |a| > 80 out there too) */
        CHECK(bf16_is_nan(yy[2 * D + 5]) && (yy[2 * D + 5] & 0x40));
#endif
    }
    sb_ops_cpu_free(st);
}

/* Softmax rows with special values, fp32 and bf16, through the dispatch
 * the benchmark uses (d = 50: one 32-element step, one 16-element step and
 * a scalar tail of 2, so every path sees them). Two threads take rows 0-5
 * and 6-11: the bf16 kernel drops its clamp until a row needs it, and then
 * keeps it for the thread's later rows, so rows 6-8 run without it, row
 * 9 finds it needs it and rows 10 and 11 keep it:
 *   row 0: -inf at 3 (vector) and 49 (tail), the rest 0: exactly 0 there,
 *          1/48 elsewhere;
 *   row 1: +inf at 20: its x - max is NaN, so the whole row is NaN;
 *   row 2: NaN in the tail (48): the whole row is NaN;
 *   row 3: one element 200 above the rest, past the first 32 (the bf16
 *          kernel's guess of the max is 200 too low: it must start
 *          again): 1 there, exactly 0 elsewhere (e^-200 is below every
 *          float);
 *   row 4: all equal, large (1e30): exactly uniform 1/50 (to bf16);
 *   row 5: 100000 + i/4 (fp32; in bf16 all equal): every element, the
 *          scalar tail's too, within 1e-5 (bf16: half an ulp) of a double
 *          softmax (the tail once missed the vector part's shift of t, up
 *          to 0.5 % off);
 *   row 6: all under -64: -180 + i/8 but for 32-47 (the 16-element
 *          step), -80 + (i - 32)/8, ~100 above the others (the bf16
 *          kernel's 16-bit max sees only values >= 0: with a guess under
 *          -64 it must take the true max first, or those overflow): 32-47
 *          as row 5, the others (e^-95 and less) at most 1e-38;
 *   row 7: the first 32 at -30 + i/4, the rest up to +21 (above the
 *          guess, within 64 of it): as row 5;
 *   row 8: NaN at 20 (vector): all NaN;
 *   row 9: as row 0, after rows run without the clamp;
 *   row 10: a NaN with the sign set at 10 (vector; the clamp must let it
 *          through): all NaN;
 *   row 11: all 0: exactly uniform 1/50. */
static void test_softmax_specials(bool bf16)
{
    enum { T = 12, D = 50 };
    sb_ops_shape s = {SB_OP_SOFTMAX, T, D, 2, bf16, false, 0};
    float in[T][D], out[T][D];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D; i++)
            in[t][i] = t == 4 ? 1e30f : 0.0f;
    in[0][3] = in[0][49] = -INFINITY;
    in[1][20] = INFINITY;
    in[2][48] = NAN;
    in[3][40] = 200.0f;
    for (int i = 0; i < D; i++) {
        in[5][i] = 100000.0f + 0.25f * (float)i;
        in[6][i] = i >= 32 && i < 48 ? -80.0f + 0.125f * (float)(i - 32)
                                     : -180.0f + 0.125f * (float)i;
        in[7][i] = i < 32 ? -30.0f + 0.25f * (float)i : 0.5f * (float)(i - 8);
    }
    in[8][20] = NAN;
    in[9][3] = in[9][49] = -INFINITY;
    in[10][10] = -NAN;
    uint16_t xb[T * D], yb[T * D];
    for (int k = 0; k < T * D; k++)
        xb[k] = sb_bf16_from_f32(in[k / D][k % D]);
    if (bf16) /* the inputs as the kernel sees them */
        for (int k = 0; k < T * D; k++)
            in[k / D][k % D] = sb_bf16_to_f32(xb[k]);
    float *scratch = malloc(sb_ops_cpu_scratch(&s) + 4);
    if (bf16) {
        sb_ops_cpu_run(&s, xb, NULL, NULL, NULL, yb, scratch);
        for (int k = 0; k < T * D; k++)
            out[k / D][k % D] = sb_bf16_to_f32(yb[k]);
    } else {
        sb_ops_cpu_run(&s, in, NULL, NULL, NULL, out, scratch);
    }
    const double rel = bf16 ? 1.0 / 256 : 1e-6;
    int zeros = 0, nans[4] = {0}, row0 = 1, row3 = 1, row4 = 1, row9 = 1,
        row11 = 1, near[3] = {1, 1, 1};
    for (int r = 0; r < 3; r++) { /* rows 5, 6, 7 against double */
        const int t = 5 + r;
        double mx = in[t][0], sum = 0.0;
        for (int i = 0; i < D; i++)
            mx = in[t][i] > mx ? in[t][i] : mx;
        for (int i = 0; i < D; i++)
            sum += exp((double)in[t][i] - mx);
        for (int i = 0; i < D; i++) {
            double want = exp((double)in[t][i] - mx) / sum;
            if (t == 6 && !(i >= 32 && i < 48))
                near[r] &= out[t][i] >= 0.0f && out[t][i] <= 1e-38f;
            else
                near[r] &= fabs(out[t][i] - want) <= (bf16 ? rel : 1e-5) * want;
        }
    }
    for (int i = 0; i < D; i++) {
        if (i == 3 || i == 49) {
            zeros += out[0][i] == 0.0f;
            row9 &= out[9][i] == 0.0f;
        } else {
            row0 &= fabs(out[0][i] - 1.0 / 48) <= rel / 48;
            row9 &= fabs(out[9][i] - 1.0 / 48) <= rel / 48;
        }
        nans[0] += isnan(out[1][i]);
        nans[1] += isnan(out[2][i]);
        nans[2] += isnan(out[8][i]);
        nans[3] += isnan(out[10][i]);
        row3 &= i == 40 ? out[3][i] == 1.0f : out[3][i] == 0.0f;
        row4 &= fabs(out[4][i] - 1.0 / 50) <= rel / 50;
        row11 &= fabs(out[11][i] - 1.0 / 50) <= rel / 50;
    }
    CHECK(zeros == 2);
    CHECK(row0);
    for (int k = 0; k < 4; k++)
        CHECK(nans[k] == D);
    CHECK(row3);
    CHECK(row4);
    for (int r = 0; r < 3; r++)
        CHECK(near[r]);
    CHECK(row9);
    CHECK(row11);
    free(scratch);
}

/* Softmax on random rows against a double softmax, fp32 and bf16, one
 * and two threads, streaming stores on and off, the rows in one block
 * per thread or in dynamic chunks of 1-3: 1-9 rows of 1-300
 * elements, each row values around an offset (0, ±70, ±100, 90, ±1e5,
 * ±1e30) spread by 1-1000, with -inf, +inf and NaNs of either sign at
 * random places (sb_rng_next from seed 1). A row with a NaN,
 * or whose double softmax is NaN (+inf, or only -inf), must be all NaN;
 * every other element within half a bf16 ulp (fp32: 1e-6) + 1e-4 of the
 * reference, relative, or below 1e-37 where the reference is (the kernels
 * flush below 2^-126.5). The rows walk every path of the bf16 kernel:
 * guess and true max, with and without the clamp, the clamp kept for
 * later rows, the difference past 2^20, vector parts of 32 and 16 and the
 * scalar tail. With the bf16 row not done again when it needs the clamp,
 * 630 of the 14825 rows came out wrong. */
static uint32_t rnd(uint64_t *st, uint32_t n)
{
    return (uint32_t)(sb_rng_next(st) % n);
}
static void test_softmax_random(int shapes)
{
    uint64_t st = 1;
    static const double offs[] = {0,    -100,  100, 1e5, -1e5,
                                  1e30, -1e30, -70, 90};
    int64_t bad = 0, rows = 0;
    for (int it = 0; it < shapes; it++) {
        const int T = 1 + (int)rnd(&st, 9), d = 1 + (int)rnd(&st, 300);
        const bool bf = rnd(&st, 2), nt = rnd(&st, 2);
        omp_set_num_threads(1 + (int)rnd(&st, 2));
        sb_ops_shape s = {SB_OP_SOFTMAX, T, d, 2, bf, nt, rnd(&st, 4)};
        float *x = malloc(sizeof *x * (size_t)(T * d)),
              *y = malloc(sizeof *y * (size_t)(T * d));
        uint16_t *xb = malloc(sizeof *xb * (size_t)(T * d)),
                 *yb = malloc(sizeof *yb * (size_t)(T * d));
        for (int t = 0; t < T; t++) {
            const double sc = pow(10.0, (double)rnd(&st, 4)),
                         off = offs[rnd(&st, 9)];
            for (int i = 0; i < d; i++) {
                double v = off + sc * (2.0 * sb_rng_unif(&st) - 1.0);
                const uint32_t k = rnd(&st, 1000);
                v = k == 0   ? -INFINITY
                    : k == 1 ? INFINITY
                    : k == 2 ? NAN
                    : k == 3 ? -NAN
                             : v;
                xb[t * d + i] = sb_bf16_from_f32((float)v);
                x[t * d + i] = bf ? sb_bf16_to_f32(xb[t * d + i]) : (float)v;
            }
        }
        float *scratch = malloc(sb_ops_cpu_scratch(&s) + 4);
        if (bf)
            sb_ops_cpu_run(&s, xb, NULL, NULL, NULL, yb, scratch);
        else
            sb_ops_cpu_run(&s, x, NULL, NULL, NULL, y, scratch);
        for (int t = 0; t < T; t++) {
            const float *xr = x + t * d;
            double mx = -INFINITY, sum = 0.0;
            bool nan = false, off = false;
            for (int i = 0; i < d; i++) {
                nan |= xr[i] != xr[i];
                mx = xr[i] > mx ? xr[i] : mx;
            }
            for (int i = 0; i < d; i++)
                sum += exp((double)xr[i] - mx);
            for (int i = 0; i < d; i++) {
                const double got =
                    bf ? sb_bf16_to_f32(yb[t * d + i]) : y[t * d + i];
                const double ref = exp((double)xr[i] - mx) / sum;
                if (nan || ref != ref)
                    off |= got == got;
                else
                    off |= !(fabs(got - ref) <=
                             ((bf ? 1.0 / 256 : 1e-6) + 1e-4) * ref + 1e-37);
            }
            bad += off;
            rows++;
        }
        free(x);
        free(y);
        free(xb);
        free(yb);
        free(scratch);
    }
    omp_set_num_threads(2);
    CHECK(bad == 0);
    if (bad)
        fprintf(stderr, "softmax random: %lld of %lld rows wrong\n",
                (long long)bad, (long long)rows);
}

/* bf16 swiglu over every gate code (up = 1): each output is the bf16
 * rounding of silu(a) computed in double and rounded to fp32, bit for bit
 * (a NaN gate, and -inf, give NaN) in the AVX2 build, which looks silu up
 * in a table; the portable build computes it with its exponential, whose
 * result may differ in the last fp32 bits and so round the other way: it
 * is held to one bf16 ulp where its exponential does not clamp. Rows of
 * 16 plus a tail of 7, so both loops run. */
static void test_swiglu_all_codes(void)
{
    const int64_t d = 23, T = (65536 + d - 1) / d;
    sb_ops_shape s = {SB_OP_SWIGLU, T, d, 2, true, false, 0};
    uint16_t *x = malloc(sizeof *x * 2 * (size_t)(T * d));
    uint16_t *y = malloc(sizeof *y * (size_t)(T * d));
    float *scratch = malloc(sb_ops_cpu_scratch(&s) + 4);
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < d; i++) {
            x[2 * t * d + i] = (uint16_t)((t * d + i) & 0xffff);
            x[2 * t * d + d + i] = 0x3f80; /* 1.0 */
        }
    sb_ops_cpu_run(&s, x, NULL, NULL, NULL, y, scratch);
    int64_t off = 0, nan_bad = 0;
    for (int64_t c = 0; c < 65536; c++) {
        int64_t t = c / d, i = c % d;
        double a = sb_bf16_to_f32(x[2 * t * d + i]);
        float want = (float)(a / (1.0 + exp(-a)));
        uint16_t got = y[c], w = sb_bf16_from_f32(want);
#if defined(SB_TEST_PORTABLE_OPS) || !(defined(__AVX2__) && defined(__FMA__))
        /* its exponential clamps beyond +-87 (the verifier's absolute
         * term covers the tiny outputs there) */
        if (!(fabs(a) <= 80.0))
            continue;
        off += got != w && got != (uint16_t)(w + 1) && got != (uint16_t)(w - 1);
#else
        if (want != want) {
            nan_bad += sb_bf16_to_f32(got) == sb_bf16_to_f32(got);
            continue;
        }
        off += got != w;
#endif
    }
    CHECK(nan_bad == 0);
    CHECK(off == 0);
    if (off)
        fprintf(stderr, "swiglu bf16: %lld codes off\n", (long long)off);
    free(x);
    free(y);
    free(scratch);
}

int main(void)
{
    omp_set_num_threads(2);
#ifdef SB_TEST_OPS_AVX512EMU
    CHECK(sb_avx512_emu_check() == 0);
#endif
    test_isa();
    test_table();
    test_bf16();
    test_accounting();
    test_check();
    test_rmsnorm_constant();
    test_swiglu_all_codes();
    for (int k = 0; k < SB_OP_COUNT; k++)
        for (int bf = 0; bf < 2; bf++) {
            test_op((sb_op_kind)k, bf, 37, 256, 64);
            test_op((sb_op_kind)k, bf, 5, 78, 26); /* tails: not of 8 */
        }
    test_op(SB_OP_SOFTMAX, false, 3, 1, 2); /* one element */
    test_softmax_one(false);
    test_softmax_one(true);
    test_rope_tables();
    for (int bf = 0; bf < 2; bf++) {
        test_op(SB_OP_SOFTMAX, bf, 7, 50, 2); /* 32 + 16 + a tail of 2 */
        test_op(SB_OP_SWIGLU, bf, 7, 50, 2);
        /* 64 + 32 + a tail of 4: every step of the AVX-512 kernels */
        test_op(SB_OP_RMSNORM, bf, 5, 100, 2);
        test_op(SB_OP_SWIGLU, bf, 5, 100, 2);
        test_op(SB_OP_SOFTMAX, bf, 5, 100, 2);
        test_op(SB_OP_ROPE, bf, 5, 160, 80); /* half heads of 32 + 8 */
        test_softmax_specials(bf);
    }
    test_bf16_denormal_out();
    test_softmax_random(3000);
    const sb_op_kind ops[] = {SB_OP_RMSNORM, SB_OP_SWIGLU, SB_OP_ROPE,
                              SB_OP_SOFTMAX};
    for (int i = 0; i < 4; i++)
        test_bf16_specials(ops[i], 0);
    test_bf16_specials(SB_OP_SWIGLU, 1);
    sb_test_run_bench("ops.rmsnorm", "tokens=16 d=96 dtype=bf16", true, 3,
                      "head_dim", true);
    sb_test_run_bench("ops.swiglu", "tokens=16 d=96", true, 3, "head_dim",
                      true);
    sb_test_run_bench("ops.rope", "tokens=16 d=96 head_dim=32 dtype=bf16", true,
                      3, "head_dim", true);
    sb_test_run_bench("ops.softmax", "tokens=16 d=96", true, 3, "head_dim",
                      true);
    sb_test_run_bench("ops.layernorm", "tokens=16 d=96 dtype=bf16", true, 3,
                      "head_dim", true);
    sb_test_run_bench("ops.rope", "tokens=16 d=96 head_dim=40", false, 3,
                      "head_dim", true);
    return sb_check_done();
}
