/*
 * compare.h — comparing two runs point by point: the two-sided
 * Mann–Whitney U test on raw samples, verdicts (improved, regressed,
 * unchanged, not comparable), the like-with-like check of configs and
 * machine fingerprints, and the renderings of a comparison (table, JSON,
 * JUnit XML, Markdown). docs/STORE.md explains the statistics.
 */
#ifndef SOLBENCH_COMPARE_H
#define SOLBENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "solbench/error.h"
#include "solbench/output.h"
#include "solbench/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- verdicts ------------------------------------------------------------ */

#define SB_CMP_ALPHA 0.01       /* default significance level */
#define SB_CMP_THRESHOLD 5.0    /* default minimal change, percent */
#define SB_CMP_MIN_SAMPLES 5    /* fewer per side: "too few samples" */
#define SB_CMP_MAX_BASE_RUNS 64 /* runs of one baseline judged together */

typedef enum sb_verdict {
    SB_VERDICT_UNCHANGED = 0,
    SB_VERDICT_IMPROVED,
    SB_VERDICT_REGRESSED,
    SB_VERDICT_NOT_COMPARABLE
} sb_verdict;

const char *sb_verdict_name(sb_verdict v);

typedef struct sb_cmp_opts {
    double alpha;         /* p below this counts as significant */
    double threshold_pct; /* |change| must exceed this, percent */
    bool allow_mismatch;  /* compare anyway, mark lines "mismatched" */
} sb_cmp_opts;

void sb_cmp_opts_default(sb_cmp_opts *o);

/* One matched (or unmatched) point. */
typedef struct sb_cmp_line {
    char bench[64];
    char backend[16];
    char params[256]; /* human text of the point */
    char key[512];    /* sb_point_key */
    char metric[40];  /* headline metric compared */
    char unit[16];
    bool higher_better;
    double a_value, b_value; /* headline figures (median based) */
    double change_pct;       /* (b - a) / a * 100 of the headline */
    size_t na, nb;           /* samples per side */
    sb_mwu test;
    bool tested;      /* the U test ran */
    bool few_samples; /* fewer than SB_CMP_MIN_SAMPLES on a side */
    bool mismatched;  /* the runs' configs or machines differ */
    sb_verdict verdict;
    char why[160];         /* reason for not comparable, or a warning */
    int ia, ib;            /* index in A's and B's results, -1 absent */
    int base_runs;         /* baseline runs judged together (0: one run) */
    int base_aside;        /* of them, set aside as far from the others */
    double spread_pct;     /* (max - min) / mean of the kept runs' figures, % */
    double threshold_used; /* the larger of the threshold and the spread */
} sb_cmp_line;

typedef struct sb_cmp {
    sb_cmp_line *lines;
    size_t n;
    int count[4]; /* lines per verdict */
    bool mismatched;
    double alpha, threshold_pct;
    char a_id[64], b_id[64]; /* run ids (or file names) */
} sb_cmp;

void sb_cmp_free(sb_cmp *c);

/* Judges one line from raw samples (seconds per iteration). Uses
 * line->higher_better and, when both are > 0, line->a_value/b_value for
 * the change; otherwise fills them with the sample medians (seconds). */
void sb_cmp_judge(sb_cmp_line *line, const double *a, size_t na,
                  const double *b, size_t nb, const sb_cmp_opts *o);

/* Judges one pair of results of the same point: not comparable when one
 * is invalid or skipped; else compares their headline metric (as
 * sb_result_headline picks it, direction included) and their samples. */
void sb_cmp_judge_results(sb_cmp_line *line, const sb_result *a,
                          const sb_result *b, const sb_cmp_opts *o);
/* Judges a point against a baseline of k runs (ra[k - 1] the newest):
 * the U test on all their samples pooled against b's, the change against
 * the median of their headline figures, and a change counted only beyond
 * both the threshold and the spread between the runs' figures (max - min
 * over their mean): samples of one run share its conditions, so a test on
 * them alone understates how much a run moves from one to the next. A run
 * far from the others (at an end, its gap to the next more than twice the
 * range of the rest; at most max(1, k / 5) of k >= 3) is set aside, its
 * samples and figure alike. k = 1 is sb_cmp_judge_results. */
void sb_cmp_judge_multi(sb_cmp_line *line, const sb_result *const *ra, int k,
                        const sb_result *b, const sb_cmp_opts *o);
/* Recounts c->count after verdicts were changed. */
void sb_cmp_recount(sb_cmp *c);

/* Matches every point of A with B (same bench, backend and parameters;
 * repeated points in order of appearance) and judges each pair. Points
 * found on one side only are "not comparable". */
int sb_compare_runs(const sb_run *a, const sb_run *b, const sb_cmp_opts *o,
                    sb_cmp *out, sb_err *err);

/* sb_compare_runs against the newest of a baseline's runs (base[nbase -
 * 1]; base oldest first), each matched point judged by sb_cmp_judge_multi
 * over every run that has it. */
int sb_compare_baseline(const sb_run *base, int nbase, const sb_run *b,
                        const sb_cmp_opts *o, sb_cmp *out, sb_err *err);

/* ---- like with like ------------------------------------------------------ */

typedef struct sb_diff_list {
    char **lines; /* "config.threads: 2 vs 1" (owned) */
    size_t n, cap;
} sb_diff_list;

void sb_diff_free(sb_diff_list *d);
/* Appends a line for every JSON path where a and b differ (objects walked
 * by key, arrays by index). `path` prefixes the lines. */
void sb_json_diff(const json_t *a, const json_t *b, const char *path,
                  sb_diff_list *d);
/* The fields that make two runs not comparable: every difference of what
 * the configs measure (selection, parameters, threads, ranks, topology,
 * sampling — not the software stack), and, when the machines are not of
 * one class, the fingerprint and every differing field of the system
 * descriptions. Returns the count. */
size_t sb_runs_mismatch(const sb_run *a, const sb_run *b, sb_diff_list *d);
/* What changed between two runs that still compare: the software stack
 * (solbench, compiler, flags, the GEMM libraries) and, on one machine
 * class, the kernel release. They change how fast things run, not what a
 * figure means: a regression they cause is a real one to see. */
size_t sb_runs_soft_diff(const sb_run *a, const sb_run *b, sb_diff_list *d);
/* Whether two runs' machines are of one class: the same fingerprint, or
 * fingerprints that differ only in the kernel release. */
bool sb_runs_same_machine_class(const sb_run *a, const sb_run *b);

/* ---- renderings ---------------------------------------------------------- */

void sb_cmp_print(FILE *f, const sb_cmp *c);
int sb_cmp_write_json(const sb_cmp *c, const char *path, sb_err *err);
/* A JUnit report of one errored testcase `name` (check refused before it
 * measured: the CI still gets a report that says why). */
int sb_junit_write_error(const char *path, const char *suite, const char *name,
                         const char *message, sb_err *err);
int sb_cmp_write_junit(const sb_cmp *c, const char *suite, double seconds,
                       const char *path, sb_err *err);
int sb_cmp_write_markdown(const sb_cmp *c, const char *title, const char *path,
                          sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
