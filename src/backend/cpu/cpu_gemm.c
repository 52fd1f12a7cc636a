/*
 * cpu_gemm.c — the GEMM libraries behind cpu_gemm.h, one table of
 * functions each: OpenBLAS (CBLAS) and, where the build found it, oneDNN
 * (its matmul primitive, C API of the 2.x series).
 *
 * oneDNN picks its kernel when a primitive is created (JIT code for this
 * CPU's ISA), so a plan is one primitive for one shape, made outside any
 * timed region; its implementation string ("gemm:jit",
 * "brg:avx512_core_bf16") is the kernel a result records. alpha and beta
 * become the primitive's output scale and a sum post-op. A oneDNN stream
 * and its memory objects are not for two threads at once, so a plan keeps
 * one set per slot.
 */
#include "backend/cpu/cpu_gemm.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>
#include <omp.h>
#ifdef SB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "core/dl.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* Not every OpenBLAS build exports sbgemm (it needs BUILD_BFLOAT16): a
 * weak reference is NULL where it is missing instead of failing the link. */
#pragma weak cblas_sbgemm

char *openblas_get_config(void);
char *openblas_get_corename(void);

struct sb_gemm_plan {
    int lib;
    sb_gemm_desc d;
    int slots;
    void *impl;
    char kernel[96];
};

typedef struct sb__gemm_lib {
    const char *name;
    bool (*supports)(int dt, char *why, size_t len);
    int (*create)(sb_gemm_plan *p, sb_err *err);
    void (*run)(sb_gemm_plan *p, int slot, const void *a, const void *b,
                void *c);
    void (*destroy)(sb_gemm_plan *p);
    const char *(*version)(void);
} sb__gemm_lib;

static void sb__why(char *why, size_t len, const char *fmt, const char *arg)
{
    if (why && len)
        snprintf(why, len, fmt, arg);
}

/* ---- OpenBLAS
 * ----------------------------------------------------------------- */

static bool ob_supports(int dt, char *why, size_t len)
{
    if (dt == SB_GEMM_BF16 && !sb_blas_have_sbgemm()) {
        sb__why(why, len,
                "this OpenBLAS build (%s) does not export cblas_sbgemm",
                openblas_get_config());
        return false;
    }
    return dt >= 0 && dt < SB_GEMM_NDT;
}

/* One row of A: a matrix-vector product, which OpenBLAS streams B
 * through once, where its GEMM would first copy B into packed panels (a
 * second pass over a matrix far larger than the caches). */
static bool ob_gemv(const sb_gemm_desc *d)
{
    return d->m == 1 && d->dt != SB_GEMM_BF16;
}

static int ob_create(sb_gemm_plan *p, sb_err *err)
{
    (void)err;
    const char *core = openblas_get_corename();
    const char *forced = getenv("OPENBLAS_CORETYPE");
    snprintf(p->kernel, sizeof p->kernel, "OpenBLAS core %s%s%s%s, %s",
             core ? core : "?", forced && *forced ? " (OPENBLAS_CORETYPE=" : "",
             forced && *forced ? forced : "", forced && *forced ? ")" : "",
             ob_gemv(&p->d) ? (p->d.dt == SB_GEMM_F64 ? "dgemv" : "sgemv")
             : p->d.dt == SB_GEMM_F64 ? "dgemm"
             : p->d.dt == SB_GEMM_F32 ? "sgemm"
                                      : "sbgemm");
    return 0;
}

