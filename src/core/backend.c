/*
 * backend.c — the installed backend descriptors (backend.h).
 */
#include "core/backend.h"

#include <string.h>

#define BACKENDS_MAX 16
static const sb_backend *installed[BACKENDS_MAX + 1];

void sb_backends_use(const sb_backend *const *all)
{
    int n = 0;
    for (const sb_backend *const *b = all; b && *b && n < BACKENDS_MAX; b++)
        installed[n++] = *b;
    installed[n] = NULL;
}

const sb_backend *const *sb_backends(void)
{
    return installed;
}

const sb_backend *sb_backend_find(const char *name)
{
    for (const sb_backend *const *b = installed; name && *b; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

bool sb_backend_is_host(const char *name)
{
    if (!name || !*name)
        return true;
    const sb_backend *b = sb_backend_find(name);
    return b ? (b->caps & SB_BK_HOST) != 0 : false;
}
