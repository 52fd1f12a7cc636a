/*
 * workload.c — reading and checking workload files (docs/WORKLOAD.md) and
 * the model's parameter counts. Every error names the file and the JSON
 * path of the offending field ("$.model.kv_heads"), with line:column from
 * the parser for syntax errors and from the file's text for a field whose
 * key appears once.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/workload.h"

double sb_dtype_bytes(const char *d)
{
    static const struct {
        const char *n;
        double b;
    } t[] = {{"fp64", 8}, {"fp32", 4}, {"tf32", 4},   {"bf16", 2}, {"fp16", 2},
             {"fp8", 1},  {"int8", 1}, {"int4", 0.5}, {"fp4", 0.5}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(d, t[i].n) == 0)
            return t[i].b;
    return 0;
}

/* ---- reading context ----------------------------------------------------- */

typedef struct sb__rd {
    const char *where; /* file name for messages */
    const char *text;  /* the file's text, for line:column (may be NULL) */
    sb_err *err;
    const char *const *sets; /* --set key=value applied to the document */
    int nsets;
} sb__rd;

static const char *sb__set_path(const char *key);

/* Line and column of `"key"` when it occurs exactly once in the text. */
static void sb__locate(const sb__rd *rd, const char *path, char *out,
                       size_t len)
{
    out[0] = '\0';
    for (int i = rd->nsets - 1; i >= 0; i--) { /* the last one applied */
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(rd->sets[i], "="),
                 rd->sets[i]);
        const char *sp = sb__set_path(key);
        if (strncmp(path, "$.", 2) == 0 && strcmp(path + 2, sp) == 0) {
            snprintf(out, len, " (from %.60s on the command line)",
                     rd->sets[i]);
            return;
        }
    }
    if (!rd->text)
        return;
    const char *key = strrchr(path, '.');
    key = key ? key + 1 : path;
    char pat[80];
    snprintf(pat, sizeof pat, "\"%.*s\"", (int)strcspn(key, "["), key);
    const char *hit = strstr(rd->text, pat);
    if (!hit || strstr(hit + 1, pat))
        return;
    int line = 1, col = 1;
    for (const char *q = rd->text; q < hit; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(out, len, " (line %d, column %d)", line, col);
}

static int sb__bad(const sb__rd *rd, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int sb__bad(const sb__rd *rd, const char *path, const char *fmt, ...)
{
    char what[300], loc[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sb__locate(rd, path, loc, sizeof loc);
    return sb_fail(rd->err, SB_EINVAL, "%s: %s: %s%s", rd->where, path, what,
                   loc);
}

static json_t *sb__obj(const sb__rd *rd, json_t *parent, const char *key,
                       const char *path, bool required, int *rc)
{
    json_t *o = json_object_get(parent, key);
    if (!o) {
        if (required)
            *rc = sb__bad(rd, path, "missing (an object is required)");
        return NULL;
    }
    if (!json_is_object(o)) {
        *rc = sb__bad(rd, path, "must be an object");
        return NULL;
    }
    return o;
}

/* Integer field in [lo, hi]; absent → def when !required. */
static int sb__int(const sb__rd *rd, json_t *o, const char *key,
                   const char *ppath, bool required, long lo, long hi, int def,
                   int *out)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        if (required)
            return sb__bad(rd, path, "missing (an integer is required)");
        *out = def;
        return 0;
    }
    if (!json_is_integer(v)) {
        if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)))
            ; /* 4096.0 is accepted as 4096 */
        else
            return sb__bad(rd, path, "must be an integer, not %s",
                           json_is_string(v)    ? "a string"
                           : json_is_real(v)    ? "a fraction"
                           : json_is_boolean(v) ? "a boolean"
                                                : "this value");
    }
    double x = json_number_value(v);
    if (x < lo)
        return sb__bad(rd, path, "%.15g is %s; must be >= %ld", x,
                       x < 0 ? "negative" : "too small", lo);
    if (x > hi)
        return sb__bad(rd, path, "%.15g is too large; must be <= %ld", x, hi);
    *out = (int)x;
    return 0;
}

static int sb__num(const sb__rd *rd, json_t *o, const char *key,
                   const char *ppath, double lo, double hi, double def,
                   double *out)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v))
        return sb__bad(rd, path, "must be a number");
    double x = json_number_value(v);
    if (!(x >= lo))
        return sb__bad(rd, path, "%g is %s; must be >= %g", x,
                       x < 0 ? "negative" : "too small", lo);
    if (x > hi)
        return sb__bad(rd, path, "%g is too large; must be <= %g", x, hi);
    *out = x;
    return 0;
}

static int sb__bool(const sb__rd *rd, json_t *o, const char *key,
                    const char *ppath, bool def, bool *out)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v))
        return sb__bad(rd, path, "must be true or false");
    *out = json_is_true(v);
    return 0;
}

/* String field; `choices` is "a|b|c" or NULL for free text. */
static int sb__str(const sb__rd *rd, json_t *o, const char *key,
                   const char *ppath, const char *choices, const char *def,
                   char *out, size_t len)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        snprintf(out, len, "%s", def ? def : "");
        return 0;
    }
    if (!json_is_string(v))
        return sb__bad(rd, path, "must be a string%s%s",
                       choices ? ", one of " : "", choices ? choices : "");
    const char *s = json_string_value(v);
    if (choices) {
        size_t n = strlen(s);
        const char *c = choices;
        bool ok = false;
        while (*c) {
            size_t l = strcspn(c, "|");
            if (l == n && strncmp(c, s, n) == 0)
                ok = true;
            c += l + (c[l] == '|');
        }
        if (!ok)
            return sb__bad(rd, path, "'%s' is not one of %s", s, choices);
    }
    if (strlen(s) >= len)
        return sb__bad(rd, path, "too long (at most %zu characters)", len - 1);
    snprintf(out, len, "%s", s);
    return 0;
}