static void ob_run(sb_gemm_plan *p, int slot, const void *a, const void *b,
                   void *c)
{
    (void)slot;
    const sb_gemm_desc *d = &p->d;
    const int m = (int)d->m, n = (int)d->n, k = (int)d->k;
    const int lda = (int)d->lda, ldb = (int)d->ldb, ldc = (int)d->ldc;
    const enum CBLAS_TRANSPOSE tb = d->trans_b ? CblasTrans : CblasNoTrans;
    if (ob_gemv(d)) {
        /* c[n] = alpha op(B)ᵀ a + beta c: B is k x n row-major (trans_b:
         * n x k), so the vector product takes its transpose (or not). */
        const enum CBLAS_TRANSPOSE tv = d->trans_b ? CblasNoTrans : CblasTrans;
        const int rows = d->trans_b ? n : k, cols = d->trans_b ? k : n;
        if (d->dt == SB_GEMM_F64)
            cblas_dgemv(CblasRowMajor, tv, rows, cols, d->alpha, b, ldb, a, 1,
                        d->beta, c, 1);
        else
            cblas_sgemv(CblasRowMajor, tv, rows, cols, d->alpha, b, ldb, a, 1,
                        d->beta, c, 1);
        return;
    }
    switch (d->dt) {
    case SB_GEMM_F64:
        cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, d->alpha, a, lda,
                    b, ldb, d->beta, c, ldc);
        break;
    case SB_GEMM_F32:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, d->alpha, a, lda,
                    b, ldb, d->beta, c, ldc);
        break;
    default:
        if (cblas_sbgemm)
            cblas_sbgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, d->alpha, a,
                         lda, b, ldb, d->beta, c, ldc);
        break;
    }
}

static void ob_destroy(sb_gemm_plan *p)
{
    (void)p;
}

static const char *ob_version(void)
{
    return openblas_get_config();
}

/* ---- oneDNN
 * --------------------------------------------------------------------- */

#ifdef SB_HAVE_DNNL

/* oneDNN is opened with dlopen on first use (core/dl.h): a binary linked
 * against it would not start where libdnnl is absent, and commands that
 * multiply nothing should not map it. */
#define SB_DNNL_FNS(X)                                                         \
    X(dnnl_engine_create)                                                      \
    X(dnnl_matmul_desc_init)                                                   \
    X(dnnl_memory_create)                                                      \
    X(dnnl_memory_desc_init_by_strides)                                        \
    X(dnnl_memory_destroy)                                                     \
    X(dnnl_memory_set_data_handle_v2)                                          \
    X(dnnl_post_ops_append_sum)                                                \
    X(dnnl_post_ops_create)                                                    \
    X(dnnl_post_ops_destroy)                                                   \
    X(dnnl_primitive_attr_create)                                              \
    X(dnnl_primitive_attr_destroy)                                             \
    X(dnnl_primitive_attr_set_output_scales)                                   \
    X(dnnl_primitive_attr_set_post_ops)                                        \
    X(dnnl_primitive_attr_set_scratchpad_mode)                                 \
    X(dnnl_primitive_create)                                                   \
    X(dnnl_primitive_desc_create)                                              \
    X(dnnl_primitive_desc_destroy)                                             \
    X(dnnl_primitive_desc_query)                                               \
    X(dnnl_primitive_desc_query_md)                                            \
    X(dnnl_primitive_destroy)                                                  \
    X(dnnl_primitive_execute)                                                  \
    X(dnnl_stream_create)                                                      \
    X(dnnl_stream_destroy)                                                     \
    X(dnnl_stream_wait)                                                        \
    X(dnnl_version)

#define SB_DNNL_STR_(x) #x
#define SB_DNNL_STR(x) SB_DNNL_STR_(x)
#define SB_DNNL_MEMBER(f) __typeof__(f) *f;
#define SB_DNNL_NAME(f) #f,
static struct {
    SB_DNNL_FNS(SB_DNNL_MEMBER)
} dn_fn;
static const char *const dn_names[] = {SB_DNNL_FNS(SB_DNNL_NAME)};
_Static_assert(sizeof dn_fn == sizeof dn_names, "one name a pointer");
#ifndef SB_DNNL_LIBDIR
#define SB_DNNL_LIBDIR NULL
#endif
static sb_dl_lib dn_lib = SB_DL_LIB(
    "oneDNN", "libdnnl.so." SB_DNNL_STR(DNNL_VERSION_MAJOR), SB_DNNL_LIBDIR);

/* 0 once oneDNN's functions are in dn_fn; else SB_EUNSUP with the
 * loader's reason. */
