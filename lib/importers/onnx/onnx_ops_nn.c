/* ONNX lowerings: nn family (convolutions and matrix products; pools live
 * in onnx_ops_pool.c, normalisations and softmax in onnx_ops_norm.c).  See
 * onnx_lower.h.
 *
 * ONNX windows are NCHW with OIHW weights; TOSA's are NHWC with OHWI
 * weights.  Activations are transposed at run time, constant weights here at
 * compile time.  1-D windows run as 2-D ones with a height of 1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_lower.h"

#include "onnx_nn_util.h"
#include "onnx_window.h"

/* ---- windows (convolutions and pools) ---- */


static int auto_pad_mode(onnx_ctx_t *c) {
  char buf[32];
  const char *s = onnx_attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
  if (strcmp(s, "NOTSET") == 0 || s[0] == '\0') return PAD_NOTSET;
  if (strcmp(s, "VALID") == 0) return PAD_VALID;
  if (strcmp(s, "SAME_UPPER") == 0) return PAD_SAME_UPPER;
  if (strcmp(s, "SAME_LOWER") == 0) return PAD_SAME_LOWER;
  onnx_fail(c, "auto_pad '%s' is not supported", s);
  return -1;
}

/* One spatial axis: the output size and pads for ONNX's rules. */
static int window_axis(onnx_ctx_t *c, win_t *w, int i, int mode, int ceil_mode) {
  int64_t eff = (w->k[i] - 1) * w->d[i] + 1;
  if (mode == PAD_VALID) {
    w->pb[i] = w->pe[i] = 0;
  } else if (mode != PAD_NOTSET) {
    int64_t out = (w->in[i] + w->s[i] - 1) / w->s[i];
    int64_t total = (out - 1) * w->s[i] + eff - w->in[i];
    if (total < 0) total = 0;
    w->pb[i] = mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
    w->pe[i] = total - w->pb[i];
  }
  int64_t span = w->in[i] + w->pb[i] + w->pe[i] - eff;
  if (span < 0) {
    onnx_fail(c, "the window is larger than the padded input");
    return 0;
  }
  w->out[i] = span / w->s[i] + 1;
  if (ceil_mode && mode == PAD_NOTSET && span % w->s[i]) {
    /* Versions of the spec disagree on a last window that starts in the
     * trailing pad; refuse that case. */
    if (w->out[i] * w->s[i] >= w->in[i] + w->pb[i]) {
      onnx_fail(c, "ceil_mode with a last window starting in the padding is not supported");
      return 0;
    }
    w->out[i] += 1;
    w->ceil_extra = 1;
  }
  return 1;
}

int onnx_auto_pad_mode(onnx_ctx_t *c) { return auto_pad_mode(c); }

int onnx_window_axis(onnx_ctx_t *c, win_t *w, int i, int mode, int ceil_mode) {
  return window_axis(c, w, i, mode, ceil_mode);
}

/* Reads strides, dilations, pads and auto_pad for an input of `xdims`. */
int onnx_read_window(onnx_ctx_t *c, const int64_t *xdims, uint32_t rank,
                     const int64_t *kernel, int ceil_mode, win_t *w) {
  uint32_t n = rank - 2;
  int64_t s[2], d[2], p[4];
  int64_t ns = onnx_attr_ints(c, "strides", s, 2), nd = onnx_attr_ints(c, "dilations", d, 2);
  int64_t np = onnx_attr_ints(c, "pads", p, 4);
  int mode = auto_pad_mode(c);
  if (c->error || mode < 0) return 0;
  if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n)) {
    onnx_fail(c, "strides, dilations or pads do not match the spatial rank");
    return 0;
  }
  memset(w, 0, sizeof *w);
  w->rank = rank;
  for (int i = 0; i < 2; ++i) {
    int j = i - (int)(2 - n); /* the ONNX spatial index, <0 for the unit height */
    w->in[i] = j < 0 ? 1 : xdims[2 + j];
    w->k[i] = j < 0 ? 1 : kernel[j];
    w->s[i] = j < 0 || ns < 0 ? 1 : s[j];
    w->d[i] = j < 0 || nd < 0 ? 1 : d[j];
    w->pb[i] = j < 0 || np < 0 ? 0 : p[j];
    w->pe[i] = j < 0 || np < 0 ? 0 : p[j + n];
    if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0 ||
        w->k[i] > 4096 || w->s[i] > 4096 || w->d[i] > 4096 || w->pb[i] > 4096 || w->pe[i] > 4096) {
      onnx_fail(c, "invalid kernel, stride, dilation or pads");
      return 0;
    }
    if (mode != PAD_NOTSET && (w->pb[i] || w->pe[i])) {
      onnx_fail(c, "pads together with auto_pad are not supported");
      return 0;
    }
    if (!window_axis(c, w, i, mode, ceil_mode)) return 0;
  }
  return 1;
}

