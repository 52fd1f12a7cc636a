/*
 * cmd_roofline.c — `solbench roofline [--run ID | --results FILE]
 * [--hw NAME] [--db PATH] [--svg FILE] [--png FILE]`: every measured
 * kernel with its arithmetic intensity, achieved and attainable
 * performance, % of SOL, binding ceiling and class, and the hierarchical
 * roofline chart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "solbench/hw.h"
#include "solbench/report.h"

int sb_cmd_roofline(int argc, char **argv)
{
    const char *run = NULL, *results = NULL, *hw = NULL, *svg = NULL,
               *png = NULL, *db = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf(
                "usage: solbench roofline [--run ID | --results FILE] "
                "[--hw NAME] [--db PATH]\n"
                "                         [--svg FILE] [--png FILE]\n"
                "  --run ID        a stored run (id, prefix, baseline, last)\n"
                "  --results FILE  a run document (solbench run --json)\n"
                "  --hw NAME       a hardware spec (solbench hw list); the "
                "run's measurements override it\n"
                "  --db PATH       results database (default $SOLBENCH_DB, "
                "else\n"
                "                  $XDG_DATA_HOME/solbench/results.db)\n"
                "  --svg FILE      write the hierarchical roofline chart\n"
                "  --png FILE      the same as PNG (needs chromium)\n");
            return 0;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--run", &run)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--results", &results)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--hw", &hw)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--db", &db)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--svg", &svg)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--png", &png)) != 0) {
            if (r < 0)
                return 2;
            continue;
        }
        return sb_cli_usage("roofline",
                            "unknown argument '%s' (usage: "
                            "roofline [--run ID | --results FILE] [--hw NAME]"
                            " [--db PATH] [--svg FILE] [--png FILE])",
                            argv[i]);
    }
    sb_err err = {0};
    /* The chart's files are tried before anything is read or printed. */
    struct stat sid, pid;
    if ((svg && sb_cli_check_out("--svg", svg, &sid, &err)) ||
        (png && sb_cli_check_out("--png", png, &pid, &err)) ||
        (svg && png && sb_cli_same_out(svg, &sid, png, &pid) &&
         sb_fail(&err, SB_EINVAL, "--svg %s and --png %s name the same file",
                 svg, png)))
        return sb_cli_error(&err);
    sb_ceilings c;
    sb_run r;
    int have = 0;
    char desc[256];
    if (sb_machine_open(hw, results, run, db, &c, NULL, &r, &have, desc,
                        sizeof desc, &err) != 0)
        return sb_cli_error(&err);
    sb_roof_row *rows = NULL;
    int n = 0;
    if (have)
        sb_roof_table(&r, &c, &rows, &n);
    printf("machine model: %s\n", desc);
    int placed = sb_roof_print(stdout, rows, n, &c);
    int points = sb_roof_points(rows, n);
    int code = 0;
    if (have && placed == 0) {
        /* nothing measured sits under these roofs: say so, draw nothing */
        fflush(stdout);
        sb_fail(&err, SB_EINVAL,
                "run %s has nothing to place on a roofline (%zu result%s: "
                "kernels with FLOPs or bytes place, from compute, memory, "
                "attention, moe, ops; collectives need an alpha-beta fit, "
                "a size sweep under mpirun)",
                r.run_id, r.results.n, r.results.n == 1 ? "" : "s");
        code = sb_cli_error(&err);
    } else if ((svg || png) && points == 0) {
        fflush(stdout);
        sb_fail(&err, SB_EINVAL,
                "%s: no kernel with both FLOPs and bytes to chart (the "
                "table above places what the run has)",
                svg ? svg : png);
        code = sb_cli_error(&err);
    } else if (svg || png) {
        sb_buf b = {0};
        sb_svg_roofline(&b, &c, rows, n, 1000, 600);
        if (b.oom)
            sb_fail(&err, SB_ENOMEM, "out of memory drawing the roofline");
        if (b.oom || (svg && sb_svg_write(svg, &b, &err) != 0) ||
            (png && sb_png_write(png, &b, 1000, 600, &err) != 0))
            code = sb_cli_error(&err);
        sb_buf_free(&b);
    }
    free(rows);
    if (have)
        sb_run_free(&r);
    return code;
}
