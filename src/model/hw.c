/*
 * hw.c — hardware specs (data/hw/<name>.json) and the ceilings built from them
 * or from a measured run. A spec gives datasheet figures with their source;
 * a run gives measured ones; measured figures replace datasheet ones of the
 * same name, so "a spec overridden by measurements" is just both in order.
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/workload.h"

#ifndef SB_DATADIR
#define SB_DATADIR "data"
#endif

static int sb__is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int sb_datadir(char *out, size_t len)
{
    const char *env = getenv("SOLBENCH_DATA");
    if (sb__is_dir(env)) {
        snprintf(out, len, "%s", env);
        return 0;
    }
    /* Installed layout: <prefix>/bin/solbench and <prefix>/share/solbench. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char cand[4200];
            snprintf(cand, sizeof cand, "%s/../share/solbench/data", exe);
            if (sb__is_dir(cand)) {
                snprintf(out, len, "%s", cand);
                return 0;
            }
        }
    }
    /* a program that links the installed library: its install prefix */
#ifdef SB_INSTALL_DATADIR
    if (sb__is_dir(SB_INSTALL_DATADIR)) {
        snprintf(out, len, "%s", SB_INSTALL_DATADIR);
        return 0;
    }
#endif
    snprintf(out, len, "%s", SB_DATADIR);
    return sb__is_dir(out) ? 0 : SB_EIO;
}

int sb_data_file(const char *sub, const char *name, char *out, size_t len,
                 sb_err *err)
{
    if (!name || !*name)
        return sb_fail(err, SB_EINVAL, "empty %s name", sub);
    struct stat st;
    bool json =
        strlen(name) > 5 && strcmp(name + strlen(name) - 5, ".json") == 0;
    if (json || strchr(name, '/')) {
        if (stat(name, &st) != 0)
            return sb_fail(err, SB_EINVAL, "%s file %s: not found", sub, name);
        if (!S_ISREG(st.st_mode))
            return sb_fail(err, SB_EINVAL, "%s file %s: not a regular file",
                           sub, name);
        /* a path names a JSON document: any other file (/etc/passwd) is
         * not read, so no part of it reaches an error line */
        if (!json)
            return sb_fail(err, SB_EINVAL,
                           "%s file %s: a file must be a .json document (or "
                           "give a name from the data folder)",
                           sub, name);
        snprintf(out, len, "%s", name);
        return 0;
    }
    char dir[4096];
    if (sb_datadir(dir, sizeof dir) != 0)
        return sb_fail(err, SB_EIO,
                       "data folder not found (set SOLBENCH_DATA; looked "
                       "in %s)",
                       dir);
    snprintf(out, len, "%s/%s/%s.json", dir, sub, name);
    if (stat(out, &st) != 0)
        return sb_fail(err, SB_EINVAL, "unknown %s '%s' (no %s)",
                       strcmp(sub, "hw") == 0      ? "hardware spec"
                       : strcmp(sub, "calib") == 0 ? "calibration"
                                                   : "workload preset",
                       name, out);
    return 0;
}

/* ---- spec files ---------------------------------------------------------- */

/* A number in [lo, hi] (a datasheet figure: nothing past hi is a real
 * chip, and a figure out of range would only print as inf or overflow a
 * column); with `integer`, a whole one. */
static int sb__num_in(json_t *o, const char *key, double *v, const char *file,
                      const char *path, int required, double lo, double hi,
                      bool integer, sb_err *err)
{
    if (!json_is_object(o))
        return sb_fail(err, SB_EINVAL, "%s: %s: must be an object", file, path);
    json_t *x = json_object_get(o, key);
    if (!x) {
        if (!required)
            return 0;
        return sb_fail(err, SB_EINVAL, "%s: %s.%s: missing", file, path, key);
    }
    const double d = json_is_number(x) ? json_number_value(x) : NAN;
    if (!(d >= lo && d <= hi) || (integer && d != floor(d)))
        return sb_fail(err, SB_EINVAL, "%s: %s.%s: must be %s in [%g, %g]",
                       file, path, key, integer ? "an integer" : "a number", lo,
                       hi);
    *v = d;
    return 0;
}

/* An optional string field; present, it must be a string. */
static int sb__str(json_t *o, const char *key, char *out, size_t len,
                   const char *file, const char *path, sb_err *err)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return 0;
    if (!json_is_string(x))
        return sb_fail(err, SB_EINVAL, "%s: %s.%s: must be a string", file,
                       path, key);
    snprintf(out, len, "%s", json_string_value(x));
    return 0;
}

/* An optional object field; present, it must be an object. */
static int sb__obj(json_t *doc, const char *key, json_t **out, const char *file,
                   sb_err *err)
{
    *out = json_object_get(doc, key);
    if (*out && !json_is_object(*out))
        return sb_fail(err, SB_EINVAL, "%s: $.%s: must be an object", file,
                       key);
    return 0;
}

/* The spec file at `path` parsed: refused when larger than a spec holds
 * or not JSON. */
static int sb__hw_parse(const char *path, json_t **doc, sb_err *err)
{
    json_error_t je;
    FILE *f;
    int rc = sb_file_fopen(path, "rb", &f, err); /* a regular file only */
    if (rc)
        return rc;
    /* a spec is a few hundred bytes: a file far larger is not one, and
     * parsing it whole would take memory in proportion */
    struct stat sbuf;
    if (fstat(fileno(f), &sbuf) == 0 && sbuf.st_size > SB_HW_MAX_FILE) {
        fclose(f);
        return sb_fail(err, SB_EINVAL,
                       "%s: %lld bytes, more than a hardware spec holds (at "
                       "most %d)",
                       path, (long long)sbuf.st_size, SB_HW_MAX_FILE);
    }
    *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!*doc) {
        /* jansson quotes the token it stopped at: not echoed (the file
         * may be anything a path names) */
        char *near = strstr(je.text, " near ");
        if (near)
            *near = '\0';
        return sb_fail(err, SB_EINVAL, "%s:%d:%d: not valid JSON (%s)", path,
                       je.line, je.column, je.text);
    }
    return 0;
}

/* The spec's texts: name (by default the file's), title, kind, source,
 * notes. */
