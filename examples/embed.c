/*
 * embed.c — a program of its own that links the installed libsolbench:
 * one memory benchmark measured and checked as `solbench run` would,
 * without the tool.
 *
 *   cc embed.c $(pkg-config --cflags --libs solbench) -o embed && ./embed
 *
 * Prints the triad's median bandwidth at 1 MiB, whether its output
 * verified and whether the figure was stable; exits 0 when it verified.
 */
#include <stdio.h>

#include "solbench/bench.h"
#include "solbench/library.h"
#include "solbench/param.h"
#include "solbench/result.h"
#include "solbench/runner.h"

int main(void)
{
    sb_library_init(); /* the benchmarks and backends of this build */

    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.min_time = 0.05;

    sb_err err = {0};
    sb_selection sel;
    if (sb_select(NULL, "memory.triad", SB_SUITE_QUICK, "cpu", &sel, &err)) {
        fprintf(stderr, "embed: %s\n", err.msg);
        return 2;
    }
    sb_pset user = {0};
    sb_plan plan = {0};
    sb_result_list out = {0};
    int rc = sb_pset_add(&user, "size=1MiB", &err);
    if (!rc)
        rc = sb_plan_build(&sel, &user, &ctx, &plan, &err);
    if (!rc)
        rc = sb_run_plan(&plan, &ctx, &out, &err);
    if (rc) {
        fprintf(stderr, "embed: %s\n", err.msg);
    } else {
        for (size_t i = 0; i < out.n; i++) {
            const sb_result *r = &out.items[i];
            const sb_metric *m = sb_result_get(r, "GBps");
            /* a figure says whether it repeated (stability.h) */
            printf("%s %.1f GB/s, %d samples, valid %s, stable %s\n", r->bench,
                   m ? m->value : 0.0, (int)r->n_samples,
                   r->valid ? "yes" : "no", r->stable ? "yes" : "no");
            if (!r->valid)
                rc = 1;
        }
    }
    sb_results_free(&out);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
    return rc ? (rc == 1 ? 1 : 2) : 0;
}
