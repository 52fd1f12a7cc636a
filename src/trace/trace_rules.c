/*
 * trace_rules.c — FLOPs and bytes of one op instance from its shapes and
 * dtype (docs/TRACE.md, "FLOP and byte rules"). PyTorch ops from the
 * profiler's "Input Dims" / "Input type"; XLA ops from their HLO text.
 * Matmul, attention and convolution FLOPs follow torch.utils.flop_counter
 * (2 per multiply-add; attention counts the full score matrix, masked or
 * not); the other ops are counted by the bytes they must move at least
 * (each input read once, the output written once).
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/netmodel.h"
#include "solbench/trace.h"

const char *sb_tr_cat_name(sb_tr_cat c)
{
    static const char *const n[SB_TC_NCATS] = {
        "unknown",  "matmul",      "conv",     "attention", "softmax",
        "norm",     "elementwise", "reduce",   "embedding", "copy",
        "transfer", "collective",  "framework"};
    return (unsigned)c < SB_TC_NCATS ? n[c] : "?";
}

int sb_tr_dtype(const char *type, char *dt, size_t len)
{
    static const struct {
        const char *in, *out;
        int size;
    } m[] = {{"float", "fp32", 4},
             {"c10::BFloat16", "bf16", 2},
             {"BFloat16", "bf16", 2},
             {"c10::Half", "fp16", 2},
             {"Half", "fp16", 2},
             {"double", "fp64", 8},
             {"c10::Float8_e4m3fn", "fp8", 1},
             {"c10::Float8_e5m2", "fp8", 1},
             {"Float8_e4m3fn", "fp8", 1},
             {"Float8_e5m2", "fp8", 1},
             {"Float", "fp32", 4},
             {"Double", "fp64", 8},
             {"long int", "int64", 8},
             {"long", "int64", 8},
             {"Long", "int64", 8},
             {"int", "int32", 4},
             {"Int", "int32", 4},
             {"bool", "bool", 1},
             {"unsigned char", "uint8", 1},
             {"signed char", "int8", 1},
             {"Char", "int8", 1},
             {"Byte", "uint8", 1},
             {"f32", "fp32", 4},
             {"bf16", "bf16", 2},
             {"f16", "fp16", 2},
             {"f64", "fp64", 8},
             {"f8e4m3fn", "fp8", 1},
             {"f8e5m2", "fp8", 1},
             {"s64", "int64", 8},
             {"s32", "int32", 4},
             {"u32", "uint32", 4},
             {"s8", "int8", 1},
             {"u8", "uint8", 1},
             {"pred", "bool", 1}};
    if (dt && len)
        dt[0] = '\0';
    if (!type)
        return 0;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(type, m[i].in) == 0) {
            if (dt && len)
                snprintf(dt, len, "%s", m[i].out);
            return m[i].size;
        }
    return 0;
}

int sb_tr_dtype_size(const char *dt)
{
    static const struct {
        const char *dt;
        int size;
    } m[] = {{"fp64", 8}, {"fp32", 4},  {"tf32", 4},  {"bf16", 2},
             {"fp16", 2}, {"fp8", 1},   {"int64", 8}, {"int32", 4},
             {"int8", 1}, {"uint8", 1}, {"bool", 1}};
    for (size_t i = 0; dt && i < sizeof m / sizeof m[0]; i++)
        if (strcmp(dt, m[i].dt) == 0)
            return m[i].size;
    return 0;
}

const char *sb_tr_nccl_coll(const char *k)
{
    if (!strstr(k, "nccl"))
        return NULL;
    static const char *const m[][2] = {{"AllReduce", "allreduce"},
                                       {"AllGather", "allgather"},
                                       {"ReduceScatter", "reduce_scatter"},
                                       {"AllToAll", "alltoall"},
                                       {"Broadcast", "broadcast"},
                                       {"SendRecv", "sendrecv"},
                                       {"Reduce", "reduce"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strstr(k, m[i][0]))
            return m[i][1];
    return NULL;
}

void sb_utf8_trim(char *s)
{
    size_t n = strlen(s);
    /* back over a sequence the cut left incomplete */
    size_t i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80 && n - i < 3)
        i--;
    if (i > 0) {
        unsigned char lead = (unsigned char)s[i - 1];
        size_t want = lead >= 0xf0   ? 4
                      : lead >= 0xe0 ? 3
                      : lead >= 0xc0 ? 2
                                     : 1;
        if (lead >= 0xc0 && n - (i - 1) < want)
            s[i - 1] = '\0';
    }
}