static int sb__hw_names(json_t *doc, const char *name, const char *path,
                        sb_hw_spec *hw, sb_err *err)
{
    if (sb__str(doc, "name", hw->name, sizeof hw->name, path, "$", err) ||
        sb__str(doc, "title", hw->title, sizeof hw->title, path, "$", err) ||
        sb__str(doc, "kind", hw->kind, sizeof hw->kind, path, "$", err) ||
        sb__str(doc, "source", hw->source, sizeof hw->source, path, "$", err) ||
        sb__str(doc, "notes", hw->notes, sizeof hw->notes, path, "$", err))
        return SB_EINVAL;
    if (hw->kind[0] && strcmp(hw->kind, "cpu") != 0 &&
        strcmp(hw->kind, "gpu") != 0 && strcmp(hw->kind, "tpu") != 0) {
        char k[64];
        sb_err_escape(k, sizeof k, hw->kind);
        return sb_fail(err, SB_EINVAL,
                       "%s: $.kind: '%s': not one of cpu, gpu, tpu", path, k);
    }
    /* names are printed and put in reports: one line of text */
    const char *txt[2] = {hw->name, hw->title};
    for (int t = 0; t < 2; t++)
        for (const char *c = txt[t]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '<' ||
                *c == '>')
                return sb_fail(err, SB_EINVAL,
                               "%s: $.%s: a control character or markup "
                               "(< >): not a name",
                               path, t ? "title" : "name");
    if (!hw->name[0]) {
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        snprintf(hw->name, sizeof hw->name, "%.*s", (int)strcspn(base, "."),
                 base);
    }
    return 0;
}

/* $.peak_tflops: the peak of each dtype. */
static int sb__hw_peaks(json_t *doc, const char *path, sb_hw_spec *hw,
                        sb_err *err)
{
    json_t *pk = json_object_get(doc, "peak_tflops");
    if (!json_is_object(pk) || json_object_size(pk) == 0)
        return sb_fail(err, SB_EINVAL, "%s: $.peak_tflops: missing or empty",
                       path);
    if (json_object_size(pk) > SB_HW_MAX_PEAKS)
        return sb_fail(err, SB_EINVAL, "%s: $.peak_tflops: more than %d dtypes",
                       path, SB_HW_MAX_PEAKS);
    const char *k;
    json_t *v;
    json_object_foreach(pk, k, v)
    {
        /* 1 GFLOP/s to 1 EFLOP/s a chip */
        if (!json_is_number(v) ||
            !(json_number_value(v) >= 1e-3 && json_number_value(v) <= 1e6))
            return sb_fail(err, SB_EINVAL,
                           "%s: $.peak_tflops.%s: must be a number "
                           "in [0.001, 1e6] (TFLOP/s)",
                           path, k);
        snprintf(hw->peak[hw->n_peaks].dtype, sizeof hw->peak[0].dtype, "%s",
                 k);
        hw->peak[hw->n_peaks++].flops = json_number_value(v) * 1e12;
    }
    return 0;
}

/* $.memory: the levels, each with its bandwidth and capacity; the last
 * one's capacity is the chip's memory. */
static int sb__hw_memory(json_t *doc, const char *path, sb_hw_spec *hw,
                         sb_err *err)
{
    json_t *mem = json_object_get(doc, "memory");
    if (!json_is_array(mem) || json_array_size(mem) == 0)
        return sb_fail(err, SB_EINVAL,
                       "%s: $.memory: must be a non-empty array", path);
    if (json_array_size(mem) > SB_HW_MAX_LEVELS)
        return sb_fail(err, SB_EINVAL, "%s: $.memory: more than %d levels",
                       path, SB_HW_MAX_LEVELS);
    size_t i;
    json_t *v;
    json_array_foreach(mem, i, v)
    {
        char p[32];
        snprintf(p, sizeof p, "$.memory[%zu]", i);
        double gbps = 0, gb = 0;
        /* up to 1 PB/s and 1 PB */
        if (sb__num_in(v, "GBps", &gbps, path, p, 1, 1e-3, 1e6, false, err) ||
            sb__num_in(v, "GB", &gb, path, p, 0, 0.0, 1e6, false, err) ||
            sb__str(v, "level", hw->level[hw->n_levels].level,
                    sizeof hw->level[0].level, path, p, err))
            return SB_EINVAL;
        hw->level[hw->n_levels].bw_Bps = gbps * 1e9;
        hw->level[hw->n_levels].bytes = gb * 1e9;
        hw->n_levels++;
    }
    hw->mem_bytes = hw->level[hw->n_levels - 1].bytes;
    return 0;
}

/* The links: $.scaleup, $.host_link and $.scaleout, each optional. Up to
 * 1 PB/s, latencies up to 1 s, domains and nodes of up to a million
 * chips. */
static int sb__hw_links(json_t *doc, const char *path, sb_hw_spec *hw,
                        sb_err *err)
{
    json_t *o;
    if (sb__obj(doc, "scaleup", &o, path, err))
        return SB_EINVAL;
    if (o) {
        double gbps = 0, lat = 0, dom = 1;
        if (sb__num_in(o, "GBps_per_direction", &gbps, path, "$.scaleup", 1,
                       0.0, 1e6, false, err) ||
            sb__num_in(o, "latency_us", &lat, path, "$.scaleup", 0, 0.0, 1e6,
                       false, err) ||
            sb__num_in(o, "domain_chips", &dom, path, "$.scaleup", 0, 1.0, 1e6,
                       true, err) ||
            sb__str(o, "name", hw->scaleup_name, sizeof hw->scaleup_name, path,
                    "$.scaleup", err))
            return SB_EINVAL;
        hw->scaleup_Bps = gbps * 1e9;
        hw->scaleup_alpha_s = lat * 1e-6;
        hw->scaleup_domain = (int)dom;
    } else {
        hw->scaleup_domain = 1;
    }
    if (sb__obj(doc, "host_link", &o, path, err))
        return SB_EINVAL;
    if (o) {
        double gbps = 0;
        if (sb__num_in(o, "GBps", &gbps, path, "$.host_link", 1, 0.0, 1e6,
                       false, err) ||
            sb__str(o, "name", hw->host_link, sizeof hw->host_link, path,
                    "$.host_link", err))
            return SB_EINVAL;
        hw->host_Bps = gbps * 1e9;
    }
    if (sb__obj(doc, "scaleout", &o, path, err))
        return SB_EINVAL;
    if (o) {
        double gbps = 0, cpn = 1, lat = 0;
        if (sb__num_in(o, "GBps_per_node", &gbps, path, "$.scaleout", 1, 0.0,
                       1e6, false, err) ||
            sb__num_in(o, "chips_per_node", &cpn, path, "$.scaleout", 0, 1.0,
                       1e6, true, err) ||
            sb__num_in(o, "latency_us", &lat, path, "$.scaleout", 0, 0.0, 1e6,
                       false, err) ||
            sb__str(o, "name", hw->scaleout_name, sizeof hw->scaleout_name,
                    path, "$.scaleout", err))
            return SB_EINVAL;
        hw->scaleout_Bps_node = gbps * 1e9;
        hw->chips_per_node = (int)cpn;
        hw->scaleout_alpha_s = lat * 1e-6;
    } else {
        hw->chips_per_node = 1;
    }
    return 0;
}

