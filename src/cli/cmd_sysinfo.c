/*
 * cmd_sysinfo.c — `solbench sysinfo [--json]`: the machine fingerprint, as a
 * readable summary or as the JSON document every run stores beside its
 * results. The library gathers everything; this file only parses the
 * arguments and prints.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "solbench/runner.h"
#include "solbench/sysinfo.h"

#define SB__SYSINFO_USAGE                                                      \
    "usage: solbench sysinfo [--json] [--pjrt-plugin PATH]"

int sb_cmd_sysinfo(int argc, char **argv)
{
    bool as_json = false, plugin_flag = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--pjrt-plugin", &v))) {
            if (m < 0)
                return 2;
            if (!*v)
                return sb_cli_usage("sysinfo", "--pjrt-plugin: an empty path");
            setenv("SOLBENCH_PJRT_PLUGIN", v, 1);
            plugin_flag = true;
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            printf(
                "%s\n  Prints the machine fingerprint: CPU, topology, caches, "
                "memory, ISA,\n  measured clock, OS, build, libraries and "
                "performance-relevant\n  environment; --json prints it as "
                "one JSON document. With a PJRT plugin\n  (--pjrt-plugin "
                "PATH or $SOLBENCH_PJRT_PLUGIN) its devices as well:\n  "
                "platform, kind, count, memory, runtime and API versions.\n",
                SB__SYSINFO_USAGE);
            return 0;
        } else {
            return sb_cli_usage("sysinfo", "unknown argument '%s' (%s)",
                                argv[i], SB__SYSINFO_USAGE);
        }
    }

    if (sb_cli_pjrt_named("sysinfo", plugin_flag))
        return 2;
    sb_sysinfo si;
    sb_sysinfo_collect(&si, true);
    sb_sysinfo_add_backends(&si, NULL);
    json_t *doc = sb_sysinfo_json(&si);
    if (!doc) {
        fprintf(stderr, "solbench sysinfo: out of memory\n");
        return 2;
    }
    int rc = 0;
    if (as_json) {
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) !=
            0)
            rc = 2;
        putchar('\n');
    } else {
        sb_sysinfo_print(stdout, doc);
    }
    json_decref(doc);
    if (fflush(stdout) != 0)
        rc = 2;
    return rc;
}
