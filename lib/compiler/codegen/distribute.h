/* Splitting dispatches into phases and workgroups for the runtime's threads
 * (executable ABI 2).  See distribute.c. */
#ifndef TINYML_COMPILER_CODEGEN_DISTRIBUTE_H
#define TINYML_COMPILER_CODEGEN_DISTRIBUTE_H

#include <stdbool.h>

#include "../backend.h"
#include "../linalg/graph.h"

/* On the bufferized dispatch functions of g->dispatch_module: appends the
 * (phase, workgroup, workgroup_count) index arguments to every dispatch
 * function, tiles large linalg ops along a parallel dimension, cuts each
 * body into phases and spreads each phase's parallel loop over workgroups.
 * Records phase_count and workgroups[] in g->dispatches.  Results do not
 * depend on the workgroup count. */
tinyml_status_t tc_distribute(MlirContext ctx, const tinyml_backend_t *be, tc_graph_t *g,
                              tc_diag_t *diag, const tinyml_allocator_t *a);

/* For distribute.c: when `func` is a microkernel dispatch (ukernel_lower.c),
 * makes it one phase, split over the call's useful workgroups when `split`
 * (the target has threads), growing its scratch to one copy per workgroup;
 * returns whether it was one.  `func` already has its index arguments. */
bool tc_distribute_ukernel(MlirContext ctx, MlirOperation func, tc_dispatch_t *d, bool split);

#endif
