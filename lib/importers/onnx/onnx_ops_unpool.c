/* ONNX lowerings: MaxPool's Indices output and MaxUnpool.  See
 * onnx_lower.h.
 *
 * Indices: every window tap is a strided view of the input padded with
 * -inf; the maximum is taken over the taps, and the index is that of the
 * first tap in scan order (rows, then columns) that is in the image and
 * equals the maximum, as ONNX's reference and onnxruntime pick ties.
 * MaxUnpool: the indices are run-time data, so each output element looks
 * for the last input whose index equals its own (a compare, never an
 * out-of-bounds write), as the reference's assignment keeps the last. */
#include <math.h>
#include <string.h>

#include "onnx_const_util.h"
#include "onnx_window.h"

enum { MAX_TAPS = 256, MAX_COMPARES = 1 << 22 };

/* x[:, y0 : y0 + n0*s0 : s0, x0 : x0 + n1*s1 : s1, :] of an NHWC x. */
static te_value_t tap_view(onnx_ctx_t *c, te_value_t x, const int64_t *start, const win_t *w) {
  int64_t n = x.type.dims[0], ch = x.type.dims[3], o0 = w->out[0], o1 = w->out[1];
  int64_t st[4] = {0, start[0], start[1], 0}, sz[4] = {n, o0 * w->s[0], o1 * w->s[1], ch};
  x = te_reshape(&c->e, slice(c, x, st, sz), 6, (int64_t[6]){n, o0, w->s[0], o1, w->s[1], ch});
  int64_t z6[6] = {0}, one[6] = {n, o0, 1, o1, 1, ch};
  return te_reshape(&c->e, slice(c, x, z6, one), 4, (int64_t[4]){n, o0, o1, ch});
}

/* Tap (ky, kx)'s flat index within a plane at each output ([1, o0, o1, 1],
 * i32) and whether it lies in the image (i1); 0 if no output has it there. */
static int tap_consts(onnx_ctx_t *c, const win_t *w, int64_t ky, int64_t kx, int col_major,
                      te_value_t *idx, te_value_t *valid, uint8_t *hit) {
  int64_t o0 = w->out[0], o1 = w->out[1], dims[4] = {1, o0, o1, 1};
  int32_t *ix = tinyml__calloc(c->allocator, (size_t)(o0 * o1) + 1, sizeof *ix, 16);
  uint8_t *ok = tinyml__calloc(c->allocator, (size_t)(o0 * o1) + 1, 1, 16);
  int any = 0;
  if (!ix || !ok) onnx_oom(c);
  for (int64_t i = 0; ix && ok && i < o0 * o1; ++i) {
    int64_t h = (i / o1) * w->s[0] - w->pb[0] + ky * w->d[0];
    int64_t x = (i % o1) * w->s[1] - w->pb[1] + kx * w->d[1];
    ok[i] = h >= 0 && h < w->in[0] && x >= 0 && x < w->in[1];
    ix[i] = (int32_t)(col_major ? h + x * w->in[0] : h * w->in[1] + x);
    hit[i] |= ok[i];
    any |= ok[i];
  }
  if (!c->error) {
    te_type_t it = te_type(TE_I32, 4, dims), bt = te_type(TE_I1, 4, dims);
    *idx = te_const(&c->e, &it, ix);
    *valid = te_const(&c->e, &bt, ok);
  }
  tinyml__free(c->allocator, ix);
  tinyml__free(c->allocator, ok);
  return any;
}

/* The input padded with -inf so that every tap's strided view is in it. */
static te_value_t pad_lowest(onnx_ctx_t *c, te_value_t x, const win_t *w) {
  int64_t p[8] = {0};
  te_type_t t = x.type;
  for (int i = 0; i < 2; ++i) {
    int64_t need = (w->k[i] - 1) * w->d[i] + w->out[i] * w->s[i] - w->pb[i] - w->in[i];
    p[2 + 2 * i] = w->pb[i];
    p[3 + 2 * i] = need > w->pe[i] ? need : w->pe[i];
    t.dims[1 + i] += p[2 + 2 * i] + p[3 + 2 * i];
  }
  te_value_t ops[3] = {x, te_shape(&c->e, 8, p), f32(c, -INFINITY)};
  return te_op(&c->e, "tosa.pad", ops, 3, NULL, &t);
}

/* Each (n, c) plane's offset in the flat NCHW tensor, [N, 1, 1, C]. */
static te_value_t plane_offsets(onnx_ctx_t *c, int64_t n, int64_t ch, int64_t plane) {
  int32_t *v = tinyml__calloc(c->allocator, (size_t)(n * ch) + 1, sizeof *v, 16);
  if (!v) {
    onnx_oom(c);
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < n * ch; ++i) v[i] = (int32_t)(i * plane);
  te_type_t t = te_type(TE_I32, 4, (int64_t[4]){n, 1, 1, ch});
  te_value_t r = te_const(&c->e, &t, v);
  tinyml__free(c->allocator, v);
  return r;
}