/* ---- PyTorch ------------------------------------------------------------- */

typedef struct targ {
    int rank;    /* -1: not a tensor (scalar, list, None) */
    double d[8]; /* the last 8 dims */
    double numel;
    int es; /* bytes per element, 0 unknown */
    char dt[8];
} targ;

#define MAX_TARGS 16

static int torch_args(json_t *sig, targ *a)
{
    json_t *dims = json_array_get(sig, 0), *types = json_array_get(sig, 1);
    int n = 0;
    size_t nd = json_array_size(dims);
    for (size_t i = 0; i < nd && n < MAX_TARGS; i++, n++) {
        targ *t = &a[n];
        memset(t, 0, sizeof *t);
        json_t *sh = json_array_get(dims, i);
        const char *ty = json_string_value(json_array_get(types, i));
        t->es = sb_tr_dtype(ty, t->dt, sizeof t->dt);
        size_t r = json_array_size(sh);
        /* a 0-d tensor has [] as its dims and a tensor type; a scalar has
         * [] and a type such as "Scalar" or "" */
        if (!json_is_array(sh) || (r == 0 && t->es == 0)) {
            t->rank = -1;
            continue;
        }
        t->rank = (int)r;
        t->numel = 1;
        bool ok = true;
        for (size_t k = 0; k < r; k++) {
            json_t *v = json_array_get(sh, k);
            double x = json_is_number(v) ? json_number_value(v) : -1;
            if (x < 0 || x > 1e15) {
                ok = false;
                break;
            }
            t->numel *= x;
            if (r - k <= 8)
                t->d[8 - (r - k)] = x;
        }
        if (!ok || t->numel > 1e18)
            t->rank = -1;
    }
    return n;
}

/* dim i counted from the end: D(t, 1) is the last one */
#define D(t, i) ((t)->d[8 - (i)])

static bool is_tensor(const targ *t)
{
    return t->rank >= 0;
}

static const char *strip_ns(const char *name)
{
    const char *p = strstr(name, "::");
    return p ? p + 2 : name;
}

static bool name_in(const char *n, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(n, *list) == 0)
            return true;
    return false;
}

static void set_dtype(sb_tr_cost *c, const targ *t)
{
    if (t && t->dt[0])
        snprintf(c->dtype, sizeof c->dtype, "%s", t->dt);
}

/* A matmul of a [.., M, K] by b [.., K, N] with `batch` products. */
static void matmul_cost(sb_tr_cost *c, double batch, double m, double k,
                        double n, const targ *a, const targ *b,
                        double extra_bytes)
{
    c->cat = SB_TC_MATMUL;
    c->flops = 2 * batch * m * k * n;
    int es = a->es ? a->es : 4;
    c->bytes = (a->numel + b->numel) * es + batch * m * n * es + extra_bytes;
    set_dtype(c, a);
}

static int coll_of(const char *n)
{
    static const struct {
        const char *s;
        sb_netop op;
    } m[] = {{"allreduce", SB_NET_ALLREDUCE},
             {"all_reduce", SB_NET_ALLREDUCE},
             {"allgather", SB_NET_ALLGATHER},
             {"all_gather", SB_NET_ALLGATHER},
             {"_allgather_base", SB_NET_ALLGATHER},
             {"all_gather_into_tensor", SB_NET_ALLGATHER},
             {"allgather_into_tensor", SB_NET_ALLGATHER},
             {"reduce_scatter", SB_NET_REDUCE_SCATTER},
             {"reducescatter", SB_NET_REDUCE_SCATTER},
             {"_reduce_scatter_base", SB_NET_REDUCE_SCATTER},
             {"reduce_scatter_tensor", SB_NET_REDUCE_SCATTER},
             {"alltoall", SB_NET_ALLTOALL},
             {"all_to_all", SB_NET_ALLTOALL},
             {"alltoall_base", SB_NET_ALLTOALL},
             {"all_to_all_single", SB_NET_ALLTOALL},
             {"broadcast", SB_NET_BCAST},
             {"bcast", SB_NET_BCAST},
             {"reduce", SB_NET_REDUCE},
             {"send", SB_NET_SENDRECV},
             {"recv", SB_NET_SENDRECV},
             {"sendrecv", SB_NET_SENDRECV}};
    char low[48];
    size_t i = 0;
    for (; n[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)n[i]);
    low[i] = '\0';
    /* FSDP's coalesced forms: allgather_into_tensor_coalesced, ... */
    char *co = strstr(low, "_coalesced");
    if (co && co[10] == '\0')
        *co = '\0';
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (strcmp(low, m[k].s) == 0)
            return (int)m[k].op;
    return -1;
}

