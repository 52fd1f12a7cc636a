/*
 * publish.h — the store's history as a static site: an index of every
 * series (one point on one machine) with its latest figure, a sparkline,
 * its trend and its newest change point; one page per series with its
 * timeline, its runs and its change points; the stored traces. Plain
 * HTML, inline SVG and one shared style.css, nothing fetched from
 * elsewhere, so the site opens from file:// as from any web server.
 * docs/HISTORY.md ("The published site").
 */
#ifndef SOLBENCH_PUBLISH_H
#define SOLBENCH_PUBLISH_H

#include <stddef.h>

#include "solbench/changepoint.h"
#include "solbench/error.h"
#include "solbench/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_publish_opts {
    /* runs started at or after this UTC time: "YYYY-MM-DD", optionally
     * with "Thh:mm[:ss]" and a "Z", or "Nd" (N days before now); NULL:
     * every run */
    const char *since;
    const char *bench;    /* a glob of benchmark names; NULL: every one */
    int last;             /* the N newest runs; 0: all of them */
    const sb_cp_opts *cp; /* the change-point detector's; NULL: defaults */
} sb_publish_opts;

typedef struct sb_publish_stats {
    size_t pages;             /* HTML pages written (the index included) */
    size_t series;            /* series published */
    size_t change_points;     /* over every series */
    size_t traces;            /* stored traces listed */
    unsigned long long bytes; /* every file written, style.css included */
    double seconds;           /* wall time of sb_publish */
} sb_publish_stats;

/* Checks what sb_publish is given before anything is read: the options
 * (a bad --since, a negative last) and `dir`, which must be a directory
 * or absent. SB_EINVAL with one line naming what is wrong. */
int sb_publish_check(const char *dir, const sb_publish_opts *o, sb_err *err);

/* Writes the site of `st`'s history into `dir` (created with its missing
 * parents, mode 0755): index.html, style.css and p-<16 hex>.html per
 * series (the hex an FNV-1a hash of its point key and fingerprint, so a
 * series keeps its page's name from one publication to the next). Each
 * file is written beside its final name and renamed over it, so a reader
 * never sees half a page; pages of series no longer published are left
 * as they are. o: NULL for every run with the default detector. out (may
 * be NULL) gets what was written. */
int sb_publish(sb_store *st, const char *dir, const sb_publish_opts *o,
               sb_publish_stats *out, sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
