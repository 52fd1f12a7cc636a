/*
 * publish_int.h — what the two files of the published site share: the
 * text buffer its pages are written into (HTML-escaped where the text
 * comes from the store), numbers as text, and the two charts.
 *
 *   publish.c       options, files, series, the pages and the site
 *   publish_plot.c  the buffer, numbers as text, the sparkline and the
 *                   timeline (SVG)
 */
#ifndef SOLBENCH_REPORT_PUBLISH_INT_H
#define SOLBENCH_REPORT_PUBLISH_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/changes.h"

/* Points of a sparkline at most: a longer series is averaged into this
 * many buckets (one per 1.2 px of its 120). */
#define SPARK_POINTS 100

/* A page being written: text grown as needed; oom set when it could not
 * grow (the page is then not written). */
typedef struct pub_buf {
    char *s;
    size_t n, cap;
    bool oom;
} pub_buf;

void sb_pub_printf(pub_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s as it is. */
void sb_pub_put(pub_buf *b, const char *s);
/* s HTML-escaped (& < > " ' as entities). */
void sb_pub_esc(pub_buf *b, const char *s);
/* A figure, a percentage with its sign, an ISO time as "YYYY-MM-DD
 * hh:mm:ss": into buf, returned. */
const char *sb_pub_fig(double v, char *buf, size_t len);
const char *sb_pub_pct(double v, char *buf, size_t len);
const char *sb_pub_time(const char *iso, char *buf, size_t len);
/* A series' sparkline (the index's history column), as inline SVG. */
void sb_pub_sparkline(pub_buf *b, const sb_series *s);
/* A series' timeline (its page's plot), as inline SVG. */
void sb_pub_timeline(pub_buf *b, const sb_series *s);

#endif