static const char *const ELEMWISE[] = {"add",
                                       "add_",
                                       "sub",
                                       "sub_",
                                       "mul",
                                       "mul_",
                                       "div",
                                       "div_",
                                       "neg",
                                       "silu",
                                       "silu_",
                                       "gelu",
                                       "gelu_",
                                       "relu",
                                       "relu_",
                                       "sigmoid",
                                       "tanh",
                                       "exp",
                                       "exp_",
                                       "log",
                                       "rsqrt",
                                       "sqrt",
                                       "pow",
                                       "pow_",
                                       "where",
                                       "masked_fill",
                                       "masked_fill_",
                                       "clamp",
                                       "clamp_",
                                       "cos",
                                       "sin",
                                       "abs",
                                       "sign",
                                       "reciprocal",
                                       "threshold_backward",
                                       "silu_backward",
                                       "gelu_backward",
                                       "sigmoid_backward",
                                       "tanh_backward",
                                       "addcmul_",
                                       "addcdiv_",
                                       "lerp_",
                                       "maximum",
                                       "minimum",
                                       "eq",
                                       "ne",
                                       "lt",
                                       "gt",
                                       "le",
                                       "ge",
                                       "logical_and",
                                       "logical_not",
                                       "bitwise_and",
                                       "tril",
                                       "triu",
                                       "dropout",
                                       "native_dropout",
                                       "native_dropout_backward",
                                       "_foreach_add_",
                                       "_foreach_mul_",
                                       "_foreach_addcmul_",
                                       "_foreach_addcdiv_",
                                       "_foreach_sqrt",
                                       "_foreach_div_",
                                       "_foreach_lerp_",
                                       "polar",
                                       "view_as_real",
                                       "_fused_adam_",
                                       "_fused_adamw_",
                                       "square",
                                       "erf",
                                       "hardtanh",
                                       "leaky_relu",
                                       "softplus",
                                       "mish",
                                       "elu",
                                       NULL};
static const char *const REDUCE[] = {"sum",
                                     "mean",
                                     "amax",
                                     "amin",
                                     "max",
                                     "min",
                                     "norm",
                                     "linalg_vector_norm",
                                     "var",
                                     "std",
                                     "var_mean",
                                     "argmax",
                                     "argmin",
                                     "prod",
                                     "cumsum",
                                     "topk",
                                     "sort",
                                     "nll_loss",
                                     "nll_loss_forward",
                                     "nll_loss2d_forward",
                                     "cross_entropy_loss",
                                     "nll_loss_backward",
                                     "nll_loss_nd",
                                     "_foreach_norm",
                                     "all",
                                     "any",
                                     NULL};
static const char *const COPY[] = {"copy_",
                                   "_to_copy",
                                   "to",
                                   "clone",
                                   "contiguous",
                                   "_copy_from",
                                   "fill_",
                                   "zero_",
                                   "zeros",
                                   "zeros_like",
                                   "ones",
                                   "ones_like",
                                   "full",
                                   "cat",
                                   "stack",
                                   "index_select",
                                   "gather",
                                   "scatter",
                                   "scatter_add_",
                                   "index",
                                   "index_put_",
                                   "_unsafe_view_copy",
                                   "repeat",
                                   "repeat_interleave",
                                   "index_add_",
                                   "masked_scatter",
                                   "narrow_copy",
                                   "split_with_sizes_copy",
                                   "new_zeros",
                                   "arange",
                                   "rand",
                                   "randn",
                                   "normal_",
                                   "uniform_",
                                   "embedding_dense_backward",
                                   "embedding_backward",
                                   "_embedding_bag",
                                   "slice_backward",
                                   "select_backward",
                                   "masked_select",
                                   "nonzero",
                                   "_local_scalar_dense",
                                   "item",
                                   "bernoulli_",
                                   NULL};
