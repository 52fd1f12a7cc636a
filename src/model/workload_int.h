/*
 * workload_int.h — what the files of the workload reader share: the reading
 * context (sb_wl_rd), the one-line error that names the file, the JSON path
 * and where the field is, and the typed field readers every section goes
 * through.
 *
 *   workload.c        the entry points: a document or a file read into a
 *                     workload, calibration files, the parameter counts
 *   workload_field.c  the error line, the typed field readers, the
 *                     format's fields and the unknown-field check
 *   workload_read.c   the document's sections, one reader each
 *   workload_check.c  the consistency of the sections with each other
 *   workload_set.c    --set and --sweep keys: aliases, paths, the edit
 */
#ifndef SOLBENCH_WORKLOAD_INT_H
#define SOLBENCH_WORKLOAD_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "solbench/error.h"
#include "solbench/workload.h"

/* The reading context: where the document came from, for messages. */
typedef struct sb_wl_rd {
    const char *where; /* file name for messages */
    const char *text;  /* the file's text, for line:column (may be NULL) */
    sb_err *err;
    const char *const *sets; /* --set key=value applied to the document */
    int nsets;
} sb_wl_rd;

/* Returns from the calling function with a reader's nonzero result. The
 * caller declares `int rc`. */
#define TRY(x)                                                                 \
    do {                                                                       \
        if ((rc = (x)) != 0)                                                   \
            return rc;                                                         \
    } while (0)

/* Fails with "FILE: PATH: WHAT (where)": the --set that gave the field, or
 * its line and column when its key appears once in the file's text. */
int sb_wl_bad(const sb_wl_rd *rd, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The object `key` of `parent` at `path`; NULL when absent (*rc set when
 * `required`) or not an object (*rc set). */
json_t *sb_wl_obj(const sb_wl_rd *rd, json_t *parent, const char *key,
                  const char *path, bool required, int *rc);
/* Integer field in [lo, hi]; absent → def when !required. `o` may be NULL
 * (an absent object: every field absent). */
int sb_wl_int(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              bool required, long lo, long hi, int def, int *out);
/* Number field in [lo, hi]; absent → def. */
int sb_wl_num(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              double lo, double hi, double def, double *out);
/* true or false; absent → def. */
int sb_wl_bool(const sb_wl_rd *rd, json_t *o, const char *key,
               const char *ppath, bool def, bool *out);
/* String field; `choices` is "a|b|c" or NULL for free text; absent → def
 * ("" for NULL). */
int sb_wl_str(const sb_wl_rd *rd, json_t *o, const char *key, const char *ppath,
              const char *choices, const char *def, char *out, size_t len);
/* The dtypes a workload or a calibration may name. */
#define SB_WL_DTYPES "fp64|fp32|tf32|bf16|fp16|fp8|int8|int4|fp4"
/* A dtype of $.dtypes (out: 8 characters) and its bytes per element. */
int sb_wl_dtype(const sb_wl_rd *rd, json_t *o, const char *key, const char *def,
                char *out, double *bytes);

/* The fields of a training and of an inference job ("a|b|c"). */
extern const char sb_wl_job_train[];
extern const char sb_wl_job_infer[];
/* The fields of the object at `path` ("$.model"), or NULL when the format
 * has no object there. */
const char *sb_wl_fields_of(const char *path, bool inference);
/* Whether `k` is one of the '|'-separated names of `keys` ("*": any). */
bool sb_wl_field_in(const char *keys, const char *k);
/* Refuses keys not among `keys` ("a|b|c") in the object at `path`. */
int sb_wl_known_keys(const sb_wl_rd *rd, json_t *o, const char *path,
                     const char *keys);
/* The same for an object of the workload format. */
int sb_wl_known(const sb_wl_rd *rd, json_t *o, const char *path,
                bool inference);
/* The efficiencies of a calibration at `path`: matmul, attention, memory,
 * network, each in [0.01, 1], 0 where absent. */
int sb_wl_effs(const sb_wl_rd *rd, json_t *o, const char *path, double e[4]);

/* Reads a workload document into *w, checked (sb_wl_check). */
int sb_wl_read(const sb_wl_rd *rd, json_t *doc, sb_workload *w);
/* Checks the sections of a read workload against each other: the degrees
 * of parallelism against the chips, the model and the batch; the mesh. */
int sb_wl_check(const sb_wl_rd *rd, const sb_workload *w);

/* The document path a --set key names: an alias's, or the key itself. */
const char *sb_wl_set_path(const char *key);

#endif
