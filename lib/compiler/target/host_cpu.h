/* `--cpu host`: the CPU name and features of the machine that compiles,
 * from LLVM, so a module can use everything that machine has (with its
 * best microkernel build). */
#ifndef TINYML_COMPILER_TARGET_HOST_CPU_H
#define TINYML_COMPILER_TARGET_HOST_CPU_H

#include "tinyml.h"

#include "../backend.h"

/* LLVM's strings, kept while the compile uses them. */
typedef struct tc_host_cpu {
  char *cpu, *features;
} tc_host_cpu_t;

/* When *cpu is "host": points *cpu at the host's CPU name and, unless the
 * caller gave features, *features at the host's (both held in `host`).
 * Refused when `be` does not target the host's architecture.  Anything
 * else is left alone.  Release `host` with tc_host_cpu_release either way. */
tinyml_status_t tc_host_cpu_resolve(const tinyml_backend_t *be, const char **cpu,
                                    const char **features, tc_host_cpu_t *host,
                                    const tinyml_allocator_t *a);
void tc_host_cpu_release(tc_host_cpu_t *host);

#endif