/* The price (up to 10^6 a chip-hour) and the units beside the matrix
 * unit: vector FLOP/s and transcendentals per second (optional: a
 * datasheet that publishes no rate has none). */
static int sb__hw_rates(json_t *doc, const char *path, sb_hw_spec *hw,
                        sb_err *err)
{
    if (sb__num_in(doc, "price_per_chip_hour", &hw->price_chip_hour, path, "$",
                   0, 0.0, 1e6, false, err))
        return SB_EINVAL;
    double vt = 0, tt = 0;
    if (sb__num_in(doc, "vector_tflops", &vt, path, "$", 0, 0.0, 1e5, false,
                   err) ||
        sb__num_in(doc, "transcendental_tops", &tt, path, "$", 0, 0.0, 1e5,
                   false, err))
        return SB_EINVAL;
    hw->vector_flops = vt * 1e12;
    hw->exp_ops = tt * 1e12;
    return 0;
}

int sb_hw_load(const char *name, sb_hw_spec *hw, sb_err *err)
{
    char path[4400];
    int rc = sb_data_file("hw", name, path, sizeof path, err);
    if (rc)
        return rc;
    memset(hw, 0, sizeof *hw);
    json_t *doc = NULL;
    rc = sb__hw_parse(path, &doc, err);
    if (rc)
        return rc;
    rc = SB_EINVAL;
    if (!json_is_object(doc)) {
        sb_fail(err, SB_EINVAL, "%s: $: must be an object", path);
        goto out;
    }
    if (sb__hw_names(doc, name, path, hw, err) ||
        sb__hw_peaks(doc, path, hw, err) || sb__hw_memory(doc, path, hw, err) ||
        sb__hw_links(doc, path, hw, err) || sb__hw_rates(doc, path, hw, err))
        goto out;
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

static int sb__cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sb_hw_list(char ***names, int *n, sb_err *err)
{
    char dir[4096], hwdir[4200];
    *names = NULL;
    *n = 0;
    if (sb_datadir(dir, sizeof dir) != 0)
        return sb_fail(err, SB_EIO,
                       "data folder not found (set "
                       "SOLBENCH_DATA)");
    snprintf(hwdir, sizeof hwdir, "%s/hw", dir);
    DIR *d = opendir(hwdir);
    if (!d)
        return sb_fail(err, SB_EIO, "%s: cannot open", hwdir);
    struct dirent *e;
    int cap = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, (size_t)cap * sizeof *nn);
            if (!nn)
                break;
            *names = nn;
        }
        (*names)[*n] = strndup(e->d_name, l - 5);
        if ((*names)[*n])
            (*n)++;
    }
    closedir(d);
    if (*n > 1)
        qsort(*names, (size_t)*n, sizeof **names, sb__cmp_str);
    return 0;
}

double sb_hw_peak(const sb_hw_spec *hw, const char *dtype)
{
    for (int i = 0; i < hw->n_peaks; i++)
        if (strcmp(hw->peak[i].dtype, dtype) == 0)
            return hw->peak[i].flops;
    return 0;
}

/* ---- ceilings ------------------------------------------------------------ */

void sb_ceil_from_spec(const sb_hw_spec *hw, sb_ceilings *c)
{
    char name[40];
    snprintf(c->kind, sizeof c->kind, "%s", hw->kind);
    for (int i = 0; i < hw->n_peaks; i++) {
        snprintf(name, sizeof name, "peak.%s", hw->peak[i].dtype);
        sb_ceil_set(c, name, hw->peak[i].flops, "datasheet");
    }
    for (int i = 0; i < hw->n_levels; i++) {
        snprintf(name, sizeof name, "bw.%s", hw->level[i].level);
        sb_ceil_set(c, name, hw->level[i].bw_Bps, "datasheet");
    }
    if (hw->mem_bytes > 0)
        sb_ceil_set(c, "mem.bytes", hw->mem_bytes, "datasheet");
    if (hw->host_Bps > 0)
        sb_ceil_set(c, "host.h2d", hw->host_Bps, "datasheet");
    if (hw->scaleup_Bps > 0) {
        sb_ceil_set(c, "net.scaleup.beta_Bps", hw->scaleup_Bps, "datasheet");
        sb_ceil_set(c, "net.scaleup.alpha_s", hw->scaleup_alpha_s, "datasheet");
        sb_ceil_set(c, "net.scaleup.domain", hw->scaleup_domain, "datasheet");
    }
    if (hw->scaleout_Bps_node > 0) {
        sb_ceil_set(c, "net.scaleout.beta_Bps",
                    hw->scaleout_Bps_node / hw->chips_per_node, "datasheet");
        sb_ceil_set(c, "net.scaleout.alpha_s", hw->scaleout_alpha_s,
                    "datasheet");
        sb_ceil_set(c, "net.chips_per_node", hw->chips_per_node, "datasheet");
    }
    if (hw->price_chip_hour > 0)
        sb_ceil_set(c, "price.chip_hour", hw->price_chip_hour, "datasheet");
    if (hw->vector_flops > 0)
        sb_ceil_set(c, "vector.peak", hw->vector_flops, "datasheet");
    if (hw->exp_ops > 0)
        sb_ceil_set(c, "vector.exp", hw->exp_ops, "datasheet");
}

