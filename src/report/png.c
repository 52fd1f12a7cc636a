/*
 * png.c — a chart as PNG: its SVG screenshotted by a headless Chromium
 * (no raster library is linked; --svg needs nothing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "solbench/report.h"

/* The first of chromium, chromium-browser, google-chrome on PATH. */
static const char *find_browser(char *cand, size_t len)
{
    static const char *browsers[] = {"chromium", "chromium-browser",
                                     "google-chrome"};
    const char *path = getenv("PATH");
    for (int i = 0; i < 3 && path; i++) {
        const char *p = path;
        while (*p) {
            size_t l = strcspn(p, ":");
            snprintf(cand, len, "%.*s/%s", (int)l, p, browsers[i]);
            if (access(cand, X_OK) == 0)
                return cand;
            p += l + (p[l] == ':');
        }
    }
    return NULL;
}

static int screenshot(const char *browser, const char *svg_path,
                      const char *png, int w, int h, sb_err *err)
{
    char shot[4200], size[64], url[4200], abs[4096];
    if (!realpath(svg_path, abs))
        return sb_fail(err, SB_EIO, "%s: cannot resolve", svg_path);
    snprintf(shot, sizeof shot, "--screenshot=%s", png);
    snprintf(size, sizeof size, "--window-size=%d,%d", w, h);
    snprintf(url, sizeof url, "file://%s", abs);
    /* a PNG left by an earlier run must not pass for this one's */
    if (unlink(png) != 0 && errno != ENOENT)
        return sb_fail(err, SB_EIO, "%s: cannot replace it (%s)", png,
                       strerror(errno));
    /* What stdio holds for a pipe must go out once, from this process:
     * the child would flush its copy too (a stray duplicate line). */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return sb_fail(err, SB_EIO, "fork failed");
    if (pid == 0) {
        /* the descriptors only: no stdio call that flushes in the child */
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
            _exit(126);
        execl(browser, browser, "--headless", "--no-sandbox", "--disable-gpu",
              "--hide-scrollbars", shot, size, url, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || access(png, R_OK) != 0)
        return sb_fail(err, SB_EIO, "%s: the browser did not write it", png);
    return 0;
}

int sb_png_write(const char *png, const sb_buf *svg, int w, int h, sb_err *err)
{
    char cand[4096];
    const char *browser = find_browser(cand, sizeof cand);
    if (!browser)
        return sb_fail(err, SB_EUNSUP,
                       "--png needs chromium on PATH (Debian "
                       "package chromium); --svg works without it");
    const char *dir = getenv("TMPDIR");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/solbench-chart-XXXXXX.svg",
             dir && *dir ? dir : "/tmp");
    int fd = mkstemps(tmp, 4);
    if (fd < 0)
        return sb_fail(err, SB_EIO,
                       "%s: cannot create a temporary file for "
                       "the SVG the browser renders",
                       tmp);
    close(fd);
    int rc = sb_svg_write(tmp, svg, err);
    if (rc == 0)
        rc = screenshot(browser, tmp, png, w, h, err);
    unlink(tmp);
    return rc;
}
