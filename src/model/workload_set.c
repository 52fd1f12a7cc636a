/*
 * workload_set.c — the keys of --set and --sweep: the short aliases
 * ("tp" for parallelism.tensor), a key's document path checked to be a
 * dotted path of names, a --sweep key checked against the format's fields,
 * and a --set key=value applied to the document before it is read.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "solbench/param.h"
#include "model/workload_int.h"

/* ---- aliases ------------------------------------------------------------- */

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
    {"requests", "job.requests"},
    {"max_seqs", "job.max_seqs"},
    {"scheduler", "job.scheduler"},
    {"lengths", "job.lengths"},
    {"length_spread", "job.length_spread"},
    {"seed", "job.seed"},
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
const char *sb_wl_set_path(const char *key)
{
    for (size_t i = 0; i < sizeof sb__aliases / sizeof sb__aliases[0]; i++)
        if (strcmp(key, sb__aliases[i].alias) == 0)
            return sb__aliases[i].path;
    return key;
}

/* ---- keys ---------------------------------------------------------------- */

/* The document path of a --set or --sweep key (an alias's, or the key
 * itself), checked to be dot-separated names of letters, digits and '_',
 * none empty. `opt` names the option in the message. */
static int sb__key_path(const char *opt, const char *key, const char **path,
                        sb_err *err)
{
    *path = sb_wl_set_path(key);
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
        const char *keys = sb_wl_fields_of(at, inference);
        if (!keys)
            return sb_fail(err, SB_EINVAL,
                           "--sweep %s: %s is a value, not an "
                           "object with fields",
                           key, at);
        size_t l = strlen(at);
        snprintf(at + l, sizeof at - l, ".%s", tok);
        if (!sb_wl_field_in(keys, tok))
            return sb_fail(
                err, SB_EINVAL,
                "--sweep %s: %s: unknown field "
                "(known here: %s%s)",
                key, at, keys,
                keys == sb_wl_job_train
                    ? "; an inference job has "
                      "prompt_len|output_len|concurrency|kv_page"
                : keys == sb_wl_job_infer
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
