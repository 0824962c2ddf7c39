/* Execution contexts: an arena plus the caller's I/O buffers, and the loop
 * that runs the schedule.  invoke allocates nothing. */
#include <string.h>

#include "../common/alloc.h"
#include "../common/status.h"
#include "runtime.h"

/* The context, its three pointer arrays (inputs, outputs, and the scratch
 * array of one step's bindings) and its state are one allocation: fewer
 * calls to the caller's allocator, and less code on a microcontroller.  The
 * counts are capped by the module reader, so the sum cannot overflow. */
tinyml_status_t tinyml__context_create(const tinyml_module_t *m,
                                       const tinyml_allocator_t *a,
                                       void *const *regions, uint32_t threads,
                                       tinyml_context_t **out) {
  (void)threads; /* 1 on freestanding builds: checked by the caller */
  size_t slots = (size_t)m->desc.input_count + m->desc.output_count + m->max_bindings + 3;
  size_t state_at = (sizeof(tinyml_context_t) + slots * sizeof(void *) + 15) / 16 * 16;
  /* The state lies in the module's bytes (the reader checked), so the sum
   * cannot overflow either. */
  tinyml_context_t *c = tinyml__calloc(a, 1, state_at + (size_t)m->desc.state_size, 16);
  if (!c) return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY, "context: out of memory");
  c->allocator = *a;
  c->module = m;
  c->inputs = (const void **)(void *)(c + 1);
  c->outputs = (void **)(c->inputs + m->desc.input_count + 1);
  c->scratch_ptrs = c->outputs + m->desc.output_count + 1;
  c->state = (uint8_t *)c + state_at;
  tinyml__context_reset(c);
  for (uint32_t r = 0; r < m->desc.region_count; ++r) {
    size_t size = (size_t)m->desc.region_sizes[r]; /* fits: the reader checked */
    c->arenas[r] = regions[r];
    if (c->arenas[r] || !size) continue;
    c->arenas[r] = tinyml__alloc(a, size, m->desc.arena_alignment);
    c->owned_arenas |= 1u << r;
    if (!c->arenas[r]) {
      tinyml__context_destroy(c);
      return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY,
                                "context: out of memory (arena region %u is %llu bytes)",
                                (unsigned)r, (unsigned long long)size);
    }
  }
#if !TINYML_FREESTANDING
  c->thread_count = threads;
  if (threads > 1) {
    tinyml_status_t st = tinyml__pool_create(threads - 1, a, &c->pool);
    if (st) {
      tinyml__context_destroy(c);
      return st;
    }
  }
#endif
  *out = c;
  return TINYML_OK;
}

void tinyml__context_destroy(tinyml_context_t *c) {
  if (!c) return;
  tinyml_allocator_t a = c->allocator;
#if !TINYML_FREESTANDING
  tinyml__pool_destroy(c->pool, &a);
#endif
  for (uint32_t r = 0; r < TMOD_MAX_ARENA_REGIONS; ++r)
    if (c->owned_arenas >> r & 1) tinyml__free(&a, c->arenas[r]);
  tinyml__free(&a, c);
}

/* Each phase waits for the one before.  A phase worth splitting is shared
 * by the context's threads in SPLIT workgroups per thread (at most 32):
 * each thread runs its own, then takes what is left of the others', so a
 * thread that the system delays holds up less of the phase.  The split
 * never changes a result bit (executable_abi.h).  A freestanding runtime
 * has no threads and loads only single-phase executables (elf/elf_loader.c),
 * which is what the compiler makes for bare-metal targets. */
#define SPLIT 2u

static void run_entry(tinyml_context_t *c, const tinyml_exe_entry_t *e) {
#if TINYML_FREESTANDING
  e->fn(c->scratch_ptrs, 0, 0, 1);
#else
  for (uint32_t p = 0; p < e->phase_count; ++p) {
    uint32_t n = e->workgroups[p], most = c->thread_count * SPLIT;
    if (most > 32) most = 32;
    if (c->pool && n > 1)
      tinyml__pool_run(c->pool, e->fn, c->scratch_ptrs, p, n < most ? n : most);
    else
      e->fn(c->scratch_ptrs, p, 0, 1);
  }
#endif
}

void tinyml__context_invoke(tinyml_context_t *c) {
  const tinyml_module_t *m = c->module;
  for (uint32_t s = 0; s < m->desc.step_count; ++s) {
    const tmod_step_t *step = &m->desc.steps[s];
    if (c->hook) c->hook(c->hook_user, s, 0);
    for (uint32_t i = 0; i < step->binding_count; ++i)
      c->scratch_ptrs[i] = tinyml__binding_ptr(c, &step->bindings[i]);
    if (step->kind == TMOD_STEP_COPY) {
      memmove(c->scratch_ptrs[1], c->scratch_ptrs[0], (size_t)step->bindings[0].size);
    } else {
      run_entry(c, &m->libraries[step->executable]->entries[step->entry]);
    }
    if (c->hook) c->hook(c->hook_user, s, 1);
  }
}
