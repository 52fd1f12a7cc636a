/*
 * publish_int.h — what the two files of the published site share: the
 * numbers as text and the two charts (the pages are written into the
 * report's sb_buf, escaped by sb_buf_esc where the text comes from the
 * store).
 *
 *   publish.c       options, files, series, the pages and the site
 *   publish_plot.c  numbers as text, the sparkline and the timeline (SVG)
 */
#ifndef SOLBENCH_REPORT_PUBLISH_INT_H
#define SOLBENCH_REPORT_PUBLISH_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/changes.h"
#include "solbench/report.h"

/* Points of a sparkline at most: a longer series is averaged into this
 * many buckets (one per 1.2 px of its 120). */
#define SPARK_POINTS 100

/* A figure, a percentage with its sign, an ISO time as "YYYY-MM-DD
 * hh:mm:ss": into buf, returned. */
const char *sb_pub_fig(double v, char *buf, size_t len);
const char *sb_pub_pct(double v, char *buf, size_t len);
const char *sb_pub_time(const char *iso, char *buf, size_t len);
/* A series' sparkline (the index's history column), as inline SVG. */
void sb_pub_sparkline(sb_buf *b, const sb_series *s);
/* A series' timeline (its page's plot), as inline SVG. */
void sb_pub_timeline(sb_buf *b, const sb_series *s);

#endif
