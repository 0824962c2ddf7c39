/* The blob of the kernel a matched chain becomes (uk_abi.h): parameters,
 * per-channel arrays and the weights packed as the backend's kernels read
 * them, as a tosa.const. */
#ifndef TINYML_COMPILER_TOSA_UK_PACK_H
#define TINYML_COMPILER_TOSA_UK_PACK_H

#include "../target/target.h"
#include "uk_chain.h"

/* An int8 chain's blob, for the target's packing and microkernel build
 * (its scratch and dot4), inserted before `before`; null when too large
 * or out of memory.  Completes c->p. */
MlirValue tc_uk_blob_s8(MlirContext ctx, tc_uk_chain_t *c, const tc_target_t *target,
                        const tinyml_allocator_t *a, MlirOperation before);

/* The same for an f32 chain (c->tuning and c->winograd set). */
MlirValue tc_uk_blob_f32(MlirContext ctx, tc_uk_chain_t *c, const tinyml_allocator_t *a,
                         MlirOperation before);

/* Places an f32 blob's per-channel arrays (uk_abi.h, "f32 kinds"): bias,
 * scale and offset, round_up(oc_padded, 16) floats each, one after the
 * other from the first 64-aligned byte after the header; sets p's
 * bias_off, mult_off and shift_off (round_off and chan_off: 0) and
 * returns the first 64-aligned byte after them, where the weights go.
 * p->oc_padded must be at most 2^20 + 16 (both callers refuse oc over
 * 2^20), so no offset overflows. */
int32_t tc_uk_f32_chan_layout(tinyml_uk_params_t *p);

#endif
