/* SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND, as TFLite's reference kernels
 * compute them: 4-D NHWC, or 3-D NHC, which TFLite treats as NH1C with a
 * block width of 1.  Block shape, paddings and crops must be constants.
 * The values only move, so a quantised input and output must share their
 * quantisation; SPACE_TO_BATCH_ND pads with the output zero point, as
 * TFLite does.
 *
 * Batch index b' of the blocked tensor holds block offset (dy, dx) of
 * input batch b where b' = (dy * block_w + dx) * batch + b: that is a
 * reshape to [n, h/bh, bh, w/bw, bw, c] and a transpose putting bh, bw
 * first (and the inverse for BATCH_TO_SPACE_ND). */
#include <string.h>

#include "tfl_lower.h"

typedef struct blocks {
  int64_t dims[4]; /* the input as NHWC (w = 1 for 3-D) */
  int64_t block[2];
  int64_t pads[4]; /* top, bottom, left, right: paddings, or crops */
} blocks_t;

/* Reads block_shape (input 1) and paddings or crops (input 2), checking
 * them against the input's shape. */
static int read_blocks(tfl_ctx_t *c, const tfl_tensor_t *in, blocks_t *b) {
  uint32_t spatial = in->rank - 2, nb = 0, np = 0;
  int64_t block[2], pads[4];
  if (in->rank != 3 && in->rank != 4) {
    tfl_fail(c, "input '%s' is %u-D; only 3-D and 4-D inputs are supported", in->name, in->rank);
    return 0;
  }
  if (!tfl_const_ints(c, 1, block, 2, &nb) || !tfl_const_ints(c, 2, pads, 4, &np)) return 0;
  if (nb != spatial || np != 2 * spatial) {
    tfl_fail(c, "a %u-D input needs %u block sizes and %u paddings or crops, not %u and %u",
             in->rank, spatial, 2 * spatial, nb, np);
    return 0;
  }
  b->dims[0] = in->shape[0];
  b->dims[1] = in->shape[1];
  b->dims[2] = spatial == 2 ? in->shape[2] : 1;
  b->dims[3] = in->shape[in->rank - 1];
  b->block[0] = block[0];
  b->block[1] = spatial == 2 ? block[1] : 1;
  memset(b->pads, 0, sizeof b->pads);
  memcpy(b->pads, pads, sizeof(int64_t) * np);
  for (int i = 0; i < 2; ++i)
    if (b->block[i] < 1 || b->block[i] > 4096) {
      tfl_fail(c, "block size %lld is invalid", (long long)b->block[i]);
      return 0;
    }
  for (int i = 0; i < 4; ++i)
    if (b->pads[i] < 0 || b->pads[i] > 65536) {
      tfl_fail(c, "padding or crop %lld is invalid", (long long)b->pads[i]);
      return 0;
    }
  return 1;
}

/* The input in NHWC and the output's type; 0 after recording an error. */
static te_value_t operands(tfl_ctx_t *c, blocks_t *b, te_type_t *out_type) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_value_t none = {0};
  if (!in || !out) {
    tfl_fail(c, "missing input or output");
    return none;
  }
  if ((in->type != TFL_FLOAT32 && in->type != TFL_INT8) || !tfl_te_type(out, out_type) ||
      !tfl_quant_matches(in, out)) {
    tfl_fail(c, "input %s and output %s: only FLOAT32, or INT8 with the same quantisation, "
                "are supported", tfl_type_name(in->type), tfl_type_name(out->type));
    return none;
  }
  if (!read_blocks(c, in, b)) return none;
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? te_reshape(&c->e, x, 4, b->dims) : x;
}

/* The output must have the NHWC shape `want` (without W when 3-D). */
static int output_is(tfl_ctx_t *c, const te_type_t *t, const int64_t want[4]) {
  int64_t w3[3] = {want[0], want[1], want[3]};
  const int64_t *w = t->rank == 3 ? w3 : want;
  int ok = t->rank == 4 || (t->rank == 3 && want[2] == 1);
  for (uint32_t d = 0; ok && d < t->rank; ++d) ok = t->dims[d] == w[d];
  if (!ok) tfl_fail(c, "the output's shape disagrees with the input, block and %s",
                    c->op->builtin_code == 37 ? "crops" : "paddings");
  return ok;
}