static const char *const FRAMEWORK[] = {"view",
                                        "_unsafe_view",
                                        "reshape",
                                        "t",
                                        "transpose",
                                        "permute",
                                        "expand",
                                        "expand_as",
                                        "unsqueeze",
                                        "squeeze",
                                        "slice",
                                        "select",
                                        "as_strided",
                                        "detach",
                                        "detach_",
                                        "empty",
                                        "empty_like",
                                        "empty_strided",
                                        "resize_",
                                        "alias",
                                        "unbind",
                                        "split",
                                        "chunk",
                                        "narrow",
                                        "flatten",
                                        "unflatten",
                                        "view_as",
                                        "numpy_T",
                                        "lift_fresh",
                                        "_reshape_alias",
                                        "set_",
                                        "resolve_conj",
                                        "resolve_neg",
                                        "result_type",
                                        "is_nonzero",
                                        "_has_compatible_shallow_copy_type",
                                        "record_stream",
                                        "broadcast_tensors",
                                        "_unsafe_split",
                                        "conj",
                                        "requires_grad_",
                                        "retain_grad",
                                        "new_empty",
                                        "new_empty_strided",
                                        "empty_like",
                                        "_foreach_zero_",
                                        "size",
                                        "stride",
                                        "dim",
                                        "numel",
                                        "contiguous_format",
                                        NULL};

