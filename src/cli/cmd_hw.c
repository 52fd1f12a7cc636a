/*
 * cmd_hw.c — `solbench hw list` and `solbench hw show NAME`: the hardware
 * specs in data/hw with their sources.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/fleet_show.h"
#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/output.h"

static void sb__show(const sb_hw_spec *h)
{
    printf("%s — %s (%s)\n", h->name, h->title, h->kind);
    printf("  dense peaks:");
    for (int i = 0; i < h->n_peaks; i++)
        printf("%s %s %.4g TFLOP/s", i ? "," : "", h->peak[i].dtype,
               h->peak[i].flops / 1e12);
    printf("\n");
    for (int i = 0; i < h->n_levels; i++) {
        printf("  memory %-5s %8.0f GB/s", h->level[i].level,
               h->level[i].bw_Bps / 1e9);
        if (h->level[i].bytes > 0)
            printf(", %.0f GB", h->level[i].bytes / 1e9);
        double peak = h->n_peaks ? h->peak[0].flops : 0;
        if (peak > 0)
            printf("   (ridge for %s: %.0f FLOP/B)", h->peak[0].dtype,
                   peak / h->level[i].bw_Bps);
        printf("\n");
    }
    if (h->scaleup_Bps > 0)
        printf("  scale-up  %s: %.0f GB/s per chip per direction, %.1f us, "
               "%d chips per domain\n",
               h->scaleup_name, h->scaleup_Bps / 1e9, h->scaleup_alpha_s * 1e6,
               h->scaleup_domain);
    if (h->host_Bps > 0)
        printf("  host link %s: %.0f GB/s per chip\n", h->host_link,
               h->host_Bps / 1e9);
    if (h->scaleout_Bps_node > 0)
        printf("  scale-out %s: %.0f GB/s per node of %d chips (%.1f GB/s "
               "per chip), %.1f us\n",
               h->scaleout_name, h->scaleout_Bps_node / 1e9, h->chips_per_node,
               h->scaleout_Bps_node / 1e9 / h->chips_per_node,
               h->scaleout_alpha_s * 1e6);
    if (h->vector_flops > 0 || h->exp_ops > 0) {
        printf("  vector    ");
        if (h->vector_flops > 0)
            printf("%.1f TFLOP/s fp32 beside the matrix unit",
                   h->vector_flops / 1e12);
        else
            printf("no vector rate");
        if (h->exp_ops > 0)
            printf(", %.2f T transcendentals/s\n", h->exp_ops / 1e12);
        else
            printf(", no transcendental rate\n");
    }
    if (h->price_chip_hour > 0)
        printf("  price     $%.2f per chip-hour (indicative)\n",
               h->price_chip_hour);
    printf("  source: %s\n  notes: %s\n", h->source, h->notes);
}

/* hw calibrate NAME --fleet FLEET: the network's efficiency from a fleet
 * run's all-reduce between hosts (the largest size measured): its bus
 * bandwidth a host over the spec's scale-out a node. */
