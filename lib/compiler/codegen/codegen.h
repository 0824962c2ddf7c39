/* Code generation for the dispatches of a partitioned graph. */
#ifndef TINYML_COMPILER_CODEGEN_H
#define TINYML_COMPILER_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "../linalg/graph.h"
#include "../target/target.h"

/* Strategy, scratch rewrite and lowering to the LLVM dialect, in place on
 * g->dispatch_module; records each dispatch's scratch size. */
tinyml_status_t tc_lower_dispatches(MlirContext ctx, const tc_target_t *target, tc_graph_t *g,
                                    tc_diag_t *diag, const tinyml_allocator_t *a);

/* Translates to LLVM IR, adds the executable ABI (its query function named
 * `query_symbol`, NULL: tinyml_query), optimises and emits a relocatable
 * object (allocated with `a`). */
tinyml_status_t tc_emit_object(const tc_graph_t *g, const tc_target_t *target,
                               const char *query_symbol, const tinyml_allocator_t *a,
                               uint8_t **out_obj, size_t *out_size);

/* Links a relocatable object into the ELF shared object the runtime's loader
 * takes, with ld.lld (path from $TINYML_LLD or the build's configuration). */
tinyml_status_t tc_link_shared(const uint8_t *obj, size_t obj_size,
                               const tc_target_t *target,
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