static te_value_t pad_value(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *out) {
  if (x.type.elem == TE_F32) return te_scalar_f32(&c->e, 0.0f);
  return te_scalar_int(&c->e, x.type.elem, tfl_is_quantized(out) ? tfl_zero_point(out) : 0);
}

tinyml_status_t tfl_lower_space_to_batch(tfl_ctx_t *c) {
  blocks_t b;
  te_type_t t;
  te_value_t x = operands(c, &b, &t);
  if (!x.id) return c->error;
  int64_t h = b.dims[1] + b.pads[0] + b.pads[1], w = b.dims[2] + b.pads[2] + b.pads[3];
  if (h % b.block[0] || w % b.block[1])
    return tfl_fail(c, "padded size %lld x %lld is not a multiple of the block %lld x %lld",
                    (long long)h, (long long)w, (long long)b.block[0], (long long)b.block[1]);
  if (b.pads[0] || b.pads[1] || b.pads[2] || b.pads[3]) {
    int64_t p[8] = {0, 0, b.pads[0], b.pads[1], b.pads[2], b.pads[3], 0, 0};
    te_type_t pt = te_type(x.type.elem, 4, (int64_t[4]){b.dims[0], h, w, b.dims[3]});
    te_value_t ops[3] = {x, te_shape(&c->e, 8, p), pad_value(c, x, tfl_out(c, 0))};
    x = te_op(&c->e, "tosa.pad", ops, 3, NULL, &pt);
  }
  int64_t bh = b.block[0], bw = b.block[1];
  x = te_reshape(&c->e, x, 6, (int64_t[6]){b.dims[0], h / bh, bh, w / bw, bw, b.dims[3]});
  static const int32_t perm[6] = {2, 4, 0, 1, 3, 5};
  x = te_transpose(&c->e, x, perm);
  int64_t want[4] = {b.dims[0] * bh * bw, h / bh, w / bw, b.dims[3]};
  if (!output_is(c, &t, want)) return c->error;
  return tfl_set_out(c, 0, te_reshape(&c->e, x, t.rank, t.dims));
}

tinyml_status_t tfl_lower_batch_to_space(tfl_ctx_t *c) {
  blocks_t b;
  te_type_t t;
  te_value_t x = operands(c, &b, &t);
  if (!x.id) return c->error;
  int64_t bh = b.block[0], bw = b.block[1], n = b.dims[0] / (bh * bw);
  if (b.dims[0] % (bh * bw))
    return tfl_fail(c, "batch %lld is not a multiple of the block %lld x %lld",
                    (long long)b.dims[0], (long long)bh, (long long)bw);
  int64_t h = b.dims[1] * bh, w = b.dims[2] * bw;
  if (b.pads[0] + b.pads[1] >= h || b.pads[2] + b.pads[3] >= w)
    return tfl_fail(c, "the crops leave nothing of %lld x %lld", (long long)h, (long long)w);
  x = te_reshape(&c->e, x, 6, (int64_t[6]){bh, bw, n, b.dims[1], b.dims[2], b.dims[3]});
  static const int32_t perm[6] = {2, 3, 0, 4, 1, 5};
  x = te_reshape(&c->e, te_transpose(&c->e, x, perm), 4, (int64_t[4]){n, h, w, b.dims[3]});
  int64_t start[4] = {0, b.pads[0], b.pads[2], 0};
  int64_t size[4] = {n, h - b.pads[0] - b.pads[1], w - b.pads[2] - b.pads[3], b.dims[3]};
  x = te_slice(&c->e, x, start, size);
  if (!output_is(c, &t, size)) return c->error;
  return tfl_set_out(c, 0, te_reshape(&c->e, x, t.rank, t.dims));
}
