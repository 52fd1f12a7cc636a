/*
 * ops_bench.c — the ops area's benchmarks, one a row of the ops table
 * (ops_table.def: ops.rmsnorm, ops.swiglu, ops.rope, ops.softmax,
 * ops.layernorm): the table and what it says of a shape (name, check,
 * bytes, FLOPs, reference), the parameters, the shape decoded once a
 * point, the buffers and their fill, the CPU impl's hooks, which every op
 * shares. The kernels are ops_cpu.c's (sb_ops_cpu_exec) and layernorm.c's,
 * the references src/def/ops.c's.
 */
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/ops/ops_cpu.h"
#include "solbench/bench.h"
#include "solbench/util.h"

/* ---- parameters ---------------------------------------------------------- */

/* One a macro, laid out by hand (clang-format would split their braces). */
/* clang-format off */
#define SB__OPS_P_TOKENS                                                       \
    {"tokens", SB_P_INT, "256", 1, SB_OPS_MAX_TOKENS, NULL,                    \
     "rows of the [tokens, d] matrix"}
#define SB__OPS_P_D {"d", SB_P_INT, "4096", 1, SB_OPS_MAX_D, NULL, "row width"}
#define SB__OPS_P_DTYPE                                                        \
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",                             \
     "storage type (arithmetic is fp32)"}
#define SB__OPS_P_NT                                                           \
    {"nt", SB_P_STR, "auto", 0, 0, "auto|on|off",                              \
     "non-temporal stores of the output; auto: on when the output "            \
     "exceeds the last-level cache"}
#define SB__OPS_P_SCHEDULE                                                     \
    {"schedule", SB_P_STR, "auto", 0, 0, "auto|static|dynamic",                \
     "rows to threads: one block each (static, as first touched) or "          \
     "chunks of up to 128 (dynamic); auto: dynamic on one NUMA node"}
#define SB__OPS_P_END {NULL, 0, NULL, 0, 0, NULL, NULL}
/* clang-format on */

/* Every op's; rope's with head_dim; layernorm's without nt (its kernel has
 * no non-temporal stores). The decode reads nt and head_dim where the
 * benchmark takes them. */
static const sb_param_def sb__ops_params[] = {
    SB__OPS_P_TOKENS, SB__OPS_P_D,        SB__OPS_P_DTYPE,
    SB__OPS_P_NT,     SB__OPS_P_SCHEDULE, SB__OPS_P_END};
static const sb_param_def sb__ops_params_rope[] = {
    SB__OPS_P_TOKENS,
    SB__OPS_P_D,
    SB__OPS_P_DTYPE,
    SB__OPS_P_NT,
    SB__OPS_P_SCHEDULE,
    {"head_dim", SB_P_INT, "128", 2, 65536, NULL,
     "head size (even, divides d)"},
    SB__OPS_P_END};
static const sb_param_def sb__ops_params_no_nt[] = {
    SB__OPS_P_TOKENS, SB__OPS_P_D, SB__OPS_P_DTYPE, SB__OPS_P_SCHEDULE,
    SB__OPS_P_END};

/* ---- the table ----------------------------------------------------------- */

