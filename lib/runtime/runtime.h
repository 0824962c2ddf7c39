/* The runtime: loads verified modules and executes their schedules.  Never
 * includes compiler, MLIR or LLVM headers.  The public API in bindings-c/
 * validates arguments and maps onto these. */
#ifndef TINYML_RUNTIME_RUNTIME_H
#define TINYML_RUNTIME_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../module/executable_abi.h"
#include "../module/module.h"
#include "elf/elf_loader.h"
#include "pool.h"
#include "tinyml.h"

struct tinyml_module_s {
  tinyml_allocator_t allocator;
  tmod_module_t desc;
  uint8_t *owned_bytes; /* set when the module read its own file */
  tinyml__elf_t **elfs;
  const tinyml_exe_library_t **libraries;
  uint32_t max_bindings; /* most bindings of any step */
#if !TINYML_FREESTANDING
  /* desc's baseline executables while desc.executables, cpu and features
   * are the chosen variant's (tinyml__module_pick_variant). */
  const tmod_executable_t *baseline;
#endif
};

struct tinyml_context_s {
  tinyml_allocator_t allocator;
  const tinyml_module_t *module;
  uint8_t *arenas[TMOD_MAX_ARENA_REGIONS]; /* one per region */
  uint32_t owned_arenas; /* bit r: arenas[r] was allocated here */
  uint8_t *state;        /* module's state_size bytes, kept between invokes */
  const void **inputs;
  void **outputs;
  void **scratch_ptrs; /* max_bindings entries, reused by every step */
  tinyml_step_hook_t hook; /* NULL = none */
  void *hook_user;
#if !TINYML_FREESTANDING
  uint32_t thread_count; /* the caller's thread included */
  tinyml__pool_t *pool;  /* thread_count - 1 workers; NULL for one thread */
#endif
};

/* The host's limits on a module (tinyml_module_options_t); 0 = none. */
typedef struct tinyml__module_limits {
  size_t max_arena_size;    /* all arena regions together */
  size_t max_constant_size;
} tinyml__module_limits_t;

/* Takes ownership of `owned` (may be NULL) whether it succeeds or not.
 * `limits` may be NULL (none); they are checked right after the bytes are
 * verified, before the executables are loaded or anything is allocated
 * for the arena. */
tinyml_status_t tinyml__module_create(const uint8_t *data, size_t size,
                                      uint8_t *owned, const tinyml__module_limits_t *limits,
                                      const tinyml_allocator_t *a, tinyml_module_t **out);
void tinyml__module_destroy(tinyml_module_t *m);

#if !TINYML_FREESTANDING
/* The index of the first of d's variants (best first) that `check_cpu`
 * lets this CPU run, or -1: none, the baseline runs.  The check is a
 * parameter so a test can play a CPU that lacks a feature. */
typedef tinyml_status_t (*tinyml__cpu_check_t)(const tmod_module_t *d,
                                               const tinyml_allocator_t *a);
int tinyml__module_pick_variant(const tmod_module_t *d, tinyml__cpu_check_t check_cpu,
                                const tinyml_allocator_t *a);
#endif

/* The architecture this runtime runs executables for, as modules name it
 * ("x86_64", "riscv64", "arm"): the host's (lib/runtime/elf/elf_arch.h). */
const char *tinyml__runtime_arch(void);

/* `regions`: caller memory for each arena region, checked by the caller;
 * NULL entries are allocated here.  `threads` (>= 1, 1
 * on freestanding builds): how many threads run each invoke, the caller's
 * included. */
tinyml_status_t tinyml__context_create(const tinyml_module_t *m,
                                       const tinyml_allocator_t *a,
                                       void *const *regions, uint32_t threads,
                                       tinyml_context_t **out);
void tinyml__context_destroy(tinyml_context_t *c);
void tinyml__context_invoke(tinyml_context_t *c);
/* Sets the state to its initial value (module.h).  Inline: two callers,
 * and a call costs the Cortex-M4 runtime more than the copy. */
static inline void tinyml__context_reset(tinyml_context_t *c) {
  const tmod_module_t *d = &c->module->desc;
  /* Guarded: a module without state has a NULL state pointer. */
  if (d->state_size) memcpy(c->state, d->state, (size_t)d->state_size);
}

/* Where binding b points in context c: an input, an output, the
 * constants or the arena, plus its offset; NULL for an unbound input or
 * output.  Inline, so that white-box tests and bench/phases.c, which link
 * the shared library (internal symbols hidden), walk steps the same way. */
static inline void *tinyml__binding_ptr(const tinyml_context_t *c, const tmod_binding_t *b) {
  uint8_t *base = NULL;
  switch (b->kind) {
    case TMOD_BUFFER_INPUT: base = (uint8_t *)(uintptr_t)c->inputs[b->index]; break;
    case TMOD_BUFFER_OUTPUT: base = (uint8_t *)c->outputs[b->index]; break;
    case TMOD_BUFFER_CONSTANT: base = (uint8_t *)(uintptr_t)c->module->desc.constants; break;
    case TMOD_BUFFER_STATE: base = c->state; break;
    default: base = c->arenas[b->index]; break;
  }
  return base ? base + b->offset : NULL;
}

#endif