/* TOSA wants (in + pads - effective kernel) divisible by the stride: the
 * trailing pad becomes whatever makes the output size exact, and input rows
 * no window reads are sliced off.  Fills pad[4] (top, bottom, left, right). */
int onnx_trim_axis(onnx_ctx_t *c, const int64_t a[6], int64_t *size, int64_t pad[2]) {
  int64_t eff = (a[0] - 1) * a[1] + 1;
  int64_t after = (a[5] - 1) * a[2] + eff - a[3] - a[4];
  pad[0] = a[4];
  if (after < 0) {
    *size += after;
    after = 0;
  }
  pad[1] = after;
  if (*size < 1) {
    onnx_fail(c, "no window reads the input");
    return 0;
  }
  return 1;
}

te_value_t onnx_tosa_window(onnx_ctx_t *c, const win_t *w, te_value_t x, int64_t pad[4]) {
  int64_t size[4] = {x.type.dims[0], x.type.dims[1], x.type.dims[2], x.type.dims[3]};
  for (int i = 0; i < 2; ++i) {
    int64_t a[6] = {w->k[i], w->d[i], w->s[i], w->in[i], w->pb[i], w->out[i]};
    if (!onnx_trim_axis(c, a, &size[1 + i], pad + 2 * i)) return (te_value_t){0};
  }
  if (size[1] == x.type.dims[1] && size[2] == x.type.dims[2]) return x;
  static const int64_t zero[4] = {0, 0, 0, 0};
  return slice(c, x, zero, size);
}

void onnx_window_props(const win_t *w, const int64_t pad[4], int kind, char *out, size_t cap) {
  char p[96], s[64], d[64], k[64];
  te_array_attr(64, pad, 4, p, sizeof p);
  te_array_attr(64, w->s, 2, s, sizeof s);
  te_array_attr(64, w->d, 2, d, sizeof d);
  te_array_attr(64, w->k, 2, k, sizeof k);
  if (kind == WIN_CONV)
    snprintf(out, cap, "acc_type = f32, dilation = %s, pad = %s, stride = %s", d, p, s);
  else if (kind == WIN_AVG)
    snprintf(out, cap, "acc_type = f32, kernel = %s, pad = %s, stride = %s", k, p, s);
  else
    snprintf(out, cap, "kernel = %s, pad = %s, stride = %s", k, p, s);
}

te_value_t onnx_to_nhwc(onnx_ctx_t *c, te_value_t x) {
  if (x.type.rank == 3) {
    int64_t d[4] = {x.type.dims[0], x.type.dims[1], 1, x.type.dims[2]};
    x = te_reshape(&c->e, x, 4, d);
  }
  static const int32_t perm[4] = {0, 2, 3, 1};
  return te_transpose(&c->e, x, perm);
}

te_value_t onnx_from_nhwc(onnx_ctx_t *c, te_value_t y, uint32_t rank) {
  static const int32_t perm[4] = {0, 3, 1, 2};
  y = te_transpose(&c->e, y, perm);
  if (rank == 3) {
    int64_t d[3] = {y.type.dims[0], y.type.dims[1], y.type.dims[3]};
    y = te_reshape(&c->e, y, 3, d);
  }
  return y;
}

/* ---- Conv ---- */

