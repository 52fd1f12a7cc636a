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

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

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
