/*
 * library.h — what a program that uses libsolbench calls first.
 *
 *     sb_library_init();   // the benchmarks of this build, registered
 *
 * The core's registry (sb_registry, sb_bench_find) is empty until then:
 * the list of benchmarks lives above them (src/bench/library.c), and the
 * core below names none. Calling it again is harmless.
 */
#ifndef SOLBENCH_LIBRARY_H
#define SOLBENCH_LIBRARY_H

#ifdef __cplusplus
extern "C" {
#endif

struct sb_bench;

/* Registers every benchmark of this build (sb_registry_use). */
void sb_library_init(void);
/* Every benchmark definition of this build, NULL-terminated, in run
 * order, those without an impl here included. */
const struct sb_bench *const *sb_benches(void);

#ifdef __cplusplus
}
#endif

#endif