static void torch_cost(const char *full, targ *a, int n, sb_tr_cost *c)
{
    const char *nm = strip_ns(full);
    int nt = 0; /* tensor args */
    const targ *t[MAX_TARGS];
    for (int i = 0; i < n; i++)
        if (is_tensor(&a[i]))
            t[nt++] = &a[i];
    int es = nt && t[0]->es ? t[0]->es : 4;
    double in_bytes = 0, max_numel = 0;
    for (int i = 0; i < nt; i++) {
        in_bytes += t[i]->numel * (t[i]->es ? t[i]->es : es);
        if (t[i]->numel > max_numel)
            max_numel = t[i]->numel;
    }
    if (nt)
        set_dtype(c, t[0]);

    if (strcmp(nm, "mm") == 0 && nt >= 2 && t[0]->rank == 2 &&
        t[1]->rank == 2) {
        matmul_cost(c, 1, D(t[0], 2), D(t[0], 1), D(t[1], 1), t[0], t[1], 0);
    } else if ((strcmp(nm, "addmm") == 0 ||
                strcmp(nm, "_addmm_activation") == 0) &&
               nt >= 3 && t[1]->rank == 2 && t[2]->rank == 2) {
        /* _addmm_activation: a linear layer with its ReLU or GELU fused
         * (PyTorch's encoder fast path), the same product */
        matmul_cost(c, 1, D(t[1], 2), D(t[1], 1), D(t[2], 1), t[1], t[2],
                    t[0]->numel * (t[0]->es ? t[0]->es : es));
    } else if ((strcmp(nm, "_scaled_mm") == 0 || strcmp(nm, "_int_mm") == 0) &&
               nt >= 2 && t[0]->rank == 2 && t[1]->rank == 2) {
        /* fp8 (scales aside) and int8 products: 2 M K N */
        matmul_cost(c, 1, D(t[0], 2), D(t[0], 1), D(t[1], 1), t[0], t[1], 0);
    } else if (strcmp(nm, "addbmm") == 0 && nt >= 3 && t[1]->rank == 3 &&
               t[2]->rank == 3) {
        /* the batch's products summed into one [M, N] */
        matmul_cost(c, D(t[1], 3), D(t[1], 2), D(t[1], 1), D(t[2], 1), t[1],
                    t[2], t[0]->numel * (t[0]->es ? t[0]->es : es));
    } else if (strcmp(nm, "bmm") == 0 && nt >= 2 && t[0]->rank == 3 &&
               t[1]->rank == 3) {
        matmul_cost(c, D(t[0], 3), D(t[0], 2), D(t[0], 1), D(t[1], 1), t[0],
                    t[1], 0);
    } else if (strcmp(nm, "baddbmm") == 0 && nt >= 3 && t[1]->rank == 3 &&
               t[2]->rank == 3) {
        matmul_cost(c, D(t[1], 3), D(t[1], 2), D(t[1], 1), D(t[2], 1), t[1],
                    t[2], t[0]->numel * (t[0]->es ? t[0]->es : es));
    } else if ((strcmp(nm, "matmul") == 0 || strcmp(nm, "linear") == 0) &&
               nt >= 2 && t[0]->rank >= 1 && t[1]->rank >= 1) {
        const targ *x = t[0], *w = t[1];
        double k = D(x, 1), m = x->rank >= 2 ? D(x, 2) : 1;
        double batch = x->rank > 2 ? x->numel / (m * k) : 1;
        double nn;
        if (strcmp(nm, "linear") == 0) { /* w is [out, in] */
            nn = w->rank == 2 ? D(w, 2) : 1;
            batch = x->numel / k / m;
        } else {
            nn = w->rank >= 2 ? D(w, 1) : 1;
            double wb = w->rank > 2 ? w->numel / (D(w, 2) * nn) : 1;
            if (wb > batch)
                batch = wb;
        }
        double extra = nt >= 3 ? t[2]->numel * (t[2]->es ? t[2]->es : es) : 0;
        if (k > 0 && m > 0)
            matmul_cost(c, batch, m, k, nn, x, w, extra);
    } else if (strstr(nm, "scaled_dot_product") ||
               strstr(nm, "flash_attention") ||
               strstr(nm, "efficient_attention") ||
               strstr(nm, "cudnn_attention")) {
        bool bwd = strstr(nm, "backward") != NULL;
        int q = bwd ? 1 : 0; /* backward: grad_out, q, k, v, ... */
        /* the scaled_dot_product ops take [b, h, s, d]; the flash and
         * memory-efficient kernels they call on CUDA ([_]flash_attention_
         * forward/backward, _efficient_attention_*) take [b, s, h, d] */
        bool bshd = !strstr(nm, "scaled_dot_product");
        if (nt >= q + 3 && t[q]->rank == 4 && t[q + 1]->rank == 4 &&
            t[q + 2]->rank == 4) {
            double b = D(t[q], 4), h = D(t[q], bshd ? 2 : 3),
                   sq = D(t[q], bshd ? 3 : 2), d = D(t[q], 1),
                   skv = D(t[q + 1], bshd ? 3 : 2), dv = D(t[q + 2], 1);
            c->cat = SB_TC_ATTENTION;
            c->flops = bwd ? 2 * b * h * sq * skv * (3 * d + 2 * dv)
                           : 2 * b * h * sq * skv * (d + dv);
            /* q, k, v read and the output written (forward); the
             * backward also reads dO and O and writes dQ, dK, dV */
            double qkv = (t[q]->numel + t[q + 1]->numel + t[q + 2]->numel);
            double o = b * h * sq * dv;
            c->bytes = (bwd ? 2 * qkv + 2 * o : qkv + o) * es;
        }
    } else if (strstr(nm, "convolution") || strcmp(nm, "conv2d") == 0 ||
               strcmp(nm, "conv1d") == 0 || strcmp(nm, "conv3d") == 0) {
        if (nt >= 2 && t[0]->rank >= 3 && t[1]->rank == t[0]->rank &&
            !strstr(nm, "backward")) {
            /* out spatial size taken as the input's (stride 1, "same"
             * padding): the trace does not carry the output shape */
            double wsz = t[1]->numel, spatial = 1;
            for (int i = 1; i <= t[0]->rank - 2; i++)
                spatial *= D(t[0], i);
            c->cat = SB_TC_CONV;
            c->flops = 2 * D(t[0], t[0]->rank) * wsz * spatial;
            c->bytes = in_bytes +
                       D(t[0], t[0]->rank) * D(t[1], t[1]->rank) * spatial * es;
        }
    } else if (strstr(nm, "softmax")) {
        c->cat = SB_TC_SOFTMAX;
        bool bwd = strstr(nm, "backward") != NULL;
        c->flops = (bwd ? 3 : 5) * max_numel;
        c->bytes = in_bytes + max_numel * es;
    } else if (strstr(nm, "layer_norm") || strstr(nm, "rms_norm") ||
               strstr(nm, "group_norm") || strstr(nm, "batch_norm")) {
        c->cat = SB_TC_NORM;
        c->flops = 7 * max_numel;
        c->bytes = in_bytes + max_numel * es;
    } else if (strcmp(nm, "embedding") == 0 && nt >= 2) {
        double out = t[1]->numel * D(t[0], 1);
        c->cat = SB_TC_EMBEDDING;
        c->flops = 0;
        c->bytes = 2 * out * es + t[1]->numel * (t[1]->es ? t[1]->es : 8);
    } else if (name_in(nm, ELEMWISE) || (strncmp(nm, "_foreach_", 9) == 0)) {
        c->cat = SB_TC_ELEMWISE;
        c->flops = max_numel;
        c->bytes = in_bytes + max_numel * es;
    } else if (name_in(nm, REDUCE) || strstr(nm, "cross_entropy")) {
        c->cat = SB_TC_REDUCE;
        c->flops = max_numel;
        c->bytes = in_bytes;
    } else if (name_in(nm, COPY)) {
        c->cat = SB_TC_COPY;
        /* copy_(dst, src): both sides; the others read inputs and write
         * an output of the largest input's size */
        c->bytes =
            strcmp(nm, "copy_") == 0 ? in_bytes : in_bytes + max_numel * es;
        if (strncmp(nm, "zero", 4) == 0 || strcmp(nm, "fill_") == 0)
            c->bytes = max_numel * es;
    } else if (name_in(nm, FRAMEWORK)) {
        c->cat = SB_TC_FRAMEWORK;
    }
}