#define SB_OP(NAME, KIND, PARAMS, DESC, ...)                                   \
    [KIND] = {.name = #NAME, __VA_ARGS__},
static const sb_op_row sb__ops_table[SB_OP_COUNT] = {
#include "bench/ops/ops_table.def"
};
#undef SB_OP

const sb_op_row *sb_ops_row(sb_op_kind op)
{
    return (unsigned)op < SB_OP_COUNT ? &sb__ops_table[op] : NULL;
}

const char *sb_ops_name(sb_op_kind op)
{
    const sb_op_row *r = sb_ops_row(op);
    return r ? r->name : "?";
}

int sb_ops_check(const sb_ops_shape *s, sb_err *err)
{
    if (s->tokens < 1 || s->tokens > SB_OPS_MAX_TOKENS)
        return sb_fail(err, SB_EINVAL,
                       "parameter tokens=%lld: must be in 1..%d",
                       (long long)s->tokens, SB_OPS_MAX_TOKENS);
    if (s->d < 1 || s->d > SB_OPS_MAX_D)
        return sb_fail(err, SB_EINVAL, "parameter d=%lld: must be in 1..%d",
                       (long long)s->d, SB_OPS_MAX_D);
    if (sb_ops_row(s->op)->tables) {
        if (s->head_dim < 2 || s->head_dim % 2 != 0)
            return sb_fail(err, SB_EINVAL,
                           "parameter head_dim=%d: must be even and >= 2",
                           s->head_dim);
        if (s->d % s->head_dim != 0)
            return sb_fail(err, SB_EINVAL,
                           "parameter head_dim=%d: must divide d=%lld",
                           s->head_dim, (long long)s->d);
    }
    return 0;
}

int64_t sb_ops_in_elems(const sb_ops_shape *s)
{
    return s->tokens * s->d * sb_ops_row(s->op)->x_width;
}

double sb_ops_flops(const sb_ops_shape *s)
{
    const sb_op_row *r = sb_ops_row(s->op);
    double T = (double)s->tokens, d = (double)s->d;
    return r->flops_elem * T * d + r->flops_row * T;
}

double sb_ops_bytes(const sb_ops_shape *s)
{
    const sb_op_row *r = sb_ops_row(s->op);
    double T = (double)s->tokens, d = (double)s->d, S = sb_ops_elem_bytes(s);
    return S * ((r->x_width + 1) * T * d + r->vecs * d) +
           (r->tables ? 4.0 * T * s->head_dim : 0.0);
}

int64_t sb_ops_verify(const sb_ops_shape *s, const sb_ops_bufs *io, char *why,
                      int why_len)
{
    return sb_ops_row(s->op)->verify(s, io, why, why_len);
}

/* ---- benchmark plumbing -------------------------------------------------- */

typedef struct sb_ops_state {
    sb_ops_shape s;
    void *x, *g, *b, *y;
    float *cos_t, *sin_t, *scratch;
    sb_ops_bufs io;
} sb_ops_state;

/* Rows are handed out in chunks of up to 128 (a thread that finishes its
 * chunk takes the next) where the machine has one NUMA node (schedule=auto)
 * or when asked (schedule=dynamic): on a shared host one core is often
 * slowed while the other is not, and with one block of rows per thread the
 * fast one then waits for the slow one at the end. At least 8 chunks per
 * thread, so small shapes still spread. On several NUMA nodes the static
 * schedule keeps each thread on the rows it touched first (sb_ops_cpu_fill),
 * in its own node's memory. */
int64_t sb_ops_cpu_chunk(int64_t tokens, bool dynamic)
{
    if (!dynamic && sb_numa_nodes() != 1)
        return 0;
    int64_t c = tokens / (8 * (int64_t)omp_get_max_threads());
    return c < 1 ? 1 : c > 128 ? 128 : c;
}

/* The shape of a point: head_dim and nt where the benchmark takes them
 * (rope; every op but layernorm), else 2 and off. */
static void sb__ops_shape(const sb_params *p, sb_op_kind op, sb_ops_shape *s)
{
    memset(s, 0, sizeof *s);
    s->op = op;
    s->tokens = sb_p_int(p, "tokens");
    s->d = sb_p_int(p, "d");
    s->bf16 = strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
    s->head_dim = sb_p_find(p, "head_dim") ? (int)sb_p_int(p, "head_dim") : 2;
    if (sb_p_find(p, "nt")) {
        const char *nt = sb_p_str(p, "nt");
        double out = sb_ops_elem_bytes(s) * (double)sb_ops_out_elems(s);
        double llc = sb_llc_bytes();
        s->nt = strcmp(nt, "on") == 0 ||
                (strcmp(nt, "auto") == 0 && llc > 0 && out > llc);
    }
    const char *sched = sb_p_str(p, "schedule");
    s->chunk = strcmp(sched, "static") == 0
                   ? 0
                   : sb_ops_cpu_chunk(s->tokens, strcmp(sched, "dynamic") == 0);
}

static double sb__ops_footprint_shape(const sb_ops_shape *s)
{
    const sb_op_row *r = sb_ops_row(s->op);
    if (r->footprint)
        return r->footprint(s);
    double S = sb_ops_elem_bytes(s);
    return S * ((double)sb_ops_in_elems(s) + (double)sb_ops_out_elems(s) +
                (double)s->d) +
           4.0 * (double)s->tokens * s->head_dim +
           4.0 * (double)s->d * omp_get_max_threads();
}

static void sb__ops_teardown(void *state)
{
    sb_ops_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->x);
    sb_free_aligned(st->g);
    sb_free_aligned(st->b);
    sb_free_aligned(st->y);
    sb_free_aligned(st->cos_t);
    sb_free_aligned(st->sin_t);
    sb_free_aligned(st->scratch);
    free(st);
}