static double sb__metric(const sb_result *r, const char *name)
{
    const sb_metric *m = sb_result_get(r, name);
    return m ? m->value : 0;
}

/* Sets a measured ceiling to the larger of what this run already set and v
 * (the best figure of several results of the same kind). */
/* The ceilings from a run come from its stable results first (pass 0);
 * an unstable result (stability.h) sets one only where no stable result
 * did (pass 1), and says so in the ceiling's source. */
static void sb__best_pass(sb_ceilings *c, sb_ceilings *seen, const char *name,
                          double v, int *count, int pass)
{
    if (!(v > 0) || !isfinite(v)) /* a figure past double's range: none */
        return;
    if (sb_ceil_get(seen, name) >= v)
        return;
    if (pass == 1 && sb_ceil_get(seen, name) > 0 &&
        strcmp(sb_ceil_source(seen, name), "measured") == 0)
        return; /* a stable figure stands */
    const char *src = pass == 0 ? "measured" : "measured, unstable";
    sb_ceil_set(seen, name, v, src);
    sb_ceil_set(c, name, v, src);
    (*count)++;
}
#define sb__best(c, seen, name, v, count)                                      \
    sb__best_pass(c, seen, name, v, count, pass)

/* The backends whose results measure an accelerator, first preferred,
 * as a stored run names them: the model reads documents from other
 * builds (a GPU node's run predicted on a laptop built without CUDA), so
 * it keeps this table of recorded names rather than asking the backends
 * installed here. kind: the machine measured; NULL: the kind the
 * platform in the run's system facts under `facts` reports ("tpu", or a
 * GPU: "cuda", "rocm"), none when it is the host's CPU ("cpu"). facts:
 * where the run's system facts hold the devices' own (their memory as
 * "device_memory_bytes"), or NULL. */
static const struct {
    const char *backend, *kind, *facts;
} sb__devices[] = {{"cuda", "gpu", NULL}, {"pjrt", NULL, "pjrt"}};

/* A field of device row i's facts in run, or NULL. */
static json_t *sb__device_fact(const sb_run *run, size_t i, const char *key)
{
    if (!sb__devices[i].facts)
        return NULL;
    return json_object_get(json_object_get(run->system, sb__devices[i].facts),
                           key);
}

/* The kind of machine ("gpu", "tpu") device row i measured in run, or
 * NULL when its results measure the host. */
static const char *sb__device_kind(const sb_run *run, size_t i)
{
    if (sb__devices[i].kind)
        return sb__devices[i].kind;
    const char *plat = json_string_value(sb__device_fact(run, i, "platform"));
    if (!plat || strcmp(plat, "cpu") == 0)
        return NULL;
    return strcmp(plat, "tpu") == 0 ? "tpu" : "gpu";
}

/* The device row of a run's family, or -1 for the host. */
static int sb__family_row(const sb_run *run)
{
    for (size_t i = 0; i < sizeof sb__devices / sizeof sb__devices[0]; i++) {
        if (!sb__device_kind(run, i))
            continue;
        for (size_t j = 0; j < run->results.n; j++) {
            const sb_result *r = &run->results.items[j];
            if (!r->skipped && r->valid &&
                strcmp(r->backend, sb__devices[i].backend) == 0)
                return (int)i;
        }
    }
    return -1;
}

const char *sb_run_device_family(const sb_run *run)
{
    int i = sb__family_row(run);
    return i < 0 ? "host" : sb__devices[i].backend;
}

/* Whether a result measures the machine of `family`: the host's own
 * backends (cpu, mpi: any name not in the device table) for "host"; that
 * backend for a device. */
static bool sb__in_family(const sb_result *r, const char *family)
{
    if (strcmp(family, "host") == 0) {
        for (size_t i = 0; i < sizeof sb__devices / sizeof sb__devices[0]; i++)
            if (strcmp(r->backend, sb__devices[i].backend) == 0)
                return false;
        return true;
    }
    return strcmp(r->backend, family) == 0;
}

/* Whether one of r's notes says `what` (the DRAM-ness of a figure) */
static bool sb__noted(const sb_result *r, const char *what)
{
    for (int k = 0; k < r->n_notes; k++)
        if (strstr(r->notes[k], what))
            return true;
    return false;
}

/* The compute ceilings of a compute.peak or compute.gemm result: the peak
 * and the GEMM of its dtype, also at the rows of its product; a
 * decode-shaped GEMM gives the weights' streaming rate instead. */
static void sb__ceil_compute(const sb_result *r, const char *dtype, int pass,
                             bool sustained, sb_ceilings *c, sb_ceilings *seen,
                             int *count)
{
    char name[40];
    double f = sustained ? 0 : sb__metric(r, "GFLOPs_best");
    if (!(f > 0))
        f = sb__metric(r, "GFLOPs");
    if (!(f > 0))
        f = sb__metric(r, "TFLOPs") * 1e3;
    const sb_pval *shape = sb_p_find(&r->params, "shape");
    bool decode = shape && strcmp(shape->text, "decode") == 0;
    /* the rows of the product, for gemm.<dtype>@M / gemv.<dtype>@M:
     * a matmul phase runs under the one measured at its rows */
    double rows = 0;
    if (shape && strcmp(r->bench, "compute.gemm") == 0) {
        const char *key = decode                            ? "batch"
                          : strcmp(shape->text, "llm") == 0 ? "tokens"
                                                            : "m";
        const sb_pval *v = sb_p_find(&r->params, key);
        rows = v ? v->num : 0;
        if (!(rows > 0) && !decode) { /* square: m = 0 is n */
            v = sb_p_find(&r->params, "n");
            rows = v ? v->num : 0;
        }
    }
    const sb_pval *rot = sb_p_find(&r->params, "rotate");
    if (rot && rot->num > 0)
        return; /* small weights in turn: a cost a call (sb__ceil_call) */
    if (decode) {
        /* decode-shaped GEMM: the weights' streaming rate, from weights
         * that stream from DRAM only (its note says when they fit 4x
         * the LLC: a cached rate no model's decode reaches) */
        if (sb__noted(r, "not a DRAM figure"))
            return;
        double gb =
            sb__metric(r, sustained ? "weight_GBps" : "weight_GBps_best") * 1e9;
        snprintf(name, sizeof name, "gemv.%s", dtype);
        sb__best(c, seen, name, gb, count);
        if (rows > 0) {
            snprintf(name, sizeof name, "gemv.%s@%.0f", dtype, rows);
            sb__best(c, seen, name, gb, count);
        }
        return;
    }
    if (rows > 0 && strcmp(r->bench, "compute.gemm") == 0) {
        snprintf(name, sizeof name, "gemm.%s@%.0f", dtype, rows);
        sb__best(c, seen, name, f * 1e9, count);
    }
    snprintf(name, sizeof name, "peak.%s", dtype);
    sb__best(c, seen, name, f * 1e9, count);
    if (strcmp(r->bench, "compute.gemm") == 0) {
        snprintf(name, sizeof name, "gemm.%s", dtype);
        sb__best(c, seen, name, f * 1e9, count);
    }
}