/* Rows [o0, o0 + n) of constant OI[H]W weights as TOSA's OHWI. */
static te_value_t ohwi_const(onnx_ctx_t *c, const float *src, int64_t o0, int64_t n,
                             int64_t ic, int64_t kh, int64_t kw) {
  float *t = alloc_floats(c, n * kh * kw * ic);
  if (!t) return (te_value_t){0};
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < ic; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          t[((r * kh + y) * kw + x) * ic + i] = src[(((o0 + r) * ic + i) * kh + y) * kw + x];
  int64_t dims[4] = {n, kh, kw, ic};
  return const_floats_value(c, t, 4, dims);
}

/* Weights [o, i, kh, kw] as OHWI (run time), 1-D ones given a unit height. */
static te_value_t ohwi_runtime(onnx_ctx_t *c, te_value_t w, int64_t kh, int64_t kw) {
  int64_t d[4] = {w.type.dims[0], w.type.dims[1], kh, kw};
  static const int32_t perm[4] = {0, 2, 3, 1};
  return te_transpose(&c->e, te_reshape(&c->e, w, 4, d), perm);
}

/* Depthwise weights [c*m, 1, kh, kw] as TOSA's [kh, kw, c, m]. */
static te_value_t depthwise_weights(onnx_ctx_t *c, const conv_w_t *cwt, int64_t ch, int64_t m,
                                    int64_t kh, int64_t kw) {
  const float *src = cwt->cw;
  int64_t oc = ch * m, dims[4] = {kh, kw, ch, m};
  if (!src) {
    te_value_t w = cwt->rt;
    int64_t flat[3] = {oc, kh, kw};
    static const int32_t perm[3] = {1, 2, 0};
    w = te_transpose(&c->e, te_reshape(&c->e, w, 3, flat), perm);
    return te_reshape(&c->e, w, 4, dims);
  }
  float *t = alloc_floats(c, oc * kh * kw);
  if (!t) return (te_value_t){0};
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t y = 0; y < kh * kw; ++y) t[y * oc + o] = src[o * kh * kw + y];
  return const_floats_value(c, t, 4, dims);
}

static te_value_t conv_op(onnx_ctx_t *c, const char *name, te_value_t x, te_value_t w,
                          te_value_t bias, const win_t *win, const int64_t pad[4], int64_t oc) {
  char props[400];
  onnx_window_props(win, pad, WIN_CONV, props, sizeof props);
  int64_t od[4] = {x.type.dims[0], win->out[0], win->out[1], oc};
  te_type_t t = te_type(TE_F32, 4, od);
  te_value_t ops[5] = {x, w, bias, f32(c, 0.0f), f32(c, 0.0f)};
  return te_op(&c->e, name, ops, 5, props, &t);
}

static te_value_t zeros(onnx_ctx_t *c, int64_t n) {
  te_type_t t = te_type(TE_F32, 1, &n);
  return te_splat_f32(&c->e, &t, 0.0f);
}

/* General groups: one conv per group on a channel slice, then a concat. */
static te_value_t grouped_conv(onnx_ctx_t *c, const conv_w_t *cwt, te_value_t x, const win_t *w,
                               const int64_t pad[4], int64_t g, int64_t oc, int64_t ic) {
  const float *cw = cwt->cw;
  te_value_t rw = {0}, parts[64];
  if (g > 64) {
    onnx_fail(c, "more than 64 groups are not supported");
    return rw;
  }
  if (!cw) rw = ohwi_runtime(c, cwt->rt, w->k[0], w->k[1]);
  int64_t og = oc / g;
  for (int64_t k = 0; k < g && !c->error; ++k) {
    int64_t xs[4] = {0, 0, 0, k * ic}, xz[4] = {x.type.dims[0], x.type.dims[1], x.type.dims[2], ic};
    int64_t ws[4] = {k * og, 0, 0, 0}, wz[4] = {og, w->k[0], w->k[1], ic};
    te_value_t wk = cw ? ohwi_const(c, cw, k * og, og, ic, w->k[0], w->k[1]) : slice(c, rw, ws, wz);
    parts[k] = conv_op(c, "tosa.conv2d", slice(c, x, xs, xz), wk, zeros(c, og), w, pad, og);
  }
  return c->error ? (te_value_t){0} : concat(c, parts, (uint32_t)g, 3);
}

