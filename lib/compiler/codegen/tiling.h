/* Step 1 of distributing dispatches over threads (distribute.h): tiling
 * the heavy linalg ops at the top of each dispatch function. */
#ifndef TINYML_COMPILER_CODEGEN_TILING_H
#define TINYML_COMPILER_CODEGEN_TILING_H

#include "../linalg/graph.h"

/* Tiles every linalg op at the top of a dispatch function of g that does
 * at least 32 K points of work (heavier named ops count 8 per point) along
 * its outermost parallel dimension of extent > 1, about 1 K points per
 * tile, when every input is safe to read while other tiles write.  Each
 * loop made is marked tinyml.wg: parallel by construction. */
tinyml_status_t tc_tile_large_ops(MlirContext ctx, tc_graph_t *g, tc_diag_t *diag,
                                  const tinyml_allocator_t *a);

/* The points of work of a linalg op as the tiling counts them (heavier
 * named ops 8 per point, a matmul K per point); 0 when its iteration
 * space is not known. */
int64_t tc_linalg_work(MlirOperation op);

#endif