static int dn_load(sb_err *err)
{
    return sb_dl_load(&dn_lib, dn_names, &dn_fn,
                      sizeof dn_names / sizeof *dn_names, err);
}

/* One slot a thread: its own stream, memory objects and scratchpad, so
 * threads may run the plan's primitive at once (oneDNN's own scratchpad,
 * the library-managed one, is shared: concurrent runs of a primitive that
 * uses it overwrite each other's packed operands). */
typedef struct dn_slot {
    dnnl_stream_t stream;
    dnnl_memory_t a, b, c, scratch;
} dn_slot;

typedef struct dn_plan {
    dnnl_primitive_t prim;
    dn_slot *slot;
} dn_plan;

/* One CPU engine for the process, made on first use. */
static dnnl_engine_t dn_engine(void)
{
    static dnnl_engine_t eng;
    static int state; /* 0 untried, 1 made, -1 failed */
#pragma omp critical(sb_dnnl_engine)
    if (state == 0)
        state = dn_fn.dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success
                    ? 1
                    : -1;
    return state == 1 ? eng : NULL;
}

static dnnl_data_type_t dn_type(int dt)
{
    return dt == SB_GEMM_BF16 ? dnnl_bf16 : dnnl_f32;
}

static const char *dn_status(dnnl_status_t s)
{
    switch (s) {
    case dnnl_out_of_memory:
        return "out of memory";
    case dnnl_invalid_arguments:
        return "invalid arguments";
    case dnnl_unimplemented:
        return "no implementation for this CPU";
    default:
        return "error";
    }
}

/* The primitive descriptor of d; status as oneDNN says. */
static dnnl_status_t dn_pd(const sb_gemm_desc *d, dnnl_primitive_desc_t *pd)
{
    dnnl_engine_t eng = dn_engine();
    if (!eng)
        return dnnl_runtime_error;
    dnnl_memory_desc_t a, b, c;
    dnnl_dims_t ad = {d->m, d->k}, bd = {d->k, d->n}, cd = {d->m, d->n};
    dnnl_dims_t as = {d->lda, 1}, cs = {d->ldc, 1};
    dnnl_dims_t bs = {d->ldb, 1};
    if (d->trans_b) { /* B[p][j] at j * ldb + p */
        bs[0] = 1;
        bs[1] = d->ldb;
    }
    dnnl_status_t st =
        dn_fn.dnnl_memory_desc_init_by_strides(&a, 2, ad, dn_type(d->dt), as);
    if (st == dnnl_success)
        st = dn_fn.dnnl_memory_desc_init_by_strides(&b, 2, bd, dn_type(d->dt),
                                                    bs);
    if (st == dnnl_success)
        st = dn_fn.dnnl_memory_desc_init_by_strides(&c, 2, cd, dnnl_f32, cs);
    dnnl_matmul_desc_t md;
    if (st == dnnl_success)
        st = dn_fn.dnnl_matmul_desc_init(&md, &a, &b, NULL, &c);
    dnnl_primitive_attr_t attr = NULL;
    if (st == dnnl_success)
        st = dn_fn.dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success)
        st = dn_fn.dnnl_primitive_attr_set_scratchpad_mode(
            attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success && d->alpha != 1.0f)
        st = dn_fn.dnnl_primitive_attr_set_output_scales(attr, 1, 0, &d->alpha);
    if (st == dnnl_success && d->beta != 0.0f) {
        dnnl_post_ops_t po;
        st = dn_fn.dnnl_post_ops_create(&po);
        if (st == dnnl_success) {
            st = dn_fn.dnnl_post_ops_append_sum(po, d->beta);
            if (st == dnnl_success)
                st = dn_fn.dnnl_primitive_attr_set_post_ops(attr, po);
            dn_fn.dnnl_post_ops_destroy(po);
        }
    }
    if (st == dnnl_success)
        st = dn_fn.dnnl_primitive_desc_create(pd, &md, attr, eng, NULL);
    if (attr)
        dn_fn.dnnl_primitive_attr_destroy(attr);
    return st;
}

