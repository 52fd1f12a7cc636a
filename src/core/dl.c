/*
 * dl.c — libraries opened where first needed (dl.h).
 *
 * The soname is tried first, so LD_LIBRARY_PATH, the loader's cache and
 * the binary's run path decide as they would for a linked library; then
 * the folder the build found it in. The soname's failure is the one
 * reported. Nothing is retried after a failure: the first reason stands
 * for the whole process.
 */
#define _GNU_SOURCE /* dlinfo */
#include "core/dl.h"
#include "solbench/timer.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *dl_open(sb_dl_lib *l, char *why, size_t cap)
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "not found");
    if (l->libdir && l->libdir[0]) {
        char full[768];
        snprintf(full, sizeof full, "%s/%s", l->libdir, l->soname);
        h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    }
    return h;
}

static void dl_try(sb_dl_lib *l, const char *const *names, void *table,
                   size_t n)
{
    char e[384];
    void *h = dl_open(l, e, sizeof e);
    if (!h) {
        snprintf(l->why, sizeof l->why, "%s (%s) does not load: %s", l->name,
                 l->soname, e);
        l->state = -1;
        return;
    }
    /* copied, not assigned through a void **: the table's members are
     * function pointers (POSIX gives them dlsym's representation) */
    for (size_t i = 0; i < n; i++) {
        void *f = dlsym(h, names[i]);
        if (!f) {
            snprintf(l->why, sizeof l->why, "%s (%s) lacks %s", l->name,
                     l->soname, names[i]);
            memset(table, 0, n * sizeof f);
            dlclose(h);
            l->state = -1;
            return;
        }
        memcpy((char *)table + i * sizeof f, &f, sizeof f);
    }
    snprintf(l->path, sizeof l->path, "%s", l->soname);
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
        lm->l_name[0])
        snprintf(l->path, sizeof l->path, "%s", lm->l_name);
    l->state = 1;
}

int sb_dl_load(sb_dl_lib *l, const char *const *names, void *table, size_t n,
               sb_err *err)
{
    pthread_mutex_lock(&l->lock);
    if (l->state == 0)
        dl_try(l, names, table, n);
    int ok = l->state == 1;
    pthread_mutex_unlock(&l->lock);
    return ok ? 0 : sb_fail(err, SB_EUNSUP, "%s", l->why);
}

const char *sb_dl_path(const sb_dl_lib *l)
{
    return l->state == 1 ? l->path : "";
}

/* ---- a user's library, tried first in a child -----------------------------
 */

int sb_dl_probe(const char *path, const char *symbol, double timeout_s,
                sb_err *err)
{
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0)
        return 0; /* no child to spare: the parent's own dlopen decides */
    if (pid == 0) {
        /* the child: its output goes nowhere, a hang ends by itself */
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, STDOUT_FILENO);
            dup2(nul, STDERR_FILENO);
        }
        alarm((unsigned)timeout_s + 1);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            _exit(3); /* the parent's dlopen says why, safely */
        _exit(symbol && !dlsym(h, symbol) ? 4 : 0);
    }
    const double start = sb_now();
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return 0;
        if (sb_now() - start >= timeout_s) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return sb_fail(err, SB_EINVAL,
                           "%s: loading it did not finish within %.0f s in a "
                           "test process (an initialiser that hangs): not "
                           "loaded",
                           path, timeout_s);
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return sb_fail(err, SB_EINVAL,
                       "%s: loading it killed a test process with signal %d "
                       "(%s): a damaged shared object, not loaded",
                       path, sig, strsignal(sig));
    }
    /* 0 loaded, 3 and 4 the loader's or the symbol's refusal (the
     * caller's dlopen says which); anything else ended it another way (a
     * sanitizer turns the crash into an exit, an initialiser exits) */
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != 0 && code != 3 && code != 4)
        return sb_fail(err, SB_EINVAL,
                       "%s: loading it ended a test process with status %d "
                       "(a crash caught, or the object's own exit): a "
                       "damaged shared object, not loaded",
                       path, code);
    return 0;
}
