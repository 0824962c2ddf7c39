/* The executable ABI (lib/module/executable_abi.h), added to the LLVM IR of
 * the dispatches. */
#ifndef TINYML_COMPILER_CODEGEN_EXE_ABI_H
#define TINYML_COMPILER_CODEGEN_EXE_ABI_H

#include <llvm-c/Core.h>

#include "../linalg/graph.h"

/* For each dispatch dN of g in `m`: a wrapper entry
 * void (void *const *bindings, uint32_t phase, uint32_t workgroup,
 * uint32_t workgroup_count), the byte size of every argument and each
 * phase's useful workgroup count; and the exported query function
 * `query_symbol` (NULL: tinyml_query) that returns the table.  The
 * kernels become internal. */
tinyml_status_t tc_add_exe_abi(LLVMModuleRef m, const tc_graph_t *g, const char *query_symbol,
                               const tinyml_allocator_t *a);

#endif