static int sb__dtype(const sb__rd *rd, json_t *o, const char *key,
                     const char *def, char *out, double *bytes)
{
    int rc = sb__str(rd, o, key, "$.dtypes",
                     "fp64|fp32|tf32|bf16|fp16|fp8|int8|int4|fp4", def, out, 8);
    if (rc)
        return rc;
    *bytes = sb_dtype_bytes(out);
    return 0;
}

/* ---- the format's fields ------------------------------------------------- */

/* The fields each object of the format may hold: what sb__read accepts and
 * what a --sweep key may name (sb_workload_check_key), in one place. "*"
 * takes any name (the phases of measured.phases); the job's fields depend
 * on its type. */
static const char sb__job_train[] = "type|global_batch|seq_len|microbatches|"
                                    "optimizer|optimizer_offload|remat|"
                                    "attention_kernel";
static const char sb__job_infer[] = "type|prompt_len|output_len|concurrency|"
                                    "kv_page|attention_kernel|"
                                    "max_batched_tokens|slo_ttft_s|"
                                    "slo_tpot_s|request_rate";
static const struct {
    const char *path, *keys;
} sb__fields[] = {
    {"$", "name|description|source|model|dtypes|job|parallelism|topology|"
          "hardware|overlap|calibration|measured"},
    {"$.model", "layers|d_model|q_heads|kv_heads|head_dim|ffn|gated_mlp|"
                "vocab|tied_embeddings|attention|moe"},
    {"$.model.attention", "type|q_lora_rank|kv_lora_rank|rope_dim"},
    {"$.model.moe", "experts|top_k|shared_experts|expert_ffn|first_layer|"
                    "every|capacity_factor"},
    {"$.dtypes", "weights|activations|kv_cache|optimizer|gradients|matmul|"
                 "attention|router|dispatch|combine"},
    {"$.job", sb__job_train}, /* sb__job_infer for an inference job */
    {"$.parallelism", "data|fsdp|tensor|expert|pipeline|context|zero|"
                      "reshard_after_forward|virtual_stages"},
    {"$.topology", "chips|chips_per_host|mesh"},
    {"$.hardware", "spec|run|price_per_chip_hour"},
    {"$.overlap", "fsdp|dp|tp|ep|pp|cp|host"},
    {"$.calibration", "matmul|attention|memory|network|source"},
    {"$.measured", "step_time_s|tokens_per_s|mfu|mfu_convention|source|"
                   "phases"},
    {"$.measured.phases", "*"},
};

/* The fields of the object at `path` ("$.model"), or NULL when the format
 * has no object there. */
static const char *sb__fields_of(const char *path, bool inference)
{
    for (size_t i = 0; i < sizeof sb__fields / sizeof sb__fields[0]; i++)
        if (strcmp(path, sb__fields[i].path) == 0)
            return strcmp(path, "$.job") == 0 && inference ? sb__job_infer
                                                           : sb__fields[i].keys;
    return NULL;
}

/* Whether `k` is one of the '|'-separated names of `keys` ("*": any). */
static bool sb__field_in(const char *keys, const char *k)
{
    if (strcmp(keys, "*") == 0)
        return true;
    size_t n = strlen(k);
    for (const char *c = keys; *c;) {
        size_t l = strcspn(c, "|");
        if (l == n && strncmp(c, k, n) == 0)
            return true;
        c += l + (c[l] == '|');
    }
    return false;
}

/* Refuses keys not among `keys` ("a|b|c") in the object at `path`: a
 * misspelt optional field would otherwise be ignored without a word. */
static int sb__known_keys(const sb__rd *rd, json_t *o, const char *path,
                          const char *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (!sb__field_in(keys, k)) {
            char p2[128];
            snprintf(p2, sizeof p2, "%s.%s", path, k);
            return sb__bad(rd, p2, "unknown field (known here: %s)", keys);
        }
    }
    return 0;
}

/* The same for an object of the workload format. */
static int sb__known(const sb__rd *rd, json_t *o, const char *path,
                     bool inference)
{
    return sb__known_keys(rd, o, path, sb__fields_of(path, inference));
}

/* The efficiencies of a calibration (the workload's `calibration` or a
 * calibration file) at `path`: matmul, attention, memory, network, each in
 * [0.01, 1], 0 where absent. */
static int sb__effs(const sb__rd *rd, json_t *o, const char *path, double e[4])
{
    static const char *const names[4] = {"matmul", "attention", "memory",
                                         "network"};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++)
        rc = sb__num(rd, o, names[i], path, 0.01, 1, 0, &e[i]);
    return rc;
}

/* ---- the document -------------------------------------------------------- */

#define TRY(x)                                                                 \
    do {                                                                       \
        if ((rc = (x)) != 0)                                                   \
            return rc;                                                         \
    } while (0)

const char *const sb_comm_kind_name[SB_COMM_N] = {"fsdp", "dp", "tp",  "ep",
                                                  "pp",   "cp", "host"};
/* "auto": ZeRO/FSDP gathers are prefetched a layer ahead and gradient
 * reductions are bucketed behind the backward pass (hidden while compute
 * lasts); a tensor-parallel all-reduce sits between two matmuls that need
 * its result (exposed), as does a context-parallel K/V all-gather (the
 * attention that follows needs it); an expert all-to-all overlaps
 * half-way (the
 * dispatch of one chunk with the experts of the previous); pipeline sends
 * and the input transfer run beside the compute. docs/WORKLOAD.md. */