static te_value_t conv_bias(onnx_ctx_t *c, int64_t oc) {
  const onnx_value_t *b = onnx_input(c, 2);
  if (!b) return zeros(c, oc);
  if (b->rank != 1 || b->dims[0] != oc) {
    onnx_fail(c, "the bias must be a vector of %lld", (long long)oc);
    return (te_value_t){0};
  }
  return float_in(c, 2);
}

/* The convolution of a Conv node on f32 operands: x [N,C,(H),W], weights
 * [O,C/g,(KH),KW] (constant or run-time) and bias [O]; the window comes
 * from the node's attributes.  Shared with ConvInteger and QLinearConv,
 * which pass exactly representable integer values. */
te_value_t onnx_conv_f32(onnx_ctx_t *c, const onnx_value_t *xv, const onnx_value_t *wv,
                         te_value_t x, const conv_w_t *cwt, te_value_t b) {
  if (xv->rank == 5) return onnx_conv3d_f32(c, xv, wv, x, cwt, b);
  if (xv->rank != 3 && xv->rank != 4) {
    onnx_fail(c, "only 1-D and 2-D convolutions are supported");
    return (te_value_t){0};
  }
  int64_t g = onnx_attr_int(c, "group", 1), ch = xv->dims[1], oc = wv->dims[0], ic = wv->dims[1];
  int64_t ks[2], nk = onnx_attr_ints(c, "kernel_shape", ks, 2);
  win_t w;
  if (wv->rank != xv->rank || g < 1 || ch % g || oc % g || ic * g != ch) {
    onnx_fail(c, "the weights do not match the input channels and group");
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < nk; ++i)
    if (nk != xv->rank - 2 || ks[i] != wv->dims[2 + i]) {
      onnx_fail(c, "kernel_shape does not match the weights");
      return (te_value_t){0};
    }
  if (!x.id || !b.id || !onnx_read_window(c, xv->dims, xv->rank, wv->dims + 2, 0, &w))
    return (te_value_t){0};
  int64_t pad[4];
  x = onnx_tosa_window(c, &w, onnx_to_nhwc(c, x), pad);
  if (!x.id) return x;
  te_value_t y;
  if (g == 1) {
    te_value_t wt = cwt->cw ? ohwi_const(c, cwt->cw, 0, oc, ic, w.k[0], w.k[1])
                            : ohwi_runtime(c, cwt->rt, w.k[0], w.k[1]);
    y = conv_op(c, "tosa.conv2d", x, wt, b, &w, pad, oc);
  } else if (ic == 1) {
    te_value_t wt = depthwise_weights(c, cwt, ch, oc / ch, w.k[0], w.k[1]);
    y = conv_op(c, "tosa.depthwise_conv2d", x, wt, b, &w, pad, oc);
  } else {
    y = grouped_conv(c, cwt, x, &w, pad, g, oc, ic);
    if (y.id) y = add(c, y, b);
  }
  return c->error ? (te_value_t){0} : onnx_from_nhwc(c, y, xv->rank);
}

static tinyml_status_t lower_conv(onnx_ctx_t *c) {
  const onnx_value_t *xv = onnx_input(c, 0), *wv = onnx_input(c, 1);
  if (!xv || !wv) return onnx_fail(c, "X and W are required");
  if (wv->dtype != ONNX_FLOAT)
    return onnx_fail(c, "weights of type %s are not supported", onnx_dtype_name(wv->dtype));
  int64_t oc = wv->dims[0];
  conv_w_t cwt = {const_floats(c, 1), {0}};
  if (!cwt.cw) cwt.rt = onnx_in(c, 1);
  te_value_t y = onnx_conv_f32(c, xv, wv, float_in(c, 0), &cwt, conv_bias(c, oc));
  return y.id ? onnx_set_out(c, 0, y) : c->error;
}

/* ---- ConvTranspose ---- */

