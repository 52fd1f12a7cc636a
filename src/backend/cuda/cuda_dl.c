/*
 * cuda_dl.c — cuBLAS, cuBLASLt and NCCL opened where first needed
 * (cuda_dl.h), through core/dl.c.
 *
 * Each library is looked up by its soname (the major version of the
 * headers built against: libcublasLt.so.13, libnccl.so.2), then in the
 * folder the build found it (SB_CUDA_LIBDIR, SB_NCCL_LIBDIR).
 */
#include "backend/cuda/cuda_dl.h"

#include "core/dl.h"

sb_cuda_dl_api sb_cuda_dl;

#define SB_DL_STR_(x) #x
#define SB_DL_STR(x) SB_DL_STR_(x)
/* The symbol's name after the header's macros (cublasCreate_v2). */
#define SB_DL_NAME(f) SB_DL_STR(f),
#define SB_DL_NAME_T(f, T) SB_DL_STR(f),
#define SB_DL_MEMBER_T(f, T) T f;

#ifndef SB_CUDA_LIBDIR
#define SB_CUDA_LIBDIR NULL
#endif
#ifndef SB_NCCL_LIBDIR
#define SB_NCCL_LIBDIR SB_CUDA_LIBDIR
#endif

/* One table a library: the shared one is filled from these. */
typedef struct {
    SB_CUBLASLT_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
} lt_fns;
typedef struct {
    SB_CUBLAS_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
} blas_fns;
static const char *const lt_names[] = {
    SB_CUBLASLT_FNS(SB_DL_NAME, SB_DL_NAME_T)};
static const char *const blas_names[] = {
    SB_CUBLAS_FNS(SB_DL_NAME, SB_DL_NAME_T)};
_Static_assert(sizeof(lt_fns) == sizeof lt_names, "one name a pointer");
_Static_assert(sizeof(blas_fns) == sizeof blas_names, "one name a pointer");

static sb_dl_lib g_lt = SB_DL_LIB(
    "cuBLASLt", "libcublasLt.so." SB_DL_STR(CUBLAS_VER_MAJOR), SB_CUDA_LIBDIR);
static sb_dl_lib g_blas = SB_DL_LIB(
    "cuBLAS", "libcublas.so." SB_DL_STR(CUBLAS_VER_MAJOR), SB_CUDA_LIBDIR);

#ifdef SB_HAVE_NCCL
typedef struct {
    SB_NCCL_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
} nccl_fns;
static const char *const nccl_names[] = {SB_NCCL_FNS(SB_DL_NAME, SB_DL_NAME_T)};
_Static_assert(sizeof(nccl_fns) == sizeof nccl_names, "one name a pointer");
static sb_dl_lib g_nccl =
    SB_DL_LIB("NCCL", "libnccl.so." SB_DL_STR(NCCL_MAJOR), SB_NCCL_LIBDIR);
#endif

#define SB_DL_COPY(f) sb_cuda_dl.f = t.f;
#define SB_DL_COPY_T(f, T) sb_cuda_dl.f = t.f;

int sb_cuda_dl_load(unsigned which, sb_err *err)
{
    int rc;
    if (which & SB_CUDA_DL_CUBLASLT) {
        static lt_fns t;
        if ((rc = sb_dl_load(&g_lt, lt_names, &t,
                             sizeof lt_names / sizeof *lt_names, err)))
            return rc;
        SB_CUBLASLT_FNS(SB_DL_COPY, SB_DL_COPY_T)
    }
    if (which & SB_CUDA_DL_CUBLAS) {
        static blas_fns t;
        if ((rc = sb_dl_load(&g_blas, blas_names, &t,
                             sizeof blas_names / sizeof *blas_names, err)))
            return rc;
        SB_CUBLAS_FNS(SB_DL_COPY, SB_DL_COPY_T)
    }
    if (which & SB_CUDA_DL_NCCL) {
#ifdef SB_HAVE_NCCL
        static nccl_fns t;
        if ((rc = sb_dl_load(&g_nccl, nccl_names, &t,
                             sizeof nccl_names / sizeof *nccl_names, err)))
            return rc;
        SB_NCCL_FNS(SB_DL_COPY, SB_DL_COPY_T)
#else
        return sb_fail(err, SB_EUNSUP, "this build has no NCCL");
#endif
    }
    return 0;
}

const char *sb_cuda_dl_path(unsigned which)
{
    if (which & SB_CUDA_DL_CUBLASLT)
        return sb_dl_path(&g_lt);
    if (which & SB_CUDA_DL_CUBLAS)
        return sb_dl_path(&g_blas);
#ifdef SB_HAVE_NCCL
    if (which & SB_CUDA_DL_NCCL)
        return sb_dl_path(&g_nccl);
#endif
    return "";
}
