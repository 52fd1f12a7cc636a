/*
 * fileio.c — opening user-named files as regular files only. Every reader
 * and writer of a path the user gives goes through sb_file_open, so a
 * named pipe, a device or a socket is refused in one place, at once,
 * instead of solbench blocking in open(2) (a FIFO with no other end) or
 * reading a device that never ends.
 *
 * How: the file is opened with O_NONBLOCK, so opening a FIFO returns at
 * once (for reading it succeeds, for writing with no reader it fails with
 * ENXIO, as it does for a socket); fstat then says what was opened, and
 * anything but a regular file is closed again before a byte moves. On a
 * regular file O_NONBLOCK changes nothing, and it is cleared anyway so
 * the descriptor behaves as an ordinary one. O_TRUNC is applied by hand
 * after the check, so nothing but a regular file is ever truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solbench/fileio.h"

const char *sb_file_kind(unsigned int st_mode)
{
    mode_t m = (mode_t)st_mode;
    if (S_ISREG(m))
        return "a regular file";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a named pipe (FIFO)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "a special file";
}

/* The refusal of a file that is not a regular one. */
static int sb__not_regular(const char *path, mode_t m, sb_err *err)
{
    if (S_ISDIR(m))
        return sb_fail(err, SB_EINVAL, "%s: is a directory", path);
    return sb_fail(err, SB_EINVAL, "%s: is %s, not a regular file", path,
                   sb_file_kind((unsigned int)m));
}

/* Closes fd after a failed call and fails with that call's errno, which
 * is left in errno. */
static int sb__close_fail(int fd, const char *path, bool writing, sb_err *err)
{
    int e = errno;
    close(fd);
    int rc =
        sb_fail(err, writing ? SB_EIO : SB_EINVAL, "%s: %s", path, strerror(e));
    errno = e;
    return rc;
}

int sb_file_open(const char *path, int flags, int *fd, sb_err *err)
{
    *fd = -1;
    const bool writing = (flags & O_ACCMODE) != O_RDONLY;
    if (!path || !*path) {
        int rc = sb_fail(err, SB_EINVAL, "empty file name");
        errno = ENOENT;
        return rc;
    }
    const bool trunc = (flags & O_TRUNC) != 0;
    int f = open(path, (flags & ~O_TRUNC) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                 0666);
    if (f < 0) {
        /* ENXIO: a FIFO with no reader, or a socket; EISDIR: a folder
         * opened for writing. Whatever the reason, a file that is not a
         * regular one is named as such. */
        int e = errno;
        struct stat st;
        int rc;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            rc = sb__not_regular(path, st.st_mode, err);
        else
            rc = sb_fail(err, writing ? SB_EIO : SB_EINVAL, "%s: %s", path,
                         strerror(e));
        errno = e;
        return rc;
    }
    struct stat st;
    if (fstat(f, &st) != 0)
        return sb__close_fail(f, path, writing, err);
    if (!S_ISREG(st.st_mode)) {
        close(f);
        int rc = sb__not_regular(path, st.st_mode, err);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return rc;
    }
    int fl = fcntl(f, F_GETFL);
    if ((trunc && ftruncate(f, 0) != 0) || fl < 0 ||
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return sb__close_fail(f, path, writing, err);
    *fd = f;
    return 0;
}

int sb_file_fopen(const char *path, const char *mode, FILE **f, sb_err *err)
{
    *f = NULL;
    int flags;
    switch (mode ? mode[0] : 0) {
    case 'r':
        flags = O_RDONLY;
        break;
    case 'w':
        flags = O_WRONLY | O_CREAT | O_TRUNC;
        break;
    case 'a':
        flags = O_WRONLY | O_CREAT | O_APPEND;
        break;
    default:
        flags = -1;
    }
    if (flags < 0 || strchr(mode, '+')) {
        int rc = sb_fail(err, SB_EINVAL, "%s: bad open mode '%s'",
                         path ? path : "", mode ? mode : "");
        errno = EINVAL;
        return rc;
    }
    int fd;
    int rc = sb_file_open(path, flags, &fd, err);
    if (rc)
        return rc;
    *f = fdopen(fd, mode);
    if (!*f) {
        int e = errno;
        close(fd);
        rc = sb_fail(err, SB_ENOMEM, "%s: %s", path, strerror(e));
        errno = e;
        return rc;
    }
    return 0;
}
