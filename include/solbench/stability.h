/*
 * stability.h — whether a result's figure can be trusted to repeat: a
 * verdict beside `valid`, from its samples (spread, two clusters, drift
 * between the first and the last third, far outliers) and from what the
 * machine did while they were taken (another load on the CPUs, time stolen
 * by the hypervisor, a clock that moved). A correct figure measured in a
 * noisy stretch is still correct, but it is not the machine's figure: it
 * must not pass for one. Formulas and thresholds: docs/METRICS.md
 * (stability).
 */
#ifndef SOLBENCH_STABILITY_H
#define SOLBENCH_STABILITY_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thresholds (docs/METRICS.md). */
#define SB_STAB_CV 0.10          /* coefficient of variation of the samples */
#define SB_STAB_GAP 0.05         /* two clusters: a relative gap this wide */
#define SB_STAB_DRIFT 0.05       /* median of the last third vs the first */
#define SB_STAB_OUTLIERS 0.10    /* share of samples beyond 3 IQR */
#define SB_STAB_LOAD 0.10        /* other processes' share of all CPUs */
#define SB_STAB_STEAL 0.05       /* share of CPU time the hypervisor stole */
#define SB_STAB_FREQ 0.10        /* relative change of a core's clock */
#define SB_STAB_HISTORY 0.10     /* from the median of its point's history */
#define SB_STAB_HISTORY_MIN 1    /* earlier steady results needed to judge */
#define SB_STAB_HISTORY_WINDOW 5 /* newest steady results the median takes */
#define SB_STAB_HISTORY_RETRO_MIN 3 /* steady results before withdrawing */
/* An earlier stable mark is withdrawn beyond this from the point's median
 * now: the median still moves as runs arrive, and a mark kept at 7 %
 * stays within SB_STAB_HISTORY of where it settles (ten quick suites on
 * a noisy 2-vCPU guest: 3 points of 114 went past 10 % at 0.10, none at
 * 0.07; docs/METRICS.md). */
#define SB_STAB_HISTORY_RETRO 0.07
/* How a withdrawn mark's reason begins in a run document's "stability":
 * a later run's verdict, not part of the run as it was measured (an
 * import holds two copies of a run the same apart from these). */
#define SB_STAB_WITHDRAWN "withdrawn by run "

enum {
    SB_UNSTABLE_CV = 1u << 0,
    SB_UNSTABLE_BIMODAL = 1u << 1,
    SB_UNSTABLE_DRIFT = 1u << 2,
    SB_UNSTABLE_OUTLIERS = 1u << 3,
    SB_UNSTABLE_LOAD = 1u << 4,
    SB_UNSTABLE_STEAL = 1u << 5,
    SB_UNSTABLE_FREQ = 1u << 6,
    SB_UNSTABLE_CEILING = 1u << 7, /* above its own binding ceiling */
    SB_UNSTABLE_PROBE = 1u << 8,   /* the machine ran slow around it */
    SB_UNSTABLE_HISTORY = 1u << 9, /* far from its stable runs' median */
};

/* The machine around a result's sampling window; a field < 0 is unknown
 * (no /proc/stat, no cpufreq). */
typedef struct sb_stab_ctx {
    double other_load;         /* other processes' CPU time / (wall x CPUs) */
    double steal;              /* stolen time / (wall x CPUs) */
    double freq_change;        /* largest relative change of a core's clock */
    double freq_from, freq_to; /* GHz of that core, before and after */
} sb_stab_ctx;

/* A snapshot of the counters sb_stab_context compares. */
typedef struct sb_stab_snap {
    double wall;     /* monotonic seconds */
    double self_cpu; /* this process's user + system seconds */
    unsigned long long busy, steal, total; /* /proc/stat, all CPUs, ticks */
    int ncpu;
    bool have_stat;
    double freq[256]; /* kHz per CPU from cpufreq; 0: none */
    int nfreq;
} sb_stab_snap;

