/* ONNX lowerings: 3-D convolutions and pools (called from onnx_ops_nn.c
 * for inputs of rank 5).  See onnx_lower.h.
 *
 * Conv runs as tosa.conv3d on NDHWC activations and [O, KD, KH, KW, I]
 * weights.  Max and average pools are separable over a box window: a 2-D
 * pool over (H, W) with N*D as the batch, then one over D.  Each stage's
 * divisor counts the in-bounds (or, with count_include_pad, padded)
 * elements along its own axes, and their product is ONNX's divisor. */
#include <string.h>

#include "onnx_window.h"

/* One axis per spatial dimension, D, H, W. */
typedef struct win3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
  int ceil_extra[3];
} win3_t;

static int win3_attrs(onnx_ctx_t *c, int64_t *s, int64_t *d, int64_t *p, int *mode) {
  int64_t ns = onnx_attr_ints(c, "strides", s, 3), nd = onnx_attr_ints(c, "dilations", d, 3);
  int64_t np = onnx_attr_ints(c, "pads", p, 6);
  *mode = onnx_auto_pad_mode(c);
  if (c->error || *mode < 0) return 0;
  if ((ns >= 0 && ns != 3) || (nd >= 0 && nd != 3) || (np >= 0 && np != 6)) {
    onnx_fail(c, "strides, dilations or pads do not match the spatial rank");
    return 0;
  }
  for (int i = 0; i < 3; ++i) {
    if (ns < 0) s[i] = 1;
    if (nd < 0) d[i] = 1;
    if (np < 0) p[i] = p[i + 3] = 0;
  }
  return 1;
}

/* Reads the window of an [N, C, D, H, W] input from the node's attributes. */
static int read_win3(onnx_ctx_t *c, const int64_t *xdims, const int64_t *kernel, int ceil_mode,
                     win3_t *w) {
  int64_t s[3], d[3], p[6];
  int mode;
  if (!win3_attrs(c, s, d, p, &mode)) return 0;
  memset(w, 0, sizeof *w);
  for (int i = 0; i < 3; ++i) {
    win_t a = {.rank = 4, .in = {xdims[2 + i], 1}, .k = {kernel[i], 1}, .s = {s[i], 1},
               .d = {d[i], 1}, .pb = {p[i], 0}, .pe = {p[i + 3], 0}};
    if (a.k[0] < 1 || a.s[0] < 1 || a.d[0] < 1 || a.pb[0] < 0 || a.pe[0] < 0 || a.k[0] > 4096 ||
        a.s[0] > 4096 || a.d[0] > 4096 || a.pb[0] > 4096 || a.pe[0] > 4096) {
      onnx_fail(c, "invalid kernel, stride, dilation or pads");
      return 0;
    }
    if (mode != PAD_NOTSET && (a.pb[0] || a.pe[0])) {
      onnx_fail(c, "pads together with auto_pad are not supported");
      return 0;
    }
    if (!onnx_window_axis(c, &a, 0, mode, ceil_mode)) return 0;
    w->in[i] = a.in[0], w->k[i] = a.k[0], w->s[i] = a.s[0], w->d[i] = a.d[0];
    w->pb[i] = a.pb[0], w->pe[i] = a.pe[0], w->out[i] = a.out[0];
    w->ceil_extra[i] = a.ceil_extra;
  }
  return 1;
}

/* Axes i and j of w3 as a 2-D window; j < 0 is a unit axis of size `unit`. */
static win_t win2_of(const win3_t *w3, int i, int j, int64_t unit) {
  win_t w = {.rank = 4};
  int ax[2] = {i, j};
  for (int a = 0; a < 2; ++a) {
    int x = ax[a];
    w.in[a] = x < 0 ? unit : w3->in[x];
    w.out[a] = x < 0 ? unit : w3->out[x];
    w.k[a] = x < 0 ? 1 : w3->k[x];
    w.s[a] = x < 0 ? 1 : w3->s[x];
    w.d[a] = x < 0 ? 1 : w3->d[x];
    w.pb[a] = x < 0 ? 0 : w3->pb[x];
    w.pe[a] = x < 0 ? 0 : w3->pe[x];
    w.ceil_extra |= x < 0 ? 0 : w3->ceil_extra[x];
  }
  return w;
}

