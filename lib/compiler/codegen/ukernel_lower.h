/* Lowering microkernel dispatches to calls of the kernels. */
#ifndef TINYML_COMPILER_CODEGEN_UKERNEL_LOWER_H
#define TINYML_COMPILER_CODEGEN_UKERNEL_LOWER_H

#include "../linalg/graph.h"

/* On the call that replaces a TC_UKERNEL_OP (tosa/ukernel_op.h): how many
 * workgroups (bands of output pixels) the call is worth splitting into. */
#define TC_UKERNEL_WORKGROUPS "tinyml.workgroups"
/* And its work in multiply-adds (a lower bound: see useful_bands). */
#define TC_UKERNEL_WORK "tinyml.work"

/* Replaces the body of each dispatch function of g's dispatch module
 * holding TC_UKERNEL_OP with a call to tinyml_uk_<kind>(input, blob,
 * output, scratch, 0, 1) on its arguments, marked with
 * TC_UKERNEL_WORKGROUPS, and notes in the dispatch when its output may
 * take its residual's place (tc_dispatch_t.reuse_in). */
tinyml_status_t tc_ukernels_lower(MlirContext ctx, tc_graph_t *g, tc_diag_t *diag,
                                  const tinyml_allocator_t *a);

#endif