const double sb_overlap_default[SB_COMM_N] = {1.0, 1.0, 0.0, 0.5,
                                              1.0, 0.0, 1.0};

/* $.overlap: "none", "full", "auto", or an object of hidden fractions per
 * kind (the others from "auto"). */
/* $.hardware, when the workload names its machine: a spec or a run. */
static int sb__hardware(const sb__rd *rd, json_t *hw, sb_workload *w)
{
    int rc;
    TRY(sb__known(rd, hw, "$.hardware", false));
    TRY(sb__str(rd, hw, "spec", "$.hardware", NULL, "", w->hw_spec,
                sizeof w->hw_spec));
    TRY(sb__str(rd, hw, "run", "$.hardware", NULL, "", w->hw_run,
                sizeof w->hw_run));
    if (!w->hw_spec[0] && !w->hw_run[0])
        return sb__bad(rd, "$.hardware.spec",
                       "missing (a data/hw spec name, "
                       "or hardware.run: a results file)");
    return sb__num(rd, hw, "price_per_chip_hour", "$.hardware", 0, 1e6, 0,
                   &w->price_chip_hour);
}

static int sb__overlap(const sb__rd *rd, json_t *doc, sb_workload *w)
{
    int rc;
    json_t *v = json_object_get(doc, "overlap");
    memcpy(w->hidden, sb_overlap_default, sizeof w->hidden);
    w->overlap = SB_OVERLAP_PER_KIND;
    if (json_is_object(v)) {
        TRY(sb__known(rd, v, "$.overlap", false));
        for (int k = 0; k < SB_COMM_N; k++)
            TRY(sb__num(rd, v, sb_comm_kind_name[k], "$.overlap", 0, 1,
                        sb_overlap_default[k], &w->hidden[k]));
        return 0;
    }
    char ov[8];
    if (v && !json_is_string(v))
        return sb__bad(rd, "$.overlap",
                       "must be \"none\", \"full\", \"auto\" or an object "
                       "of hidden fractions per kind (fsdp, dp, tp, ep, pp, "
                       "host)");
    TRY(sb__str(rd, doc, "overlap", "$", "none|full|auto", "auto", ov,
                sizeof ov));
    double h = strcmp(ov, "full") == 0 ? 1.0 : 0.0;
    if (strcmp(ov, "auto") != 0) {
        w->overlap = h > 0 ? SB_OVERLAP_FULL : SB_OVERLAP_NONE;
        for (int k = 0; k < SB_COMM_N; k++)
            w->hidden[k] = h;
    }
    return 0;
}