void sb_tr_cost_torch(const char *name, const char *sig, sb_tr_cost *out)
{
    memset(out, 0, sizeof *out);
    out->cat = SB_TC_UNKNOWN;
    if (!name)
        return;
    const char *nm = strip_ns(name);
    size_t ln = strlen(name);
    /* the autograd engine's own frames: dispatch, no data of their own */
    if (strncmp(name, "autograd::", 10) == 0 ||
        strncmp(name, "torch::autograd::", 17) == 0 ||
        (ln > 9 && strncmp(name + ln - 9, "Backward0", 9) == 0) ||
        (ln > 9 && strncmp(name + ln - 9, "Backward1", 9) == 0)) {
        out->cat = SB_TC_FRAMEWORK;
        return;
    }
    if (name_in(nm, FRAMEWORK)) {
        out->cat = SB_TC_FRAMEWORK;
        return;
    }
    if (!sig)
        return;
    json_t *j = json_loads(sig, 0, NULL);
    if (!json_is_array(j)) {
        json_decref(j);
        return;
    }
    targ a[MAX_TARGS];
    int n = torch_args(j, a);
    json_decref(j);
    torch_cost(name, a, n, out);
}

void sb_tr_cost_collective(const char *coll, const char *dtype, double nelems,
                           int group, sb_tr_cost *out)
{
    memset(out, 0, sizeof *out);
    int op = coll_of(coll ? coll : "");
    out->cat = SB_TC_COLLECTIVE;
    int es = sb_tr_dtype(dtype, out->dtype, sizeof out->dtype);
    out->bytes = nelems * (es ? es : 4);
    out->group = group;
    snprintf(out->coll, sizeof out->coll, "%s",
             op >= 0 ? sb_netop_name((sb_netop)op) : (coll ? coll : "?"));
}

/* ---- XLA HLO ------------------------------------------------------------- */

typedef struct hshape {
    double numel;
    int es, rank;
    double d[8];
    char dt[8];
} hshape;

/* Parses "bf16[32,1024]{1,0}" at *p; advances past it. 0 when it is not
 * a shape. */
static int hlo_shape(const char **pp, hshape *s)
{
    const char *p = *pp;
    char ty[12];
    size_t n = 0;
    while ((isalnum((unsigned char)*p)) && n + 1 < sizeof ty)
        ty[n++] = *p++;
    ty[n] = '\0';
    if (*p != '[' || n == 0)
        return 0;
    memset(s, 0, sizeof *s);
    s->es = sb_tr_dtype(ty, s->dt, sizeof s->dt);
    if (!s->es)
        return 0;
    p++;
    s->numel = 1;
    while (*p && *p != ']') {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            return 0;
        if (s->rank < 8)
            s->d[s->rank] = v;
        s->rank++;
        s->numel *= v;
        p = end;
        if (*p == ',')
            p++;
    }
    if (*p != ']')
        return 0;
    p++;
    if (*p == '{') /* the layout */
        while (*p && *p != '}')
            p++;
    if (*p == '}')
        p++;
    *pp = p;
    return 1;
}

/* An instruction's line taken apart: its output, its opcode, its first
 * operands' shapes and what follows the operands. */
typedef struct hinstr {
    hshape o; /* the output; of a tuple, its first shape */
    double out_bytes, out_numel;
    char opc[48];
    hshape ops[4]; /* the first operands */
    int nops;
    double in_bytes;
    const char *rest; /* from the operands' ')': the attributes */
} hinstr;

