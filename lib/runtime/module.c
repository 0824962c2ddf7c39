/* Loading a module: verify the bytes (module reader), load each executable
 * (ELF loader), then check the schedule against what each kernel declares it
 * touches, so a module that passes can never make a kernel step outside the
 * buffers it is given. */
#include <string.h>

#include "../common/alloc.h"
#include "../common/status.h"
#include "elf/elf_arch.h"
#include "runtime.h"

static tinyml_status_t check_step(const tinyml_module_t *m, uint32_t s) {
  const tmod_step_t *step = &m->desc.steps[s];
  if (step->kind != TMOD_STEP_DISPATCH) return TINYML_OK;
  const tinyml_exe_library_t *lib = m->libraries[step->executable];
  if (step->entry >= lib->entry_count)
    return TINYML_STATUS_MAKE(&m->allocator, TINYML_STATUS_INVALID_MODULE,
                              "module: step %u calls entry %u but executable %u has %u",
                              s, step->entry, step->executable, lib->entry_count);
  const tinyml_exe_entry_t *e = &lib->entries[step->entry];
  if (e->binding_count != step->binding_count)
    return TINYML_STATUS_MAKE(&m->allocator, TINYML_STATUS_INVALID_MODULE,
                              "module: step %u binds %u buffers but its kernel takes %u",
                              s, step->binding_count, e->binding_count);
  for (uint32_t i = 0; i < e->binding_count; ++i)
    if (e->binding_sizes[i] != step->bindings[i].size)
      return TINYML_STATUS_MAKE(
          &m->allocator, TINYML_STATUS_INVALID_MODULE,
          "module: step %u binding %u is %llu bytes but its kernel touches %llu", s, i,
          (unsigned long long)step->bindings[i].size,
          (unsigned long long)e->binding_sizes[i]);
  return TINYML_OK;
}

/* "module: executable 0", or "module: variant 1 (x86-64-v4) executable 0"
 * when the loader chose a variant, so its image is not taken for the
 * baseline's. */
static tinyml_status_t executable_failed(const tinyml_module_t *m, tinyml_status_t st,
                                         uint32_t i) {
#if !TINYML_FREESTANDING
  for (uint32_t v = 0; v < m->desc.variant_count; ++v)
    if (m->desc.variants[v].executables == m->desc.executables)
      return TINYML_STATUS_ANNOTATE(st, "module: variant %u (%s) executable %u", v,
                                    m->desc.variants[v].cpu, i);
#else
  (void)m; /* no variants there */
#endif
  return TINYML_STATUS_ANNOTATE(st, "module: executable %u", i);
}

static tinyml_status_t load_executables(tinyml_module_t *m) {
  uint32_t n = m->desc.executable_count;
  /* One allocation for both arrays (libraries after the elfs). */
  m->elfs = tinyml__calloc(&m->allocator, n + 1,
                           sizeof(*m->elfs) + sizeof(*m->libraries), 8);
  if (!m->elfs)
    return TINYML_STATUS_MAKE(&m->allocator, TINYML_STATUS_OUT_OF_MEMORY,
                              "module: out of memory");
  m->libraries = (const tinyml_exe_library_t **)(void *)(m->elfs + n + 1);
  for (uint32_t i = 0; i < n; ++i) {
    const tmod_executable_t *x = &m->desc.executables[i];
#if !TINYML_FREESTANDING
    /* The ELF loader refuses another architecture's image too; this says
     * which, and what to do.  A freestanding build leaves it to the loader
     * (its messages carry no values to name the architectures with). */
    if (strcmp(x->format, "elf") != 0 || strcmp(x->arch, tinyml__elf_arch.name) != 0)
      return TINYML_STATUS_MAKE(&m->allocator, TINYML_STATUS_UNSUPPORTED,
                                "module: executable %u is '%s' for '%s'; this runtime "
                                "runs 'elf' for '%s' (compile with a matching --target)",
                                i, x->format, x->arch, tinyml__elf_arch.name);
#endif
    tinyml_status_t st = tinyml__elf_load(x->image, (size_t)x->image_size, &m->allocator,
                                          &m->elfs[i], &m->libraries[i]);
    if (st) return executable_failed(m, st, i);
  }
  return TINYML_OK;
}

/* The host's limits, checked on the sizes the module claims before any of
 * them is allocated: a context allocates the arena the module names, so a
 * module claiming gigabytes is refused here rather than there.  (The
 * constants lie in the module's bytes, which the reader checked.) */