static const int32_t to_ndhwc[5] = {0, 2, 3, 4, 1}, from_ndhwc[5] = {0, 4, 1, 2, 3};

tinyml_status_t onnx_pool3d(onnx_ctx_t *c, int is_max) {
  const onnx_value_t *xv = onnx_input(c, 0);
  int32_t dt = xv->dtype;
  if (onnx_output_count(c) > 1 && c->node->output[1][0])
    return onnx_fail(c, "the Indices output is not supported for 3-D pooling");
  int64_t k[3];
  if (onnx_attr_ints(c, "kernel_shape", k, 3) != 3)
    return c->error ? c->error : onnx_fail(c, "kernel_shape does not match the input rank");
  int cip = !is_max && onnx_attr_int(c, "count_include_pad", 0) != 0;
  win3_t w3;
  te_value_t x = onnx_in(c, 0);
  if (!x.id || !read_win3(c, xv->dims, k, (int)onnx_attr_int(c, "ceil_mode", 0), &w3))
    return c->error;
  const int64_t n = xv->dims[0], ch = xv->dims[1], *o = w3.out;
  x = te_transpose(&c->e, x, to_ndhwc);
  x = te_reshape(&c->e, x, 4, (int64_t[4]){n * w3.in[0], w3.in[1], w3.in[2], ch});
  win_t hw = win2_of(&w3, 1, 2, 0);
  te_value_t y = onnx_pool_nhwc(c, x, &hw, is_max, cip, dt);
  if (!y.id) return c->error;
  y = te_reshape(&c->e, y, 4, (int64_t[4]){n, w3.in[0], o[1] * o[2], ch});
  win_t dw = win2_of(&w3, 0, -1, o[1] * o[2]);
  y = onnx_pool_nhwc(c, y, &dw, is_max, cip, dt);
  if (!y.id) return c->error;
  y = te_reshape(&c->e, y, 5, (int64_t[5]){n, o[0], o[1], o[2], ch});
  return onnx_set_out_typed(c, 0, te_transpose(&c->e, y, from_ndhwc), dt);
}

/* ---- Conv ---- */

/* tosa.conv3d wants (in + pads - effective kernel) divisible by the
 * stride: the trailing pad becomes whatever makes the output size exact,
 * and input rows no window reads are sliced off.  Fills pad[6]. */
static te_value_t conv3d_window(onnx_ctx_t *c, const win3_t *w, te_value_t x, int64_t pad[6]) {
  int64_t size[5], zero[5] = {0, 0, 0, 0, 0};
  memcpy(size, x.type.dims, sizeof size);
  for (int i = 0; i < 3; ++i) {
    int64_t a[6] = {w->k[i], w->d[i], w->s[i], w->in[i], w->pb[i], w->out[i]};
    if (!onnx_trim_axis(c, a, &size[1 + i], pad + 2 * i)) return (te_value_t){0};
  }
  if (!memcmp(size, x.type.dims, sizeof size)) return x;
  return slice(c, x, zero, size);
}

/* Rows [o0, o0 + n) of weights [O, I, KD, KH, KW] as [n, KD, KH, KW, I]:
 * rearranged here when constant, sliced from `rt` (already NDHWC-ordered)
 * otherwise. */
static te_value_t weights3(onnx_ctx_t *c, const conv_w_t *cwt, te_value_t rt, const int64_t *wd,
                           int64_t o0, int64_t n) {
  int64_t ic = wd[1], kv = wd[2] * wd[3] * wd[4], dims[5] = {n, wd[2], wd[3], wd[4], ic};
  if (!cwt->cw) {
    int64_t start[5] = {o0, 0, 0, 0, 0};
    return n == rt.type.dims[0] ? rt : slice(c, rt, start, dims);
  }
  float *t = alloc_floats(c, n * kv * ic);
  if (!t) return (te_value_t){0};
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < ic; ++i)
      for (int64_t k = 0; k < kv; ++k) t[(r * kv + k) * ic + i] = cwt->cw[((o0 + r) * ic + i) * kv + k];
  return const_floats_value(c, t, 5, dims);
}