/* Parses "%x = f32[8,16]{1,0} dot(f32[8,4]{1,0} %a, ...), ..."; 0 when
 * it is not an instruction with an output shape and operands. */
static int hlo_parse(const char *text, hinstr *x)
{
    memset(x, 0, sizeof *x);
    const char *eq = strstr(text, " = ");
    if (!eq)
        return 0;
    const char *p = eq + 3;
    /* the output: one shape or a tuple of shapes */
    hshape sh;
    if (*p == '(')
        p++;
    while (hlo_shape(&p, &sh)) {
        if (!x->o.es)
            x->o = sh;
        x->out_bytes += sh.numel * sh.es;
        x->out_numel += sh.numel;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (*p == ')')
        p++;
    while (*p == ' ')
        p++;
    size_t n = 0;
    while ((isalnum((unsigned char)*p) || *p == '-' || *p == '_') &&
           n + 1 < sizeof x->opc)
        x->opc[n++] = *p++;
    x->opc[n] = '\0';
    if (*p != '(' || !x->o.es)
        return 0;
    /* the operands' shapes */
    int depth = 0;
    for (p++; *p; p++) {
        if (*p == '(')
            depth++;
        if (*p == ')' && depth-- == 0)
            break;
        if (isalpha((unsigned char)*p) &&
            (p[-1] == '(' || p[-1] == ' ' || p[-1] == ',')) {
            const char *q = p;
            if (hlo_shape(&q, &sh)) {
                if (x->nops < 4)
                    x->ops[x->nops] = sh;
                x->nops++;
                x->in_bytes += sh.numel * sh.es;
                p = q - 1;
            }
        }
    }
    x->rest = p;
    return 1;
}

/* A dot's FLOPs: 2 per output element and contracted element. */
static double dot_flops(const hinstr *x)
{
    const char *cd = strstr(x->rest, "lhs_contracting_dims={");
    double k = 1;
    if (cd) {
        cd += strlen("lhs_contracting_dims={");
        while (*cd && *cd != '}') {
            char *end;
            long ix = strtol(cd, &end, 10);
            if (end == cd)
                break;
            if (ix >= 0 && ix < 8 && ix < x->ops[0].rank)
                k *= x->ops[0].d[ix];
            cd = *end == ',' ? end + 1 : end;
        }
    }
    return 2 * x->o.numel * k;
}

/* A convolution's FLOPs. */
static double conv_flops(const hinstr *x)
{
    const hshape *o = &x->o;
    /* each output element: one multiply-add per weight element of
     * one output feature */
    /* the output's feature dimension: 'f' in dim_labels' output
     * part (b01f, bf01, ...), the last one when it is not given */
    double feat = o->rank ? o->d[o->rank - 1] : 1;
    const char *dl = strstr(x->rest, "dim_labels=");
    const char *arrow = dl ? strstr(dl, "->") : NULL;
    if (arrow) {
        size_t fl = strcspn(arrow + 2, ", }");
        const char *f = memchr(arrow + 2, 'f', fl);
        if (f && f - (arrow + 2) < o->rank && f - (arrow + 2) < 8)
            feat = o->d[f - (arrow + 2)];
    }
    return 2 * o->numel * (feat > 0 ? x->ops[1].numel / feat : 0);
}

static bool hlo_collective(const char *opc)
{
    return strncmp(opc, "all-reduce", 10) == 0 ||
           strncmp(opc, "all-gather", 10) == 0 ||
           strncmp(opc, "reduce-scatter", 14) == 0 ||
           strncmp(opc, "all-to-all", 10) == 0 ||
           strncmp(opc, "collective-permute", 18) == 0;
}

/* A collective: its name, size and group. */
static void collective_cost(const hinstr *x, sb_tr_cost *out)
{
    const char *opc = x->opc;
    out->cat = SB_TC_COLLECTIVE;
    const char *cn = opc[0] == 'a' && opc[4] == 'r'   ? "allreduce"
                     : opc[0] == 'a' && opc[4] == 'g' ? "allgather"
                     : opc[0] == 'r'                  ? "reduce_scatter"
                     : opc[0] == 'a'                  ? "alltoall"
                                                      : "sendrecv";
    snprintf(out->coll, sizeof out->coll, "%s", cn);
    /* nccl-tests' S: the all-gather's output, the others' input */
    out->bytes = cn[3] == 'g' ? x->out_bytes : x->in_bytes;
    const char *rg = strstr(x->rest, "replica_groups={{");
    if (rg) {
        int g = 1;
        for (rg += 17; *rg && *rg != '}'; rg++)
            g += *rg == ',';
        out->group = g;
    }
}

void sb_tr_cost_hlo(const char *hlo_op, const char *text, sb_tr_cost *out)
{
    memset(out, 0, sizeof *out);
    out->cat = SB_TC_UNKNOWN;
    hinstr x;
    if (!text || !hlo_parse(text, &x))
        return;
    const hshape *o = &x.o, *ops = x.ops;
    const char *opc = x.opc, *p = x.rest;
    int nops = x.nops;
    snprintf(out->dtype, sizeof out->dtype, "%s", nops ? ops[0].dt : o->dt);
    out->bytes = x.in_bytes + x.out_bytes;
    const char *h = hlo_op ? hlo_op : "";
    if (strcmp(opc, "dot") == 0 && nops >= 2) {
        out->cat = SB_TC_MATMUL;
        out->flops = dot_flops(&x);
    } else if (strcmp(opc, "custom-call") == 0 && nops >= 2 &&
               (strstr(p, "gemm") || strstr(p, "matmul"))) {
        /* cuBLAS GEMM: [batch,] M x K by K x N */
        double batch = o->rank > 2
                           ? o->numel / (o->d[o->rank - 1] * o->d[o->rank - 2])
                           : 1;
        double a = ops[0].numel / batch, b = ops[1].numel / batch,
               c = o->numel / batch;
        out->cat = SB_TC_MATMUL;
        out->flops = 2 * batch * sqrt(a * b * c);
    } else if (strcmp(opc, "convolution") == 0 && nops >= 2) {
        out->cat = SB_TC_CONV;
        out->flops = conv_flops(&x);
    } else if (hlo_collective(opc)) {
        collective_cost(&x, out);
    } else if (strcmp(opc, "copy") == 0 || strcmp(opc, "transpose") == 0 ||
               strcmp(opc, "dynamic-slice") == 0 ||
               strcmp(opc, "dynamic-update-slice") == 0 ||
               strcmp(opc, "concatenate") == 0 || strcmp(opc, "gather") == 0 ||
               strcmp(opc, "scatter") == 0 || strcmp(opc, "pad") == 0 ||
               strcmp(opc, "slice") == 0 || strncmp(opc, "copy-", 5) == 0) {
        out->cat = SB_TC_COPY;
    } else if (strcmp(opc, "reduce") == 0 ||
               strcmp(opc, "reduce-window") == 0) {
        out->cat = SB_TC_REDUCE;
        out->flops = x.in_bytes / (ops[0].es ? ops[0].es : 4);
    } else if (strcmp(opc, "fusion") == 0) {
        /* a fusion is memory traffic unless it holds a dot (XLA names
         * such fusions after it) */
        if (strstr(h, "dot") || strstr(h, "gemm") ||
            strstr(p, "kind=kOutput")) {
            out->cat = SB_TC_MATMUL;
        } else if (strstr(h, "reduce") || strstr(p, "kind=kInput")) {
            out->cat = SB_TC_REDUCE;
            out->flops = x.in_bytes / (nops ? ops[0].es : 4);
        } else {
            out->cat = SB_TC_ELEMWISE;
            out->flops = x.out_numel;
        }
    } else if (strcmp(opc, "parameter") == 0 || strcmp(opc, "tuple") == 0 ||
               strcmp(opc, "get-tuple-element") == 0 ||
               strcmp(opc, "bitcast") == 0 || strcmp(opc, "constant") == 0 ||
               strcmp(opc, "after-all") == 0 || strcmp(opc, "reshape") == 0 ||
               strcmp(opc, "while") == 0 || strcmp(opc, "call") == 0 ||
               strcmp(opc, "conditional") == 0) {
        out->cat = SB_TC_FRAMEWORK;
        out->bytes = 0;
    } else if (strcmp(opc, "custom-call") == 0) {
        out->cat = SB_TC_UNKNOWN;
    } else {
        /* the elementwise ops: add, multiply, exponential, select,
         * convert, broadcast, iota, compare, ... */
        out->cat = SB_TC_ELEMWISE;
        out->flops = x.out_numel;
    }
}
