/*
 * workload.c — reading and checking workload files (docs/WORKLOAD.md) and
 * the model's parameter counts: the entry points that read a document or a
 * file into a workload (its sections: workload_read.c; their consistency:
 * workload_check.c; --set and --sweep keys: workload_set.c), calibration
 * files, and the sizes of the model. Every error names the file and the
 * JSON path of the offending field ("$.model.kv_heads"), with line:column
 * from the parser for syntax errors and from the file's text for a field
 * whose key appears once (workload_field.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/workload.h"
#include "model/workload_int.h"

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

/* ---- kinds of communication ---------------------------------------------- */

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

/* ---- reading ------------------------------------------------------------- */

int sb_workload_from_json(json_t *doc, const char *where, sb_workload *w,
                          sb_err *err)
{
    sb_wl_rd rd = {where ? where : "workload", NULL, err, NULL, 0};
    return sb_wl_read(&rd, doc, w);
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
    sb_wl_rd rd = {path, text, err, sets, nsets};
    int rc = sb_wl_read(&rd, doc, w);
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
    sb_wl_rd rd = {path, text, err, NULL, 0};
    int rc = 0;
    if (!json_is_object(doc)) {
        rc = sb_wl_bad(&rd, "$", "a calibration must be a JSON object");
        goto out;
    }
    char hwname[48] = "";
    rc = sb_wl_known_keys(&rd, doc, "$",
                          "hardware|matmul|matmul_by_dtype|attention|memory|"
                          "network|source|notes");
    if (!rc)
        rc = sb_wl_str(&rd, doc, "hardware", "$", NULL, "", hwname,
                       sizeof hwname);
    /* (a spec given as a file is named inside it: not checked here) */
    if (!rc && hwname[0] && w->hw_spec[0] && !strchr(w->hw_spec, '/') &&
        strcmp(hwname, w->hw_spec) != 0) {
        rc = sb_wl_bad(&rd, "$.hardware",
                       "'%s', but the machine model is the %s datasheet",
                       hwname, w->hw_spec);
        goto out;
    }
    if (rc)
        goto out;
    double e[4];
    double *dst[4] = {&w->eff_matmul, &w->eff_attention, &w->eff_memory,
                      &w->eff_network};
    bool had = sb_workload_calibrated(w);
    rc = sb_wl_effs(&rd, doc, "$", e);
    /* a matmul dtype measured on its own (fp8 GEMMs run further below
     * their peak than bf16's): its efficiency for the workload's matmuls */
    json_t *by = rc ? NULL
                    : sb_wl_obj(&rd, doc, "matmul_by_dtype",
                                "$.matmul_by_dtype", false, &rc);
    if (by) {
        const char *k;
        json_t *v;
        json_object_foreach(by, k, v)
        {
            char key[64];
            snprintf(key, sizeof key, "$.matmul_by_dtype.%s", k);
            if (!(sb_dtype_bytes(k) > 0)) {
                rc = sb_wl_bad(&rd, key, "not a dtype (" SB_WL_DTYPES ")");
                break;
            }
            double f = 0;
            if ((rc = sb_wl_num(&rd, by, k, "$.matmul_by_dtype", 0.01, 1, 0,
                                &f)))
                break;
            if (strcmp(k, w->mm_dtype) == 0)
                e[0] = f;
        }
    }
    for (int i = 0; i < 4 && !rc; i++)
        if (!(*dst[i] > 0)) /* the workload's own come first */
            *dst[i] = e[i];
    char src[400] = "";
    if (!rc)
        rc = sb_wl_str(&rd, doc, "source", "$", NULL, "", src, sizeof src);
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

/* ---- sizes --------------------------------------------------------------- */

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