void sb_stab_snapshot(sb_stab_snap *s);
/* The context between two snapshots. When `own_ranks` > 1 the other
 * ranks' polling is expected load and is not held against the result. */
void sb_stab_context(const sb_stab_snap *a, const sb_stab_snap *b,
                     int own_ranks, sb_stab_ctx *out);

/* ---- the host taking freed memory back ---------------------------------
 * A VM with free page reporting (virtio-balloon: Firecracker and cloud
 * guests) hands its host each large block of memory it frees, about two
 * seconds after the free; while the host takes them the guest's vCPUs
 * stall for milliseconds at a time (docs/METRICS.md, "Stability"). */

/* KiB this machine has reported to its host so far, or -1 when it does
 * not report (bare metal, a VM without the feature). */
double sb_mem_reported_kib(void);
/* Waits until the machine has reported nothing for quiet_s seconds, at
 * most max_s; *waited_s gets the seconds waited, *kib the KiB reported
 * meanwhile. Returns false when it does not report (nothing waited). */
bool sb_mem_settle(double quiet_s, double max_s, double *waited_s, double *kib);

/* ---- the probe -------------------------------------------------------------
 * A result's own samples can be steady while the machine is not its usual
 * self over the whole point (a neighbour on the core's other hyperthread,
 * on the memory bus): the point then measures a slower machine, steadily.
 * The probe times a short all-thread FMA loop and a read of a buffer
 * larger than the caches between points; a point whose probes before and
 * after fall more than SB_STAB_PROBE below the best probe of the run ran
 * on a slower machine than the run's others, and is flagged. */
#define SB_STAB_PROBE 0.10
#define SB_PROBE_MAX 1024

typedef struct sb_probe {
    double *buf; /* the read buffer */
    size_t n;    /* its doubles */
    int threads;
    int count;                  /* probes taken */
    double flops[SB_PROBE_MAX]; /* FMA rate, FLOP/s (best of its tries) */
    double bytes[SB_PROBE_MAX]; /* read rate, B/s */
} sb_probe;

/* Allocates the probe's buffer (4x the last-level cache, at least 64 MiB,
 * at most 512 MiB and 5 % of physical memory). 0, or SB_ENOMEM. */
int sb_probe_open(sb_probe *p, int threads, sb_err *err);
void sb_probe_close(sb_probe *p);
/* Takes one probe (about 15 ms) and appends it; returns its index, or -1
 * when full. */
int sb_probe_take(sb_probe *p);
/* Flags the results out->items[from..to) unstable when the probes `a` and
 * `b` around them fall more than SB_STAB_PROBE below the run's best (host
 * results only: a device's figures do not depend on the CPU's speed). */
void sb_probe_judge(const sb_probe *p, int a, int b, sb_result_list *out,
                    size_t from, size_t to);

/* The verdict on samples (seconds, in the order taken) and their context:
 * sets r->stable, r->stab_flags and r->stab_why ("cv 17% (> 10%); another
 * load took 45% of the CPUs"). Results with fewer than 2 samples (summary
 * rows, skipped) are left unjudged. Pure apart from r. */
void sb_stability_judge(sb_result *r, const sb_stab_ctx *ctx);

/* Against the point's history on this machine: the medians (p50,
 * seconds) of its newest earlier steady results (stable by their own
 * evidence); when there are at least SB_STAB_HISTORY_MIN and r's median
 * differs from theirs by more than SB_STAB_HISTORY, r is flagged (a
 * figure that would move the next time: the machine was not its usual
 * self for the whole run). */
void sb_stability_history(sb_result *r, const double *p50, int n);

/* The remedies that fit the flags, in one line: "pin threads or isolate
 * the CPU; a longer --min-time; quiet the machine". */
const char *sb_stab_remedy(unsigned flags, char *buf, size_t len);

/* Marks r unstable for a reason found after the fact (a figure above its
 * own ceiling), keeping the reasons it had. */
void sb_stability_flag(sb_result *r, unsigned flag, const char *why);

#ifdef __cplusplus
}
#endif

#endif