static bool dn_supports(int dt, char *why, size_t len)
{
    if (dt == SB_GEMM_F64) {
        sb__why(why, len, "%s", "oneDNN's CPU matmul has no fp64");
        return false;
    }
    if (dt != SB_GEMM_F32 && dt != SB_GEMM_BF16)
        return false;
    sb_err e = {0};
    if (dn_load(&e)) {
        sb__why(why, len, "%s", e.msg);
        return false;
    }
    /* Whether this CPU has a kernel for the type: a small primitive
     * descriptor answers (once; the answer does not change). */
    static int known[SB_GEMM_NDT]; /* 0 untried, 1 yes, -1 no */
    static dnnl_status_t why_not[SB_GEMM_NDT];
    int k;
#pragma omp critical(sb_dnnl_supports)
    {
        if (known[dt] == 0) {
            sb_gemm_desc d = {.dt = dt,
                              .m = 64,
                              .n = 64,
                              .k = 64,
                              .lda = 64,
                              .ldb = 64,
                              .ldc = 64,
                              .alpha = 1,
                              .beta = 0};
            dnnl_primitive_desc_t pd;
            why_not[dt] = dn_pd(&d, &pd);
            known[dt] = why_not[dt] == dnnl_success ? 1 : -1;
            if (known[dt] == 1)
                dn_fn.dnnl_primitive_desc_destroy(pd);
        }
        k = known[dt];
    }
    if (k < 0)
        sb__why(
            why, len, "oneDNN has no %s matmul for this CPU",
            dt == SB_GEMM_BF16
                ? (why_not[dt] == dnnl_unimplemented ? "bf16" : "bf16 (error)")
                : "fp32");
    return k > 0;
}

static void dn_destroy(sb_gemm_plan *p)
{
    dn_plan *q = p->impl;
    if (!q)
        return;
    for (int s = 0; q->slot && s < p->slots; s++) {
        if (q->slot[s].a)
            dn_fn.dnnl_memory_destroy(q->slot[s].a);
        if (q->slot[s].b)
            dn_fn.dnnl_memory_destroy(q->slot[s].b);
        if (q->slot[s].c)
            dn_fn.dnnl_memory_destroy(q->slot[s].c);
        if (q->slot[s].scratch)
            dn_fn.dnnl_memory_destroy(q->slot[s].scratch);
        if (q->slot[s].stream)
            dn_fn.dnnl_stream_destroy(q->slot[s].stream);
    }
    free(q->slot);
    if (q->prim)
        dn_fn.dnnl_primitive_destroy(q->prim);
    free(q);
    p->impl = NULL;
}

static int dn_create(sb_gemm_plan *p, sb_err *err)
{
    int rc = dn_load(err);
    if (rc)
        return rc;
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dn_pd(&p->d, &pd);
    if (st != dnnl_success)
        return sb_fail(err, st == dnnl_out_of_memory ? SB_ENOMEM : SB_EUNSUP,
                       "oneDNN matmul %lldx%lldx%lld %s: %s", (long long)p->d.m,
                       (long long)p->d.n, (long long)p->d.k,
                       p->d.dt == SB_GEMM_BF16 ? "bf16" : "fp32",
                       dn_status(st));
    const char *impl = NULL;
    if (dn_fn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                        &impl) != dnnl_success ||
        !impl)
        impl = "?";
    snprintf(p->kernel, sizeof p->kernel, "oneDNN %s", impl);

    dn_plan *q = calloc(1, sizeof *q);
    if (q)
        q->slot = calloc((size_t)p->slots, sizeof *q->slot);
    p->impl = q;
    if (!q || !q->slot) {
        dn_fn.dnnl_primitive_desc_destroy(pd);
        dn_destroy(p);
        return sb_fail(err, SB_ENOMEM, "oneDNN matmul: out of memory");
    }
    st = dn_fn.dnnl_primitive_create(&q->prim, pd);
    const dnnl_memory_desc_t *ma =
        dn_fn.dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *mb =
        dn_fn.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *mc =
        dn_fn.dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *ms =
        dn_fn.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    dnnl_engine_t eng = dn_engine();
    for (int s = 0; st == dnnl_success && s < p->slots; s++) {
        dn_slot *sl = &q->slot[s];
        st = dn_fn.dnnl_stream_create(&sl->stream, eng,
                                      dnnl_stream_default_flags);
        if (st == dnnl_success)
            st = dn_fn.dnnl_memory_create(&sl->a, ma, eng, DNNL_MEMORY_NONE);
        if (st == dnnl_success)
            st = dn_fn.dnnl_memory_create(&sl->b, mb, eng, DNNL_MEMORY_NONE);
        if (st == dnnl_success)
            st = dn_fn.dnnl_memory_create(&sl->c, mc, eng, DNNL_MEMORY_NONE);
        if (st == dnnl_success && ms)
            st = dn_fn.dnnl_memory_create(&sl->scratch, ms, eng,
                                          DNNL_MEMORY_ALLOCATE);
    }
    dn_fn.dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) {
        dn_destroy(p);
        return sb_fail(err, st == dnnl_out_of_memory ? SB_ENOMEM : SB_EUNSUP,
                       "oneDNN matmul: %s", dn_status(st));
    }
    return 0;
}