/* ONNX's pads for one axis.  With auto_pad SAME_*, the reference and
 * onnxruntime agree on a non-negative total padding (SAME_UPPER puts the
 * odd one at the end).  With output_shape alone they agree on an even
 * total (split) and on a negative one (the output grows at the end, where
 * only the bias lands); an odd positive total they place differently. */
static int convt_axis(onnx_ctx_t *c, int64_t in, int64_t eff, int64_t s, int64_t op,
                      int64_t want, int mode, int64_t *pb, int64_t *pe) {
  int same = mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER;
  if (want >= 0 || same) {
    int64_t out = want >= 0 ? want : in * s;
    int64_t total = s * (in - 1) + op + eff - out;
    if (out < 1 || total <= -s) { /* onnxruntime refuses an output a larger input would give */
      onnx_fail(c, "output_shape does not match the input size");
      return 0;
    }
    if (same ? total < 0 : total > 0 && total % 2) {
      onnx_fail(c, "output_shape or auto_pad needing this padding (%lld) is not supported",
                (long long)total);
      return 0;
    }
    *pb = same ? (mode == PAD_SAME_UPPER ? total / 2 : total - total / 2) : total < 0 ? 0 : total / 2;
    *pe = total - *pb;
    return 1;
  } else if (mode == PAD_VALID) {
    *pb = *pe = 0;
  }
  if (*pb < 0 || *pe < 0 || *pb + *pe >= s * (in - 1) + op + eff) {
    onnx_fail(c, "invalid pads");
    return 0;
  }
  return 1;
}

int onnx_convt_axis(onnx_ctx_t *c, int64_t in, int64_t eff, int64_t s, int64_t op, int64_t want,
                    int mode, int64_t *pb, int64_t *pe) {
  return convt_axis(c, in, eff, s, op, want, mode, pb, pe);
}

/* [ic, oc, kh, kw] weights as TOSA's [oc, kh', kw', ic], dilated with zeros
 * (constant weights only). */
static te_value_t convt_weights(onnx_ctx_t *c, const int64_t *wd, const int64_t *d, int64_t kh,
                                int64_t kw, const int64_t *eff) {
  const float *src = const_floats(c, 1);
  int64_t ic = wd[0], oc = wd[1], dims[4] = {oc, eff[0], eff[1], ic};
  if (!src) {
    int64_t w4[4] = {ic, oc, kh, kw};
    static const int32_t perm[4] = {1, 2, 3, 0};
    te_value_t w = te_transpose(&c->e, te_reshape(&c->e, onnx_in(c, 1), 4, w4), perm);
    if (d[0] == 1 && d[1] == 1) return w;
    /* Dilate at run time: each tap followed by d - 1 zeros, the last ones cut. */
    int64_t w6[6] = {oc, kh, 1, kw, 1, ic}, p6[12] = {0, 0, 0, 0, 0, d[0] - 1, 0, 0, 0, d[1] - 1, 0, 0};
    int64_t big[4] = {oc, kh * d[0], kw * d[1], ic}, zero[4] = {0, 0, 0, 0};
    te_type_t pt = te_type(TE_F32, 6, (int64_t[6]){oc, kh, d[0], kw, d[1], ic});
    te_value_t ops[3] = {te_reshape(&c->e, w, 6, w6), te_shape(&c->e, 12, p6), f32(c, 0.0f)};
    w = te_reshape(&c->e, te_op(&c->e, "tosa.pad", ops, 3, NULL, &pt), 4, big);
    return slice(c, w, zero, dims);
  }
  float *t = alloc_floats(c, oc * eff[0] * eff[1] * ic);
  if (!t) return (te_value_t){0};
  for (int64_t i = 0; i < ic; ++i)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          t[((o * eff[0] + y * d[0]) * eff[1] + x * d[1]) * ic + i] =
              src[((i * oc + o) * kh + y) * kw + x];
  return const_floats_value(c, t, 4, dims);
}