static int sb__calibrate_fleet(const char *name, const char *ref,
                               const char *db, const char *out)
{
    sb_err err = {0};
    struct stat os;
    if (out && sb_cli_check_out("-o", out, &os, &err))
        return sb_cli_error(&err);
    sb_hw_spec h;
    if (sb_hw_load(name, &h, &err) != 0)
        return sb_cli_error(&err);
    if (!(h.scaleout_Bps_node > 0))
        return sb_cli_usage("hw",
                            "calibrate %s --fleet: the spec has no "
                            "scale-out bandwidth to hold the fleet's "
                            "against",
                            name);
    sb_store *st = NULL;
    if (!sb_cli_fleet_is_file(ref) &&
        sb_cli_fleet_store(db, SB_STORE_RO, &st, &err))
        return sb_cli_error(&err);
    sb_fleet_report r;
    int rc = sb_cli_fleet_load(st, ref, &r, &err);
    sb_store_close(st);
    if (rc)
        return sb_cli_error(&err);
    const sb_fleet_coll *best = NULL;
    for (size_t k = 0; k < r.ncoll; k++) {
        const sb_fleet_coll *c = &r.coll[k];
        if (strcmp(c->level, "hosts") == 0 && c->valid && c->seconds > 0 &&
            strcmp(c->op, "allreduce") == 0 &&
            (!best || c->bytes > best->bytes))
            best = c;
    }
    if (!best) {
        sb_fleet_report_free(&r);
        return sb_cli_usage("hw",
                            "calibrate --fleet %s: no valid all-reduce "
                            "between hosts in it (fleet run "
                            "--collectives measures them)",
                            ref);
    }
    double busbw =
        sb_net_busbw(SB_NET_ALLREDUCE, best->ranks, best->bytes, best->seconds);
    double eff[SB_CALIB_N] = {0};
    eff[SB_CALIB_NETWORK] = busbw / h.scaleout_Bps_node;
    char src[400];
    snprintf(src, sizeof src,
             "fleet %s: all-reduce of %.4g MiB between %d hosts, busbw "
             "%.4g GB/s a host over the spec's %.4g GB/s a node",
             r.id, best->bytes / 1048576.0, best->ranks, busbw / 1e9,
             h.scaleout_Bps_node / 1e9);
    printf("fleet %s, per level (the fleet's own figures):\n", r.id);
    if (r.out_Bps > 0)
        printf("  scale-out  beta %.4g GB/s a host one way, alpha %.4g us "
               "(the link matrix)\n",
               r.out_Bps / 1e9, r.out_alpha_s * 1e6);
    if (r.up_Bps > 0)
        printf("  scale-up   beta %.4g GB/s a rank (busbw), alpha %.4g us "
               "(all-reduce inside the hosts)\n",
               r.up_Bps / 1e9, r.up_alpha_s * 1e6);
    printf("  network efficiency %.3g of %s's scale-out%s\n",
           eff[SB_CALIB_NETWORK], h.name,
           eff[SB_CALIB_NETWORK] > 1      ? " (above the spec: written as 1)"
           : eff[SB_CALIB_NETWORK] < 0.01 ? " (below a calibration's range: "
                                            "written as 0.01; is the fleet "
                                            "that machine?)"
                                          : "");
    sb_fleet_report_free(&r);
    rc = sb_cli_write_calibration(
        out, h.name, eff, NULL, src,
        "written by solbench hw calibrate --fleet: the fleet's all-reduce "
        "between hosts over the datasheet's scale-out",
        &err);
    if (rc)
        return sb_cli_error(&err);
    if (out)
        printf("calibration written to %s (%s)\n", out, src);
    return 0;
}

/* hw calibrate NAME (--run ID | --results FILE | --fleet FLEET) [--db PATH]
 * [-o FILE] */