static int sb__ceil_from_run(const sb_run *run, sb_ceilings *c, bool sustained);

/* A product's cost a call beyond the rate of one matrix at its rows,
 * from a GEMM over small weights multiplied in turn (compute.gemm
 * rotate=1), t its time a product:
 *   decode: gemv.call.<dtype>@M = max(0, t - K N e / gemv.<dtype>@M)
 *     (gemv.<dtype> where there is none at M), the weights' stream;
 *   llm: gemm.call.<dtype>@M = max(0, t - 2 M K N / gemm.<dtype>@M), the
 *     product's FLOPs (an expert's prompt rows);
 * and <name>.<dtype> the largest of each, from the best samples (the
 * rotated point's and the one matrix's); sustained, that cost slowed by
 * the rotated point's own median over its best, not the difference of two
 * points' medians, each slowed by its own stretch of a noisy machine.
 * Returns the ceilings set. */
static int sb__ceil_call(const sb_run *run, const char *family, sb_ceilings *c,
                         bool sustained)
{
    int count = 0;
    /* the best samples' ceilings, for the one matrix's rate */
    sb_ceilings *best = NULL;
    if (sustained) {
        if (!(best = calloc(1, sizeof *best)))
            return 0;
        sb__ceil_from_run(run, best, false);
    }
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        const sb_pval *shape = sb_p_find(&r->params, "shape");
        const sb_pval *rot = sb_p_find(&r->params, "rotate");
        const sb_pval *dt = sb_p_find(&r->params, "dtype");
        if (r->skipped || !r->valid || !sb__in_family(r, family) ||
            strcmp(r->bench, "compute.gemm") != 0 || !shape || !rot ||
            !(rot->num > 0) || !dt)
            continue;
        const bool decode = strcmp(shape->text, "decode") == 0;
        if (!decode && strcmp(shape->text, "llm") != 0)
            continue;
        double elem = sb_dtype_bytes(dt->text);
        /* the product's rows and weights, as recorded (decode ffn = 0,
         * the LLC-sized matrix, is no small one; llm ffn = 0 is 4 K) */
        const sb_pval *pm = sb_p_find(&r->params, decode ? "batch" : "tokens");
        const sb_pval *pk = sb_p_find(&r->params, "d_model");
        const sb_pval *pn = sb_p_find(&r->params, "ffn");
        if (!(elem > 0) || !pm || !pk || !pn || !(pm->num >= 1) ||
            !(pk->num >= 1) || !(pn->num >= 1 || (!decode && pn->num == 0)))
            continue;
        double m = pm->num, k = pk->num, n = pn->num > 0 ? pn->num : 4 * k;
        /* the product's time: the weights over their rate (decode), the
         * FLOPs over the FLOP rate (llm) */
        double work = decode ? k * n * elem : 2.0 * m * k * n;
        double rate = decode ? sb__metric(r, "weight_GBps_best") * 1e9
                             : sb__metric(r, "GFLOPs_best") * 1e9;
        double med = decode ? sb__metric(r, "weight_GBps") * 1e9
                            : sb__metric(r, "GFLOPs") * 1e9;
        if (!(rate > 0) || (sustained && !(med > 0)))
            continue;
        char base[40], name[48];
        snprintf(base, sizeof base, "%s.%s", decode ? "gemv" : "gemm",
                 dt->text);
        const sb_ceilings *cb = sustained ? best : c;
        double one = sb_ceil_at_rows(cb, base, m, NULL, 0);
        if (!(one > 0))
            one = sb_ceil_get(cb, base);
        if (!(one > 0))
            continue;
        double call = fmax(0.0, work / rate - work / one);
        if (sustained)
            call *= rate / med;
        const char *src =
            r->stab_judged && !r->stable ? "measured, unstable" : "measured";
        snprintf(name, sizeof name, "%s.call.%s@%.0f", decode ? "gemv" : "gemm",
                 dt->text, m);
        sb_ceil_set(c, name, call, src);
        snprintf(name, sizeof name, "%s.call.%s", decode ? "gemv" : "gemm",
                 dt->text);
        if (call > sb_ceil_get(c, name) || !sb_ceil_source(c, name)[0])
            sb_ceil_set(c, name, call, src);
        count += 2;
    }
    free(best);
    return count;
}

/* Whether two results agree on every param of `keys` (one both lack
 * agrees) */
static bool sb__same_params(const sb_result *a, const sb_result *b,
                            const char *const *keys, int nkeys)
{
    for (int i = 0; i < nkeys; i++) {
        const sb_pval *x = sb_p_find(&a->params, keys[i]);
        const sb_pval *y = sb_p_find(&b->params, keys[i]);
        if (!x != !y || (x && strcmp(x->text, y->text) != 0))
            return false;
    }
    return true;
}

/* Paged decode attention's cost a call (attn.call, s): two points of the
 * same sequences and heads at b1 < b2 sequences a call (decode alone,
 * chunk=0), their times t1, t2 fitted as t = alpha + b beta: alpha =
 * (t1 b2 - t2 b1) / (b2 - b1), never below 0; of the pair furthest apart.
 * A model's decode calls it once a layer (validate measures one layer's
 * batch beside every layer's in one call). Returns the ceilings set. */