/* NCHW of an NHWC result, [N, C, W] for a 1-D pool (rank 3). */
static te_value_t to_nchw(onnx_ctx_t *c, te_value_t y, uint32_t rank) {
  static const int32_t perm[4] = {0, 3, 1, 2};
  y = te_transpose(&c->e, y, perm);
  if (rank == 3) y = te_reshape(&c->e, y, 3, (int64_t[3]){y.type.dims[0], y.type.dims[1], y.type.dims[3]});
  return y;
}

/* MaxPool with the Indices output: x is NHWC float, w its window. */
tinyml_status_t onnx_max_pool_indices(onnx_ctx_t *c, te_value_t x, const win_t *w, int32_t dt) {
  int64_t order = onnx_attr_int(c, "storage_order", 0), n = x.type.dims[0], ch = x.type.dims[3];
  int64_t taps = w->k[0] * w->k[1], o0 = w->out[0], o1 = w->out[1];
  if (dt != ONNX_FLOAT) return onnx_fail(c, "the Indices output needs a FLOAT input");
  if (order != 0 && order != 1) return onnx_fail(c, "storage_order %lld is not valid", (long long)order);
  if (taps > MAX_TAPS) return onnx_fail(c, "the Indices output of windows over %d taps is not supported", MAX_TAPS);
  if (onnx_mul_sat(n * ch, w->in[0] * w->in[1]) > INT32_MAX)
    return onnx_fail(c, "the Indices output of tensors over 2^31 elements is not supported");
  uint8_t *hit = tinyml__calloc(c->allocator, (size_t)(o0 * o1) + 1, 1, 16);
  te_value_t views[MAX_TAPS], idx[MAX_TAPS], valid[MAX_TAPS], m = {0};
  if (!hit) return onnx_oom(c);
  x = pad_lowest(c, x, w);
  for (int64_t t = 0; t < taps && !c->error; ++t) {
    int64_t ky = t / w->k[1], kx = t % w->k[1], start[2] = {ky * w->d[0], kx * w->d[1]};
    views[t] = tap_view(c, x, start, w);
    tap_consts(c, w, ky, kx, order == 1, &idx[t], &valid[t], hit);
    m = t ? te_binary(&c->e, "tosa.maximum", m, views[t]) : views[t];
  }
  int all_hit = 1;
  for (int64_t i = 0; i < o0 * o1; ++i) all_hit &= hit[i];
  tinyml__free(c->allocator, hit);
  if (c->error) return c->error;
  if (!all_hit) return onnx_fail(c, "windows entirely in the padding are not supported");
  te_value_t at = idx[taps - 1];
  for (int64_t t = taps - 2; t >= 0; --t) {
    te_value_t eq = te_binary(&c->e, "tosa.equal", views[t], m);
    at = te_select(&c->e, te_binary(&c->e, "tosa.logical_and", eq, valid[t]), idx[t], at);
  }
  at = add(c, at, plane_offsets(c, n, ch, w->in[0] * w->in[1]));
  tinyml_status_t st = onnx_set_out(c, 0, to_nchw(c, m, w->rank));
  at = te_cast(&c->e, to_nchw(c, at, w->rank), TE_I64);
  if (!st) st = onnx_set_out_typed(c, 1, at, ONNX_INT64);
  return st;
}

/* ---- MaxUnpool ---- */

/* The output shape: the output_shape input (a constant) or, per spatial
 * axis, (in - 1) * stride - pads + kernel. */
static int unpool_shape(onnx_ctx_t *c, const onnx_value_t *xv, int64_t *out) {
  uint32_t n = xv->rank - 2;
  int64_t k[3], s[3], p[6], nk = onnx_attr_ints(c, "kernel_shape", k, 3);
  int64_t ns = onnx_attr_ints(c, "strides", s, 3), np = onnx_attr_ints(c, "pads", p, 6);
  if (c->error) return 0;
  if (nk != n || (ns >= 0 && ns != n) || (np >= 0 && np != 2 * n)) {
    onnx_fail(c, "kernel_shape, strides or pads do not match the spatial rank");
    return 0;
  }
  out[0] = xv->dims[0], out[1] = xv->dims[1];
  for (uint32_t i = 0; i < n; ++i) {
    int64_t st = ns < 0 ? 1 : s[i], pb = np < 0 ? 0 : p[i], pe = np < 0 ? 0 : p[i + n];
    out[2 + i] = (xv->dims[2 + i] - 1) * st - pb - pe + k[i];
    if (k[i] < 1 || st < 1 || k[i] > 4096 || st > 4096 || pb < 0 || pe < 0 || out[2 + i] < 1) {
      onnx_fail(c, "invalid kernel_shape, strides or pads");
      return 0;
    }
  }
  if (!onnx_input(c, 2)) return 1;
  int64_t def[TE_MAX_RANK];
  memcpy(def, out, sizeof(int64_t) * xv->rank);
  if (onnx_const_ints(c, 2, out, xv->rank) != xv->rank) {
    onnx_fail(c, "output_shape must be a constant of %u integers", xv->rank);
    return 0;
  }
  for (uint32_t i = 0; i < xv->rank; ++i)
    if (out[i] < 1 || out[i] > INT32_MAX) {
      onnx_fail(c, "output_shape has an invalid dimension");
      return 0;
    }
  /* The suite's expected output (ONNX's reference) keeps the indices in
   * the default shape's layout and pads that result out to output_shape;
   * indices into output_shape itself are the other reading.  Only the
   * default shape is unambiguous. */
  if (memcmp(def, out, sizeof(int64_t) * xv->rank) != 0) {
    onnx_fail(c, "an output_shape other than the default [(in - 1) * stride - pads + kernel] "
                 "is not supported: implementations disagree on where its indices point");
    return 0;
  }
  return 1;
}