static tinyml_status_t lower_conv_transpose(onnx_ctx_t *c) {
  const onnx_value_t *xv = onnx_input(c, 0), *wv = onnx_input(c, 1);
  if (!xv || !wv) return onnx_fail(c, "X and W are required");
  uint32_t r = xv->rank, n = r - 2;
  if (r == 5 && wv->rank == 5) return onnx_conv_transpose3d(c);
  if ((r != 3 && r != 4) || wv->rank != r) return onnx_fail(c, "only 1-D and 2-D are supported");
  if (wv->dtype != ONNX_FLOAT) return onnx_fail(c, "weights must be FLOAT");
  if (onnx_attr_int(c, "group", 1) != 1) return onnx_fail(c, "grouped ConvTranspose is not supported");
  if (wv->dims[0] != xv->dims[1]) return onnx_fail(c, "the weights do not match the input channels");
  int64_t s[2], d[2], p[4], op[2], os[2], ks[2];
  int64_t ns = onnx_attr_ints(c, "strides", s, 2), nd = onnx_attr_ints(c, "dilations", d, 2);
  int64_t np = onnx_attr_ints(c, "pads", p, 4), nop = onnx_attr_ints(c, "output_padding", op, 2);
  int64_t nos = onnx_attr_ints(c, "output_shape", os, 2), nk = onnx_attr_ints(c, "kernel_shape", ks, 2);
  int mode = auto_pad_mode(c);
  if (c->error || mode < 0) return c->error;
  if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n) ||
      (nop >= 0 && nop != n) || (nos >= 0 && nos != n) || (nk >= 0 && nk != n))
    return onnx_fail(c, "attributes do not match the spatial rank");
  /* Index 0 is the unit height of 1-D. */
  int64_t in[2], k[2], st[2], dl[2], o_p[2], want[2], pb[2], pe[2], eff[2];
  for (int i = 0; i < 2; ++i) {
    int j = i - (int)(2 - n);
    in[i] = j < 0 ? 1 : xv->dims[2 + j];
    k[i] = j < 0 ? 1 : wv->dims[2 + j];
    st[i] = j < 0 || ns < 0 ? 1 : s[j];
    dl[i] = j < 0 || nd < 0 ? 1 : d[j];
    o_p[i] = j < 0 || nop < 0 ? 0 : op[j];
    want[i] = j < 0 ? (nos >= 0 ? 1 : -1) : nos >= 0 ? os[j] : -1;
    pb[i] = j < 0 || np < 0 ? 0 : p[j];
    pe[i] = j < 0 || np < 0 ? 0 : p[j + n];
    if (nk >= 0 && j >= 0 && ks[j] != k[i]) return onnx_fail(c, "kernel_shape does not match the weights");
    if (st[i] < 1 || dl[i] < 1 || o_p[i] < 0 || st[i] > 4096 || dl[i] > 4096 ||
        (o_p[i] >= st[i] && o_p[i] >= dl[i]))
      return onnx_fail(c, "invalid strides, dilations or output_padding");
    eff[i] = (k[i] - 1) * dl[i] + 1;
    if ((mode != PAD_NOTSET || nos >= 0) && (pb[i] || pe[i]))
      return onnx_fail(c, "pads together with auto_pad or output_shape are not supported");
    if (!convt_axis(c, in[i], eff[i], st[i], o_p[i], want[i], mode, &pb[i], &pe[i])) return c->error;
  }
  int64_t oc = wv->dims[1], ic = wv->dims[0];
  te_value_t x = float_in(c, 0), b = conv_bias(c, oc);
  te_value_t w = convt_weights(c, (int64_t[2]){ic, oc}, dl, k[0], k[1], eff);
  if (!x.id || !b.id || !w.id) return c->error;
  x = onnx_to_nhwc(c, x);
  int64_t out_pad[4] = {-pb[0], o_p[0] - pe[0], -pb[1], o_p[1] - pe[1]}, stride[2] = {st[0], st[1]};
  char a[96], sa[64], props[220];
  te_array_attr(64, out_pad, 4, a, sizeof a);
  te_array_attr(64, stride, 2, sa, sizeof sa);
  snprintf(props, sizeof props, "acc_type = f32, out_pad = %s, stride = %s", a, sa);
  int64_t od[4] = {x.type.dims[0], 0, 0, oc};
  for (int i = 0; i < 2; ++i) od[1 + i] = (in[i] - 1) * st[i] + out_pad[2 * i] + out_pad[2 * i + 1] + eff[i];
  te_type_t t = te_type(TE_F32, 4, od);
  te_value_t ops[5] = {x, w, b, f32(c, 0.0f), f32(c, 0.0f)};
  te_value_t y = te_op(&c->e, "tosa.transpose_conv2d", ops, 5, props, &t);
  return onnx_set_out(c, 0, onnx_from_nhwc(c, y, r));
}