static int sb__ceil_attn_call(const sb_run *run, const char *family,
                              sb_ceilings *c, bool sustained)
{
    static const char *const keys[] = {"lens",     "q_heads",   "kv_heads",
                                       "head_dim", "page_size", "kv_dtype",
                                       "chunk"};
    const sb_result *lo = NULL, *hi = NULL;
    double blo = 0, bhi = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        const sb_pval *b = sb_p_find(&r->params, "batch");
        const sb_pval *ch = sb_p_find(&r->params, "chunk");
        double t = sustained ? r->stats.p50 : r->stats.min;
        if (r->skipped || !r->valid || !sb__in_family(r, family) ||
            strcmp(r->bench, "attention.paged_decode") != 0 || !b ||
            !(b->num >= 1) || (ch && ch->num != 0) || !(t > 0) || !isfinite(t))
            continue;
        for (size_t j = 0; j < run->results.n; j++) {
            const sb_result *q = &run->results.items[j];
            const sb_pval *bq = sb_p_find(&q->params, "batch");
            double tq = sustained ? q->stats.p50 : q->stats.min;
            if (q == r || q->skipped || !q->valid ||
                strcmp(q->bench, r->bench) != 0 || !bq || !(bq->num > b->num) ||
                !(tq > 0) || !isfinite(tq) || !sb__in_family(q, family) ||
                !sb__same_params(r, q, keys, (int)(sizeof keys / sizeof *keys)))
                continue;
            if (!lo || bq->num / b->num > bhi / blo) {
                lo = r, hi = q;
                blo = b->num, bhi = bq->num;
            }
        }
    }
    if (!lo)
        return 0;
    /* from the best samples; sustained, slowed as the one-layer point's
     * median is (the difference of two medians is the noise's) */
    double t1 = lo->stats.min, t2 = hi->stats.min;
    double alpha = fmax(0.0, (t1 * bhi - t2 * blo) / (bhi - blo));
    if (sustained && t1 > 0 && lo->stats.p50 > 0)
        alpha *= lo->stats.p50 / t1;
    sb_ceil_set(c, "attn.call", alpha,
                (lo->stab_judged && !lo->stable) ||
                        (hi->stab_judged && !hi->stable)
                    ? "measured, unstable"
                    : "measured");
    return 1;
}

static int sb__ceil_from_run(const sb_run *run, sb_ceilings *c, bool sustained)
{
    /* a rate's figure: its best sample, or its median when sustained */
    const char *gbps = sustained ? "GBps" : "GBps_best";
    sb_ceilings seen = {0};
    int count = 0;
    char name[40];
    /* One machine: the accelerator's results when the run has any, else
     * the host's; never a mixture (a GEMM ceiling of the CPU under a
     * GPU's bandwidth). */
    const int row = sb__family_row(run);
    const char *family = row < 0 ? "host" : sb__devices[row].backend;
    /* the machine measured: the host's CPU, a CUDA GPU, or a PJRT
     * platform's devices ("tpu", "cuda"/"rocm" GPUs) */
    snprintf(c->kind, sizeof c->kind, "%s",
             row < 0 ? "cpu" : sb__device_kind(run, (size_t)row));
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < run->results.n; i++) {
            const sb_result *r = &run->results.items[i];
            if (r->skipped || !r->valid || !sb__in_family(r, family))
                continue;
            if ((r->stab_judged && !r->stable) != (pass == 1))
                continue;
            const sb_pval *dt = sb_p_find(&r->params, "dtype");
            const char *dtype = dt ? dt->text : "fp64";
            if (strcmp(r->bench, "compute.peak") == 0 ||
                strcmp(r->bench, "compute.gemm") == 0) {
                sb__ceil_compute(r, dtype, pass, sustained, c, &seen, &count);
            } else if (strcmp(r->bench, "memory.sweep") == 0) {
                static const char *lv[] = {"L1", "L2", "L3", "DRAM"};
                const sb_pval *kern = sb_p_find(&r->params, "kernel");
                /* Read-bandwidth plateaus define the memory roofs. */
                if (kern && strcmp(kern->text, "read") != 0)
                    continue;
                for (int l = 0; l < 4; l++) {
                    char m[24];
                    snprintf(m, sizeof m, "%s_GBps", lv[l]);
                    snprintf(name, sizeof name, "bw.%s", lv[l]);
                    sb__best(c, &seen, name, sb__metric(r, m) * 1e9, &count);
                }
            } else if (strcmp(r->bench, "compute.noise") == 0) {
                /* the machine's interruptions: their rate and sizes (the
                 * serving simulator's noise in a calibrated prediction) */
                static const char *const m[6][2] = {
                    {"interrupts_per_s", "noise.rate"},
                    {"interrupt_min_us", "noise.p0_s"},
                    {"interrupt_p50_us", "noise.p50_s"},
                    {"interrupt_p90_us", "noise.p90_s"},
                    {"interrupt_p99_us", "noise.p99_s"},
                    {"interrupt_max_us", "noise.max_s"}};
                if (!sb_result_get(r, "interrupts_per_s"))
                    continue;
                for (int k = 0; k < 6; k++) {
                    double x = sb__metric(r, m[k][0]) * (k ? 1e-6 : 1);
                    if (x >= 0 && isfinite(x)) {
                        sb_ceil_set(c, m[k][1], x,
                                    pass ? "measured, unstable" : "measured");
                        count++;
                    }
                }
            } else if (strcmp(r->bench, "memory.triad") == 0) {
                sb__best(c, &seen, "bw.triad", sb__metric(r, gbps) * 1e9,
                         &count);
            } else if (strcmp(r->bench, "memory.read") == 0) {
                sb__best(c, &seen, "bw.read", sb__metric(r, gbps) * 1e9,
                         &count);
                /* At 4x the last-level cache or more (its note says so) a read
                 * is a DRAM figure, as the run itself took it for bw.DRAM
                 * (memory.c): a sweep's few samples at its largest sizes must
                 * not leave a DRAM roof below what memory.read measured. */
                if (sb__noted(r, ": a DRAM figure"))
                    sb__best(c, &seen, "bw.DRAM", sb__metric(r, gbps) * 1e9,
                             &count);
            } else if (strcmp(r->area, "transfer") == 0) {
                if (strstr(r->bench, "h2d"))
                    sb__best(c, &seen, "host.h2d", sb__metric(r, "GBps") * 1e9,
                             &count);
            } else if (strcmp(r->area, "network") == 0) {
                const sb_pval *sz = sb_p_find(&r->params, "size");
                const char *coll = strchr(r->bench, '.')
                                       ? strchr(r->bench, '.') + 1
                                       : r->bench;
                if (!sz || strcmp(sz->text, "fit") != 0) {
                    /* the link: the fastest point-to-point stream at any
                     * message size (bibw counts both directions) */
                    double bus = sb__metric(r, "busbw_GBps") * 1e9;
                    if (strcmp(coll, "bibw") == 0)
                        bus /= 2;
                    if (strcmp(coll, "bw") == 0 || strcmp(coll, "bibw") == 0 ||
                        strcmp(coll, "pingpong") == 0 ||
                        strcmp(coll, "sendrecv") == 0)
                        sb__best(c, &seen, "net.link.beta_Bps", bus, &count);
                    continue;
                }
                double a = sb__metric(r, "alpha_us"),
                       b = sb__metric(r, "beta_GBps");
                if (!(a > 0 || b > 0) || !isfinite(a) || !isfinite(b * 1e9))
                    continue;
                /* the link's latency: one message's, from ping-pong */
                if (strcmp(coll, "pingpong") == 0 && a > 0) {
                    sb_ceil_set(c, "net.link.alpha_s", a * 1e-6,
                                pass ? "measured, unstable" : "measured");
                    count++;
                }
                /* A fit without a finite beta (time flat in size) says
                 * nothing about bandwidth: keep only its alpha. */
                snprintf(name, sizeof name, "net.%s.alpha_s", coll);
                sb_ceil_set(c, name, a > 0 ? a * 1e-6 : 0, "measured");
                count++;
                if (b > 0 && isfinite(b * 1e9)) {
                    snprintf(name, sizeof name, "net.%s.beta_Bps", coll);
                    sb_ceil_set(c, name, b * 1e9, "measured");
                    count++;
                }
            }
        }
    /* The host's memory is the capacity of a CPU run's only "chip"; a
     * spec's capacity (an accelerator's) is left alone; a PJRT device's is
     * what its plugin reports. */
    double mem = 0;
    if (row < 0)
        mem = json_number_value(
            json_object_get(json_object_get(run->system, "memory"), "bytes"));
    else
        mem = json_number_value(
            sb__device_fact(run, (size_t)row, "device_memory_bytes"));
    if (mem > 0 && !(sb_ceil_get(c, "mem.bytes") > 0)) {
        sb_ceil_set(c, "mem.bytes", mem, "sysinfo");
        count++;
    }
    return count + sb__ceil_call(run, family, c, sustained) +
           sb__ceil_attn_call(run, family, c, sustained);
}

