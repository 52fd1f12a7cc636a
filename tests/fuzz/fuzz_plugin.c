/*
 * fuzz_plugin.c — libFuzzer harness of the plugin-path check
 * (src/core/fileio.c: sb_plugin_check), the input being the bytes of a
 * file a user names as a PJRT plugin.
 *
 * sb_plugin_check takes a path, so the input is written to a temporary
 * file with a fixed name per process ($TMPDIR or /tmp,
 * solbench-fuzz-plugin-PID.so). Nothing is ever dlopen'ed here: the check
 * is what stands between a user's path and dlopen.
 *
 * Invariants checked (abort = finding), for a file the check accepts:
 *   - it is an ELF shared object of this machine (magic, class, byte
 *     order, ET_DYN, the machine) with its program headers inside it,
 *     and every loadable segment ends within its size (what dlopen maps);
 *   - the same file cut one byte before the end of its last loadable
 *     segment or header table is refused (a truncated copy: the SIGBUS
 *     the check exists for).
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "solbench/error.h"
#include "solbench/fileio.h"

#if defined(__x86_64__)
#define FZ_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define FZ_MACHINE EM_AARCH64
#else
#define FZ_MACHINE EM_NONE
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sizeof(void *) != 8)
        return 0; /* the invariants read ELF64 */
    const char *path = fz_tmp_file("plugin", "so");
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return 0;
    sb_err e = {0};
    if (sb_plugin_check(path, &e) != 0) {
        FZ_INVARIANT(e.msg[0] != '\0', "a refusal without a message");
        return 0;
    }
    Elf64_Ehdr eh;
    FZ_INVARIANT(size >= sizeof eh, "a %zu-byte file accepted", size);
    memcpy(&eh, data, sizeof eh);
    FZ_INVARIANT(memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
                     eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_type == ET_DYN,
                 "accepted without an ELF64 shared-object header");
    FZ_INVARIANT(FZ_MACHINE == EM_NONE || eh.e_machine == FZ_MACHINE,
                 "accepted for machine %u", (unsigned)eh.e_machine);
    double end = (double)eh.e_phoff + (double)eh.e_phnum * sizeof(Elf64_Phdr);
    FZ_INVARIANT(eh.e_phnum > 0 && end <= (double)size,
                 "accepted with program headers ending at %.0f of %zu", end,
                 size);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, data + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD)
            continue;
        double seg = (double)ph.p_offset + (double)ph.p_filesz;
        FZ_INVARIANT(seg <= (double)size,
                     "accepted with segment %u ending at %.0f of %zu", i, seg,
                     size);
        if (seg > end)
            end = seg;
    }
    /* cut one byte short of what must be there: refused */
    if (end >= 1 && end <= (double)size && truncate(path, (off_t)end - 1) == 0)
        FZ_INVARIANT(sb_plugin_check(path, &e) != 0,
                     "a copy cut to %.0f bytes (needs %.0f) accepted", end - 1,
                     end);
    return 0;
}