static te_value_t conv3d_op(onnx_ctx_t *c, te_value_t x, te_value_t w, te_value_t bias,
                            const win3_t *win, const int64_t pad[6], int64_t oc) {
  char p[128], s[80], d[80], props[400];
  te_array_attr(64, pad, 6, p, sizeof p);
  te_array_attr(64, win->s, 3, s, sizeof s);
  te_array_attr(64, win->d, 3, d, sizeof d);
  snprintf(props, sizeof props, "acc_type = f32, dilation = %s, pad = %s, stride = %s", d, p, s);
  int64_t od[5] = {x.type.dims[0], win->out[0], win->out[1], win->out[2], oc};
  te_type_t t = te_type(TE_F32, 5, od);
  te_value_t ops[5] = {x, w, bias, f32(c, 0.0f), f32(c, 0.0f)};
  return te_op(&c->e, "tosa.conv3d", ops, 5, props, &t);
}

/* Groups: one conv per group on a channel slice, then a concat and the bias. */
static te_value_t grouped3(onnx_ctx_t *c, const conv_w_t *cwt, te_value_t rt, const int64_t *wd,
                           te_value_t x, const win3_t *w, const int64_t pad[6], int64_t g,
                           te_value_t b) {
  int64_t oc = wd[0], ic = wd[1], og = oc / g, zn = og;
  te_value_t parts[64];
  if (g > 64) {
    onnx_fail(c, "more than 64 groups are not supported");
    return (te_value_t){0};
  }
  te_type_t zt = te_type(TE_F32, 1, &zn);
  for (int64_t k = 0; k < g && !c->error; ++k) {
    int64_t xs[5] = {0, 0, 0, 0, k * ic}, xz[5];
    memcpy(xz, x.type.dims, sizeof xz);
    xz[4] = ic;
    te_value_t wk = weights3(c, cwt, rt, wd, k * og, og);
    parts[k] = conv3d_op(c, slice(c, x, xs, xz), wk, te_splat_f32(&c->e, &zt, 0.0f), w, pad, og);
  }
  if (c->error) return (te_value_t){0};
  te_value_t y = concat(c, parts, (uint32_t)g, 4);
  return add(c, y, te_reshape(&c->e, b, 5, (int64_t[5]){1, 1, 1, 1, oc}));
}

/* A Conv node's convolution on an [N, C, D, H, W] input (see
 * onnx_conv_f32). */
te_value_t onnx_conv3d_f32(onnx_ctx_t *c, const onnx_value_t *xv, const onnx_value_t *wv,
                           te_value_t x, const conv_w_t *cwt, te_value_t b) {
  int64_t g = onnx_attr_int(c, "group", 1), ch = xv->dims[1], oc = wv->dims[0], ic = wv->dims[1];
  int64_t ks[3], nk = onnx_attr_ints(c, "kernel_shape", ks, 3);
  if (wv->rank != 5 || g < 1 || ch % g || oc % g || ic * g != ch) {
    onnx_fail(c, "the weights do not match the input channels and group");
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < nk; ++i)
    if (nk != 3 || ks[i] != wv->dims[2 + i]) {
      onnx_fail(c, "kernel_shape does not match the weights");
      return (te_value_t){0};
    }
  win3_t w;
  if (!x.id || !b.id || !read_win3(c, xv->dims, wv->dims + 2, 0, &w)) return (te_value_t){0};
  int64_t pad[6];
  x = conv3d_window(c, &w, te_transpose(&c->e, x, to_ndhwc), pad);
  if (!x.id) return x;
  te_value_t rt = cwt->cw ? (te_value_t){0} : te_transpose(&c->e, cwt->rt, to_ndhwc);
  te_value_t y = g == 1 ? conv3d_op(c, x, weights3(c, cwt, rt, wv->dims, 0, oc), b, &w, pad, oc)
                        : grouped3(c, cwt, rt, wv->dims, x, &w, pad, g, b);
  return c->error ? (te_value_t){0} : te_transpose(&c->e, y, from_ndhwc);
}

/* ---- ConvTranspose ---- */