static int sb__read(const sb__rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    const long BIG = 1L << 30;
    memset(w, 0, sizeof *w);
    if (!json_is_object(doc))
        return sb__bad(rd, "$", "a workload must be a JSON object");
    TRY(sb__known(rd, doc, "$", false));
    TRY(sb__str(rd, doc, "name", "$", NULL, "workload", w->name,
                sizeof w->name));

    json_t *m = sb__obj(rd, doc, "model", "$.model", true, &rc);
    if (!m)
        return rc;
    TRY(sb__known(rd, m, "$.model", false));
    TRY(sb__int(rd, m, "layers", "$.model", true, 1, 100000, 0, &w->layers));
    TRY(sb__int(rd, m, "d_model", "$.model", true, 1, BIG, 0, &w->d_model));
    TRY(sb__int(rd, m, "q_heads", "$.model", true, 1, BIG, 0, &w->q_heads));
    TRY(sb__int(rd, m, "kv_heads", "$.model", false, 1, BIG, w->q_heads,
                &w->kv_heads));
    TRY(sb__int(rd, m, "head_dim", "$.model", false, 1, BIG,
                w->d_model / w->q_heads, &w->head_dim));
    TRY(sb__int(rd, m, "ffn", "$.model", true, 0, BIG, 0, &w->ffn));
    TRY(sb__bool(rd, m, "gated_mlp", "$.model", true, &w->gated));
    TRY(sb__int(rd, m, "vocab", "$.model", true, 1, BIG, 0, &w->vocab));
    TRY(sb__bool(rd, m, "tied_embeddings", "$.model", false,
                 &w->tied_embeddings));
    if (w->head_dim < 1)
        return sb__bad(rd, "$.model.head_dim",
                       "missing and d_model / q_heads "
                       "is 0");
    if (w->q_heads % w->kv_heads != 0)
        return sb__bad(rd, "$.model.kv_heads",
                       "%d does not divide q_heads (%d): grouped-query "
                       "attention needs whole groups",
                       w->kv_heads, w->q_heads);
    json_t *at = sb__obj(rd, m, "attention", "$.model.attention", false, &rc);
    if (rc)
        return rc;
    if (at) {
        char type[8];
        TRY(sb__known(rd, at, "$.model.attention", false));
        TRY(sb__str(rd, at, "type", "$.model.attention", "gqa|mla", "gqa", type,
                    sizeof type));
        w->mla = strcmp(type, "mla") == 0;
        if (w->mla) {
            TRY(sb__int(rd, at, "q_lora_rank", "$.model.attention", false, 0,
                        BIG, 0, &w->q_lora_rank));
            TRY(sb__int(rd, at, "kv_lora_rank", "$.model.attention", true, 1,
                        BIG, 0, &w->kv_lora_rank));
            TRY(sb__int(rd, at, "rope_dim", "$.model.attention", false, 0, BIG,
                        64, &w->rope_dim));
        }
    }
    json_t *moe = sb__obj(rd, m, "moe", "$.model.moe", false, &rc);
    if (rc)
        return rc;
    w->capacity_factor = 1.0;
    w->moe_every = 1;
    if (moe) {
        TRY(sb__known(rd, moe, "$.model.moe", false));
        TRY(sb__int(rd, moe, "experts", "$.model.moe", true, 1, 1 << 20, 0,
                    &w->experts));
        TRY(sb__int(rd, moe, "top_k", "$.model.moe", true, 1, 1 << 20, 0,
                    &w->top_k));
        TRY(sb__int(rd, moe, "shared_experts", "$.model.moe", false, 0, 1 << 20,
                    0, &w->shared_experts));
        TRY(sb__int(rd, moe, "expert_ffn", "$.model.moe", true, 1, BIG, 0,
                    &w->expert_ffn));
        TRY(sb__int(rd, moe, "first_layer", "$.model.moe", false, 0,
                    w->layers - 1, 0, &w->moe_first_layer));
        TRY(sb__int(rd, moe, "every", "$.model.moe", false, 1, w->layers, 1,
                    &w->moe_every));
        TRY(sb__num(rd, moe, "capacity_factor", "$.model.moe", 1.0, 16.0, 1.0,
                    &w->capacity_factor));
        if (w->top_k > w->experts)
            return sb__bad(rd, "$.model.moe.top_k",
                           "%d is more than the %d "
                           "experts",
                           w->top_k, w->experts);
    }
    if (w->ffn == 0 && !moe)
        return sb__bad(rd, "$.model.ffn",
                       "0 with no MoE: the model has no "
                       "MLP");

    json_t *dt = sb__obj(rd, doc, "dtypes", "$.dtypes", false, &rc);
    if (rc)
        return rc;
    if (dt)
        TRY(sb__known(rd, dt, "$.dtypes", false));
    TRY(sb__dtype(rd, dt, "weights", "bf16", w->w_dtype, &w->w_bytes));
    TRY(sb__dtype(rd, dt, "activations", w->w_dtype, w->a_dtype, &w->a_bytes));
    TRY(sb__dtype(rd, dt, "kv_cache", w->a_dtype, w->kv_dtype, &w->kv_bytes));
    TRY(sb__dtype(rd, dt, "optimizer", "fp32", w->opt_dtype, &w->opt_bytes));
    TRY(sb__dtype(rd, dt, "gradients", "fp32", w->g_dtype, &w->g_bytes));
    /* the dtype each kind of work computes in (the peak it runs under) */
    double unused;
    TRY(sb__dtype(rd, dt, "matmul", w->a_dtype, w->mm_dtype, &unused));
    TRY(sb__dtype(rd, dt, "attention", w->a_dtype, w->attn_dtype, &unused));
    TRY(sb__dtype(rd, dt, "router", w->a_dtype, w->router_dtype, &unused));
    TRY(sb__dtype(rd, dt, "dispatch", w->a_dtype, w->dispatch_dtype,
                  &w->dispatch_bytes));
    TRY(sb__dtype(rd, dt, "combine", w->a_dtype, w->combine_dtype,
                  &w->combine_bytes));

    json_t *job = sb__obj(rd, doc, "job", "$.job", true, &rc);
    if (!job)
        return rc;
    char type[16], remat[32];
    TRY(sb__str(rd, job, "type", "$.job", "training|inference", NULL, type,
                sizeof type));
    TRY(sb__known(rd, job, "$.job", strcmp(type, "inference") == 0));
    if (!type[0])
        return sb__bad(rd, "$.job.type", "missing (training or inference)");
    w->kind = strcmp(type, "training") == 0 ? SB_JOB_TRAIN : SB_JOB_INFER;
    TRY(sb__str(rd, job, "attention_kernel", "$.job", "flash|naive", "flash",
                w->attention_kernel, sizeof w->attention_kernel));
    if (w->kind == SB_JOB_TRAIN) {
        TRY(sb__int(rd, job, "global_batch", "$.job", true, 1, BIG, 0,
                    &w->global_batch));
        TRY(sb__int(rd, job, "seq_len", "$.job", true, 1, BIG, 0, &w->seq_len));
        TRY(sb__int(rd, job, "microbatches", "$.job", false, 1, BIG, 1,
                    &w->microbatches));
        TRY(sb__str(rd, job, "optimizer", "$.job", "adam|adafactor|sgd", "adam",
                    w->optimizer, sizeof w->optimizer));
        TRY(sb__bool(rd, job, "optimizer_offload", "$.job", false,
                     &w->optimizer_offload));
        TRY(sb__str(rd, job, "remat", "$.job",
                    "none|selective|minimal|save_dot_except_mlpwi|"
                    "save_qkv_proj|full",
                    "none", remat, sizeof remat));
        w->remat = SB_REMAT_NONE;
        for (int r = SB_REMAT_NONE; r <= SB_REMAT_FULL; r++)
            if (strcmp(remat, sb_remat_name((sb_remat)r)) == 0)
                w->remat = (sb_remat)r;
    } else {
        TRY(sb__int(rd, job, "prompt_len", "$.job", true, 1, BIG, 0,
                    &w->prompt_len));
        TRY(sb__int(rd, job, "output_len", "$.job", true, 1, BIG, 0,
                    &w->output_len));
        TRY(sb__int(rd, job, "concurrency", "$.job", false, 1, BIG, 1,
                    &w->concurrency));
        TRY(sb__int(rd, job, "kv_page", "$.job", false, 1, 1 << 20, 16,
                    &w->kv_page));
        TRY(sb__int(rd, job, "max_batched_tokens", "$.job", false, 1, BIG, 8192,
                    &w->max_batched_tokens));
        TRY(sb__num(rd, job, "slo_ttft_s", "$.job", 0, 1e6, 0, &w->slo_ttft_s));
        TRY(sb__num(rd, job, "slo_tpot_s", "$.job", 0, 1e6, 0, &w->slo_tpot_s));
        TRY(sb__num(rd, job, "request_rate", "$.job", 0, 1e9, 0,
                    &w->request_rate));
        w->microbatches = 1;
    }

    json_t *par = sb__obj(rd, doc, "parallelism", "$.parallelism", false, &rc);
    if (rc)
        return rc;
    if (par)
        TRY(sb__known(rd, par, "$.parallelism", false));
    TRY(sb__int(rd, par, "data", "$.parallelism", false, 1, BIG, 1, &w->data));
    TRY(sb__int(rd, par, "fsdp", "$.parallelism", false, 1, BIG, 1, &w->fsdp));
    TRY(sb__int(rd, par, "tensor", "$.parallelism", false, 1, BIG, 1,
                &w->tensor));
    TRY(sb__int(rd, par, "expert", "$.parallelism", false, 1, BIG, 1,
                &w->expert));
    TRY(sb__int(rd, par, "pipeline", "$.parallelism", false, 1, BIG, 1,
                &w->pipeline));
    TRY(sb__int(rd, par, "context", "$.parallelism", false, 1, BIG, 1,
                &w->context));
    TRY(sb__int(rd, par, "zero", "$.parallelism", false, 1, 3, 3, &w->zero));
    TRY(sb__bool(rd, par, "reshard_after_forward", "$.parallelism", true,
                 &w->reshard_after_forward));
    TRY(sb__int(rd, par, "virtual_stages", "$.parallelism", false, 1, 1024, 1,
                &w->virtual_stages));
    json_t *top = sb__obj(rd, doc, "topology", "$.topology", true, &rc);
    if (!top)
        return rc;
    TRY(sb__known(rd, top, "$.topology", false));
    TRY(sb__int(rd, top, "chips", "$.topology", true, 1, 1 << 24, 0,
                &w->chips));
    TRY(sb__int(rd, top, "chips_per_host", "$.topology", false, 1, 1 << 16,
                w->chips < 8 ? w->chips : 8, &w->chips_per_host));
    TRY(sb__str(rd, top, "mesh", "$.topology", NULL, "", w->mesh,
                sizeof w->mesh));

    /* optional: without it, the machine is the command's (--hw, --run,
     * --results; validate measures its own) */
    json_t *hw = sb__obj(rd, doc, "hardware", "$.hardware", false, &rc);
    if (rc)
        return rc;
    if (hw)
        TRY(sb__hardware(rd, hw, w));
    TRY(sb__overlap(rd, doc, w));
    json_t *cal = sb__obj(rd, doc, "calibration", "$.calibration", false, &rc);
    if (rc)
        return rc;
    if (cal) {
        TRY(sb__known(rd, cal, "$.calibration", false));
        double e[4];
        TRY(sb__effs(rd, cal, "$.calibration", e));
        w->eff_matmul = e[0];
        w->eff_attention = e[1];
        w->eff_memory = e[2];
        w->eff_network = e[3];
        TRY(sb__str(rd, cal, "source", "$.calibration", NULL,
                    "the workload's calibration", w->calib_source,
                    sizeof w->calib_source));
    }

    json_t *meas = sb__obj(rd, doc, "measured", "$.measured", false, &rc);
    if (rc)
        return rc;
    if (meas) {
        TRY(sb__known(rd, meas, "$.measured", false));
        TRY(sb__num(rd, meas, "step_time_s", "$.measured", 0, 1e9, 0,
                    &w->measured_step_s));
        TRY(sb__num(rd, meas, "tokens_per_s", "$.measured", 0, 1e15, 0,
                    &w->measured_tokens_per_s));
        TRY(sb__num(rd, meas, "mfu", "$.measured", 0, 1, 0, &w->measured_mfu));
        char conv[8];
        TRY(sb__str(rd, meas, "mfu_convention", "$.measured", "palm|causal",
                    "palm", conv, sizeof conv));
        w->measured_mfu_causal = strcmp(conv, "causal") == 0;
        json_t *sv = json_object_get(meas, "source");
        if (sv && !json_is_string(sv))
            return sb__bad(rd, "$.measured.source", "must be a string");
        json_t *ph =
            sb__obj(rd, meas, "phases", "$.measured.phases", false, &rc);
        if (rc)
            return rc;
        const char *k;
        json_t *v;
        json_object_foreach(ph, k, v)
        {
            char path[96];
            snprintf(path, sizeof path, "$.measured.phases.%s", k);
            if (!json_is_number(v) || json_number_value(v) <= 0)
                return sb__bad(rd, path, "must be a time in seconds > 0");
            if (w->n_measured < 16) {
                snprintf(w->measured[w->n_measured].phase,
                         sizeof w->measured[0].phase, "%s", k);
                w->measured[w->n_measured++].s = json_number_value(v);
            }
        }
    }

    /* ---- consistency ---- */
    /* In double: four degrees of up to 2^30 each overflow a long. */
    double prod =
        (double)w->data * w->fsdp * w->tensor * w->pipeline * w->context;
    if (prod != (double)w->chips)
        return sb__bad(rd, "$.parallelism",
                       "data x fsdp x tensor x pipeline x context "
                       "= %d x %d x %d x %d x %d = %.0f, but topology.chips "
                       "is %d",
                       w->data, w->fsdp, w->tensor, w->pipeline, w->context,
                       prod, w->chips);
    if (w->context > 1 && w->kind != SB_JOB_TRAIN)
        return sb__bad(rd, "$.parallelism.context",
                       "%d: context parallelism is modelled for training "
                       "(a sequence split over chips); an inference job "
                       "takes 1",
                       w->context);
    if (w->context > 1 && w->seq_len % (2 * w->context) != 0)
        return sb__bad(rd, "$.parallelism.context",
                       "%d: the sequence (%d tokens) must split into 2 x %d "
                       "equal chunks (the causal load balance)",
                       w->context, w->seq_len, w->context);
    if (w->q_heads % w->tensor != 0)
        return sb__bad(rd, "$.parallelism.tensor",
                       "%d does not divide "
                       "model.q_heads (%d)",
                       w->tensor, w->q_heads);
    if (w->kind == SB_JOB_TRAIN && w->virtual_stages > 1 &&
        w->microbatches % w->pipeline != 0)
        return sb__bad(rd, "$.parallelism.virtual_stages",
                       "%d needs microbatches (%d) to be a multiple of the "
                       "%d pipeline stages (the interleaved schedule runs them "
                       "in groups of that many)",
                       w->virtual_stages, w->microbatches, w->pipeline);
    if ((double)w->pipeline * w->virtual_stages > w->layers)
        return sb__bad(rd, "$.parallelism.pipeline",
                       "%d stages x %d virtual stages is more than the %d "
                       "layers",
                       w->pipeline, w->virtual_stages, w->layers);
    if (w->expert > 1) {
        if (!w->experts)
            return sb__bad(rd, "$.parallelism.expert",
                           "%d but the model has "
                           "no MoE",
                           w->expert);
        if (w->experts % w->expert != 0)
            return sb__bad(rd, "$.parallelism.expert",
                           "%d does not divide "
                           "model.moe.experts (%d)",
                           w->expert, w->experts);
        if ((w->data * w->fsdp) % w->expert != 0)
            return sb__bad(rd, "$.parallelism.expert",
                           "%d does not divide "
                           "data x fsdp (%d): experts are sharded over the "
                           "data axes",
                           w->expert, w->data * w->fsdp);
    }
    if (w->kind == SB_JOB_TRAIN) {
        if (w->global_batch % (w->data * w->fsdp) != 0)
            return sb__bad(rd, "$.job.global_batch",
                           "%d is not a multiple "
                           "of data x fsdp (%d)",
                           w->global_batch, w->data * w->fsdp);
        if ((w->global_batch / (w->data * w->fsdp)) % w->microbatches != 0)
            return sb__bad(rd, "$.job.microbatches",
                           "%d does not divide the "
                           "%d sequences per replica",
                           w->microbatches,
                           w->global_batch / (w->data * w->fsdp));
    }
    if (w->mesh[0]) {
        long mp = 1;
        const char *s = w->mesh;
        /* whole numbers >= 1 joined by x: every x between two of them */
        for (;;) {
            char *end;
            long d = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : 0;
            if (d < 1 || d > 1000000 || mp > 1000000000L / d)
                return sb__bad(rd, "$.topology.mesh",
                               "'%s' is not a shape "
                               "like 4x4x4",
                               w->mesh);
            mp *= d;
            s = end;
            if (!*s)
                break;
            if (*s != 'x' && *s != 'X')
                return sb__bad(rd, "$.topology.mesh",
                               "'%s' is not a shape "
                               "like 4x4x4",
                               w->mesh);
            s++;
        }
        if (mp != w->chips)
            return sb__bad(rd, "$.topology.mesh",
                           "'%s' has %ld chips but "
                           "topology.chips is %d",
                           w->mesh, mp, w->chips);
    }
    return 0;
}

