/*
 * test_fileio.c — the readers and writers of user-named files take
 * regular files only (sb_file_open: a FIFO, a character device, a socket
 * and a directory are refused at once, without blocking), the run
 * document reader refuses a key given twice, error messages keep to one
 * line (control characters escaped), and a --sweep key is checked against
 * the workload format before any variant.
 *
 * An alarm ends the test if anything blocks: opening a FIFO without
 * O_NONBLOCK would wait for ever for the other end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "solbench/error.h"
#include "solbench/fileio.h"
#include "solbench/output.h"
#include "solbench/workload.h"

static char dir[256];

static const char *tmp(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_fileio: blocked (alarm after 20 s)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Whether err says path is what it is, naming the path. */
static int says(const sb_err *err, const char *path, const char *what)
{
    return strstr(err->msg, path) == err->msg && strstr(err->msg, what) &&
           !strchr(err->msg, '\n');
}

static void test_regular(void)
{
    char p[300];
    sb_err err = {0};
    int fd;
    /* write creates, truncates, and leaves a blocking descriptor */
    tmp("reg.txt", p, sizeof p);
    write_text(p, "0123456789");
    CHECK(sb_file_open(p, O_WRONLY | O_CREAT | O_TRUNC, &fd, &err) == 0);
    CHECK(fd >= 0);
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        CHECK(fl >= 0 && !(fl & O_NONBLOCK));
        CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        CHECK(write(fd, "ab", 2) == 2);
        close(fd);
    }
    struct stat st;
    CHECK(stat(p, &st) == 0 && st.st_size == 2);
    /* append keeps what is there */
    FILE *f;
    CHECK(sb_file_fopen(p, "a", &f, &err) == 0 && f);
    if (f) {
        fputs("cd", f);
        CHECK(fclose(f) == 0);
    }
    CHECK(sb_file_fopen(p, "r", &f, &err) == 0 && f);
    if (f) {
        char buf[16] = "";
        CHECK(fgets(buf, sizeof buf, f) && strcmp(buf, "abcd") == 0);
        fclose(f);
    }
    /* missing: ENOENT kept, the path named; a new file for "w" */
    tmp("missing.txt", p, sizeof p);
    CHECK(sb_file_fopen(p, "r", &f, &err) == SB_EINVAL && !f);
    CHECK(errno == ENOENT);
    CHECK(says(&err, p, strerror(ENOENT)));
    CHECK(sb_file_fopen(p, "w", &f, &err) == 0 && f);
    if (f)
        fclose(f);
    CHECK(stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
    /* a bad mode */
    CHECK(sb_file_fopen(p, "r+", &f, &err) == SB_EINVAL && !f);
    CHECK(sb_file_fopen(p, "x", &f, &err) == SB_EINVAL && !f);
}

