/*
 * test_params.c — sizes, values, lists, ranges and sweep expansion, good
 * and bad.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/param.h"

static const sb_param_def defs[] = {
    {"size", SB_P_SIZE, "64MiB", 0, 0, NULL, "bytes"},
    {"n", SB_P_INT, "4", 1, 1024, NULL, "count"},
    {"alpha", SB_P_FLOAT, "0.5", 0, 0, NULL, "a real"},
    {"mode", SB_P_STR, "a", 0, 0, "a|b|c", "a choice"},
    {"nt", SB_P_BOOL, "false", 0, 0, NULL, "a flag"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const sb_param_def big = {"tokens", SB_P_INT, "1",   1,
                                 16777216, NULL,     "rows"};

static double size_of(const char *s)
{
    double b = -1;
    sb_err e = {0};
    if (sb_parse_size(s, &b, "size", &e))
        return -1;
    return b;
}

int main(void)
{
    sb_err err = {0};
    /* Units: binary and decimal. */
    CHECK(size_of("4096") == 4096);
    CHECK(size_of("4KiB") == 4096);
    CHECK(size_of("64MiB") == 67108864.0);
    CHECK(size_of("1GiB") == 1073741824.0);
    CHECK(size_of("2GB") == 2e9);
    CHECK(size_of("1.5KiB") == 1536);
    CHECK(size_of("8B") == 8);
    CHECK(size_of("1PiB") == 1125899906842624.0);
    /* Bad sizes. */
    CHECK(size_of("12XB") == -1);
    CHECK(size_of("-4KiB") == -1);
    CHECK(size_of("") == -1);
    CHECK(size_of("MiB") == -1);
    CHECK(size_of("0.3B") == -1);
    CHECK(size_of("0x10KiB") == -1); /* decimal only, as other numbers */
    CHECK(sb_parse_size("12XB", &(double){0}, "parameter size", &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "XB") != NULL && strstr(err.msg, "size") != NULL);

    char buf[32];
    CHECK(strcmp(sb_fmt_size(67108864, buf, sizeof buf), "64MiB") == 0);
    CHECK(strcmp(sb_fmt_size(1536, buf, sizeof buf), "1.5KiB") == 0);
    CHECK(strcmp(sb_fmt_size(100, buf, sizeof buf), "100B") == 0);

    /* Values by type, bounds. */
    sb_pval v;
    CHECK(sb_parse_value(&defs[1], "12", &v, &err) == 0 && v.num == 12);
    CHECK(sb_parse_value(&defs[1], "0", &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "n=0") != NULL);
    CHECK(sb_parse_value(&defs[1], "3.5", &v, &err) == SB_EINVAL);
    CHECK(sb_parse_value(&defs[1], "abc", &v, &err) == SB_EINVAL);
    /* Decimal only, with spaces around it; a huge integer says so. */
    CHECK(sb_parse_value(&defs[1], "0x10", &v, &err) == SB_EINVAL);
    CHECK(sb_parse_value(&defs[1], "inf", &v, &err) == SB_EINVAL);
    CHECK(sb_parse_value(&defs[1], " 16 ", &v, &err) == 0 && v.num == 16);
    CHECK(sb_parse_value(&defs[1], "1e2", &v, &err) == 0 && v.num == 100);
    CHECK(sb_parse_value(&defs[1], "99999999999999999999", &v, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "too large") != NULL);
    CHECK(sb_parse_value(&defs[1], "1e999", &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "too large") != NULL);
    CHECK(sb_parse_value(&defs[2], "1e-320", &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "normal range") != NULL);
    CHECK(sb_parse_value(&defs[2], "nan", &v, &err) == SB_EINVAL);
    CHECK(sb_parse_value(&defs[2], "-2.5e-3", &v, &err) == 0 &&
          v.num == -2.5e-3);
    /* The bounds in the message are exact, not rounded by %g. */
    CHECK(sb_parse_value(&big, "16777217", &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "[1, 16777216]") != NULL);
    CHECK(sb_parse_value(&defs[2], "1e-3", &v, &err) == 0 && v.num == 1e-3);
    CHECK(strcmp(v.text, "0.001") == 0);
    CHECK(sb_parse_value(&defs[3], "b", &v, &err) == 0);
    CHECK(sb_parse_value(&defs[3], "d", &v, &err) == SB_EINVAL);
    CHECK(sb_parse_value(&defs[4], "yes", &v, &err) == 0 && v.num == 1);
    CHECK(sb_parse_value(&defs[4], "maybe", &v, &err) == SB_EINVAL);

    /* Ranges and lists. */
    sb_pval out[SB_MAX_SWEEP_VALUES];
    int n = sb_expand_values(&defs[0], "4KiB..64KiB:x2", out,
                             SB_MAX_SWEEP_VALUES, &err);
    CHECK(n == 5);
    CHECK(n == 5 && out[0].num == 4096 && out[4].num == 65536);
    n = sb_expand_values(&defs[0], "8KiB..1GiB", out, SB_MAX_SWEEP_VALUES,
                         &err);
    CHECK(n == 18); /* 2^13 .. 2^30 */
    n = sb_expand_values(&defs[0], "1KiB..4KiB:x1.5", out, SB_MAX_SWEEP_VALUES,
                         &err);
    CHECK(n == 4); /* 1024, 1536, 2304, 3456 */
    CHECK(n == 4 && out[2].num == 2304 && out[3].num == 3456);
    n = sb_expand_values(&defs[1], "1..7:+2,100", out, SB_MAX_SWEEP_VALUES,
                         &err);
    CHECK(n == 5 && out[3].num == 7 && out[4].num == 100);
    CHECK(sb_expand_values(&defs[1], "8..1", out, SB_MAX_SWEEP_VALUES, &err) ==
          SB_EINVAL);
    CHECK(sb_expand_values(&defs[0], "4KiB..64KiB:x1", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(sb_expand_values(&defs[0], "1B..1PiB:x1.01", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(sb_expand_values(&defs[3], "a..c", out, SB_MAX_SWEEP_VALUES, &err) ==
          SB_EINVAL);
    /* Steps too small to walk (they once spun for ever: a step below the
     * value's precision, or integers rounding back to the last one). */
    CHECK(sb_expand_values(&defs[1], "1..16:+1e-20", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "too small") != NULL &&
          strstr(err.msg, "n=1..16") != NULL);
    CHECK(sb_expand_values(&defs[1], "1..16:+1e-9", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(sb_expand_values(&defs[1], "1..16:x1.000000000001", out,
                           SB_MAX_SWEEP_VALUES, &err) == SB_EINVAL);
    CHECK(sb_expand_values(&defs[2], "0..1:+1e-320", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(sb_expand_values(&defs[2], "0..1:+0x1p-4", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    /* ...while a fine step over a short range still walks: 0.25 rounds
     * every value of the integer range once. */
    n = sb_expand_values(&defs[1], "1..3:+0.25", out, SB_MAX_SWEEP_VALUES,
                         &err);
    CHECK(n == 3 && out[2].num == 3);
    /* A range starting at -1 keeps it (-1 was once the "no value yet"
     * mark); one that needs more values than a sweep holds says so. */
    n = sb_expand_values(&defs[2], "-1..1:+0.5", out, SB_MAX_SWEEP_VALUES,
                         &err);
    CHECK(n == 5 && out[0].num == -1 && out[4].num == 1);
    CHECK(sb_expand_values(&defs[1], "1..1000:+1", out, SB_MAX_SWEEP_VALUES,
                           &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "more than 256 values") != NULL);
    /* Empty items in a list are an error, not skipped. */
    CHECK(sb_expand_values(&defs[1], "4,,8", out, SB_MAX_SWEEP_VALUES, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "empty item") != NULL &&
          strstr(err.msg, "4,,8") != NULL);
    CHECK(sb_expand_values(&defs[1], "4,", out, SB_MAX_SWEEP_VALUES, &err) ==
          SB_EINVAL);
    CHECK(sb_expand_values(&defs[1], ",4", out, SB_MAX_SWEEP_VALUES, &err) ==
          SB_EINVAL);
    CHECK(sb_expand_values(&defs[1], "4,8", out, SB_MAX_SWEEP_VALUES, &err) ==
          2);
    CHECK(sb_list_has_empty("a..b", '.') && sb_list_has_empty(".a", '.') &&
          sb_list_has_empty("a.", '.') && !sb_list_has_empty("a.b", '.') &&
          !sb_list_has_empty("", ','));

    /* Sweep expansion: defaults, layers, unknown keys. */
    sb_pset user = {0};
    CHECK(sb_pset_add(&user, "size=1KiB,2KiB", &err) == 0);
    CHECK(sb_pset_add(&user, "mode=a,b,c", &err) == 0);
    CHECK(sb_pset_add(&user, "nokey", &err) == SB_EINVAL);
    const sb_pset *layers[1] = {&user};
    sb_params *pts = NULL;
    int np = 0;
    CHECK(sb_params_expand("t.bench", defs, layers, NULL, 1, &pts, &np, &err) ==
          0);
    CHECK(np == 6);
    if (np == 6) {
        /* The first declared parameter is the outermost loop. */
        CHECK(sb_p_num(&pts[0], "size") == 1024 &&
              strcmp(sb_p_str(&pts[0], "mode"), "a") == 0);
        CHECK(sb_p_num(&pts[1], "size") == 1024 &&
              strcmp(sb_p_str(&pts[1], "mode"), "b") == 0);
        CHECK(sb_p_num(&pts[3], "size") == 2048);
        CHECK(sb_p_int(&pts[5], "n") == 4);
        CHECK(sb_p_bool(&pts[5], "nt") == false);
        CHECK_NEAR(sb_p_num(&pts[5], "alpha"), 0.5, 0);
        char t[128];
        sb_params_fmt(&pts[0], t, sizeof t);
        CHECK(strcmp(t, "size=1KiB n=4 alpha=0.5 mode=a nt=false") == 0);
        CHECK(sb_p_set(&pts[0], "n", "9", &err) == 0 &&
              sb_p_int(&pts[0], "n") == 9);
    }
    free(pts);

    sb_pset bad = {0};
    CHECK(sb_pset_add(&bad, "sise=4KiB", &err) == 0);
    const sb_pset *bl[1] = {&bad};
    CHECK(sb_params_expand("t.bench", defs, bl, NULL, 1, &pts, &np, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "sise") != NULL &&
          strstr(err.msg, "t.bench") != NULL);
    bool lenient[1] = {true};
    CHECK(sb_params_expand("t.bench", defs, bl, lenient, 1, &pts, &np, &err) ==
              0 &&
          np == 1);
    free(pts);

    /* A later setting of the same key wins. */
    sb_pset twice = {0};
    sb_pset_add(&twice, "n=2", &err);
    sb_pset_add(&twice, "n=3", &err);
    CHECK(twice.n == 1 && strcmp(twice.kv[0].value, "3") == 0);
    return sb_check_done();
}