static void dn_run(sb_gemm_plan *p, int slot, const void *a, const void *b,
                   void *c)
{
    dn_plan *q = p->impl;
    dn_slot *sl = &q->slot[slot];
    dn_fn.dnnl_memory_set_data_handle_v2(sl->a, (void *)a, sl->stream);
    dn_fn.dnnl_memory_set_data_handle_v2(sl->b, (void *)b, sl->stream);
    dn_fn.dnnl_memory_set_data_handle_v2(sl->c, c, sl->stream);
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, sl->a},
                               {DNNL_ARG_WEIGHTS, sl->b},
                               {DNNL_ARG_DST, sl->c},
                               {DNNL_ARG_SCRATCHPAD, sl->scratch}};
    dn_fn.dnnl_primitive_execute(q->prim, sl->stream, sl->scratch ? 4 : 3,
                                 args);
    dn_fn.dnnl_stream_wait(sl->stream);
}

static const char *dn_version(void)
{
    static char v[48];
    sb_err e = {0};
    if (dn_load(&e))
        return "oneDNN (does not load)";
    const dnnl_version_t *dv = dn_fn.dnnl_version();
    snprintf(v, sizeof v, "oneDNN %d.%d.%d (%s)", dv->major, dv->minor,
             dv->patch,
             dv->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
             : dv->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                                                   : "threadpool");
    return v;
}

#else /* built without oneDNN */

static bool dn_supports(int dt, char *why, size_t len)
{
    (void)dt;
    sb__why(why, len, "%s",
            "this build has no oneDNN (libdnnl-dev was not "
            "found when it was configured)");
    return false;
}

static int dn_create(sb_gemm_plan *p, sb_err *err)
{
    (void)p;
    return sb_fail(err, SB_EUNSUP, "this build has no oneDNN");
}

static void dn_run(sb_gemm_plan *p, int slot, const void *a, const void *b,
                   void *c)
{
    (void)p, (void)slot, (void)a, (void)b, (void)c;
}

static void dn_destroy(sb_gemm_plan *p)
{
    (void)p;
}

static const char *dn_version(void)
{
    return "oneDNN (not built in)";
}

#endif

/* ---- the table
 * ------------------------------------------------------------------ */

static const sb__gemm_lib sb__libs[SB_GEMM_NLIBS] = {
    {"openblas", ob_supports, ob_create, ob_run, ob_destroy, ob_version},
    {"onednn", dn_supports, dn_create, dn_run, dn_destroy, dn_version},
};

const char *sb_gemm_lib_name(int lib)
{
    return lib >= 0 && lib < SB_GEMM_NLIBS ? sb__libs[lib].name : "?";
}

int sb_gemm_lib_parse(const char *s)
{
    for (int i = 0; s && i < SB_GEMM_NLIBS; i++)
        if (strcmp(s, sb__libs[i].name) == 0)
            return i;
    return -1;
}

