/*
 * plateau.h — finds the levels of a bandwidth-versus-working-set curve
 * (the L1, L2, L3 and DRAM plateaus of a memory sweep) as a pure function
 * of (size, bandwidth) points, and labels them against the cache sizes the
 * operating system reports.
 *
 * The rule (docs/METRICS.md, section memory): work on log-bandwidth,
 * smoothed by a running median of 3 so one outlier cannot split a level;
 * a plateau is a maximal run of consecutive points whose smoothed values
 * stay within a band of relative width `threshold` (max/min <= 1 +
 * threshold) with at least `min_points` points; points that fit no
 * plateau are transitions. Neighbouring plateaus whose medians differ by
 * less than `threshold` are merged (a noisy stretch split in two), and a
 * plateau slower than the one after it is dropped (bandwidth falls as the
 * working set grows; a slower start is loop overhead at tiny sizes).
 */
#ifndef SOLBENCH_PLATEAU_H
#define SOLBENCH_PLATEAU_H

#ifdef __cplusplus
extern "C" {
#endif

#define SB_PLATEAU_MAX 8

typedef struct sb_plateau {
    int first, last;   /* indices of its first and last point in the input */
    double start, end; /* sizes of those points (bytes) */
    double bw;         /* median bandwidth of its points (input units) */
    char label[8];     /* "L1", "L2", "L3", "DRAM"; "" before labelling */
} sb_plateau;

typedef struct sb_plateau_opts {
    double threshold; /* relative level change: default 0.15 */
    int min_points;   /* fewest points in a plateau: default 2 */
} sb_plateau_opts;

/* Detects plateaus of bw[i] over size[i] (sizes strictly increasing,
 * bandwidths > 0, n <= 4096). opts may be NULL for the defaults. Writes at
 * most max_out plateaus, in order of size, and returns their count, or
 * SB_EINVAL for bad input. */
int sb_plateau_detect(const double *size, const double *bw, int n,
                      const sb_plateau_opts *opts, sb_plateau *out,
                      int max_out);

/* Labels detected plateaus. cache[l] (l = 1..nlevels) is the capacity in
 * working-set bytes the OS reports for cache level l as the measuring
 * threads see it (0: unknown); max_size is the largest size measured.
 * The last plateau is "DRAM" when max_size >= 2x the largest reported
 * cache (or no cache is reported and there are 2+ plateaus); the others
 * are matched in order to the cache levels whose capacity is nearest (in
 * log scale) to where they end. Writes one human note per disagreement
 * with the OS (a level with no plateau, a plateau ending more than 4x
 * away from its level's capacity, DRAM speed inside a reported cache)
 * into notes[0..max_notes-1] and returns the number of notes written. */
int sb_plateau_label(sb_plateau *p, int np, const double *cache, int nlevels,
                     double max_size, char (*notes)[160], int max_notes);

#ifdef __cplusplus
}
#endif

#endif