int sb_workload_from_json(json_t *doc, const char *where, sb_workload *w,
                          sb_err *err)
{
    sb__rd rd = {where ? where : "workload", NULL, err, NULL, 0};
    return sb__read(&rd, doc, w);
}

static char *sb__slurp(const char *path)
{
    FILE *f;
    if (sb_file_fopen(path, "rb", &f, NULL) != 0)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            if (cap > (64u << 20))
                break; /* a workload file is small; stop reading junk */
            char *nb = realloc(buf, cap);
            if (!nb)
                break;
            buf = nb;
        }
        size_t r = fread(buf + n, 1, 4096, f);
        n += r;
        if (r < 4096)
            break;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

int sb_workload_load_doc(const char *file, json_t **doc, char *path_out,
                         int path_len, sb_err *err)
{
    char path[4400];
    int rc = sb_data_file("models", file, path, sizeof path, err);
    if (rc)
        return rc;
    if (path_out)
        snprintf(path_out, (size_t)path_len, "%s", path);
    json_error_t je;
    FILE *f;
    *doc = NULL;
    rc = sb_file_fopen(path, "rb", &f, err); /* a regular file only */
    if (rc)
        return rc;
    *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!*doc)
        return sb_fail(err, SB_EINVAL, "%s: line %d, column %d: %s", path,
                       je.line, je.column, je.text);
    return 0;
}

