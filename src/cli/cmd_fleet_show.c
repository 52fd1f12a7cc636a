/*
 * cmd_fleet_show.c — the stored fleets: `fleet show [FLEET] [--baseline
 * FLEET]` judges a fleet run again (its own rules, or --threshold) and
 * against a baseline fleet (each host against its own earlier figures),
 * `fleet list`, `fleet baseline NAME [FLEET]`; and the report's outputs,
 * which `fleet run` shares (docs/FLEET.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cli/cli.h"
#include "cli/fleet_show.h"
#include "solbench/report.h"

int sb_cli_fleet_check_outs(const sb_cli_fleet_out *o)
{
    const char *path[3] = {o->json && strcmp(o->json, "-") != 0 ? o->json
                                                                : NULL,
                           o->junit, o->html};
    const char *opt[3] = {"--json", "--junit", "--html"};
    struct stat id[3];
    sb_err err = {0};
    for (int i = 0; i < 3; i++) {
        if (path[i] && sb_cli_check_out(opt[i], path[i], &id[i], &err))
            return sb_cli_error(&err);
        for (int j = 0; j < i && path[i]; j++)
            if (path[j] && sb_cli_same_out(path[j], &id[j], path[i], &id[i]))
                return sb_cli_usage("fleet",
                                    "%s %s and %s %s name the same "
                                    "file",
                                    opt[j], path[j], opt[i], path[i]);
    }
    return 0;
}

int sb_cli_fleet_emit(const sb_fleet_report *r, const sb_cli_fleet_out *o,
                      double seconds)
{
    sb_err err = {0};
    bool to_stdout = o->json && strcmp(o->json, "-") == 0;
    FILE *human = to_stdout ? stderr : stdout;
    if (!o->quiet)
        sb_fleet_print(human, r);
    else
        sb_fleet_print_verdict(human, r);
    int code = sb_fleet_unhealthy(r) ? 1 : 0;
    if (o->json) {
        json_t *d = sb_fleet_to_json(r);
        if (sb_cli_write_json(d, to_stdout ? NULL : o->json, JSON_INDENT(2),
                              "the fleet report", &err))
            code = sb_cli_error(&err);
        json_decref(d);
    }
    if (o->junit && sb_fleet_write_junit(r, o->junit, seconds, &err))
        code = sb_cli_error(&err);
    if (o->html && sb_fleet_write_html(r, o->html, &err))
        code = sb_cli_error(&err);
    return code;
}

bool sb_cli_fleet_is_file(const char *ref)
{
    struct stat s;
    size_t n = strlen(ref);
    return stat(ref, &s) == 0 || strchr(ref, '/') ||
           (n > 5 && strcmp(ref + n - 5, ".json") == 0);
}

int sb_cli_fleet_load(sb_store *st, const char *ref, sb_fleet_report *r,
                      sb_err *err)
{
    if (sb_cli_fleet_is_file(ref))
        return sb_fleet_read_file(ref, r, err);
    if (!st)
        return sb_fail(err, SB_EINVAL, "fleet '%s': no store open", ref);
    char id[64], *doc = NULL;
    int rc = sb_store_fleet_get(st, ref, id, sizeof id, &doc, err);
    if (rc == 0) {
        char where[96];
        snprintf(where, sizeof where, "fleet %s", id);
        rc = sb_fleet_read_text(doc, where, r, err);
    }
    free(doc);
    return rc;
}

static const char show_help[] =
    "usage: solbench fleet show [FLEET] [--baseline FLEET] [--threshold PCT]\n"
    "                           [--json FILE] [--junit FILE] [--html FILE]\n"
    "                           [--db PATH] [--quiet]\n"
    "  a stored fleet run judged again: its hosts against their peers,\n"
    "  and with --baseline each host against its own figures in another\n"
    "  fleet run. FLEET: 'last' (default), a fleet baseline's name, a\n"
    "  fleet id or its prefix, or a file fleet run --json wrote.\n"
    "  Exit 0 healthy, 1 something flagged, 2 bad usage or input.\n"
    "  --threshold PCT  the floor of the bar (default: the run's, 10)\n"
    "  --json FILE      the report (solbench.fleet/1; - stdout)\n"
    "  --junit FILE     JUnit XML       --html FILE  the fleet page\n";

int sb_cli_fleet_store(const char *db, int mode, sb_store **st, sb_err *err)
{
    char path[4096];
    /* a store that is not there is not made by a command that reads */
    if (sb_store_path(db, path, sizeof path, err))
        return err->code;
    if (!sb_store_exists(path))
        return sb_fail(err, SB_EINVAL,
                       "database %s holds no fleet runs yet (it does not "
                       "exist; solbench fleet run stores them)",
                       path);
    return sb_store_open_mode(path, mode, st, err);
}

