/* From the lowered dispatch module to a relocatable object for the target. */
#ifndef TINYML_COMPILER_CODEGEN_OBJECT_H
#define TINYML_COMPILER_CODEGEN_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Types.h>

#include "../linalg/graph.h"
#include "../target/target.h"

/* Translates g->dispatch_module to LLVM IR, links the target's
 * microkernel build when the dispatches call it, adds the executable ABI
 * (its query function named `query_symbol`, NULL: tinyml_query),
 * optimises and emits a relocatable object (allocated with `a`). */
tinyml_status_t tc_emit_object(const tc_graph_t *g, const tc_target_t *target,
                               const char *query_symbol, const tinyml_allocator_t *a,
                               uint8_t **out_obj, size_t *out_size);

/* A fresh copy of tg's microkernel bitcode in m's LLVM context (*out, the
 * caller's to link or dispose). */
tinyml_status_t tc_parse_ukernels(LLVMModuleRef m, const tc_target_t *tg,
                                  const tinyml_allocator_t *a, LLVMModuleRef *out);

#endif