int sb_ceil_from_run(const sb_run *run, sb_ceilings *c)
{
    return sb__ceil_from_run(run, c, false);
}

int sb_ceil_from_run_sustained(const sb_run *run, sb_ceilings *c)
{
    return sb__ceil_from_run(run, c, true);
}

/* dtype's efficiency f into by: the best of its points */
static void sb__calib_dtype(sb_calib_dtypes *by, const char *dtype, double f)
{
    int k = 0;
    while (k < by->n && strcmp(by->dtype[k], dtype) != 0)
        k++;
    if (k == by->n) {
        if (by->n == SB_CALIB_MAX_DTYPES)
            return;
        snprintf(by->dtype[k], sizeof by->dtype[k], "%s", dtype);
        by->eff[k] = 0;
        by->n++;
    }
    by->eff[k] = fmax(by->eff[k], f);
}

int sb_calib_from_run(const sb_run *run, const sb_hw_spec *hw,
                      double eff[SB_CALIB_N], sb_calib_dtypes *by, char *src,
                      size_t len, sb_err *err)
{
    const char *family = sb_run_device_family(run);
    bool host = strcmp(family, "host") == 0;
    if (host != (strcmp(hw->kind, "cpu") == 0))
        return sb_fail(err, SB_EINVAL,
                       "run %s measured %s, but %s is a %s spec: a run "
                       "calibrates the datasheet of the machine it measured",
                       run->run_id, host ? "the host's CPU" : "an accelerator",
                       hw->name, hw->kind);
    double bw = hw->n_levels ? hw->level[hw->n_levels - 1].bw_Bps : 0;
    /* collectives: within one host the scale-up link, across hosts a
     * chip's share of the node's scale-out, in two levels where several
     * ranks share a host */
    json_t *topo =
        run->config ? json_object_get(run->config, "topology") : NULL;
    json_int_t hosts = json_integer_value(json_object_get(topo, "hosts"));
    double out_chip =
        hw->chips_per_node > 0 ? hw->scaleout_Bps_node / hw->chips_per_node : 0;
    double link = hosts > 1 ? out_chip : hw->scaleup_Bps;
    double best_peak = 0;
    for (int k = 0; k < SB_CALIB_N; k++)
        eff[k] = 0;
    if (by)
        by->n = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        if (r->skipped || !r->valid || !sb__in_family(r, family))
            continue;
        const sb_pval *dt = sb_p_find(&r->params, "dtype");
        const sb_pval *shape = sb_p_find(&r->params, "shape");
        if (strcmp(r->bench, "compute.gemm") == 0 &&
            !(shape && strcmp(shape->text, "decode") == 0)) {
            /* the sustained (median) rate of the widest-peaked dtype the
             * run measured, at its best size */
            double peak = sb_hw_peak(hw, dt ? dt->text : "fp64");
            double f = sb__metric(r, "GFLOPs") * 1e9;
            if (!(f > 0))
                f = sb__metric(r, "TFLOPs") * 1e12;
            if (!(peak > 0) || !(f > 0))
                continue;
            if (by)
                sb__calib_dtype(by, dt ? dt->text : "fp64", f / peak);
            if (peak < best_peak)
                continue;
            if (peak > best_peak)
                eff[SB_CALIB_MATMUL] = 0;
            best_peak = peak;
            eff[SB_CALIB_MATMUL] = fmax(eff[SB_CALIB_MATMUL], f / peak);
        } else if (strcmp(r->bench, "memory.read") == 0 && bw > 0) {
            eff[SB_CALIB_MEMORY] =
                fmax(eff[SB_CALIB_MEMORY], sb__metric(r, "GBps") * 1e9 / bw);
        } else if (strcmp(r->bench, "attention.paged_decode") == 0 && bw > 0) {
            eff[SB_CALIB_ATTENTION] =
                fmax(eff[SB_CALIB_ATTENTION], sb__metric(r, "GBps") * 1e9 / bw);
        } else if (strcmp(r->area, "network") == 0 && link > 0) {
            /* the bus bandwidth (median) of the size that gets most of
             * the link (a collective's large-message regime) over the
             * speed of light's: across hosts with several ranks on each,
             * the two-level collective's (the model's, sb_net_two_level) */
            double sol = link;
            const char *dot = strchr(r->bench, '.');
            int op = dot ? sb_netop_from_name(dot + 1) : -1;
            int n = (int)sb__metric(r, "ranks");
            if (hosts > 1 && op >= 0 && n > hosts && n % hosts == 0) {
                double spb =
                    sb_net_two_level((sb_netop)op, n, n / (int)hosts,
                                     hw->scaleup_Bps, out_chip, NULL, NULL);
                if (spb > 0 && isfinite(spb))
                    sol = sb_net_busbw_factor((sb_netop)op, n) / spb;
            }
            eff[SB_CALIB_NETWORK] = fmax(
                eff[SB_CALIB_NETWORK], sb__metric(r, "busbw_GBps") * 1e9 / sol);
        }
    }
    int n = 0;
    size_t l = (size_t)snprintf(
        src, len, "run %s against the %s datasheet:", run->run_id, hw->name);
    static const char *const what[SB_CALIB_N] = {
        "compute.gemm median", "attention.paged_decode median",
        "memory.read median", "collective busbw median"};
    for (int k = 0; k < SB_CALIB_N; k++) {
        if (!(eff[k] > 0))
            continue;
        if (l < len)
            l += (size_t)snprintf(src + l, len - l, "%s %s %.3f", n ? ";" : "",
                                  what[k], eff[k]);
        eff[k] = fmin(1.0, fmax(0.01, eff[k]));
        n++;
    }
    for (int k = 0; by && by->n > 1 && k < by->n; k++) {
        if (l < len)
            l += (size_t)snprintf(src + l, len - l, "%s %s GEMM %.3f",
                                  k ? "," : ";", by->dtype[k], by->eff[k]);
        by->eff[k] = fmin(1.0, fmax(0.01, by->eff[k]));
    }
    if (!n)
        return sb_fail(err, SB_EINVAL,
                       "run %s has no result that calibrates a ceiling "
                       "(compute.gemm, memory.read, attention.paged_decode, "
                       "a collective)",
                       run->run_id);
    return n;
}