/* x with s - 1 zeros between neighbours along NDHWC axis `axis`. */
static te_value_t dilate_axis(onnx_ctx_t *c, te_value_t x, int axis, int64_t s) {
  if (s == 1) return x;
  int64_t pre = 1, post = 1, len = x.type.dims[axis], dims[5];
  for (int i = 0; i < 5; ++i) {
    dims[i] = i == axis ? (len - 1) * s + 1 : x.type.dims[i];
    if (i < axis) pre *= x.type.dims[i];
    if (i > axis) post *= x.type.dims[i];
  }
  int64_t p[8] = {0, 0, 0, 0, 0, s - 1, 0, 0}, start[3] = {0, 0, 0};
  te_type_t t = te_type(TE_F32, 4, (int64_t[4]){pre, len, s, post});
  te_value_t ops[3] = {te_reshape(&c->e, x, 4, (int64_t[4]){pre, len, 1, post}),
                       te_shape(&c->e, 8, p), f32(c, 0.0f)};
  x = te_reshape(&c->e, te_op(&c->e, "tosa.pad", ops, 3, NULL, &t), 3,
                 (int64_t[3]){pre, len * s, post});
  x = slice(c, x, start, (int64_t[3]){pre, dims[axis], post});
  return te_reshape(&c->e, x, 5, dims);
}

/* Weights [I, O, KD, KH, KW] as a conv's [O, KD, KH, KW, I], each kernel
 * flipped: a transposed conv is a conv of the stride-dilated input. */
static te_value_t flipped_weights(onnx_ctx_t *c, const onnx_value_t *wv) {
  const float *src = const_floats(c, 1);
  const int64_t *wd = wv->dims, ic = wd[0], oc = wd[1], kd = wd[2], kh = wd[3], kw = wd[4];
  int64_t dims[5] = {oc, kd, kh, kw, ic}, kv = kd * kh * kw;
  if (!src) {
    static const int32_t perm[5] = {1, 2, 3, 4, 0};
    te_value_t w = te_transpose(&c->e, onnx_in(c, 1), perm);
    for (int a = 1; a <= 3 && w.id; ++a) {
      char props[32];
      snprintf(props, sizeof props, "axis = %d : i32", a);
      w = te_op(&c->e, "tosa.reverse", &w, 1, props, &w.type);
    }
    return w;
  }
  float *t = alloc_floats(c, oc * kv * ic);
  if (!t) return (te_value_t){0};
  for (int64_t i = 0; i < ic; ++i)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t k = 0; k < kv; ++k) t[(o * kv + (kv - 1 - k)) * ic + i] = src[(i * oc + o) * kv + k];
  return const_floats_value(c, t, 5, dims);
}

typedef struct convt3 {
  int64_t in[3], k[3], s[3], d[3], op[3], want[3], pb[3], pe[3], eff[3];
} convt3_t;

static int read_convt3(onnx_ctx_t *c, const onnx_value_t *xv, const onnx_value_t *wv, convt3_t *a) {
  int64_t s[3], d[3], p[6], op[3], os[3], ks[3];
  int64_t ns = onnx_attr_ints(c, "strides", s, 3), nd = onnx_attr_ints(c, "dilations", d, 3);
  int64_t np = onnx_attr_ints(c, "pads", p, 6), nop = onnx_attr_ints(c, "output_padding", op, 3);
  int64_t nos = onnx_attr_ints(c, "output_shape", os, 3), nk = onnx_attr_ints(c, "kernel_shape", ks, 3);
  int mode = onnx_auto_pad_mode(c);
  if (c->error || mode < 0) return 0;
  if ((ns >= 0 && ns != 3) || (nd >= 0 && nd != 3) || (np >= 0 && np != 6) ||
      (nop >= 0 && nop != 3) || (nos >= 0 && nos != 3) || (nk >= 0 && nk != 3)) {
    onnx_fail(c, "attributes do not match the spatial rank");
    return 0;
  }
  for (int i = 0; i < 3; ++i) {
    a->in[i] = xv->dims[2 + i], a->k[i] = wv->dims[2 + i];
    a->s[i] = ns < 0 ? 1 : s[i], a->d[i] = nd < 0 ? 1 : d[i], a->op[i] = nop < 0 ? 0 : op[i];
    a->want[i] = nos < 0 ? -1 : os[i];
    a->pb[i] = np < 0 ? 0 : p[i], a->pe[i] = np < 0 ? 0 : p[i + 3];
    if (nk >= 0 && ks[i] != a->k[i]) return !onnx_fail(c, "kernel_shape does not match the weights");
    if (a->s[i] < 1 || a->d[i] < 1 || a->op[i] < 0 || a->s[i] > 4096 || a->d[i] > 4096 ||
        a->k[i] > 4096 || (a->op[i] >= a->s[i] && a->op[i] >= a->d[i]))
      return !onnx_fail(c, "invalid strides, dilations or output_padding");
    a->eff[i] = (a->k[i] - 1) * a->d[i] + 1;
    if ((mode != PAD_NOTSET || nos >= 0) && (a->pb[i] || a->pe[i]))
      return !onnx_fail(c, "pads together with auto_pad or output_shape are not supported");
    if (!onnx_convt_axis(c, a->in[i], a->eff[i], a->s[i], a->op[i], a->want[i], mode, &a->pb[i],
                         &a->pe[i]))
      return 0;
  }
  return 1;
}

