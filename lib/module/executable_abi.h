/* The ABI between compiled executables and the runtime.  Versioned as if it
 * were a schema: change it only by bumping TINYML_EXE_ABI_VERSION.
 *
 * An "elf" executable is an ELF shared object.  Its ELF entry point (e_entry)
 * is a function `const tinyml_exe_library_t *query(uint32_t max_abi_version)`
 * that returns a table of dispatch entries, or NULL when it cannot provide
 * the requested version.  The only undefined symbols it may reference are
 * the imports listed below, which the loader binds to the runtime's own. */
#ifndef TINYML_MODULE_EXECUTABLE_ABI_H
#define TINYML_MODULE_EXECUTABLE_ABI_H

#include <stdint.h>

#define TINYML_EXE_ABI_VERSION 2u

/* The exported entry point's name (the ELF e_entry must be this symbol). */
#define TINYML_EXE_QUERY_SYMBOL "tinyml_query"

/* Imports an executable may use: LLVM emits calls to the memory functions
 * for large fills and copies, and MLIR 22 lowers math.exp/log/tanh/... to
 * libm calls.  X(name) for each; the runtime binds them to its own. */
#define TINYML_EXE_IMPORT_LIST(X)                                              \
  X(memcpy) X(memset) X(memmove)                                               \
  X(expf) X(exp2f) X(expm1f) X(logf) X(log2f) X(log10f) X(log1pf)              \
  X(tanhf) X(sinhf) X(coshf) X(erff) X(powf) X(sinf) X(cosf) X(tanf)           \
  X(asinf) X(acosf) X(atanf) X(atan2f) X(fmodf) X(cbrtf) X(sqrtf)              \
  X(roundf) X(floorf) X(ceilf) X(truncf) X(rintf) X(fabsf)                    \
  X(sincosf) /* LLVM merges sinf + cosf of one value into it */
#define TINYML_EXE_IMPORT_NAME(name) #name,
#define TINYML_EXE_IMPORTS {TINYML_EXE_IMPORT_LIST(TINYML_EXE_IMPORT_NAME)}

/* One dispatch: `bindings[i]` points at the byte range of argument i, which
 * the kernel reads or writes in full and never outside.
 *
 * A dispatch runs as `phase_count` phases, in order: every call for phase p
 * returns before any call for phase p + 1 starts.  Phase p may be split into
 * `workgroup_count` calls, fn(bindings, p, w, workgroup_count) for each w in
 * [0, workgroup_count), which may run concurrently on different threads:
 * they write disjoint bytes, and together do exactly what
 * fn(bindings, p, 0, 1) does, bit for bit, for any workgroup_count >= 1.
 * `workgroups[p]` is how many of them are useful (more just run empty);
 * 1 means the phase is not worth splitting.  The compiler makes one phase
 * per entry for bare-metal targets, whose runtime has no threads and loads
 * nothing else. */
typedef void (*tinyml_exe_entry_fn)(void *const *bindings, uint32_t phase,
                                    uint32_t workgroup, uint32_t workgroup_count);

#define TINYML_EXE_MAX_PHASES 32u

typedef struct tinyml_exe_entry {
  tinyml_exe_entry_fn fn;
  uint32_t binding_count;
  uint32_t phase_count; /* 1..TINYML_EXE_MAX_PHASES */
  /* binding_count entries: the exact byte size each argument covers, so the
   * runtime can check the schedule against what the code really touches. */
  const uint64_t *binding_sizes;
  const uint32_t *workgroups; /* phase_count entries, each >= 1 */
} tinyml_exe_entry_t;

typedef struct tinyml_exe_library {
  uint32_t abi_version;
  uint32_t entry_count;
  const tinyml_exe_entry_t *entries;
} tinyml_exe_library_t;

typedef const tinyml_exe_library_t *(*tinyml_exe_query_fn)(uint32_t max_abi_version);

#endif