/* ---- Gemm and MatMul ---- */

/* [b, m, k] x [b, k, n] -> [b, m, n] */
static te_value_t matmul3(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  int64_t od[3] = {a.type.dims[0], a.type.dims[1], b.type.dims[2]};
  te_type_t t = te_type(TE_F32, 3, od);
  te_value_t ops[4] = {a, b, f32(c, 0.0f), f32(c, 0.0f)};
  return te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
}

/* A 2-D FLOAT operand, transposed if asked: at compile time if constant. */
static te_value_t matrix(onnx_ctx_t *c, uint32_t i, int trans) {
  const onnx_value_t *v = onnx_input(c, i);
  const float *data = const_floats(c, i);
  if (!v || v->rank != 2) {
    onnx_fail(c, "input %u must be a matrix", i);
    return (te_value_t){0};
  }
  if (!trans || !data) {
    te_value_t x = float_in(c, i);
    static const int32_t perm[2] = {1, 0};
    return x.id && trans ? te_transpose(&c->e, x, perm) : x;
  }
  int64_t r = v->dims[0], k = v->dims[1], dims[2] = {k, r};
  float *t = alloc_floats(c, r * k);
  if (!t) return (te_value_t){0};
  for (int64_t y = 0; y < r; ++y)
    for (int64_t x = 0; x < k; ++x) t[x * r + y] = data[y * k + x];
  return const_floats_value(c, t, 2, dims);
}

static tinyml_status_t lower_gemm(onnx_ctx_t *c) {
  te_value_t a = matrix(c, 0, onnx_attr_int(c, "transA", 0) != 0);
  te_value_t b = matrix(c, 1, onnx_attr_int(c, "transB", 0) != 0);
  if (!a.id || !b.id) return c->error;
  int64_t m = a.type.dims[0], k = a.type.dims[1], n = b.type.dims[1];
  if (b.type.dims[0] != k) return onnx_fail(c, "the inner dimensions differ");
  int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n}, yd[2] = {m, n};
  te_value_t y = matmul3(c, te_reshape(&c->e, a, 3, ad), te_reshape(&c->e, b, 3, bd));
  y = te_reshape(&c->e, y, 2, yd);
  float alpha = onnx_attr_float(c, "alpha", 1.0f), beta = onnx_attr_float(c, "beta", 1.0f);
  if (alpha != 1.0f) y = mul(c, y, f32(c, alpha));
  const onnx_value_t *cv = onnx_input(c, 2);
  if (!cv || beta == 0.0f) return onnx_set_out(c, 0, y);
  /* C broadcasts one way onto [m, n]. */
  int ok = cv->rank <= 2;
  for (uint32_t d = 0; ok && d < cv->rank; ++d)
    ok = cv->dims[d] == 1 || cv->dims[d] == yd[2 - cv->rank + d];
  if (!ok) return onnx_fail(c, "C does not broadcast to [%lld, %lld]", (long long)m, (long long)n);
  te_value_t cc = float_in(c, 2);
  if (!cc.id) return c->error;
  if (beta != 1.0f) cc = mul(c, cc, f32(c, beta));
  return onnx_set_out(c, 0, add(c, y, cc));
}