int sb_workload_read_file(json_t *doc, const char *path,
                          const char *const *sets, int nsets, sb_workload *w,
                          sb_err *err)
{
    char *text = sb__slurp(path);
    sb__rd rd = {path, text, err, sets, nsets};
    int rc = sb__read(&rd, doc, w);
    free(text);
    return rc;
}

/* ---- calibration files --------------------------------------------------- */

int sb_workload_calibration(sb_workload *w, const char *file, sb_err *err)
{
    char path[4400];
    struct stat st;
    if (file) {
        int rc = sb_data_file("calib", file, path, sizeof path, err);
        if (rc)
            return rc;
    } else {
        char dir[4096];
        if (!w->hw_spec[0] || strchr(w->hw_spec, '/') ||
            sb_datadir(dir, sizeof dir) != 0)
            return 0;
        snprintf(path, sizeof path, "%s/calib/%s.json", dir, w->hw_spec);
        if (stat(path, &st) != 0)
            return 0; /* none for this hardware: speed of light only */
    }
    /* read once: the text gives errors their line and column */
    char *text = sb__slurp(path);
    if (!text)
        return sb_fail(err, SB_EIO, "%s: cannot read the calibration", path);
    json_error_t je;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        free(text);
        return sb_fail(err, SB_EINVAL, "%s: line %d, column %d: %s", path,
                       je.line, je.column, je.text);
    }
    sb__rd rd = {path, text, err, NULL, 0};
    int rc = 0;
    if (!json_is_object(doc)) {
        rc = sb__bad(&rd, "$", "a calibration must be a JSON object");
        goto out;
    }
    char hwname[48] = "";
    rc = sb__known_keys(&rd, doc, "$",
                        "hardware|matmul|attention|memory|network|source|"
                        "notes");
    if (!rc)
        rc =
            sb__str(&rd, doc, "hardware", "$", NULL, "", hwname, sizeof hwname);
    /* (a spec given as a file is named inside it: not checked here) */
    if (!rc && hwname[0] && w->hw_spec[0] && !strchr(w->hw_spec, '/') &&
        strcmp(hwname, w->hw_spec) != 0) {
        rc = sb__bad(&rd, "$.hardware",
                     "'%s', but the machine model is the %s datasheet", hwname,
                     w->hw_spec);
        goto out;
    }
    if (rc)
        goto out;
    double e[4];
    double *dst[4] = {&w->eff_matmul, &w->eff_attention, &w->eff_memory,
                      &w->eff_network};
    bool had = sb_workload_calibrated(w);
    rc = sb__effs(&rd, doc, "$", e);
    for (int i = 0; i < 4 && !rc; i++)
        if (!(*dst[i] > 0)) /* the workload's own come first */
            *dst[i] = e[i];
    char src[400] = "";
    if (!rc)
        rc = sb__str(&rd, doc, "source", "$", NULL, "", src, sizeof src);
    if (!rc && !had) {
        const char *base = strrchr(path, '/');
        snprintf(w->calib_source, sizeof w->calib_source, "%s%s%s",
                 base ? base + 1 : path, src[0] ? ": " : "", src);
    }
