/* Kernels never allocate: their temporaries become arena scratch. */
#ifndef TINYML_COMPILER_LINALG_SCRATCH_H
#define TINYML_COMPILER_LINALG_SCRATCH_H

#include "graph.h"

/* Replaces each top-level static memref.alloc of each dispatch function by a
 * view into a new trailing scratch argument and records the scratch size. */
tinyml_status_t tc_allocs_to_scratch(MlirContext ctx, tc_graph_t *g,
                                     const tinyml_allocator_t *a);

#endif