int sb_cmd_fleet_show(int argc, char **argv)
{
    const char *ref = NULL, *base = NULL, *db = NULL, *thr = NULL;
    sb_cli_fleet_out o = {0};
    for (int i = 2; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(show_help, stdout);
            return 0;
        }
        if ((m = sb_cli_opt(argc, argv, &i, "--baseline", &base)) ||
            (m = sb_cli_opt(argc, argv, &i, "--db", &db)) ||
            (m = sb_cli_opt(argc, argv, &i, "--threshold", &thr)) ||
            (m = sb_cli_opt(argc, argv, &i, "--json", &o.json)) ||
            (m = sb_cli_opt(argc, argv, &i, "--junit", &o.junit)) ||
            (m = sb_cli_opt(argc, argv, &i, "--html", &o.html))) {
            if (m < 0)
                return 2;
            continue;
        }
        if (strcmp(argv[i], "--quiet") == 0)
            o.quiet = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return sb_cli_usage("fleet", "show: unknown option '%s'", argv[i]);
        else if (ref)
            return sb_cli_usage("fleet",
                                "show: one fleet at a time ('%s' "
                                "and '%s')",
                                ref, argv[i]);
        else
            ref = argv[i];
    }
    double floor = 0;
    if (thr && sb_cli_number("fleet", "--threshold", thr, 0.1, 1000, &floor))
        return 2;
    if (!ref)
        ref = "last";
    int code = sb_cli_fleet_check_outs(&o);
    if (code)
        return code;
    sb_err err = {0};
    sb_store *st = NULL;
    if ((!sb_cli_fleet_is_file(ref) || (base && !sb_cli_fleet_is_file(base))) &&
        sb_cli_fleet_store(db, SB_STORE_RO, &st, &err))
        return sb_cli_error(&err);
    sb_fleet_report r = {0}, b = {0};
    bool have_r = false, have_b = false;
    int rc = sb_cli_fleet_load(st, ref, &r, &err);
    have_r = rc == 0;
    if (rc == 0 && base) {
        rc = sb_cli_fleet_load(st, base, &b, &err);
        have_b = rc == 0;
    }
    sb_store_close(st);
    if (rc == 0) {
        if (floor > 0)
            r.rules.floor_pct = floor;
        rc = sb_fleet_analyse(&r, &err);
    }
    if (rc == 0 && base)
        rc = sb_fleet_compare_baseline(&r, &b, &err);
    code = rc ? sb_cli_error(&err) : sb_cli_fleet_emit(&r, &o, 0);
    if (have_r)
        sb_fleet_report_free(&r);
    if (have_b)
        sb_fleet_report_free(&b);
    return code;
}

typedef struct {
    bool json;
    json_t *a;
    int n;
} list_ctx;

static int list_one(const sb_store_fleet *f, void *arg)
{
    list_ctx *c = arg;
    c->n++;
    if (c->json) {
        json_t *o = json_object();
        json_object_set_new(o, "fleet", json_string(f->id));
        json_object_set_new(o, "started_at", json_string(f->started_at));
        json_object_set_new(o, "launcher", json_string(f->launcher));
        json_object_set_new(o, "hosts", json_integer(f->hosts));
        json_object_set_new(o, "healthy", json_boolean(f->healthy));
        json_object_set_new(o, "baselines", json_string(f->baselines));
        json_array_append_new(c->a, o);
        return 0;
    }
    if (c->n == 1)
        printf("%-24s %-19s %5s %-8s %-18s %s\n", "fleet", "started", "hosts",
               "verdict", "launcher", "baseline");
    printf("%-24s %-19.19s %5d %-8s %-18.18s %s\n", f->id, f->started_at,
           f->hosts, f->healthy ? "healthy" : "flagged", f->launcher,
           f->baselines);
    return 0;
}

int sb_cmd_fleet_list(int argc, char **argv)
{
    const char *db = NULL;
    list_ctx c = {0};
    for (int i = 2; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            puts("usage: solbench fleet list [--db PATH] [--json]\n"
                 "  the stored fleet runs, oldest first");
            return 0;
        }
        if ((m = sb_cli_opt(argc, argv, &i, "--db", &db))) {
            if (m < 0)
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            c.json = true;
        } else {
            return sb_cli_usage("fleet", "list: unexpected '%s'", argv[i]);
        }
    }
    sb_err err = {0};
    sb_store *st = NULL;
    if (sb_cli_fleet_store(db, SB_STORE_RO, &st, &err))
        return sb_cli_error(&err);
    c.a = c.json ? json_array() : NULL;
    int rc = sb_store_fleet_list(st, list_one, &c, &err);
    sb_store_close(st);
    int code = rc ? sb_cli_error(&err) : 0;
    if (rc == 0 && c.json &&
        sb_cli_write_json(c.a, NULL, JSON_INDENT(2), "the fleet list", &err))
        code = sb_cli_error(&err);
    else if (rc == 0 && !c.json && c.n == 0)
        puts("no fleet runs stored (solbench fleet run stores them)");
    json_decref(c.a);
    return code;
}

int sb_cmd_fleet_baseline(int argc, char **argv)
{
    const char *db = NULL, *name = NULL, *ref = NULL;
    for (int i = 2; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            puts("usage: solbench fleet baseline NAME [FLEET] [--db PATH]\n"
                 "  names a stored fleet run (default: the last) as a "
                 "baseline:\n"
                 "  fleet show --baseline NAME, fleet run --baseline NAME");
            return 0;
        }
        if ((m = sb_cli_opt(argc, argv, &i, "--db", &db))) {
            if (m < 0)
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("fleet", "baseline: unknown option '%s'",
                                argv[i]);
        } else if (!name) {
            name = argv[i];
        } else if (!ref) {
            ref = argv[i];
        } else {
            return sb_cli_usage("fleet", "baseline: unexpected '%s'", argv[i]);
        }
    }
    if (!name)
        return sb_cli_usage("fleet", "baseline: NAME missing (fleet baseline "
                                     "NAME [FLEET])");
    sb_err err = {0};
    sb_store *st = NULL;
    char id[64];
    if (sb_store_fleet_check_name(name, &err) ||
        sb_cli_fleet_store(db, SB_STORE_RW, &st, &err))
        return sb_cli_error(&err);
    int rc = sb_store_fleet_baseline_set(st, name, ref ? ref : "last", id,
                                         sizeof id, &err);
    sb_store_close(st);
    if (rc)
        return sb_cli_error(&err);
    printf("fleet baseline '%s' -> %s\n", name, id);
    return 0;
}