/* Constant operands: the reference's assignment on the host; an index
 * outside the output is refused, as onnxruntime does. */
static tinyml_status_t unpool_fold(onnx_ctx_t *c, const float *x, int64_t m, int64_t p,
                                   uint32_t rank, const int64_t *dims) {
  int64_t *idx = tinyml__calloc(c->allocator, (size_t)m + 1, sizeof *idx, 16);
  float *y = alloc_floats(c, p);
  tinyml_status_t st = 0;
  if (!idx || !y) st = c->error ? c->error : onnx_oom(c);
  if (!st && onnx_const_ints(c, 1, idx, (uint32_t)m) != m) st = onnx_fail(c, "I must be INT64");
  for (int64_t i = 0; !st && i < m; ++i) {
    if (idx[i] < 0 || idx[i] >= p) st = onnx_fail(c, "index %lld is out of range", (long long)idx[i]);
    else y[idx[i]] = x[i];
  }
  if (!st) st = onnx_set_out_const(c, 0, ONNX_FLOAT, rank, dims, y);
  tinyml__free(c->allocator, idx);
  tinyml__free(c->allocator, y);
  return st;
}

/* 0 .. n-1 as an i32 column [n, 1] or row [1, n]. */
static te_value_t iota(onnx_ctx_t *c, int64_t n, int64_t rows) {
  return onnx_iota_const(c, TE_I32, 2, (int64_t[2]){rows ? n : 1, rows ? 1 : n});
}

tinyml_status_t onnx_lower_max_unpool(onnx_ctx_t *c) {
  const onnx_value_t *xv = onnx_input(c, 0), *iv = onnx_input(c, 1);
  if (!xv || !iv) return onnx_fail(c, "X and I are required");
  if (xv->dtype != ONNX_FLOAT || iv->dtype != ONNX_INT64)
    return onnx_fail(c, "X must be FLOAT and I INT64");
  if (xv->rank < 3 || xv->rank > 5 || iv->rank != xv->rank ||
      memcmp(iv->dims, xv->dims, xv->rank * sizeof *xv->dims))
    return onnx_fail(c, "X must be [N, C, 1 to 3 spatial dims] and I of its shape");
  int64_t out[5];
  if (!unpool_shape(c, xv, out)) return c->error;
  int64_t m = onnx_numel(xv->rank, xv->dims), p = onnx_numel(xv->rank, out);
  if (m < 1 || onnx_mul_sat(m, p) > MAX_COMPARES)
    return onnx_fail(c, "%lld inputs by %lld outputs is beyond the compare-based unpooling",
                     (long long)m, (long long)p);
  if (const_floats(c, 0) && onnx_const_probe(c, 1))
    return unpool_fold(c, const_floats(c, 0), m, p, xv->rank, out);
  te_value_t x = onnx_in(c, 0), idx = onnx_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  idx = te_reshape(&c->e, te_cast(&c->e, idx, TE_I32), 2, (int64_t[2]){1, m});
  te_value_t eq = te_binary(&c->e, "tosa.equal", idx, iota(c, p, 1));
  te_value_t from = te_select(&c->e, eq, iota(c, m, 0), te_scalar_int(&c->e, TE_I32, -1));
  from = te_reduce(&c->e, "tosa.reduce_max", from, 1);
  te_value_t got = te_binary(&c->e, "tosa.maximum", from, te_scalar_int(&c->e, TE_I32, 0));
  got = te_gather_axis(&c->e, x, 1, m, 1, te_reshape(&c->e, got, 1, &p), xv->rank, out);
  te_value_t any = te_binary(&c->e, "tosa.greater_equal", from, te_scalar_int(&c->e, TE_I32, 0));
  any = te_reshape(&c->e, any, xv->rank, out);
  return onnx_set_out(c, 0, te_select(&c->e, any, got, f32(c, 0.0f)));
}
