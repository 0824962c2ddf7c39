/* Which dispatches may write their output over an input, noted right after
 * partitioning, while the dispatch functions still show what they compute
 * (Linalg on tensors, or one microkernel op).  The memory plan
 * (memory_plan.c) decides whether they do. */
#ifndef TINYML_COMPILER_LINALG_INPLACE_H
#define TINYML_COMPILER_LINALG_INPLACE_H

#include "graph.h"

/* Sets reuse_in/reuse_out of each elementwise dispatch (every op an
 * all-parallel linalg.generic whose indexing maps are identities: each
 * output element reads only the same element of each input) on an input
 * of the output's size whose last read it is.  With `raster_kernels` (a
 * backend whose int8 conv and depthwise kernels walk output pixels in
 * order, armv7em) also sets stream_in/stream_out/stream_lead of each such
 * kernel dispatch of batch 1 (graph.h says what the lead is). */
void tc_note_inplace(tc_graph_t *g, int raster_kernels);

/* tc_note_inplace also puts this unit attribute on every elementwise
 * generic (as above: identity maps, a scalar body) of whole-byte element
 * types (no i1: a vector of i1 is packed bits), in every dispatch.
 * Such an op may be placed exactly over an input, out == in, and LLVM's
 * loop vectorizer then only runs its scalar loop (its run-time overlap
 * check fails when the distance is 0).  Element i is read before it is
 * written, so chunks of consecutive elements are as sound as one at a
 * time: a strategy vectorizes ops with this mark itself (x86's
 * @elementwise_vec); the maps' identity is what makes flattening them
 * sound, which the transform dialect's matchers cannot check. */
#define TC_ELEMENTWISE_ATTR "tinyml.elementwise"

/* The lead of an int8 conv or depthwise of these dimensions (uk_abi.h's
 * names): the fewest bytes the output must start before the input so
 * that writing output pixel q, in raster order, never overwrites an input
 * row that pixel q or a later one still reads. */
uint64_t tc_stream_lead(int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow, int32_t oc,
                        int32_t stride_h, int32_t pad_top);

#endif