double sb_ceil_main_bw(const sb_ceilings *c, const char **name)
{
    static const char *order[] = {"bw.HBM", "bw.DRAM", "bw.read", "bw.triad"};
    for (int i = 0; i < 4; i++) {
        double v = sb_ceil_get(c, order[i]);
        if (v > 0) {
            if (name)
                *name = order[i];
            return v;
        }
    }
    if (name)
        *name = "none";
    return 0;
}

double sb_ceil_peak(const sb_ceilings *c, const char *dtype, const char **name)
{
    static const char *chain[] = {"fp8",  "bf16", "fp16",
                                  "tf32", "fp32", "fp64"};
    int start = 0;
    for (int i = 0; i < 6; i++)
        if (strcmp(chain[i], dtype) == 0)
            start = i;
    char nm[40];
    snprintf(nm, sizeof nm, "peak.%s", dtype);
    double v = sb_ceil_get(c, nm);
    if (v > 0) {
        if (name) {
            for (int i = 0; i < c->n; i++)
                if (strcmp(c->c[i].name, nm) == 0)
                    *name = c->c[i].name;
        }
        return v;
    }
    for (int i = start; i < 6; i++) {
        snprintf(nm, sizeof nm, "peak.%s", chain[i]);
        v = sb_ceil_get(c, nm);
        if (v > 0) {
            for (int j = 0; j < c->n; j++)
                if (strcmp(c->c[j].name, nm) == 0 && name)
                    *name = c->c[j].name;
            return v;
        }
    }
    if (name)
        *name = "none";
    return 0;
}

const char *sb_hw_spec_for_device(const char *dev)
{
    /* TPUs by the kind their runtime reports ("TPU v5 lite" is v5e,
     * "TPU v5" alone v5p, "TPU v6 lite" v6e, "TPU7x") */
    if (dev && strncmp(dev, "TPU", 3) == 0) {
        if (strstr(dev, "v5 lite") || strstr(dev, "v5e"))
            return "tpu-v5e";
        if (strstr(dev, "v5p") || strcmp(dev, "TPU v5") == 0)
            return "tpu-v5p";
        if (strstr(dev, "v6 lite") || strstr(dev, "v6e"))
            return "tpu-v6e";
        if (strstr(dev, "7x"))
            return "tpu7x";
        return NULL;
    }
    if (dev && strstr(dev, "MI300X"))
        return "mi300x";
    /* Blackwell: the Grace-attached GB200 (NVL72) and the HGX B200 */
    if (dev && strstr(dev, "GB200"))
        return "gb200-nvl72";
    if (dev && strstr(dev, "B200"))
        return "b200";
    /* the SXM parts only: a PCIe or NVL card, or a Grace Hopper
     * superchip, has other figures (give --hw or --run for those) */
    if (!dev || strstr(dev, "GH200") || strstr(dev, "PCIe") ||
        strstr(dev, "NVL"))
        return NULL;
    if (strstr(dev, "A100") && strstr(dev, "SXM") && strstr(dev, "80GB"))
        return "a100-sxm";
    if (strstr(dev, "H800"))
        return "h800-sxm";
    if (strstr(dev, "H200"))
        return "h200-sxm";
    if (strstr(dev, "H100") && (strstr(dev, "HBM3") || strstr(dev, "SXM")))
        return "h100-sxm";
    return NULL;
}