static int sb__calibrate(int argc, char **argv)
{
    const char *run_ref = NULL, *results = NULL, *db = NULL, *out = NULL,
               *name = NULL, *fleet = NULL;
    for (int i = 2; i < argc; i++) {
        int m;
        if ((m = sb_cli_opt(argc, argv, &i, "--run", &run_ref)) ||
            (m = sb_cli_opt(argc, argv, &i, "--fleet", &fleet)) ||
            (m = sb_cli_opt(argc, argv, &i, "--results", &results)) ||
            (m = sb_cli_opt(argc, argv, &i, "--db", &db)) ||
            (m = sb_cli_opt(argc, argv, &i, "-o", &out))) {
            if (m < 0)
                return 2;
            continue;
        }
        if (argv[i][0] == '-' || name)
            return sb_cli_usage("hw",
                                "unexpected argument '%s' (usage: hw "
                                "calibrate NAME --run ID|--results "
                                "FILE [-o FILE])",
                                argv[i]);
        name = argv[i];
    }
    if (name && fleet && !run_ref && !results)
        return sb__calibrate_fleet(name, fleet, db, out);
    if (!name || (!run_ref && !results) || fleet)
        return sb_cli_usage("hw", "usage: hw calibrate NAME --run ID|--results "
                                  "FILE|--fleet FLEET [--db PATH] [-o FILE]");
    sb_err err = {0};
    struct stat os;
    if (out && sb_cli_check_out("-o", out, &os, &err))
        return sb_cli_error(&err);
    sb_hw_spec h;
    if (sb_hw_load(name, &h, &err) != 0)
        return sb_cli_error(&err);
    sb_ceilings c;
    sb_run run;
    int have = 0;
    char desc[256], src[400];
    int rc = sb_machine_open(NULL, results, run_ref, db, &c, NULL, &run, &have,
                             desc, sizeof desc, &err);
    if (rc)
        return sb_cli_error(&err);
    double eff[SB_CALIB_N];
    sb_calib_dtypes by;
    rc = sb_calib_from_run(&run, &h, eff, &by, src, sizeof src, &err);
    if (rc > 0)
        rc = sb_cli_write_calibration(
            out, h.name, eff, &by, src,
            "written by solbench hw calibrate: the run's median rates over "
            "the datasheet's",
            &err);
    if (have)
        sb_run_free(&run);
    if (rc)
        return sb_cli_error(&err);
    if (out)
        printf("calibration written to %s (%s)\n", out, src);
    return 0;
}

int sb_cmd_hw(int argc, char **argv)
{
    sb_err err = {0};
    if (argc > 1 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: solbench hw list        the hardware specs in data/hw\n"
               "       solbench hw show NAME   one spec: dense peaks, memory, "
               "links, price, sources\n"
               "       solbench hw calibrate NAME --run ID|--results FILE "
               "[--db PATH] [-o FILE]\n"
               "                               the efficiencies a run of that "
               "machine shows\n"
               "                               against its datasheet, as a "
               "calibration file\n"
               "                               (predict --calibration)\n"
               "       solbench hw calibrate NAME --fleet FLEET [--db PATH] "
               "[-o FILE]\n"
               "                               the network's, from a fleet "
               "run's all-reduce\n"
               "                               between hosts (fleet run "
               "--collectives)\n");
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "list") == 0) {
        if (argc > 2)
            return sb_cli_usage("hw",
                                "unexpected argument '%s' (usage: hw "
                                "list | hw show NAME)",
                                argv[2]);
        char **names;
        int n;
        if (sb_hw_list(&names, &n, &err) != 0)
            return sb_cli_error(&err);
        printf("%-12s %-32s %10s %10s %8s %12s\n", "name", "title", "bf16 TF/s",
               "mem GB/s", "mem GB", "link GB/s/dir");
        for (int i = 0; i < n; i++) {
            sb_hw_spec h;
            if (sb_hw_load(names[i], &h, &err) == 0)
                printf("%-12s %-32s %10.0f %10.0f %8.0f %12.0f\n", h.name,
                       h.title, sb_hw_peak(&h, "bf16") / 1e12,
                       h.level[h.n_levels - 1].bw_Bps / 1e9, h.mem_bytes / 1e9,
                       h.scaleup_Bps / 1e9);
            else
                fprintf(stderr, "solbench: %s\n", err.msg);
            free(names[i]);
        }
        free(names);
        return 0;
    }
    if (strcmp(argv[1], "show") == 0) {
        if (argc != 3)
            return sb_cli_usage("hw", "usage: hw show NAME (see hw list)");
        sb_hw_spec h;
        if (sb_hw_load(argv[2], &h, &err) != 0)
            return sb_cli_error(&err);
        sb__show(&h);
        return 0;
    }
    if (strcmp(argv[1], "calibrate") == 0)
        return sb__calibrate(argc, argv);
    return sb_cli_usage("hw",
                        "unknown subcommand '%s' (list | show NAME | "
                        "calibrate NAME)",
                        argv[1]);
}