/* ConvTranspose on [N, C, D, H, W]: the input dilated by the strides, then
 * a stride-1 conv3d of the flipped kernels with pads eff - 1 - pads (and
 * output_padding at the end); negative ones become slices. */
tinyml_status_t onnx_conv_transpose3d(onnx_ctx_t *c) {
  const onnx_value_t *xv = onnx_input(c, 0), *wv = onnx_input(c, 1);
  if (wv->dtype != ONNX_FLOAT) return onnx_fail(c, "weights must be FLOAT");
  if (onnx_attr_int(c, "group", 1) != 1) return onnx_fail(c, "grouped ConvTranspose is not supported");
  if (wv->dims[0] != xv->dims[1]) return onnx_fail(c, "the weights do not match the input channels");
  convt3_t a;
  if (!read_convt3(c, xv, wv, &a)) return c->error;
  int64_t oc = wv->dims[1];
  const onnx_value_t *bv = onnx_input(c, 2);
  if (bv && (bv->rank != 1 || bv->dims[0] != oc)) return onnx_fail(c, "the bias must be a vector of %lld", (long long)oc);
  te_type_t bt = te_type(TE_F32, 1, &oc);
  te_value_t x = float_in(c, 0), w = flipped_weights(c, wv);
  te_value_t b = bv ? float_in(c, 2) : te_splat_f32(&c->e, &bt, 0.0f);
  if (!x.id || !w.id || !b.id) return c->error;
  x = te_transpose(&c->e, x, to_ndhwc);
  int64_t start[5] = {0}, size[5], pad[6];
  win3_t cw = {0};
  for (int i = 0; i < 3; ++i) {
    x = dilate_axis(c, x, 1 + i, a.s[i]);
    int64_t len = x.type.dims[1 + i], lo = a.eff[i] - 1 - a.pb[i], hi = a.eff[i] - 1 - a.pe[i] + a.op[i];
    start[1 + i] = lo < 0 ? -lo : 0;
    size[1 + i] = len - start[1 + i] - (hi < 0 ? -hi : 0);
    pad[2 * i] = lo < 0 ? 0 : lo, pad[2 * i + 1] = hi < 0 ? 0 : hi;
    cw.k[i] = a.k[i], cw.s[i] = 1, cw.d[i] = a.d[i];
    cw.out[i] = size[1 + i] + pad[2 * i] + pad[2 * i + 1] - a.eff[i] + 1;
    if (size[1 + i] < 1 || cw.out[i] < 1) return onnx_fail(c, "invalid pads");
  }
  size[0] = x.type.dims[0], size[4] = x.type.dims[4];
  if (memcmp(size + 1, x.type.dims + 1, 3 * sizeof *size)) x = slice(c, x, start, size);
  te_value_t y = conv3d_op(c, x, w, b, &cw, pad, oc);
  return onnx_set_out(c, 0, te_transpose(&c->e, y, from_ndhwc));
}
