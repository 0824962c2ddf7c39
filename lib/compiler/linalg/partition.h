/* Dispatch formation, in the spirit of IREE's dispatch regions. */
#ifndef TINYML_COMPILER_LINALG_PARTITION_H
#define TINYML_COMPILER_LINALG_PARTITION_H

#include "graph.h"

/* Splits the single public function of `module` (already lowered to Linalg
 * on tensors) into dispatches.  Reshape-like ops become aliases that cost no
 * copy; tensor.empty, fills, pads and broadcasts are cloned into their only
 * consumer; single-use elementwise consumers join their producer. */
tinyml_status_t tc_partition(MlirContext ctx, MlirModule module,
                             const tinyml_allocator_t *a, tc_graph_t *out);

#endif