/* Broadcasts x's leading (batch) dims to `bd` (nb of them) with a tile. */
static te_value_t batch_broadcast(onnx_ctx_t *c, te_value_t x, const int64_t *bd, uint32_t nb) {
  int64_t dims[TE_MAX_RANK] = {0}, mult[TE_MAX_RANK] = {0};
  uint32_t r = nb + 2, lift = r - x.type.rank;
  int tile = 0;
  for (uint32_t d = 0; d < r; ++d) {
    dims[d] = d < lift ? 1 : x.type.dims[d - lift];
    mult[d] = d < nb && dims[d] != bd[d] ? bd[d] : 1;
    tile |= mult[d] != 1;
  }
  x = te_reshape(&c->e, x, r, dims);
  if (!tile) return x;
  te_type_t t = te_type(x.type.elem, r, dims);
  for (uint32_t d = 0; d < nb; ++d) t.dims[d] = bd[d];
  te_value_t ops[2] = {x, te_shape(&c->e, r, mult)};
  return te_op(&c->e, "tosa.tile", ops, 2, NULL, &t);
}

static tinyml_status_t lower_matmul(onnx_ctx_t *c) {
  te_value_t a = float_in(c, 0), b = float_in(c, 1);
  if (!a.id || !b.id) return c->error;
  uint32_t ra = a.type.rank, rb = b.type.rank;
  if (ra < 1 || rb < 1) return onnx_fail(c, "scalar operands are not valid");
  /* 1-D operands become [1, k] and [k, 1]; those dims are dropped again. */
  if (ra == 1) a = te_reshape(&c->e, a, 2, (int64_t[2]){1, a.type.dims[0]});
  if (rb == 1) b = te_reshape(&c->e, b, 2, (int64_t[2]){b.type.dims[0], 1});
  uint32_t na = a.type.rank - 2, nbb = b.type.rank - 2, nb = na > nbb ? na : nbb;
  int64_t m = a.type.dims[na], k = a.type.dims[na + 1], n = b.type.dims[nbb + 1];
  if (b.type.dims[nbb] != k) return onnx_fail(c, "the inner dimensions differ");
  int64_t bd[TE_MAX_RANK], batch = 1, bbatch = 1;
  for (uint32_t d = 0; d < nb; ++d) {
    int64_t x = d + na >= nb ? a.type.dims[d + na - nb] : 1;
    int64_t y = d + nbb >= nb ? b.type.dims[d + nbb - nb] : 1;
    if (x != y && x != 1 && y != 1) return onnx_fail(c, "the batch dimensions do not broadcast");
    bd[d] = x == 1 ? y : x;
    batch *= bd[d];
    bbatch *= y;
  }
  te_value_t y;
  if (bbatch == 1) { /* one right-hand matrix: fold the batch into the rows */
    int64_t ad[3] = {1, te_numel(&a.type) / k, k}, bdims[3] = {1, k, n};
    a = batch_broadcast(c, a, bd, nb);
    y = matmul3(c, te_reshape(&c->e, a, 3, ad), te_reshape(&c->e, b, 3, bdims));
    if (ad[1] != batch * m) return onnx_fail(c, "the batch dimensions do not broadcast");
  } else {
    int64_t ad[3] = {batch, m, k}, bdims[3] = {batch, k, n};
    a = te_reshape(&c->e, batch_broadcast(c, a, bd, nb), 3, ad);
    b = te_reshape(&c->e, batch_broadcast(c, b, bd, nb), 3, bdims);
    y = matmul3(c, a, b);
  }
  int64_t od[TE_MAX_RANK];
  uint32_t r = 0;
  for (uint32_t d = 0; d < nb; ++d) od[r++] = bd[d];
  if (ra > 1) od[r++] = m;
  if (rb > 1) od[r++] = n;
  return onnx_set_out(c, 0, te_reshape(&c->e, y, r, od));
}

const onnx_lowering_t onnx_lowerings_nn[] = {
    {"Conv", 1, 23, lower_conv},
    {"ConvTranspose", 1, 23, lower_conv_transpose},
    {"Gemm", 1, 23, lower_gemm},
    {"MatMul", 1, 23, lower_matmul},
    {"MaxUnpool", 9, 23, onnx_lower_max_unpool},
    {NULL, 0, 0, NULL},
};
