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
#include <elf.h>
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

/* ---- shared objects ------------------------------------------------------ */

#if defined(__x86_64__)
#define SB_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define SB_ELF_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define SB_ELF_MACHINE EM_PPC64
#elif defined(__riscv)
#define SB_ELF_MACHINE EM_RISCV
#else
#define SB_ELF_MACHINE EM_NONE /* not checked */
#endif

static bool sb__read_at(int fd, void *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, at + (off_t)got);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            return false;
        }
        got += (size_t)k;
    }
    return true;
}

int sb_plugin_check(const char *path, sb_err *err)
{
    int fd;
    int rc = sb_file_open(path, O_RDONLY, &fd, err);
    if (rc)
        return rc;
    struct stat st;
    Elf64_Ehdr eh;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return sb_fail(err, SB_EINVAL, "%s: %s", path, strerror(errno));
    }
    double size = (double)st.st_size;
    if (st.st_size < (off_t)sizeof eh || !sb__read_at(fd, &eh, sizeof eh, 0) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        close(fd);
        return sb_fail(err, SB_EINVAL,
                       "%s: not an ELF shared object (%.0f bytes, no ELF "
                       "header)",
                       path, size);
    }
    const unsigned char want_class =
        sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const unsigned char want_data = ELFDATA2LSB;
#else
    const unsigned char want_data = ELFDATA2MSB;
#endif
    rc = 0;
    if (eh.e_ident[EI_CLASS] != want_class || eh.e_ident[EI_DATA] != want_data)
        rc = sb_fail(err, SB_EINVAL,
                     "%s: an ELF object of another word size or byte order "
                     "than this machine's",
                     path);
    else if (eh.e_type != ET_DYN)
        rc = sb_fail(err, SB_EINVAL,
                     "%s: an ELF object but not a shared library (type %u)",
                     path, (unsigned)eh.e_type);
    else if (SB_ELF_MACHINE != EM_NONE && eh.e_machine != SB_ELF_MACHINE)
        rc = sb_fail(err, SB_EINVAL,
                     "%s: a shared library for another processor (ELF "
                     "machine %u, this one %u)",
                     path, (unsigned)eh.e_machine, (unsigned)SB_ELF_MACHINE);
    if (!rc && sizeof(void *) != 8) { /* the layout read is ELF64's */
        close(fd);
        return 0;
    }
    if (rc)
        ;
    else if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
             eh.e_phnum > 4096 ||
             (double)eh.e_phoff + (double)eh.e_phnum * eh.e_phentsize > size)
        rc = sb_fail(err, SB_EINVAL,
                     "%s: truncated or damaged: its %u program headers at "
                     "offset %llu do not fit in its %.0f bytes",
                     path, (unsigned)eh.e_phnum, (unsigned long long)eh.e_phoff,
                     size);
    else if (eh.e_shoff &&
             (double)eh.e_shoff + (double)eh.e_shnum * eh.e_shentsize > size)
        rc = sb_fail(err, SB_EINVAL,
                     "%s: truncated: its section headers at offset %llu end "
                     "past the file's %.0f bytes",
                     path, (unsigned long long)eh.e_shoff, size);
    for (unsigned i = 0; !rc && i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!sb__read_at(fd, &ph, sizeof ph,
                         (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof ph))) {
            rc = sb_fail(err, SB_EINVAL, "%s: cannot read program header %u",
                         path, i);
            break;
        }
        if (ph.p_type == PT_LOAD &&
            (double)ph.p_offset + (double)ph.p_filesz > size)
            rc = sb_fail(err, SB_EINVAL,
                         "%s: truncated: its segment at offset %llu ends at "
                         "%.0f, past the file's %.0f bytes",
                         path, (unsigned long long)ph.p_offset,
                         (double)ph.p_offset + (double)ph.p_filesz, size);
    }
    close(fd);
    return rc;
}