out:
    free(text);
    json_decref(doc);
    return rc;
}

/* ---- --set --------------------------------------------------------------- */

static const struct {
    const char *alias, *path;
} sb__aliases[] = {
    {"chips", "topology.chips"},
    {"mesh", "topology.mesh"},
    {"chips_per_host", "topology.chips_per_host"},
    {"data", "parallelism.data"},
    {"fsdp", "parallelism.fsdp"},
    {"tensor", "parallelism.tensor"},
    {"tp", "parallelism.tensor"},
    {"expert", "parallelism.expert"},
    {"ep", "parallelism.expert"},
    {"pipeline", "parallelism.pipeline"},
    {"pp", "parallelism.pipeline"},
    {"context", "parallelism.context"},
    {"cp", "parallelism.context"},
    {"dp", "parallelism.data"},
    {"batch", "job.global_batch"},
    {"global_batch", "job.global_batch"},
    {"seq", "job.seq_len"},
    {"seq_len", "job.seq_len"},
    {"microbatches", "job.microbatches"},
    {"remat", "job.remat"},
    {"zero", "parallelism.zero"},
    {"virtual_stages", "parallelism.virtual_stages"},
    {"reshard_after_forward", "parallelism.reshard_after_forward"},
    {"max_batched_tokens", "job.max_batched_tokens"},
    {"matmul", "dtypes.matmul"},
    {"optimizer", "job.optimizer"},
    {"prompt", "job.prompt_len"},
    {"prompt_len", "job.prompt_len"},
    {"output", "job.output_len"},
    {"output_len", "job.output_len"},
    {"concurrency", "job.concurrency"},
    {"attention_kernel", "job.attention_kernel"},
    {"hw", "hardware.spec"},
    {"spec", "hardware.spec"},
    {"price", "hardware.price_per_chip_hour"},
    {"weights", "dtypes.weights"},
    {"activations", "dtypes.activations"},
    {"kv_cache", "dtypes.kv_cache"},
    {"layers", "model.layers"},
    {"d_model", "model.d_model"},
    {"experts", "model.moe.experts"},
    {"top_k", "model.moe.top_k"},
    {"capacity_factor", "model.moe.capacity_factor"},
};

/* The document path a --set key names: an alias's, or the key itself. */
static const char *sb__set_path(const char *key)
{
    for (size_t i = 0; i < sizeof sb__aliases / sizeof sb__aliases[0]; i++)
        if (strcmp(key, sb__aliases[i].alias) == 0)
            return sb__aliases[i].path;
    return key;
}

/* The document path of a --set or --sweep key (an alias's, or the key
 * itself), checked to be dot-separated names of letters, digits and '_',
 * none empty. `opt` names the option in the message. */
static int sb__key_path(const char *opt, const char *key, const char **path,
                        sb_err *err)
{
    *path = sb__set_path(key);
    bool ok = !sb_list_has_empty(*path, '.');
    for (const char *c = *path; ok && *c; c++)
        ok = isalnum((unsigned char)*c) || *c == '_' || *c == '.';
    if (!ok)
        return sb_fail(err, SB_EINVAL,
                       "%s %s: the key must be a name or "
                       "a dotted path of names (letters, digits, '_'), e.g. "
                       "model.layers",
                       opt, key);
    return 0;
}

