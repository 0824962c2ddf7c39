/* ONNX lowerings: 2-D (and 1-D) pools: MaxPool, AveragePool and the global
 * pools; 3-D windows go to onnx_ops_nn3d.c.  See onnx_lower.h.
 *
 * Windows are NHWC in TOSA, as for the convolutions (onnx_window.h). */
#include <math.h>
#include <string.h>

#include "onnx_window.h"

static te_value_t pad_explicit(onnx_ctx_t *c, te_value_t x, win_t *w) {
  int64_t p[8] = {0, 0, w->pb[0], w->pe[0], w->pb[1], w->pe[1], 0, 0};
  te_type_t t = x.type;
  for (int i = 0; i < 2; ++i) {
    t.dims[1 + i] += w->pb[i] + w->pe[i];
    w->in[i] += w->pb[i] + w->pe[i];
    w->pb[i] = w->pe[i] = 0;
  }
  te_value_t ops[3] = {x, te_shape(&c->e, 8, p), f32(c, 0.0f)};
  return te_op(&c->e, "tosa.pad", ops, 3, NULL, &t);
}

/* x[start : start + n*s : s] along NHWC axis 1 or 2: a slice, and for s > 1
 * a reshape to [.., n, s, ..] keeping index 0 of the s. */
static te_value_t strided(onnx_ctx_t *c, te_value_t x, int axis, int64_t start, int64_t n,
                          int64_t s) {
  int64_t st[4] = {0, 0, 0, 0}, size[4];
  memcpy(size, x.type.dims, sizeof size);
  st[axis] = start;
  size[axis] = n * s;
  x = slice(c, x, st, size);
  if (s == 1) return x;
  int64_t d5[5], s5[5] = {0, 0, 0, 0, 0}, z5[5];
  for (int i = 0, j = 0; i < 4; ++i) {
    d5[j++] = i == axis ? n : size[i];
    if (i == axis) d5[j++] = s;
  }
  memcpy(z5, d5, sizeof z5);
  z5[axis + 1] = 1;
  size[axis] = n;
  return te_reshape(&c->e, slice(c, te_reshape(&c->e, x, 5, d5), s5, z5), 4, size);
}

/* Dilated max pooling (TOSA has none): pad with the lowest value, then take
 * the maximum of strided views, one axis at a time (max is separable). */
static te_value_t dilated_max(onnx_ctx_t *c, te_value_t x, const win_t *w, te_value_t lowest) {
  int64_t p[8] = {0};
  te_type_t t = x.type;
  for (int i = 0; i < 2; ++i) {
    int64_t need = (w->k[i] - 1) * w->d[i] + w->out[i] * w->s[i] - w->pb[i] - w->in[i];
    p[2 + 2 * i] = w->pb[i];
    p[3 + 2 * i] = need > w->pe[i] ? need : w->pe[i];
    t.dims[1 + i] += p[2 + 2 * i] + p[3 + 2 * i];
  }
  te_value_t ops[3] = {x, te_shape(&c->e, 8, p), lowest};
  x = te_op(&c->e, "tosa.pad", ops, 3, NULL, &t);
  for (int i = 0; i < 2; ++i) {
    te_value_t m = {0};
    for (int64_t k = 0; k < w->k[i]; ++k) {
      te_value_t v = strided(c, x, 1 + i, k * w->d[i], w->out[i], w->s[i]);
      m = k ? te_binary(&c->e, "tosa.maximum", m, v) : v;
    }
    x = m;
  }
  return x;
}

/* Whether every window of a dilated pool reads at least one input element. */
static int windows_hit_input(const win_t *w) {
  for (int i = 0; i < 2; ++i)
    for (int64_t o = 0; o < w->out[i]; ++o) {
      int hit = 0;
      for (int64_t k = 0; k < w->k[i] && !hit; ++k) {
        int64_t at = o * w->s[i] - w->pb[i] + k * w->d[i];
        hit = at >= 0 && at < w->in[i];
      }
      if (!hit) return 0;
    }
  return 1;
}

/* Pools NHWC x over the window w; dt is the ONNX dtype (uint8 rides in
 * i8).  Id 0 with an error recorded when the form is not supported. */
te_value_t onnx_pool_nhwc(onnx_ctx_t *c, te_value_t x, win_t *w, int is_max, int cip,
                          int32_t dt) {
  if (cip && w->ceil_extra) {
    onnx_fail(c, "ceil_mode with count_include_pad is not supported");
    return (te_value_t){0};
  }
  te_value_t flip = te_scalar_int(&c->e, TE_I8, -128);
  /* uint8 rides in i8: flipping the top bit makes signed order agree. */
  if (dt == ONNX_UINT8) x = te_binary(&c->e, "tosa.bitwise_xor", x, flip);
  te_value_t y;
  if (w->d[0] != 1 || w->d[1] != 1) {
    if (!is_max) {
      onnx_fail(c, "dilated average pooling is not supported");
      return (te_value_t){0};
    }
    if (!windows_hit_input(w)) {
      onnx_fail(c, "windows entirely in the padding are not supported");
      return (te_value_t){0};
    }
    te_value_t lowest = dt == ONNX_FLOAT ? f32(c, -INFINITY) : te_scalar_int(&c->e, TE_I8, -128);
    y = dilated_max(c, x, w, lowest);
    return dt == ONNX_UINT8 ? te_binary(&c->e, "tosa.bitwise_xor", y, flip) : y;
  }
  if (cip) x = pad_explicit(c, x, w);
  int64_t pad[4];
  x = onnx_tosa_window(c, w, x, pad);
  if (!x.id) return x;
  for (int i = 0; i < 4; ++i)
    if (pad[i] >= w->k[i / 2]) {
      onnx_fail(c, "pads as large as the kernel are not supported");
      return (te_value_t){0};
    }
  char props[400];
  onnx_window_props(w, pad, is_max ? WIN_MAX : WIN_AVG, props, sizeof props);
  int64_t od[4] = {x.type.dims[0], w->out[0], w->out[1], x.type.dims[3]};
  te_type_t t = te_type(x.type.elem, 4, od);
  if (is_max) {
    y = te_op(&c->e, "tosa.max_pool2d", &x, 1, props, &t);
    if (dt == ONNX_UINT8) y = te_binary(&c->e, "tosa.bitwise_xor", y, flip);
  } else {
    te_value_t ops[3] = {x, f32(c, 0.0f), f32(c, 0.0f)};
    y = te_op(&c->e, "tosa.avg_pool2d", ops, 3, props, &t);
  }
  return y;
}

