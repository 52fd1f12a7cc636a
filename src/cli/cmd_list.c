/*
 * cmd_list.c — `solbench list [--area A]`: every benchmark with its
 * parameters, their defaults and what the suites set.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/bench.h"

static const char *type_name(sb_ptype t)
{
    switch (t) {
    case SB_P_INT:
        return "int";
    case SB_P_SIZE:
        return "size";
    case SB_P_FLOAT:
        return "float";
    case SB_P_BOOL:
        return "bool";
    default:
        return "string";
    }
}

static void print_params(const sb_param_def *d, const char *indent)
{
    for (; d && d->name; d++) {
        printf("%s%-14s %-6s default %-18s %s", indent, d->name,
               type_name(d->type), d->def ? d->def : "-",
               d->help ? d->help : "");
        if (d->choices)
            printf(" (%s)", d->choices);
        putchar('\n');
    }
}

static void print_suites(const char *quick, const char *full,
                         const char *indent)
{
    if (quick)
        printf("%squick suite: %s\n", indent, quick);
    if (full)
        printf("%sfull suite:  %s\n", indent, full);
}

/* One benchmark: its backends on the first line, then what every backend
 * takes, then what each backend adds or sets otherwise. */
static void print_bench(const sb_bench *b)
{
    char bes[96] = "";
    for (const sb_impl *const *im = sb_bench_impls(b); *im; im++) {
        size_t n = strlen(bes);
        snprintf(bes + n, sizeof bes - n, "%s%s", n ? ", " : "",
                 (*im)->backend);
    }
    printf("%-26s [%s%s%s] %s\n", b->name, bes,
           b->flags & SB_BF_QUICK ? "; quick" : "",
           b->flags & (SB_BF_QUICK | SB_BF_FULL) ? ", full" : "",
           b->desc ? b->desc : "");
    print_params(b->params, "    ");
    print_suites(b->quick, b->full, "    ");
    for (const sb_impl *const *im = sb_bench_impls(b); *im; im++) {
        const sb_impl *i = *im;
        if (!i->desc && !i->params && !i->quick && !i->full && !i->suite_spec)
            continue;
        printf("  on %s:%s%s\n", i->backend, i->desc ? " " : "",
               i->desc ? i->desc : "");
        print_params(i->params, "    ");
        /* an impl's own suites, computed for this machine where it does */
        if (i->quick || i->full || i->suite_spec)
            print_suites(sb_suite_spec(b, i, SB_SUITE_QUICK),
                         sb_suite_spec(b, i, SB_SUITE_FULL), "    ");
    }
}

int sb_cmd_list(int argc, char **argv)
{
    const char *area = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m = sb_cli_opt(argc, argv, &i, "--area", &v);
        if (m < 0)
            return 2;
        if (m > 0) {
            area = v;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            puts("usage: solbench list [--area A]");
            return 0;
        }
        return sb_cli_usage("list", "unknown option '%s'", argv[i]);
    }
    if (area) {
        bool known = false;
        for (const char *const *a = sb_areas(); *a; a++)
            known |= strcmp(*a, area) == 0;
        if (!known)
            return sb_cli_usage("list", "--area %s: unknown area", area);
    }
    for (const char *const *a = sb_areas(); *a; a++) {
        if (area && strcmp(*a, area) != 0)
            continue;
        bool header = false;
        for (const sb_bench *const *b = sb_registry(); *b; b++) {
            if (strcmp((*b)->area, *a) != 0)
                continue;
            if (!header) {
                printf("== %s\n", *a);
                header = true;
            }
            print_bench(*b);
        }
        if (!header && strcmp(*a, "network") == 0) {
#ifndef SB_HAVE_MPI
            printf("== network\n  (not built: MPI was not found when this "
                   "solbench was built)\n");
#endif
        }
    }
    return 0;
}
