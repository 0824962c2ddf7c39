/* The model's inputs and outputs as the module records them. */
#ifndef TINYML_COMPILER_LINALG_SIGNATURE_H
#define TINYML_COMPILER_LINALG_SIGNATURE_H

#include "graph.h"

/* Fills g->input_info/output_info from the function signature: names from
 * the `tinyml.name` argument/result attribute (default input_<i>/output_<i>)
 * and quantisation from `tinyml.scale`, `tinyml.zero_point` and
 * `tinyml.quant_axis`.
 * State: arguments marked `tinyml.state` (with `tinyml.state_init = dense<..>`
 * of the argument's type, its initial value, or `tinyml.state_fill = B`, the
 * byte every byte starts as, default 0) come after the caller's inputs, and as many
 * results marked `tinyml.state`, of the same types and in the same order,
 * after the caller's outputs: result i is argument i's value for the next
 * invoke.  Sets g->state_count and g->state_init. */
/* Pinned inputs: `tinyml.fixed_value = dense<..>` of the argument's own type
 * (an importer compiled that value in) becomes input_info[i].fixed_value,
 * byte_size bytes (non-NULL even when empty) that the runtime checks the
 * caller's input against; a state argument cannot have one. */
tinyml_status_t tc_signature_read(MlirOperation func, const tinyml_allocator_t *a,
                                  tc_graph_t *g);

/* Frees `n` tensor records as tc_signature_read made them, and the array. */
void tc_signature_free(tmod_tensor_t *t, uint32_t n, const tinyml_allocator_t *a);

#endif
