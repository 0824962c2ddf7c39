/* The blob of an f32 matmul whose B comes at run time (uk_matmul.h): a
 * 1x1 conv's header and per-channel arrays (uk_abi.h, "f32 kinds"), but
 * no weights, which the kernel packs from B into its scratch,
 * TINYML_UK_F32_GROUP columns at a time (backends/x86/matmul_f32.c). */
#include "uk_matmul.h"

#include <string.h>

#include "../../common/alloc.h"
#include "uk_pack.h"
#include "uk_read.h"
#include "ukernel_op.h"

static int32_t round_up(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

/* Lays out the blob; returns its size, or 0 when a field would not fit. */
static size_t layout(tc_uk_chain_t *c) {
  tinyml_uk_params_t *p = &c->p;
  if (p->ic > (1 << 23) || p->oc > (1 << 20)) return 0;
  p->version = TINYML_UK_VERSION;
  p->k = p->k_padded = p->ic;
  p->k_block = 1;
  p->oc_block = 16;
  p->oc_padded = round_up(p->oc, 8);
  p->scratch_bytes = 4 * TINYML_UK_F32_GROUP * p->k; /* at most 2^30: k <= 2^23 */
  p->weights_off = tc_uk_f32_chan_layout(p);
  memcpy(&p->act_min, &c->lo, 4);
  memcpy(&p->act_max, &c->hi, 4);
  return (size_t)p->weights_off;
}

/* Element o of a per-channel constant of n elements (1: broadcast), or
 * `none` past the channels or without the op. */
static float chan_at(MlirAttribute a, int32_t o, int32_t oc, float none) {
  if (mlirAttributeIsNull(a) || o >= oc) return none;
  return tc_uk_f32_at(a, tc_uk_numel(a) == 1 ? 0 : o);
}

MlirValue tc_uk_blob_matmul_f32(MlirContext ctx, tc_uk_chain_t *c, const tinyml_allocator_t *a,
                                MlirOperation before) {
  MlirValue none = {NULL};
  size_t size = layout(c);
  uint8_t *blob = size ? tinyml__calloc(a, size, 1, 64) : NULL;
  if (!blob) return none;
  const tinyml_uk_params_t *p = &c->p;
  memcpy(blob, p, sizeof(*p));
  float *bias = (float *)(void *)(blob + p->bias_off);
  float *scale = (float *)(void *)(blob + p->mult_off);
  float *offset = (float *)(void *)(blob + p->shift_off);
  for (int32_t o = 0; o < round_up(p->oc_padded, 16); ++o) {
    bias[o] = 0.0f; /* tosa.matmul has none; an add after it is the offset */
    scale[o] = chan_at(c->scale, o, p->oc, 1.0f);
    offset[o] = chan_at(c->offset, o, p->oc, -0.0f);
  }
  return tc_uk_blob_const(ctx, blob, size, a, before);
}
