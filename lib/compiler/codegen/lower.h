/* Lowering the dispatch functions of a partitioned graph to the LLVM
 * dialect, for one target. */
#ifndef TINYML_COMPILER_CODEGEN_LOWER_H
#define TINYML_COMPILER_CODEGEN_LOWER_H

#include "../linalg/graph.h"
#include "../target/target.h"

/* Microkernel calls, the target's strategy, the scratch rewrite, phases and
 * workgroups (when its runtime has threads) and its lowering pipeline, in
 * place on g->dispatch_module; records each dispatch's scratch size. */
tinyml_status_t tc_lower_dispatches(MlirContext ctx, const tc_target_t *target, tc_graph_t *g,
                                    tc_diag_t *diag, const tinyml_allocator_t *a);

#endif