bool sb_gemm_lib_supports(int lib, int dt, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    if (lib < 0 || lib >= SB_GEMM_NLIBS || dt < 0 || dt >= SB_GEMM_NDT)
        return false;
    return sb__libs[lib].supports(dt, why, len);
}

const char *sb_gemm_lib_version(int lib)
{
    return lib >= 0 && lib < SB_GEMM_NLIBS ? sb__libs[lib].version() : "?";
}

int sb_gemm_plan_create(int lib, const sb_gemm_desc *d, int slots,
                        sb_gemm_plan **out, sb_err *err)
{
    *out = NULL;
    if (lib < 0 || lib >= SB_GEMM_NLIBS)
        return sb_fail(err, SB_EINVAL, "gemm: unknown library %d", lib);
    if (d->dt < 0 || d->dt >= SB_GEMM_NDT || d->m < 1 || d->n < 1 || d->k < 1 ||
        d->m > INT_MAX || d->n > INT_MAX || d->k > INT_MAX)
        return sb_fail(
            err, SB_EINVAL, "gemm: M=%lld N=%lld K=%lld: each must be in 1..%d",
            (long long)d->m, (long long)d->n, (long long)d->k, INT_MAX);
    char why[192];
    if (!sb_gemm_lib_supports(lib, d->dt, why, sizeof why))
        return sb_fail(err, SB_EUNSUP, "unsupported: %s", why);
    sb_gemm_plan *p = calloc(1, sizeof *p);
    if (!p)
        return sb_fail(err, SB_ENOMEM, "gemm: out of memory");
    p->lib = lib;
    p->d = *d;
    p->slots = slots > 0 ? slots : 1;
    if (p->d.alpha == 0.0f && p->d.beta == 0.0f)
        p->d.alpha = 1.0f;
    if (!p->d.lda)
        p->d.lda = d->k;
    if (!p->d.ldb)
        p->d.ldb = d->trans_b ? d->k : d->n;
    if (!p->d.ldc)
        p->d.ldc = d->n;
    if (p->d.lda < p->d.k || p->d.ldc < p->d.n ||
        p->d.ldb < (d->trans_b ? p->d.k : p->d.n) || p->d.lda > INT_MAX ||
        p->d.ldb > INT_MAX || p->d.ldc > INT_MAX) {
        free(p);
        return sb_fail(err, SB_EINVAL,
                       "gemm: leading dimensions %lld, "
                       "%lld, %lld too small or too large",
                       (long long)d->lda, (long long)d->ldb, (long long)d->ldc);
    }
    int rc = sb__libs[lib].create(p, err);
    if (rc < 0) {
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void sb_gemm_run(sb_gemm_plan *p, int slot, const void *a, const void *b,
                 void *c)
{
    sb__libs[p->lib].run(p, slot < p->slots ? slot : 0, a, b, c);
}

const char *sb_gemm_plan_kernel(const sb_gemm_plan *p)
{
    return p->kernel;
}
int sb_gemm_plan_lib(const sb_gemm_plan *p)
{
    return p->lib;
}
const sb_gemm_desc *sb_gemm_plan_desc(const sb_gemm_plan *p)
{
    return &p->d;
}

void sb_gemm_plan_destroy(sb_gemm_plan *p)
{
    if (!p)
        return;
    sb__libs[p->lib].destroy(p);
    free(p);
}

double sb_gemm_time(void (*fn)(void *arg), void *arg, int tries)
{
    fn(arg); /* untimed: first touch, JIT, caches */
    double t0 = sb_now();
    fn(arg);
    double t = sb_now() - t0;
    /* A long call needs no more tries to be read right. */
    for (int i = 1; i < tries && t < 0.05; i++) {
        t0 = sb_now();
        fn(arg);
        double dt = sb_now() - t0;
        t = dt < t ? dt : t;
    }
    return t;
}

typedef struct sb__one_run {
    sb_gemm_plan *p;
    const void *a, *b;
    void *c;
} sb__one_run;

static void sb__run_once(void *arg)
{
    sb__one_run *r = arg;
    sb_gemm_run(r->p, 0, r->a, r->b, r->c);
}

int sb_gemm_plan_fastest(const sb_gemm_desc *d, int slots, const void *a,
                         const void *b, void *c, int tries,
                         double best_s[SB_GEMM_NLIBS], sb_gemm_plan **out,
                         sb_err *err)
{
    *out = NULL;
    sb_gemm_plan *best = NULL;
    double best_t = INFINITY;
    char whys[SB_GEMM_NLIBS][192];
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
        best_s[lib] = 0;
        whys[lib][0] = '\0';
        if (!sb_gemm_lib_supports(lib, d->dt, whys[lib], sizeof whys[lib]))
            continue;
        sb_gemm_plan *p;
        sb_err e = {0};
        if (sb_gemm_plan_create(lib, d, slots, &p, &e) < 0) {
            snprintf(whys[lib], sizeof whys[lib], "%s", e.msg);
            continue;
        }
        sb__one_run r = {p, a, b, c};
        double t = sb_gemm_time(sb__run_once, &r, tries);
        best_s[lib] = t;
        if (t < best_t) {
            sb_gemm_plan_destroy(best);
            best = p;
            best_t = t;
        } else {
            sb_gemm_plan_destroy(p);
        }
    }
    if (!best)
        return sb_fail(err, SB_EUNSUP,
                       "unsupported: no GEMM library runs "
                       "this: %s; %s",
                       whys[0], whys[1]);
    *out = best;
    return 0;
}

/* ---- OpenBLAS's core for this CPU
 * -------------------------------------------- */

int sb_gemm_openblas_core_width(const char *core)
{
    static const char *const w512[] = {"skylakex", "cooperlake",
                                       "sapphirerapids", NULL};
    static const char *const w256[] = {
        "haswell",     "zen",        "sandybridge", "excavator",
        "steamroller", "piledriver", "bulldozer",   NULL};
    if (!core)
        return 128;
    for (int i = 0; w512[i]; i++)
        if (strncasecmp(core, w512[i], strlen(w512[i])) == 0)
            return 512;
    for (int i = 0; w256[i]; i++)
        if (strncasecmp(core, w256[i], strlen(w256[i])) == 0)
            return 256;
    return 128;
}

const char *sb_gemm_core_for_isa(const sb_isa *isa, bool amd, const char *core)
{
    /* The cores a DYNAMIC_ARCH OpenBLAS (Debian's) carries: Cooperlake
     * adds AVX512-BF16 kernels (sbgemm) to SkylakeX's AVX-512 ones, and
     * both run on every later AVX-512 CPU (Sapphire/Emerald/Granite
     * Rapids, Zen 4 and 5) that a library older than the CPU does not
     * know and serves with its SSE fallback (Prescott). */
    const char *want;
    int want_w;
    if (isa->avx512f && isa->avx512bw && isa->avx512vl && isa->avx512_bf16) {
        want = "Cooperlake";
        want_w = 512;
    } else if (isa->avx512f && isa->avx512bw && isa->avx512vl) {
        want = "SkylakeX";
        want_w = 512;
    } else if (isa->avx2 && isa->fma) {
        want = amd ? "Zen" : "Haswell";
        want_w = 256;
    } else {
        return NULL;
    }
    int have = sb_gemm_openblas_core_width(core);
    if (have > want_w)
        return NULL;
    if (have == want_w && (want_w < 512 || !isa->avx512_bf16 ||
                           strncasecmp(core, "skylakex", 8) != 0))
        return NULL;
    return want;
}

const char *sb_gemm_openblas_better_core(void)
{
    sb_isa isa;
    sb_isa_detect(&isa);
    bool amd = false;
#if defined(__x86_64__)
    __builtin_cpu_init();
    amd = __builtin_cpu_is("amd");
#endif
    return sb_gemm_core_for_isa(&isa, amd, openblas_get_corename());
}