int sb_workload_check_key(const json_t *doc, const char *key, sb_err *err)
{
    const char *path;
    if (strlen(key) >= 128)
        return sb_fail(err, SB_EINVAL,
                       "--sweep '%.40s...': key longer than "
                       "127 characters",
                       key);
    int rc = sb__key_path("--sweep", key, &path, err);
    if (rc)
        return rc;
    json_t *type = json_object_get(json_object_get(doc, "job"), "type");
    const bool inference = json_is_string(type) &&
                           strcmp(json_string_value(type), "inference") == 0;
    /* Walk the path through the format's objects: every name but the last
     * must be an object of the format, and each must be a field of its
     * parent. */
    char at[160] = "$", buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok;
         tok = strtok_r(NULL, ".", &save)) {
        const char *keys = sb__fields_of(at, inference);
        if (!keys)
            return sb_fail(err, SB_EINVAL,
                           "--sweep %s: %s is a value, not an "
                           "object with fields",
                           key, at);
        size_t l = strlen(at);
        snprintf(at + l, sizeof at - l, ".%s", tok);
        if (!sb__field_in(keys, tok))
            return sb_fail(
                err, SB_EINVAL,
                "--sweep %s: %s: unknown field "
                "(known here: %s%s)",
                key, at, keys,
                keys == sb__job_train
                    ? "; an inference job has "
                      "prompt_len|output_len|concurrency|kv_page"
                : keys == sb__job_infer
                    ? "; a training job has "
                      "global_batch|seq_len|microbatches|optimizer|remat"
                    : "");
    }
    return 0;
}

int sb_workload_doc_set(json_t *doc, const char *kv, sb_err *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return sb_fail(err, SB_EINVAL, "--set '%s': expected key=value", kv);
    if (eq - kv >= 128)
        return sb_fail(err, SB_EINVAL,
                       "--set '%.40s...': key longer than 127 "
                       "characters",
                       kv);
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    const char *path;
    int rc = sb__key_path("--set", key, &path, err);
    if (rc)
        return rc;
    json_error_t je;
    json_t *val = json_loads(eq + 1, JSON_DECODE_ANY, &je);
    if (!val)
        val = json_string(eq + 1);
    if (!val)
        return sb_fail(err, SB_ENOMEM, "--set %s: out of memory", key);
    /* Walk (and create) the objects along the path. */
    json_t *o = doc;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL, *tok = strtok_r(buf, ".", &save);
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) {
            json_object_set_new(o, tok, val);
            break;
        }
        json_t *child = json_object_get(o, tok);
        if (!child) {
            child = json_object();
            json_object_set_new(o, tok, child);
        } else if (!json_is_object(child)) {
            json_decref(val);
            return sb_fail(err, SB_EINVAL, "--set %s: $.%s is not an object",
                           key, tok);
        }
        o = child;
        tok = next;
    }
    return 0;
}

/* ---- sizes
 * ------------------------------------------------------------------- */

static bool sb__is_moe_layer(const sb_workload *w, int l)
{
    return w->experts > 0 && l >= w->moe_first_layer &&
           (l - w->moe_first_layer) % w->moe_every == 0;
}

void sb_workload_sizes(const sb_workload *w, sb_wl_sizes *s)
{
    memset(s, 0, sizeof *s);
    double d = w->d_model, hq = w->q_heads, hkv = w->kv_heads, hd = w->head_dim;
    double attn;
    if (w->mla) {
        /* DeepSeek-V2/V3 MLA: q down/up, kv down (+ shared rope key), kv up
         * to per-head no-rope keys and values, output projection. */
        double qdim = hq * (hd + w->rope_dim);
        double q =
            w->q_lora_rank > 0
                ? d * w->q_lora_rank + w->q_lora_rank * qdim + w->q_lora_rank
                : d * qdim;
        attn = q + d * (w->kv_lora_rank + w->rope_dim) + w->kv_lora_rank +
               (double)w->kv_lora_rank * hq * (hd + hd) + hq * hd * d;
        s->kv_bytes_per_token =
            w->layers * (double)(w->kv_lora_rank + w->rope_dim) * w->kv_bytes;
    } else {
        attn = d * hq * hd + 2 * d * hkv * hd + hq * hd * d;
        s->kv_bytes_per_token = 2.0 * w->layers * hkv * hd * w->kv_bytes;
    }
    s->params_attn_layer = attn;
    double mats = w->gated ? 3 : 2;
    double dense_mlp = mats * d * w->ffn;
    double expert = mats * d * w->expert_ffn;
    double norms = 2 * d;
    double total = 0, active = 0, routed = 0;
    for (int l = 0; l < w->layers; l++) {
        double layer = attn + norms, act = attn + norms;
        if (sb__is_moe_layer(w, l)) {
            s->moe_layers++;
            double router = d * w->experts;
            layer += router + (w->experts + w->shared_experts) * expert;
            act += router + (w->top_k + w->shared_experts) * expert;
            routed += w->experts * expert;
        } else {
            layer += dense_mlp;
            act += dense_mlp;
        }
        total += layer;
        active += act;
    }
    double emb = (double)w->vocab * d;
    s->params_embedding = emb;
    double head = w->tied_embeddings ? 0 : emb;
    s->params_total = total + emb + head + d; /* + final norm */
    s->params_active = active + emb + head + d;
    s->params_expert = routed;
    s->params_dense = s->params_total - routed;
    /* Matmul parameters per token: the LM head is a matmul (tied or not);
     * the input lookup is not. */
    s->n_for_mfu = active + emb + d;
}