/* Inputs: uniform in [-2, 2) (g in [0.5, 1.5), b in [-0.5, 0.5)), rounded
 * to bf16 when stored so. Rows are touched first by the thread of the
 * kernel's static schedule. */
void sb_ops_cpu_fill(void *a, int64_t rows, int64_t width, bool bf16,
                     uint64_t seed, double lo, double hi)
{
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++)
        for (int64_t i = 0; i < width; i++) {
            uint64_t st =
                seed * 0x2545f4914f6cdd1dULL + (uint64_t)(t * width + i);
            float v = (float)(lo + (hi - lo) * sb_rng_unif(&st));
            if (bf16)
                ((uint16_t *)a)[t * width + i] = sb_bf16_from_f32(v);
            else
                ((float *)a)[t * width + i] = v;
        }
}

/* The arrays of the op's row: x, y, its d-vectors, rope's tables, the
 * kernels' scratch; filled from the row's seed. */
int sb_ops_cpu_setup(const sb_ops_shape *s, void **state, sb_err *err)
{
    int rc = sb_ops_check(s, err);
    if (rc)
        return rc;
    const sb_op_row *r = sb_ops_row(s->op);
    sb_ops_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "ops.%s: out of memory", r->name);
    st->s = *s;
    const size_t S = (size_t)sb_ops_elem_bytes(s);
    const int64_t T = s->tokens, d = s->d;
    st->x = sb_alloc_aligned(S * (size_t)sb_ops_in_elems(s));
    st->y = sb_alloc_aligned(S * (size_t)sb_ops_out_elems(s));
    int fail = !st->x || !st->y;
    void **vec[2] = {&st->g, &st->b};
    for (int v = 0; v < r->vecs; v++) {
        *vec[v] = sb_alloc_aligned(S * (size_t)d);
        fail |= !*vec[v];
    }
    if (r->tables) {
        size_t tb = sizeof(float) * (size_t)T * (size_t)(s->head_dim / 2);
        st->cos_t = sb_alloc_aligned(tb);
        st->sin_t = sb_alloc_aligned(tb);
        fail |= !st->cos_t || !st->sin_t;
    }
    if (sb_ops_cpu_scratch(s) > 0) {
        st->scratch = sb_alloc_aligned(sb_ops_cpu_scratch(s));
        fail |= !st->scratch;
    }
    sb_ops_cpu_prepare(s);
    if (fail) {
        sb__ops_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "could not allocate the buffers of this point");
    }
    sb_ops_cpu_fill(st->x, T, r->x_width * d, s->bf16, r->seed, -2.0, 2.0);
    /* the output too, so its pages are placed before the timed runs */
    sb_ops_cpu_fill(st->y, T, d, s->bf16, r->seed + 1, -1.0, 1.0);
    if (st->g)
        sb_ops_cpu_fill(st->g, 1, d, s->bf16, r->seed + 2, 0.5, 1.5);
    if (st->b)
        sb_ops_cpu_fill(st->b, 1, d, s->bf16, r->seed + 3, -0.5, 0.5);
    if (r->tables)
        sb_ops_rope_tables(s, st->cos_t, st->sin_t);
    st->io = (sb_ops_bufs){st->x, st->g, st->b, st->cos_t, st->sin_t, st->y};
    *state = st;
    return 0;
}

