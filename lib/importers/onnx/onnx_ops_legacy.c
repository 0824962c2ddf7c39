/* ONNX lowerings: operators ONNX dropped after opset 9 that old exports
 * still carry and onnxruntime still runs, as the ONNX 1.x operator docs
 * and onnxruntime's CPU kernels define them: ImageScaler (y = scale * x +
 * bias[channel], NCHW) and Crop (NCHW; border = left, top, right, bottom;
 * with `scale` = height, width the crop starts at top-left and has that
 * size).  See onnx_lower.h. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"
#include "onnx_seq.h"

/* Input 0, which must be an NCHW float tensor. */
static onnx_value_t *nchw_input(onnx_ctx_t *c) {
  onnx_value_t *x = onnx_input(c, 0);
  if (!x || x->dtype != ONNX_FLOAT || x->rank != 4 || (!x->data && !x->v.id)) {
    onnx_fail(c, "the input must be a rank-4 (NCHW) FLOAT tensor");
    return NULL;
  }
  return x;
}

/* Host fold, rounding as the run-time mul then add (two roundings). */
static tinyml_status_t scaler_fold(onnx_ctx_t *c, const onnx_value_t *x, float scale,
                                   const float *bias) {
  int64_t n = onnx_numel(4, x->dims), plane = x->dims[2] * x->dims[3];
  float *y = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!y) return onnx_oom(c);
  const float *in = x->data;
  for (int64_t i = 0; i < n; ++i) {
    float p = in[i] * scale;
    y[i] = p + bias[(i / plane) % x->dims[1]];
  }
  int64_t dims[4];
  memcpy(dims, x->dims, sizeof dims);
  tinyml_status_t st = onnx_set_out_const(c, 0, ONNX_FLOAT, 4, dims, y);
  tinyml__free(c->allocator, y);
  return st;
}

static tinyml_status_t lower_image_scaler(onnx_ctx_t *c) {
  onnx_value_t *x = nchw_input(c);
  if (!x) return c->error;
  const Onnx__AttributeProto *b = onnx_attr(c, "bias");
  if (!b || (int64_t)b->n_floats != x->dims[1] || b->n_floats > 4096)
    return onnx_fail(c, "'bias' must hold one value per channel (%lld)", (long long)x->dims[1]);
  float scale = onnx_attr_float(c, "scale", 1.0f), bias[4096];
  for (size_t k = 0; k < b->n_floats; ++k) bias[k] = b->floats[k];
  if (x->data) return scaler_fold(c, x, scale, bias);
  te_value_t v = onnx_in(c, 0);
  if (!v.id) return c->error;
  int64_t one[4] = {1, 1, 1, 1}, bdims[4] = {1, x->dims[1], 1, 1};
  te_type_t st = te_type(TE_F32, 4, one), bt = te_type(TE_F32, 4, bdims);
  te_value_t p = te_mul(&c->e, v, te_const(&c->e, &st, &scale), 0);
  return onnx_set_out(c, 0, te_binary(&c->e, "tosa.add", p, te_const(&c->e, &bt, bias)));
}

static tinyml_status_t lower_crop(onnx_ctx_t *c) {
  onnx_value_t *x = nchw_input(c);
  if (!x) return c->error;
  int64_t border[4], scale[2];
  if (onnx_attr_ints(c, "border", border, 4) != 4)
    return onnx_fail(c, "'border' must hold 4 values (left, top, right, bottom)");
  int64_t n_scale = onnx_attr_ints(c, "scale", scale, 2);
  if (n_scale != -1 && n_scale != 2) return onnx_fail(c, "'scale' must hold 2 values");
  int64_t h = x->dims[2], w = x->dims[3], top = border[1], left = border[0];
  int64_t bottom = n_scale == 2 ? top + scale[0] : h - border[3];
  int64_t right = n_scale == 2 ? left + scale[1] : w - border[2];
  if (top < 0 || left < 0 || bottom > h || right > w || bottom <= top || right <= left)
    return onnx_fail(c, "the crop [%lld, %lld) x [%lld, %lld) is empty or outside the %lldx%lld image",
                     (long long)top, (long long)bottom, (long long)left, (long long)right,
                     (long long)h, (long long)w);
  onnx_value_t in = *x, rows = {0}, out = {0};
  if (onnx_view_slice(c, &in, 2, top, bottom - top, &rows) &&
      onnx_view_slice(c, &rows, 3, left, right - left, &out))
    onnx_bind_out(c, 0, &out);
  tinyml__free(c->allocator, rows.data);
  tinyml__free(c->allocator, out.data);
  return c->error;
}

const onnx_lowering_t onnx_lowerings_legacy[] = {
    {"ImageScaler", 1, 9, lower_image_scaler},
    {"Crop", 1, 9, lower_crop},
    {NULL, 0, 0, NULL},
};