static void test_special(void)
{
    char p[300];
    sb_err err = {0};
    int fd;
    FILE *f;
    /* a FIFO with no other end: reading and writing refused at once */
    tmp("fifo", p, sizeof p);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(sb_file_open(p, O_RDONLY, &fd, &err) == SB_EINVAL && fd == -1);
    CHECK(says(&err, p, "is a named pipe (FIFO), not a regular file"));
    CHECK(sb_file_fopen(p, "w", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, p, "is a named pipe (FIFO)"));
    CHECK(sb_file_fopen(p, "a", &f, &err) == SB_EINVAL && !f);
    /* ... and with a reader: nothing is written to it */
    int rd = open(p, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK(sb_file_fopen(p, "w", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, p, "is a named pipe (FIFO)"));
    if (rd >= 0) {
        char c;
        CHECK(read(rd, &c, 1) <= 0);
        close(rd);
    }
    struct stat st;
    CHECK(stat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    /* a character device, read and written (never truncated) */
    CHECK(sb_file_fopen("/dev/null", "r", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, "/dev/null", "is a character device, not a regular"));
    CHECK(sb_file_fopen("/dev/null", "w", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, "/dev/null", "is a character device"));
    CHECK(sb_file_fopen("/dev/zero", "r", &f, &err) == SB_EINVAL && !f);
    /* a directory */
    CHECK(sb_file_fopen(dir, "r", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, dir, "is a directory"));
    CHECK(sb_file_fopen(dir, "w", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, dir, "is a directory"));
    /* a socket */
    tmp("sock", p, sizeof p);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (s >= 0 && strlen(p) < sizeof a.sun_path) {
        snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
        if (bind(s, (struct sockaddr *)&a, sizeof a) == 0) {
            CHECK(sb_file_fopen(p, "r", &f, &err) == SB_EINVAL && !f);
            CHECK(says(&err, p, "is a socket, not a regular file"));
            CHECK(sb_file_fopen(p, "w", &f, &err) == SB_EINVAL && !f);
            CHECK(says(&err, p, "is a socket"));
        }
    }
    if (s >= 0)
        close(s);
    /* a symbolic link is followed: to a FIFO refused, to a file taken */
    char fifo[300], link[300], reg[300];
    tmp("fifo", fifo, sizeof fifo);
    tmp("to-fifo", link, sizeof link);
    CHECK(symlink(fifo, link) == 0);
    CHECK(sb_file_fopen(link, "w", &f, &err) == SB_EINVAL && !f);
    CHECK(says(&err, link, "is a named pipe (FIFO)"));
    tmp("reg.txt", reg, sizeof reg);
    tmp("to-reg", link, sizeof link);
    CHECK(symlink(reg, link) == 0);
    CHECK(sb_file_fopen(link, "r", &f, &err) == 0 && f);
    if (f)
        fclose(f);
}

/* The writers and readers of the library, given a FIFO. */
static void test_library_paths(void)
{
    char fifo[300];
    tmp("fifo", fifo, sizeof fifo);
    sb_run run;
    sb_run_init(&run);
    snprintf(run.run_id, sizeof run.run_id, "20260101T000000Z-abcdef");
    snprintf(run.started_at, sizeof run.started_at, "2026-01-01T00:00:00.000Z");
    snprintf(run.ended_at, sizeof run.ended_at, "2026-01-01T00:00:01.000Z");
    sb_err err = {0};
    CHECK(sb_run_write_json(&run, fifo, &err) != 0);
    CHECK(says(&err, fifo, "FIFO"));
    CHECK(sb_run_write_csv(&run, fifo, &err) != 0);
    CHECK(says(&err, fifo, "FIFO"));
    sb_run back;
    CHECK(sb_run_read_json(fifo, &back, &err) == SB_EINVAL);
    CHECK(says(&err, fifo, "FIFO"));
    sb_run_free(&back);
    /* a regular file still round-trips */
    char p[300];
    tmp("run.json", p, sizeof p);
    CHECK(sb_run_write_json(&run, p, &err) == 0);
    CHECK(sb_run_read_json(p, &back, &err) == 0);
    CHECK(strcmp(back.run_id, run.run_id) == 0);
    if (strcmp(back.run_id, run.run_id) != 0)
        fprintf(stderr, "  %s\n", err.msg);
    sb_run_free(&back);
    sb_run_free(&run);
}

/* A run document with a key given twice is refused, with line:column. */
static void test_duplicate_keys(void)
{
    char p[300];
    sb_err err = {0};
    sb_run run;
    tmp("dup.json", p, sizeof p);
    write_text(p, "{\"schema\": \"solbench.run/1\",\n"
                  " \"run_id\": \"20260101T000000Z-aaaaaa\",\n"
                  " \"run_id\": \"20260101T000000Z-bbbbbb\",\n"
                  " \"started_at\": \"2026-01-01T00:00:00.000Z\",\n"
                  " \"ended_at\": \"2026-01-01T00:00:01.000Z\",\n"
                  " \"system\": {}, \"config\": {}, \"tags\": {},\n"
                  " \"results\": []}\n");
    CHECK(sb_run_read_json(p, &run, &err) == SB_EINVAL);
    char want[320];
    snprintf(want, sizeof want, "%s:3:", p);
    CHECK(strstr(err.msg, want) == err.msg);
    CHECK(strstr(err.msg, "duplicate object key") != NULL);
    CHECK(run.run_id[0] == '\0');
    sb_run_free(&run);
    /* a duplicate in a nested object too */
    write_text(p, "{\"schema\": \"solbench.run/1\",\n"
                  " \"run_id\": \"20260101T000000Z-aaaaaa\",\n"
                  " \"started_at\": \"2026-01-01T00:00:00.000Z\",\n"
                  " \"ended_at\": \"2026-01-01T00:00:01.000Z\",\n"
                  " \"system\": {}, \"config\": {}, \"tags\": {\"a\": \"1\", "
                  "\"a\": \"2\"},\n"
                  " \"results\": []}\n");
    CHECK(sb_run_read_json(p, &run, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "duplicate object key") != NULL);
    sb_run_free(&run);
    /* without the duplicate, the document reads */
    write_text(p, "{\"schema\": \"solbench.run/1\",\n"
                  " \"run_id\": \"20260101T000000Z-aaaaaa\",\n"
                  " \"started_at\": \"2026-01-01T00:00:00.000Z\",\n"
                  " \"ended_at\": \"2026-01-01T00:00:01.000Z\",\n"
                  " \"system\": {}, \"config\": {}, \"tags\": {},\n"
                  " \"results\": []}\n");
    CHECK(sb_run_read_json(p, &run, &err) == 0);
    CHECK(strcmp(run.run_id, "20260101T000000Z-aaaaaa") == 0);
    sb_run_free(&run);
}

/* An integer parameter beyond 2^53 is refused on reading (a double would
 * not hold it; once the cast back to 64 bits overflowed); 2^53 itself reads
 * and is written back as the same integer. */
static void test_param_range(void)
{
    static const char head[] =
        "{\"schema\": \"solbench.run/1\",\n"
        " \"run_id\": \"20260101T000000Z-aaaaaa\",\n"
        " \"started_at\": \"2026-01-01T00:00:00.000Z\",\n"
        " \"ended_at\": \"2026-01-01T00:00:01.000Z\",\n"
        " \"system\": {}, \"config\": {}, \"tags\": {},\n"
        " \"results\": [{\"bench\": \"memory.triad\", \"area\": \"memory\","
        " \"backend\": \"cpu\", \"params\": {\"size\": %s},"
        " \"samples_s\": [0.001], \"stats\": {}, \"metrics\": {},"
        " \"valid\": true, \"notes\": []}]}\n";
    char p[300], doc[1024];
    sb_err err = {0};
    sb_run run;
    tmp("range.json", p, sizeof p);
    static const char *const bad[] = {
        "9223372036854775807", "-9223372036854775808", "9007199254740993"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(doc, sizeof doc, head, bad[i]);
        write_text(p, doc);
        CHECK(sb_run_read_json(p, &run, &err) == SB_EINVAL);
        CHECK(strstr(err.msg, "params.size") != NULL);
        CHECK(strstr(err.msg, "2^53") != NULL);
        sb_run_free(&run);
    }
    snprintf(doc, sizeof doc, head, "9007199254740992");
    write_text(p, doc);
    CHECK(sb_run_read_json(p, &run, &err) == 0);
    CHECK(run.results.n == 1);
    json_t *j = sb_result_to_json(&run.results.items[0]);
    json_t *size = json_object_get(json_object_get(j, "params"), "size");
    CHECK(json_is_integer(size));
    CHECK(json_integer_value(size) == 9007199254740992LL);
    json_decref(j);
    sb_run_free(&run);
}

static void test_escape(void)
{
    char out[64];
    CHECK(sb_err_escape(out, sizeof out, "a\nb\tc\rd\x1b[0m\x7f") > 0);
    CHECK(strcmp(out, "a\\nb\\tc\\rd\\x1b[0m\\x7f") == 0);
    /* UTF-8 and backslashes pass unchanged */
    sb_err_escape(out, sizeof out, "caf\xc3\xa9 C:\\dir");
    CHECK(strcmp(out, "caf\xc3\xa9 C:\\dir") == 0);
    /* an escape is never cut in two */
    char small[6];
    CHECK(sb_err_escape(small, sizeof small, "ab\x01z") == 2);
    CHECK(strcmp(small, "ab") == 0);
    CHECK(sb_err_escape(small, 1, "abc") == 0 && small[0] == '\0');
    /* sb_fail escapes what it formats, even its own message again */
    sb_err err = {0};
    CHECK(sb_fail(&err, SB_EINVAL, "parameter %s: bad", "size=4KiB\n8KiB") ==
          SB_EINVAL);
    CHECK(strcmp(err.msg, "parameter size=4KiB\\n8KiB: bad") == 0);
    CHECK(err.code == SB_EINVAL);
    sb_fail(&err, SB_EIO, "wrapped: %s", err.msg);
    CHECK(strcmp(err.msg, "wrapped: parameter size=4KiB\\n8KiB: bad") == 0);
}

static void test_sweep_key(void)
{
    json_error_t je;
    json_t *train = json_loads("{\"job\": {\"type\": \"training\"}}", 0, &je);
    json_t *infer = json_loads("{\"job\": {\"type\": \"inference\"}}", 0, &je);
    sb_err err = {0};
    /* aliases and paths the format has */
    CHECK(sb_workload_check_key(train, "tp", &err) == 0);
    CHECK(sb_workload_check_key(train, "chips", &err) == 0);
    CHECK(sb_workload_check_key(train, "parallelism.tensor", &err) == 0);
    CHECK(sb_workload_check_key(train, "model.moe.top_k", &err) == 0);
    CHECK(sb_workload_check_key(train, "batch", &err) == 0);
    CHECK(sb_workload_check_key(infer, "concurrency", &err) == 0);
    CHECK(sb_workload_check_key(train, "measured.phases.attention", &err) == 0);
    CHECK(sb_workload_check_key(train, "overlap", &err) == 0);
    /* an unknown key, once, naming where it goes wrong */
    CHECK(sb_workload_check_key(train, "bogus.key", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "--sweep bogus.key: $.bogus: unknown field") ==
          err.msg);
    CHECK(sb_workload_check_key(train, "model.layer", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.model.layer: unknown field") != NULL);
    /* fields of the other job type */
    CHECK(sb_workload_check_key(train, "concurrency", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.job.concurrency: unknown field") != NULL);
    CHECK(sb_workload_check_key(infer, "batch", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.job.global_batch: unknown field") != NULL);
    /* below a value */
    CHECK(sb_workload_check_key(train, "model.layers.x", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.model.layers is a value") != NULL);
    CHECK(sb_workload_check_key(train, "measured.phases.a.b", &err) ==
          SB_EINVAL);
    /* not a name */
    CHECK(sb_workload_check_key(train, "a..b", &err) == SB_EINVAL);
    CHECK(sb_workload_check_key(train, "a\nb", &err) == SB_EINVAL);
    CHECK(!strchr(err.msg, '\n'));
    json_decref(train);
    json_decref(infer);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    alarm(20);
    if (!sb_test_scratch(dir, sizeof dir, "fileio"))
        return 1;
    test_regular();
    test_special();
    test_library_paths();
    test_duplicate_keys();
    test_param_range();
    test_escape();
    test_sweep_key();
    return sb_test_scratch_done(dir);
}
