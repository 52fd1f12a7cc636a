/*
 * fuzz_trace.c — libFuzzer harness of the profiler-trace reader
 * (src/trace/trace_read.c: sb_trace_read_mem, plain JSON or gzip) and of
 * everything a read trace goes through in `trace show`: the FLOP/byte
 * rules, the analysis against a machine with every ceiling set, the table,
 * JSON and CSV, and a diff of the trace with itself.
 *
 * Invariants: a read trace's events have finite, non-negative durations
 * and string ids in range; the analysis's times are finite and not
 * negative, busy time within the window, communication overlap within the
 * communication time, and a diff with itself changes nothing.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "solbench/trace.h"

static sb_ceilings fz_c;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sb_ceil_set(&fz_c, "peak.fp32", 100e12, "datasheet");
    sb_ceil_set(&fz_c, "peak.bf16", 1000e12, "datasheet");
    sb_ceil_set(&fz_c, "bw.HBM", 3e12, "datasheet");
    sb_ceil_set(&fz_c, "host.h2d", 50e9, "datasheet");
    sb_ceil_set(&fz_c, "net.scaleup.beta_Bps", 450e9, "datasheet");
    sb_ceil_set(&fz_c, "net.scaleup.domain", 8, "datasheet");
    sb_ceil_set(&fz_c, "net.scaleout.beta_Bps", 50e9, "datasheet");
    return 0;
}

static int fin(double x)
{
    return isfinite(x) && x >= 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sb_trace t;
    sb_err e = {0};
    if (sb_trace_read_mem(data, size, "fuzz.json", &t, &e) != 0) {
        FZ_INVARIANT(e.msg[0] != '\0', "refused without a message");
        FZ_INVARIANT(strchr(e.msg, '\n') == NULL, "a message of two lines");
        return 0;
    }
    for (size_t i = 0; i < t.n; i++) {
        const sb_tr_event *ev = &t.ev[i];
        FZ_INVARIANT(fin(ev->dur) && isfinite(ev->ts), "event %zu: time", i);
        FZ_INVARIANT(ev->name >= 0 && (size_t)ev->name < t.nstr,
                     "event %zu: name id", i);
        FZ_INVARIANT(ev->track >= 0 && (size_t)ev->track < t.ntracks,
                     "event %zu: track", i);
    }
    sb_tr_analysis a;
    if (sb_trace_analyze(&t, &fz_c, &a, &e) == 0) {
        FZ_INVARIANT(fin(a.window_s) && fin(a.busy_s) && fin(a.idle_s),
                     "window");
        FZ_INVARIANT(a.busy_s <= a.window_s * (1 + 1e-9) + 1e-12,
                     "busy %g > window %g", a.busy_s, a.window_s);
        FZ_INVARIANT(a.comm_overlap_s <= a.comm_s * (1 + 1e-9) + 1e-12,
                     "overlap %g > communication %g", a.comm_overlap_s,
                     a.comm_s);
        for (size_t i = 0; i < a.nrows; i++) {
            const sb_tr_row *r = &a.rows[i];
            FZ_INVARIANT(r->count > 0 && fin(r->t_s), "row %zu: time", i);
            FZ_INVARIANT(isfinite(r->at_stake_s) && r->at_stake_s >= 0 &&
                             r->at_stake_s <= r->t_s * (1 + 1e-9) + 1e-12,
                         "row %zu: at stake %g of %g", i, r->at_stake_s,
                         r->t_s);
        }
        sb_tr_print(fz_sink(), &t, &a, 0);
        (void)sb_tr_write_json(&t, &a, "fuzz", fz_tmp_file("trace", "json"),
                               &e);
        (void)sb_tr_write_csv(&a, fz_tmp_file("trace", "csv"), &e);
        sb_tr_print_diff(fz_sink(), &a, &a, 5);
        sb_tr_analysis_free(&a);
    }
    sb_trace_free(&t);
    return 0;
}