void sb_ops_cpu_state_buffers(void *state, void **x, void **g, void **y,
                              float **cos_t, float **sin_t)
{
    sb_ops_state *st = state;
    *x = st->x;
    *g = st->g;
    *y = st->y;
    *cos_t = st->cos_t;
    *sin_t = st->sin_t;
}

const sb_ops_bufs *sb_ops_cpu_state_io(void *state)
{
    return &((sb_ops_state *)state)->io;
}

void sb_ops_cpu_free(void *state)
{
    sb__ops_teardown(state);
}

static void sb__ops_run(void *state, uint64_t iters)
{
    sb_ops_state *st = state;
    for (uint64_t it = 0; it < iters; it++) {
        sb_ops_cpu_exec(&st->s, &st->io, st->scratch);
        SB_KEEP(st->y);
    }
}

int64_t sb_ops_cpu_verify_state(void *state, char *why, int why_len)
{
    sb_ops_state *st = state;
    return sb_ops_verify(&st->s, &st->io, why, why_len);
}

static int sb__ops_verify(void *state, sb_result *r)
{
    char why[320] = "";
    int64_t bad = sb_ops_cpu_verify_state(state, why, sizeof why);
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed: %s", why);
    return 0;
}

static void sb__ops_report(void *state, const sb_point *pt, sb_ctx *ctx,
                           sb_result *r)
{
    sb_ops_state *st = state;
    (void)pt, (void)ctx;
    if (st->s.nt)
        sb_result_note(r, "output rows written with non-temporal stores "
                          "(no write-allocate read)");
}

/* Every op's hooks, on the shape decoded once per point (the op is the
 * definition's kind). */
static int sb__ops_decode(const sb_bench *b, const sb_params *p, void *shape,
                          sb_err *err)
{
    (void)err;
    sb__ops_shape(p, (sb_op_kind)b->kind, shape);
    return 0;
}

static int sb__ops_check_pt(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    return sb_ops_check(pt->shape, err);
}

static double sb__ops_fp(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    return sb__ops_footprint_shape(pt->shape);
}

static double sb__ops_flops_pt(const sb_point *pt)
{
    return sb_ops_flops(pt->shape);
}

static double sb__ops_bytes_pt(const sb_point *pt)
{
    return sb_ops_bytes(pt->shape);
}

static int sb__ops_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    (void)ctx;
    return sb_ops_cpu_setup(pt->shape, state, err);
}

static const sb_impl sb__ops_cpu = {
    .backend = "cpu",
    .setup = sb__ops_setup,
    .run = sb__ops_run,
    .verify = sb__ops_verify,
    .report = sb__ops_report,
    .teardown = sb__ops_teardown,
};

/* ---- the benchmarks: one a row ------------------------------------------- */

#define SB_OP(NAME, KIND, PARAMS, DESC, ...)                                   \
    const sb_bench sb_bench_ops_##NAME = {                                     \
        .name = "ops." #NAME,                                                  \
        .area = "ops",                                                         \
        .desc = DESC,                                                          \
        .params = PARAMS,                                                      \
        .quick = "tokens=256 d=4096 dtype=fp32",                               \
        .full = "tokens=16384 d=4096 dtype=fp32,bf16",                         \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .roof = SB_ROOF_FP32,                                                  \
        .kind = KIND,                                                          \
        .decode = sb__ops_decode,                                              \
        .shape_size = sizeof(sb_ops_shape),                                    \
        .check = sb__ops_check_pt,                                             \
        .footprint = sb__ops_fp,                                               \
        .flops = sb__ops_flops_pt,                                             \
        .bytes = sb__ops_bytes_pt,                                             \
        .impls = (const sb_impl *const[]){&sb__ops_cpu, NULL},                 \
    };
#include "bench/ops/ops_table.def"
#undef SB_OP
