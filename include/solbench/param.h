/*
 * param.h — benchmark parameters: definitions, values, sizes and sweeps.
 *
 * A benchmark declares its parameters as a NULL-terminated array of
 * sb_param_def. The user sets them with `-p key=value`; a value may be a
 * list `a,b,c` or a geometric range `lo..hi:xF` (or arithmetic `lo..hi:+S`),
 * and every parameter with more than one value makes the run a sweep over
 * the cartesian product. Sizes take B, KiB, MiB, GiB, TiB, PiB (powers of
 * two) and KB, MB, GB, TB, PB (powers of ten); a bare number is bytes.
 */
#ifndef SOLBENCH_PARAM_H
#define SOLBENCH_PARAM_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_ptype {
    SB_P_INT,   /* integer */
    SB_P_SIZE,  /* byte count with unit */
    SB_P_FLOAT, /* real number */
    SB_P_STR,   /* one of `choices` (a '|'-separated list) or free text */
    SB_P_BOOL   /* 0/1, true/false, yes/no, on/off */
} sb_ptype;

typedef struct sb_param_def {
    const char *name;
    sb_ptype type;
    const char *def;     /* default value text (may itself be a list) */
    double min, max;     /* inclusive bounds for numbers; both 0: unbounded */
    const char *choices; /* SB_P_STR: "a|b|c", or NULL for free text */
    const char *help;
} sb_param_def;

#define SB_MAX_PARAMS 24
#define SB_PNAME_LEN 32
#define SB_PTEXT_LEN 96

typedef struct sb_pval {
    char name[SB_PNAME_LEN];
    char text[SB_PTEXT_LEN]; /* canonical text: integers and sizes as digits */
    sb_ptype type;
    double num; /* numeric value (bytes for sizes; 0/1 bools) */
} sb_pval;

/* One parameter point: a value for every parameter of a benchmark. */
typedef struct sb_params {
    int n;
    sb_pval v[SB_MAX_PARAMS];
} sb_params;

/* Lookup by name. Asking for a name the benchmark does not declare is a
 * programming error: these abort with a message. */
int64_t sb_p_int(const sb_params *p, const char *name);
double sb_p_num(const sb_params *p, const char *name);
const char *sb_p_str(const sb_params *p, const char *name);
bool sb_p_bool(const sb_params *p, const char *name);
/* NULL when absent. */
const sb_pval *sb_p_find(const sb_params *p, const char *name);
/* A value as a number, also when a results file stored it as text
 * ("8192"); 0 for NULL or text that is not a number ("fit"). */
double sb_pval_num(const sb_pval *v);
/* Sets a value in a point (parsing text by the point's type). */
int sb_p_set(sb_params *p, const char *name, const char *text, sb_err *err);

/* Whether a list of items joined by `sep` has an empty one (at either end
 * or two separators in a row); an empty list has none. strtok_r skips
 * empty items, so every list split with it is checked with this first. */
bool sb_list_has_empty(const char *list, char sep);
/* A decimal number (what strtod reads, but not its hexadecimal, inf or
 * nan forms), spaces allowed around it; *range: beyond a double's normal
 * range. False when s is not one. */
bool sb_parse_decimal(const char *s, double *v, bool *range);

/* Parses a size ("64MiB", "2GB", "4096") into bytes. `what` names the value
 * in the error message. */
int sb_parse_size(const char *s, double *bytes, const char *what, sb_err *err);
/* Parses one scalar value of the given type, checking def's bounds. */
int sb_parse_value(const sb_param_def *def, const char *s, sb_pval *out,
                   sb_err *err);
/* Formats a byte count with a binary unit: "64MiB", "1.5GiB", "512B" (the
 * way parameters are written, so the text parses back). */
const char *sb_fmt_size(double bytes, char *buf, int len);
/* Formats a value with a decimal SI prefix and `sig` significant digits:
 * "1.23 GFLOP/s" for (1.23e9, "FLOP/s", 3). */
const char *sb_fmt_si(double v, const char *unit, int sig, char *buf,
                      size_t len);

/* ---- sweeps -------------------------------------------------------------- */

#define SB_MAX_SWEEP_VALUES 256

/* The user's `-p key=value` settings, unparsed until a benchmark is known.
 * A key may carry a scope, "SCOPE:key", SCOPE a benchmark name
 * (ops.softmax) or an area (ops): the setting applies to those
 * benchmarks only, and over an unscoped setting of the same key. */
#define SB_PKEY_LEN 64
typedef struct sb_pset {
    int n;
    struct {
        char key[SB_PKEY_LEN];
        char value[256];
    } kv[SB_MAX_PARAMS];
} sb_pset;

/* Adds "key=value" text to a set; a later setting of the same key wins. */
int sb_pset_add(sb_pset *ps, const char *kv, sb_err *err);
/* Splits a set key into its scope (empty when it has none) and name. */
void sb_pset_key_split(const char *key, char *scope, size_t scope_len,
                       const char **name);
/* Whether a scope (as above; empty: every benchmark) covers a benchmark. */
bool sb_pscope_covers(const char *scope, const char *bench);
/* The settings that apply to one benchmark, scopes taken off: unscoped
 * keys first, then the scoped ones that cover it (which win). */
void sb_pset_for_bench(const sb_pset *user, const char *bench, sb_pset *out);
/* Adds "k1=v1 k2=v2" (space separated; the form suites use). */
int sb_pset_add_all(sb_pset *ps, const char *spec, sb_err *err);

/* Expands a value list ("a,b", "4KiB..1GiB:x2", "1..8:+1") into values of
 * the def's type. Returns the count, or a negative code. */
int sb_expand_values(const sb_param_def *def, const char *spec, sb_pval *out,
                     int max_out, sb_err *err);

/* Expands defaults, then `layers` (applied in order, later wins: e.g. suite
 * defaults, then the user's -p) into every point of the cartesian product.
 * Keys that the benchmark does not declare are an error unless the layer is
 * marked lenient (suite defaults shared by several benchmarks).
 * *points is malloc'ed; the caller frees it. */
int sb_params_expand(const char *bench, const sb_param_def *defs,
                     const sb_pset *const *layers, const bool *lenient,
                     int nlayers, sb_params **points, int *npoints,
                     sb_err *err);

/* "size=64 MiB threads=2" style text of a point, for tables. */
const char *sb_params_fmt(const sb_params *p, char *buf, int len);

#ifdef __cplusplus
}
#endif

#endif
