/* The threads of one context (host builds only: the freestanding runtime
 * runs every workgroup inline and has none of this). */
#ifndef TINYML_RUNTIME_POOL_H
#define TINYML_RUNTIME_POOL_H

#include <stdint.h>

#include "../module/executable_abi.h"
#include "tinyml.h"

#if !TINYML_FREESTANDING
typedef struct tinyml__pool tinyml__pool_t;

/* Starts `workers` (>= 1) threads that wait for work.  Allocates once,
 * through `a`; nothing after.  Errors: OUT_OF_MEMORY (also when the system
 * refuses a thread). */
tinyml_status_t tinyml__pool_create(uint32_t workers, const tinyml_allocator_t *a,
                                    tinyml__pool_t **out);

/* Stops and joins the threads; NULL is a no-op. */
void tinyml__pool_destroy(tinyml__pool_t *p, const tinyml_allocator_t *a);

/* Calls fn(bindings, phase, w, count) once for each w in [0, count), on the
 * calling thread and the workers, each taking the next w as it frees up, and
 * returns when all calls have returned.  count <= 32.  One caller at a time. */
void tinyml__pool_run(tinyml__pool_t *p, tinyml_exe_entry_fn fn, void *const *bindings,
                      uint32_t phase, uint32_t count);
#endif

#endif
