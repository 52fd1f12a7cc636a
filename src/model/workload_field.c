/*
 * workload_field.c — the workload reader's fields: the one-line error
 * (file, JSON path, and the --set or line:column the field came from), the
 * typed readers of integers, numbers, booleans, strings and dtypes, and the
 * format's fields per object, against which unknown keys are refused and
 * --sweep keys checked.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/workload_int.h"

/* ---- errors -------------------------------------------------------------- */

/* Line and column of `"key"` when it occurs exactly once in the text. */
static void sb__locate(const sb_wl_rd *rd, const char *path, char *out,
                       size_t len)
{
    out[0] = '\0';
    for (int i = rd->nsets - 1; i >= 0; i--) { /* the last one applied */
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(rd->sets[i], "="),
                 rd->sets[i]);
        const char *sp = sb_wl_set_path(key);
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

int sb_wl_bad(const sb_wl_rd *rd, const char *path, const char *fmt, ...)
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

/* ---- typed fields -------------------------------------------------------- */

json_t *sb_wl_obj(const sb_wl_rd *rd, json_t *parent, const char *key,
                  const char *path, bool required, int *rc)
{
    json_t *o = json_object_get(parent, key);
    if (!o) {
        if (required)
            *rc = sb_wl_bad(rd, path, "missing (an object is required)");
        return NULL;
    }
    if (!json_is_object(o)) {
        *rc = sb_wl_bad(rd, path, "must be an object");
        return NULL;
    }
    return o;
}

/* Integer field in [lo, hi]; absent → def when !required. */
int sb_wl_int(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              bool required, long lo, long hi, int def, int *out)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        if (required)
            return sb_wl_bad(rd, path, "missing (an integer is required)");
        *out = def;
        return 0;
    }
    if (!json_is_integer(v)) {
        if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)))
            ; /* 4096.0 is accepted as 4096 */
        else
            return sb_wl_bad(rd, path, "must be an integer, not %s",
                             json_is_string(v)    ? "a string"
                             : json_is_real(v)    ? "a fraction"
                             : json_is_boolean(v) ? "a boolean"
                                                  : "this value");
    }
    double x = json_number_value(v);
    if (x < lo)
        return sb_wl_bad(rd, path, "%.15g is %s; must be >= %ld", x,
                         x < 0 ? "negative" : "too small", lo);
    if (x > hi)
        return sb_wl_bad(rd, path, "%.15g is too large; must be <= %ld", x, hi);
    *out = (int)x;
    return 0;
}

int sb_wl_num(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              double lo, double hi, double def, double *out)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        *out = def;
        return 0;
    }
    if (!json_is_number(v))
        return sb_wl_bad(rd, path, "must be a number");
    double x = json_number_value(v);
    if (!(x >= lo))
        return sb_wl_bad(rd, path, "%g is %s; must be >= %g", x,
                         x < 0 ? "negative" : "too small", lo);
    if (x > hi)
        return sb_wl_bad(rd, path, "%g is too large; must be <= %g", x, hi);
    *out = x;
    return 0;
}

int sb_wl_bool(const sb_wl_rd *rd, json_t *o, const char *key,
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
        return sb_wl_bad(rd, path, "must be true or false");
    *out = json_is_true(v);
    return 0;
}

/* String field; `choices` is "a|b|c" or NULL for free text. */
int sb_wl_str(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              const char *choices, const char *def, char *out, size_t len)
{
    char path[96];
    snprintf(path, sizeof path, "%s.%s", ppath, key);
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v) {
        snprintf(out, len, "%s", def ? def : "");
        return 0;
    }
    if (!json_is_string(v))
        return sb_wl_bad(rd, path, "must be a string%s%s",
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
            return sb_wl_bad(rd, path, "'%s' is not one of %s", s, choices);
    }
    if (strlen(s) >= len)
        return sb_wl_bad(rd, path, "too long (at most %zu characters)",
                         len - 1);
    snprintf(out, len, "%s", s);
    return 0;
}

int sb_wl_dtype(const sb_wl_rd *rd, json_t *o, const char *key, const char *def,
                char *out, double *bytes)
{
    int rc = sb_wl_str(rd, o, key, "$.dtypes", SB_WL_DTYPES, def, out, 8);
    if (rc)
        return rc;
    *bytes = sb_dtype_bytes(out);
    return 0;
}

/* ---- the format's fields ------------------------------------------------- */

/* The fields each object of the format may hold: what sb_wl_read accepts and
 * what a --sweep key may name (sb_workload_check_key), in one place. "*"
 * takes any name (the phases of measured.phases); the job's fields depend
 * on its type. */
const char sb_wl_job_train[] = "type|global_batch|seq_len|microbatches|"
                               "optimizer|optimizer_offload|remat|"
                               "attention_kernel";
const char sb_wl_job_infer[] = "type|prompt_len|output_len|concurrency|"
                               "kv_page|attention_kernel|"
                               "max_batched_tokens|slo_ttft_s|"
                               "slo_tpot_s|request_rate|requests|"
                               "max_seqs|scheduler|lengths|"
                               "length_spread|seed";
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
    {"$.job", sb_wl_job_train}, /* sb_wl_job_infer for an inference job */
    {"$.parallelism", "data|fsdp|tensor|expert|pipeline|context|zero|"
                      "reshard_after_forward|virtual_stages"},
    {"$.topology", "chips|chips_per_host|mesh"},
    {"$.hardware", "spec|run|price_per_chip_hour"},
    {"$.overlap", "fsdp|dp|tp|ep|pp|cp|host"},
    {"$.calibration", "matmul|attention|memory|network|source"},
    {"$.measured", "step_time_s|tokens_per_s|mfu|mfu_convention|source|"
                   "phases|dropped|slo"},
    {"$.measured.phases", "*"},
};

/* The fields of the object at `path` ("$.model"), or NULL when the format
 * has no object there. */
const char *sb_wl_fields_of(const char *path, bool inference)
{
    for (size_t i = 0; i < sizeof sb__fields / sizeof sb__fields[0]; i++)
        if (strcmp(path, sb__fields[i].path) == 0)
            return strcmp(path, "$.job") == 0 && inference ? sb_wl_job_infer
                                                           : sb__fields[i].keys;
    return NULL;
}

/* Whether `k` is one of the '|'-separated names of `keys` ("*": any). */
bool sb_wl_field_in(const char *keys, const char *k)
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
int sb_wl_known_keys(const sb_wl_rd *rd, json_t *o, const char *path,
                     const char *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (!sb_wl_field_in(keys, k)) {
            char p2[128];
            snprintf(p2, sizeof p2, "%s.%s", path, k);
            return sb_wl_bad(rd, p2, "unknown field (known here: %s)", keys);
        }
    }
    return 0;
}

/* The same for an object of the workload format. */
int sb_wl_known(const sb_wl_rd *rd, json_t *o, const char *path, bool inference)
{
    return sb_wl_known_keys(rd, o, path, sb_wl_fields_of(path, inference));
}

/* The efficiencies of a calibration (the workload's `calibration` or a
 * calibration file) at `path`: matmul, attention, memory, network, each in
 * [0.01, 1], 0 where absent. */
int sb_wl_effs(const sb_wl_rd *rd, json_t *o, const char *path, double e[4])
{
    static const char *const names[4] = {"matmul", "attention", "memory",
                                         "network"};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++)
        rc = sb_wl_num(rd, o, names[i], path, 0.01, 1, 0, &e[i]);
    return rc;
}
