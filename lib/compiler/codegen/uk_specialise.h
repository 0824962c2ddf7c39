/* Per-layer copies of the int8 microkernels, for backends whose
 * descriptor asks for them (backend.h, ukernels.specialise).  The
 * compiler knows every layer's parameter header (shapes, strides, pads,
 * zero points, clamp; lib/ukernels/uk_abi.h), which the generic kernel
 * reads from the blob at run time.  Each int8 conv and depthwise call gets
 * its own copy of the kernel that reads the header from a constant global
 * instead, so LLVM folds those loads into the copy and unrolls the loops
 * whose bounds it then knows.  Per-channel data and weights stay in the
 * blob. */
#ifndef TINYML_COMPILER_CODEGEN_UK_SPECIALISE_H
#define TINYML_COMPILER_CODEGEN_UK_SPECIALISE_H

#include <llvm-c/Types.h>

#include "../linalg/graph.h"
#include "../target/target.h"

/* On the dispatch module right after tc_ukernels_lower: each call of
 * tinyml_uk_conv_s8 or tinyml_uk_depthwise_s8 whose blob is a module
 * constant calls tinyml_uk_<kind>.c<constant number> instead (declared
 * beside the generic kernel).  Does nothing unless the backend asks. */
void tc_ukernels_specialise(MlirContext ctx, const tc_target_t *t, tc_graph_t *g);

/* On the LLVM module once the kernels' bitcode is linked in: defines each
 * tinyml_uk_<kind>.c<N> as a copy of the kernel whose header is constant
 * N's, and the kernels' tinyml_uk_header hook where generic kernels
 * remain.  Errors name the copy that cannot be made. */
tinyml_status_t tc_ukernels_clone(LLVMModuleRef m, const tc_graph_t *g, const tc_target_t *tg,
                                  const tinyml_allocator_t *a);

#endif