#if !TINYML_FREESTANDING /* no limits there: tinyml.h says why */
static tinyml_status_t check_limits(const tmod_module_t *d, const tinyml__module_limits_t *l,
                                    const tinyml_allocator_t *a) {
  if (!l) return TINYML_OK;
  /* The reader has checked that each region and the constants fit size_t;
   * the regions' sum saturates.  size_t, not 64-bit, arithmetic: this is
   * in the Cortex-M4 runtime's 8 KiB. */
  size_t arena = 0;
  for (uint32_t r = 0; r < d->region_count; ++r) {
    size_t s = (size_t)d->region_sizes[r];
    arena = s > SIZE_MAX - arena ? SIZE_MAX : arena + s;
  }
  const char *what = NULL, *limit = NULL;
  size_t have = 0, max = 0;
  if (l->max_arena_size && arena > l->max_arena_size)
    what = "arena is", limit = "max_arena_size", have = arena, max = l->max_arena_size;
  else if (l->max_constant_size && (size_t)d->constants_size > l->max_constant_size)
    what = "constants are", limit = "max_constant_size", have = (size_t)d->constants_size,
    max = l->max_constant_size;
  if (!what) return TINYML_OK;
  return TINYML_STATUS_MAKE(a, TINYML_STATUS_UNSUPPORTED,
                            "module: the %s %zu bytes, more than %s (%zu)", what, have, limit,
                            max);
}
#endif

#if !TINYML_FREESTANDING
int tinyml__module_pick_variant(const tmod_module_t *d, tinyml__cpu_check_t check_cpu,
                                const tinyml_allocator_t *a) {
  for (uint32_t i = 0; check_cpu && i < d->variant_count; ++i) {
    tmod_module_t v = *d;
    v.cpu = d->variants[i].cpu;
    v.features = d->variants[i].features;
    v.executables = d->variants[i].executables;
    tinyml_status_t st = check_cpu(&v, a);
    if (!st) return (int)i;
    tinyml_status_free(st);
  }
  return -1;
}

/* Once, at load: the rest of the runtime sees the chosen variant as the
 * module's cpu, features and executables. */
static void use_best_variant(tinyml_module_t *m) {
  m->baseline = m->desc.executables;
  int i = tinyml__module_pick_variant(&m->desc, tinyml__elf_arch.check_cpu, &m->allocator);
  if (i < 0) return;
  m->desc.cpu = m->desc.variants[i].cpu;
  m->desc.features = m->desc.variants[i].features;
  m->desc.executables = m->desc.variants[i].executables;
}
#endif

tinyml_status_t tinyml__module_create(const uint8_t *data, size_t size, uint8_t *owned,
                                      const tinyml__module_limits_t *limits,
                                      const tinyml_allocator_t *a, tinyml_module_t **out) {
  tinyml_module_t *m = tinyml__calloc(a, 1, sizeof(*m), 16);
  if (!m) {
    tinyml__free(a, owned);
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_OUT_OF_MEMORY, "module: out of memory");
  }
  m->allocator = *a;
  m->owned_bytes = owned;
  tinyml_status_t st = tmod_read(data, size, a, &m->desc);
#if TINYML_FREESTANDING
  (void)limits;
#else
  if (!st) st = check_limits(&m->desc, limits, a);
  if (!st) use_best_variant(m);
#endif
  if (!st && tinyml__elf_arch.check_cpu) st = tinyml__elf_arch.check_cpu(&m->desc, a);
  if (!st) st = load_executables(m);
  for (uint32_t s = 0; !st && s < m->desc.step_count; ++s) {
    st = check_step(m, s);
    if (m->desc.steps[s].binding_count > m->max_bindings)
      m->max_bindings = m->desc.steps[s].binding_count;
  }
  if (st) {
    tinyml__module_destroy(m);
    return st;
  }
  *out = m;
  return TINYML_OK;
}

void tinyml__module_destroy(tinyml_module_t *m) {
  if (!m) return;
  tinyml_allocator_t a = m->allocator;
  for (uint32_t i = 0; m->elfs && i < m->desc.executable_count; ++i)
    tinyml__elf_unload(m->elfs[i], &a);
  tinyml__free(&a, m->elfs); /* and the libraries behind them */
#if !TINYML_FREESTANDING
  if (m->baseline) m->desc.executables = m->baseline; /* the reader's to free */
#endif
  tmod_read_free(&m->desc, &a);
  tinyml__free(&a, m->owned_bytes);
  tinyml__free(&a, m);
}

const char *tinyml__runtime_arch(void) { return tinyml__elf_arch.name; }
