/* Code generation for the dispatches of a partitioned graph. */
#ifndef TINYML_COMPILER_CODEGEN_H
#define TINYML_COMPILER_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "graph.h"

typedef struct tc_codegen_target {
  const char *triple, *cpu, *features;
  int opt_level;
  const char *lld_emulation;
  const char *query_symbol; /* the object's one export; NULL = tinyml_query */
  /* Microkernel bitcode to link in when the dispatches call it, or NULL. */
  const unsigned char *ukernel_bitcode;
  size_t ukernel_bitcode_size;
  /* Features (comma-separated) that a kernel function declared with them
   * keeps when `features` lacks them: the blob tells it whether to call
   * that function (uk_abi.h, dot4).  NULL: none. */
  const char *ukernel_keep_features;
} tc_codegen_target_t;

/* Strategy, scratch rewrite and lowering to the LLVM dialect, in place on
 * g->dispatch_module; records each dispatch's scratch size. */
tinyml_status_t tc_lower_dispatches(MlirContext ctx, const tinyml_backend_t *be,
                                    tc_graph_t *g, tc_diag_t *diag,
                                    const tinyml_allocator_t *a);

/* Translates to LLVM IR, adds the executable ABI, optimises and emits a
 * relocatable object (allocated with `a`). */
tinyml_status_t tc_emit_object(const tc_graph_t *g, const tc_codegen_target_t *tg,
                               const tinyml_allocator_t *a, uint8_t **out_obj,
                               size_t *out_size);

/* Links a relocatable object into the ELF shared object the runtime's loader
 * takes, with ld.lld (path from $TINYML_LLD or the build's configuration). */
tinyml_status_t tc_link_shared(const uint8_t *obj, size_t obj_size,
                               const tc_codegen_target_t *tg,
                               const tinyml_allocator_t *a, uint8_t **out_so,
                               size_t *out_size);

/* Toolchain plumbing shared by linking and packaging (link.c).  tc_spawn
 * runs argv[0] with output to `log`; a failure quotes the log and names the
 * environment variable that overrides the tool. */
int tc_write_file(const char *path, const void *data, size_t size);
tinyml_status_t tc_read_file(const char *path, const tinyml_allocator_t *a, uint8_t **out,
                             size_t *out_size);
tinyml_status_t tc_temp_dir(char *dir, size_t cap, const tinyml_allocator_t *a);
void tc_temp_dir_remove(const char *dir);
tinyml_status_t tc_spawn(char *const *argv, const char *log, const char *env_hint,
                         const tinyml_allocator_t *a);

#endif
