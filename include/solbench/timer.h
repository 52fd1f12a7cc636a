/*
 * timer.h — the monotonic clock every measurement uses, and a measurement of
 * its resolution and read overhead at start-up (STREAM's checktick idea).
 */
#ifndef SOLBENCH_TIMER_H
#define SOLBENCH_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds from an arbitrary origin, CLOCK_MONOTONIC. */
double sb_now(void);
/* Nanoseconds, CLOCK_MONOTONIC. */
uint64_t sb_now_ns(void);

typedef struct sb_clock_info {
    double resolution_s; /* smallest observed non-zero step between reads */
    double overhead_s;   /* median cost of one read */
    double reported_s;   /* clock_getres() */
} sb_clock_info;

/* Measures the clock: takes many back-to-back reads and keeps the smallest
 * non-zero difference (resolution) and the median read cost (overhead). */
void sb_clock_measure(sb_clock_info *ci);

#ifdef __cplusplus
}
#endif

#endif
