/*
 * fileio.h — opening the files a user names (run documents, reports,
 * workload and hardware files, --json/--csv outputs) so that only a
 * regular file is ever read or written. A named pipe, a character or
 * block device or a socket is refused at once with one line naming it:
 * opening a FIFO with no process at the other end blocks for ever, and
 * reading a device may never end.
 */
#ifndef SOLBENCH_FILEIO_H
#define SOLBENCH_FILEIO_H

#include <stdio.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens `path` with open(2) `flags` (O_RDONLY; O_WRONLY with O_CREAT,
 * O_TRUNC, O_APPEND) and mode 0666 (less the umask) for a file it
 * creates. The file is opened without blocking and checked with fstat
 * before anything is read, written or truncated; O_TRUNC is applied only
 * to a regular file. *fd gets a blocking descriptor (close-on-exec) on
 * success. Errors (*fd = -1, errno kept from the failing call):
 * SB_EINVAL "PATH: is a named pipe (FIFO), not a regular file" (likewise
 * a character or block device, a socket), "PATH: is a directory", or,
 * when the file cannot be opened, "PATH: <strerror>" (SB_EINVAL when
 * reading, SB_EIO when writing). */
int sb_file_open(const char *path, int flags, int *fd, sb_err *err);

/* The same as a stdio stream: mode "r"/"rb" reads, "w"/"wb" creates or
 * truncates, "a"/"ab" appends. *f is NULL on failure. */
int sb_file_fopen(const char *path, const char *mode, FILE **f, sb_err *err);

/* A shared object a user names (a PJRT plugin) checked before dlopen
 * maps it: a regular file (a FIFO would block dlopen for ever), an ELF
 * shared object of this machine's class, byte order and architecture,
 * whose program headers and every loadable segment lie within the file
 * (dlopen of a truncated object maps past its end: SIGBUS). 0, or
 * SB_EINVAL with one line: "PATH: truncated: its segment at offset N
 * ends past the file's M bytes", "PATH: not an ELF shared object", ... */
int sb_plugin_check(const char *path, sb_err *err);

/* What kind of file a mode_t is, in words for a message: "a named pipe
 * (FIFO)", "a character device", "a block device", "a socket",
 * "a directory", "a regular file" or "a special file". */
const char *sb_file_kind(unsigned int st_mode);

#ifdef __cplusplus
}
#endif

#endif