static tinyml_status_t lower_pool(onnx_ctx_t *c, int is_max) {
  const onnx_value_t *xv = onnx_input(c, 0);
  if (!xv) return onnx_fail(c, "X is required");
  int32_t dt = xv->dtype;
  if (dt != ONNX_FLOAT && !(is_max && (dt == ONNX_INT8 || dt == ONNX_UINT8)))
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(dt));
  if (xv->rank == 5) return onnx_pool3d(c, is_max);
  if (xv->rank != 3 && xv->rank != 4) return onnx_fail(c, "only 1-D, 2-D and 3-D pooling is supported");
  int indices = is_max && onnx_output_count(c) > 1 && c->node->output[1][0];
  int64_t k[2];
  if (onnx_attr_ints(c, "kernel_shape", k, 2) != xv->rank - 2)
    return c->error ? c->error : onnx_fail(c, "kernel_shape does not match the input rank");
  int cip = !is_max && onnx_attr_int(c, "count_include_pad", 0) != 0;
  win_t w;
  te_value_t x = onnx_in(c, 0);
  if (!x.id || !onnx_read_window(c, xv->dims, xv->rank, k, (int)onnx_attr_int(c, "ceil_mode", 0), &w))
    return c->error;
  if (indices) return onnx_max_pool_indices(c, onnx_to_nhwc(c, x), &w, dt);
  te_value_t y = onnx_pool_nhwc(c, onnx_to_nhwc(c, x), &w, is_max, cip, dt);
  return y.id ? onnx_set_out_typed(c, 0, onnx_from_nhwc(c, y, xv->rank), dt) : c->error;
}

static tinyml_status_t lower_max_pool(onnx_ctx_t *c) { return lower_pool(c, 1); }
static tinyml_status_t lower_avg_pool(onnx_ctx_t *c) { return lower_pool(c, 0); }

/* GlobalAveragePool / GlobalMaxPool / GlobalLpPool: reduce every spatial
 * axis, keeping it as 1. */
static te_value_t reduce_spatial(onnx_ctx_t *c, te_value_t x, const char *op) {
  for (uint32_t d = 2; d < x.type.rank; ++d) x = te_reduce(&c->e, op, x, (int32_t)d);
  return x;
}

static tinyml_status_t lower_global_avg(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  if (!spatial_input(c, x)) return c->error;
  int64_t n = te_numel(&x.type) / (x.type.dims[0] * x.type.dims[1]);
  te_value_t s = reduce_spatial(c, x, "tosa.reduce_sum");
  return onnx_set_out(c, 0, mul(c, s, f32(c, (float)(1.0 / (double)n))));
}

static tinyml_status_t lower_global_max(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  if (!spatial_input(c, x)) return c->error;
  return onnx_set_out(c, 0, reduce_spatial(c, x, "tosa.reduce_max"));
}

static tinyml_status_t lower_global_lp(onnx_ctx_t *c) {
  const Onnx__AttributeProto *a = onnx_attr(c, "p");
  double p = !a ? 2.0 : a->has_i ? (double)a->i : a->has_f ? (double)a->f : 2.0;
  te_value_t x = float_in(c, 0);
  if (!spatial_input(c, x)) return c->error;
  if (p != 1.0 && p != 2.0) return onnx_fail(c, "p = %g is not supported (1 and 2 are)", p);
  if (p == 1.0)
    return onnx_set_out(c, 0, reduce_spatial(c, te_unary(&c->e, "tosa.abs", x), "tosa.reduce_sum"));
  te_value_t s = reduce_spatial(c, mul(c, x, x), "tosa.reduce_sum");
  /* TOSA has no square root: 1 / rsqrt, which is 0 at 0 (as fsqrt). */
  te_value_t r = te_unary(&c->e, "tosa.rsqrt", s);
  return onnx_set_out(c, 0, te_unary(&c->e, "tosa.reciprocal", r));
}
const onnx_lowering_t onnx_lowerings_pool[] = {
    {"MaxPool", 1, 23, lower_max_pool},
    {"AveragePool", 1, 23, lower_avg_pool},
    {"GlobalAveragePool", 1, 23, lower_global_avg},
    {"GlobalMaxPool", 1, 23, lower_global_max},
    {"GlobalLpPool", 1, 23, lower_global_lp},
    {NULL, 0, 0, NULL},
};
