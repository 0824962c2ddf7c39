/* Small helpers shared by the nn-family lowerings (onnx_ops_nn.c,
 * onnx_ops_norm.c).  Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_NN_UTIL_H
#define TINYML_IMPORTERS_ONNX_NN_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_lower.h"

/* ---- small helpers ---- */

static inline te_value_t f32(onnx_ctx_t *c, float v) { return te_scalar_f32(&c->e, v); }

static inline te_value_t add(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  return te_binary(&c->e, "tosa.add", a, b);
}

static inline te_value_t sub(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  return te_binary(&c->e, "tosa.sub", a, b);
}

static inline te_value_t mul(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  return te_mul(&c->e, a, b, 0);
}

static inline te_value_t slice(onnx_ctx_t *c, te_value_t x, const int64_t *start, const int64_t *size) {
  te_type_t t = te_type(x.type.elem, x.type.rank, size);
  te_value_t ops[3] = {x, te_shape(&c->e, x.type.rank, start), te_shape(&c->e, x.type.rank, size)};
  return te_op(&c->e, "tosa.slice", ops, 3, NULL, &t);
}

static inline te_value_t concat(onnx_ctx_t *c, const te_value_t *parts, uint32_t n, int32_t axis) {
  te_type_t t = parts[0].type;
  for (uint32_t i = 1; i < n; ++i) t.dims[axis] += parts[i].type.dims[axis];
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(&c->e, "tosa.concat", parts, n, props, &t);
}

/* Input i as a runtime FLOAT value; id 0 (error recorded) otherwise. */
static inline te_value_t float_in(onnx_ctx_t *c, uint32_t i) {
  const onnx_value_t *v = onnx_input(c, i);
  if (v && v->dtype != ONNX_FLOAT) {
    onnx_fail(c, "input %u: type %s is not supported (FLOAT only)", i, onnx_dtype_name(v->dtype));
    return (te_value_t){0};
  }
  return onnx_in(c, i);
}

/* A constant FLOAT input's elements, or NULL. */
static inline const float *const_floats(onnx_ctx_t *c, uint32_t i) {
  const onnx_value_t *v = onnx_const_input(c, i);
  return v && v->dtype == ONNX_FLOAT ? (const float *)v->data : NULL;
}

static inline float *alloc_floats(onnx_ctx_t *c, int64_t n) {
  float *p = tinyml__calloc(c->allocator, (size_t)n + 1, sizeof(float), 16);
  if (!p) onnx_oom(c);
  return p;
}

static inline te_value_t const_floats_value(onnx_ctx_t *c, float *data, uint32_t rank,
                                     const int64_t *dims) {
  te_type_t t = te_type(TE_F32, rank, dims);
  te_value_t v = te_const(&c->e, &t, data);
  tinyml__free(c->allocator, data);
  return v;
}

/* x with dims of size 1 inserted so a [n] vector lines up with `axis` of a
 * rank-`rank` tensor. */
static inline te_value_t along(onnx_ctx_t *c, te_value_t v, uint32_t rank, uint32_t axis) {
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = d == axis ? te_numel(&v.type) : 1;
  return te_reshape(&c->e, v, rank, dims);
}


static inline int spatial_input(onnx_ctx_t *c, te_value_t x) {
  if (!x.id) return 0;
  if (x.type.rank < 3) {
    onnx_fail(c, "the input must be [N, C, spatial...]");
    return 0;
  }
  return 1;
}

/* Convolution weights: constant floats, or a run-time f32 value. */
typedef struct conv_w {
  const float *cw;
  te_value_t rt;
} conv_w_t;

/* A Conv node's convolution on f32 operands (onnx_ops_nn.c). */
te_value_t onnx_conv_f32(onnx_ctx_t *c, const onnx_value_t *xv, const onnx_value_t *wv,
                         te_value_t x, const conv_w_t *w, te_value_t bias);

#endif
