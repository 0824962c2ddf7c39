/* Quantised convolutions and matrix products in the form the int8
 * microkernels take (docs/DESIGN.md, "Microkernels"): an NHWC
 * tosa.conv2d / depthwise_conv2d of int8 values with constant int8
 * weights (zero point folded in) and an int32 bias, then a per-channel
 * tosa.rescale to int8 and a clamp.
 *
 * onnxruntime requantises with a float multiply, acc * (x_scale *
 * w_scale / y_scale) in float, rounded half to even; the rescale's 32-bit
 * fixed-point multiplier with double rounding differs from that only where
 * the product lies within rounding of a tie, by one step.
 *
 * uint8 is carried as i8 bits (0..255 as -128..127 reinterpreted); the
 * kernels take int8, which is the uint8 value - 128: flipping the top bit. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_quant_util.h"

int onnx_qval_float(const onnx_value_t *v, int64_t i, float *out) {
  if (!v || !v->data || v->dtype != ONNX_FLOAT || i < 0 || i >= onnx_numel(v->rank, v->dims))
    return 0;
  *out = ((const float *)v->data)[i];
  return 1;
}

int onnx_qval_int(const onnx_value_t *v, int64_t i, int32_t *out) {
  if (!v || !v->data || i < 0 || i >= onnx_numel(v->rank, v->dims)) return 0;
  switch (v->dtype) {
  case ONNX_INT8: *out = ((const int8_t *)v->data)[i]; return 1;
  case ONNX_UINT8: *out = ((const uint8_t *)v->data)[i]; return 1;
  case ONNX_INT32: *out = ((const int32_t *)v->data)[i]; return 1;
  default: return 0;
  }
}

int onnx_zero_point_ok(onnx_ctx_t *c, uint32_t i, int32_t want) {
  const onnx_value_t *z = onnx_input(c, i);
  if (!z || z->dtype == want) return 1;
  onnx_fail(c, "input %u (zero point): type %s differs from %s, the type it quantises", i,
            onnx_dtype_name(z->dtype), onnx_dtype_name(want));
  return 0;
}

/* real = m * 2^-shift, m in [2^30, 2^31): the rescale's scale32 form,
 * within the kernels' shift range 2..62. */
static int tosa_multiplier(double real, int32_t *m, int8_t *shift) {
  if (!(real > 0.0) || !isfinite(real)) return 0;
  int e;
  double q = frexp(real, &e);
  int64_t mm = llround(q * 2147483648.0);
  if (mm == 2147483648LL) {
    mm /= 2;
    ++e;
  }
  if (31 - e < 2 || 31 - e > 62) return 0;
  *m = (int32_t)mm;
  *shift = (int8_t)(31 - e);
  return 1;
}

static int32_t s8_offset(int32_t dtype) { return dtype == ONNX_UINT8 ? 128 : 0; }

/* Carried uint8 bits to int8 values and back (the same top-bit flip). */
static te_value_t flip_u8(onnx_ctx_t *c, te_value_t x, int32_t dtype) {
  if (dtype != ONNX_UINT8) return x;
  return te_binary(&c->e, "tosa.bitwise_xor", x, te_scalar_int(&c->e, TE_I8, -128));
}

static int in_types_ok(const onnx_qconv_t *q) {
  int32_t xd = q->x->dtype, wd = q->w->dtype;
  return (xd == ONNX_INT8 || xd == ONNX_UINT8) && (wd == ONNX_INT8 || wd == ONNX_UINT8) &&
         (q->y_dtype == ONNX_INT8 || q->y_dtype == ONNX_UINT8) && q->w->data &&
         q->w_count >= 1 && q->w_scale;
}

typedef struct qparams {
  int32_t *mult;
  int8_t *shift;
  int8_t *w;     /* packed weights */
  int32_t *bias;
} qparams_t;

static void qparams_free(onnx_ctx_t *c, qparams_t *p) {
  tinyml__free(c->allocator, p->mult);
  tinyml__free(c->allocator, p->shift);
  tinyml__free(c->allocator, p->w);
  tinyml__free(c->allocator, p->bias);
}

/* Multipliers, the bias and room for `nw` packed weights; 0 when a scale
 * has no multiplier in range (or out of memory, with the error set). */
static int qparams_make(onnx_ctx_t *c, const onnx_qconv_t *q, int64_t oc, int64_t nw,
                        qparams_t *p) {
  memset(p, 0, sizeof *p);
  p->mult = tinyml__calloc(c->allocator, (size_t)oc, sizeof(int32_t), 8);
  p->shift = tinyml__calloc(c->allocator, (size_t)oc, 1, 8);
  p->w = tinyml__calloc(c->allocator, (size_t)nw, 1, 16);
  p->bias = tinyml__calloc(c->allocator, (size_t)oc, sizeof(int32_t), 8);
  if (!p->mult || !p->shift || !p->w || !p->bias) {
    onnx_oom(c);
    return 0;
  }
  int64_t nz = q->w_zp ? onnx_numel(q->w_zp->rank, q->w_zp->dims) : 1;
  if ((q->w_count != 1 && q->w_count != oc) || (nz != 1 && nz != oc)) return 0;
  for (int64_t k = 0; k < oc; ++k) {
    float real = q->x_scale * q->w_scale[q->w_count == 1 ? 0 : k] / q->y_scale; /* as ORT */
    if (!tosa_multiplier((double)real, &p->mult[k], &p->shift[k])) return 0;
    p->bias[k] = q->bias ? q->bias[k] : 0;
  }
  return 1;
}

/* Weight element `src` of output channel k minus its zero point, as int8;
 * 0 when it does not fit (an asymmetric int8 zero point). */
static int pack_weight(const onnx_qconv_t *q, int64_t src, int64_t k, int8_t *dst) {
  int32_t v, zp = 0;
  if (q->w_zp && !onnx_qval_int(q->w_zp, onnx_numel(q->w_zp->rank, q->w_zp->dims) == 1 ? 0 : k, &zp))
    return 0;
  if (!onnx_qval_int(q->w, src, &v)) return 0;
  v -= zp;
  if (v < -128 || v > 127) return 0;
  *dst = (int8_t)v;
  return 1;
}

/* Rescale to the output's int8 values, clamp, and back to carried bits. */
static te_value_t requantise(onnx_ctx_t *c, const onnx_qconv_t *q, te_value_t acc,
                             const qparams_t *p, int64_t oc) {
  int32_t off = s8_offset(q->y_dtype);
  int per_channel = 0;
  for (int64_t k = 1; k < oc; ++k)
    per_channel |= p->mult[k] != p->mult[0] || p->shift[k] != p->shift[0];
  te_value_t y = te_rescale(&c->e, acc, TE_I8, p->mult, p->shift, per_channel ? (uint32_t)oc : 1,
                            0, q->y_zp - off, 1, 0, 0);
  int32_t lo = q->act_lo - off, hi = q->act_hi - off;
  if (lo > -128 || hi < 127)
    y = te_clamp_int(&c->e, y, lo > -128 ? lo : -128, hi < 127 ? hi : 127);
  return flip_u8(c, y, q->y_dtype);
}

typedef struct qwin {
  int64_t k[2], s[2], d[2], pad[4], out[2];
} qwin_t;

/* The node's window on a 2-D input; 0 for what this path leaves to the
 * general one (auto_pad, windows needing the input sliced). */
static int q_window(onnx_ctx_t *c, const int64_t *xd, const int64_t *wd, qwin_t *w) {
  char buf[32];
  const char *ap = onnx_attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
  int64_t s[2] = {1, 1}, d[2] = {1, 1}, p[4] = {0, 0, 0, 0}, ks[2];
  int64_t ns = onnx_attr_ints(c, "strides", s, 2), nd = onnx_attr_ints(c, "dilations", d, 2);
  int64_t np = onnx_attr_ints(c, "pads", p, 4), nk = onnx_attr_ints(c, "kernel_shape", ks, 2);
  if (c->error || (ap[0] && strcmp(ap, "NOTSET") != 0) || (ns >= 0 && ns != 2) ||
      (nd >= 0 && nd != 2) || (np >= 0 && np != 4) || (nk >= 0 && nk != 2) ||
      (nk == 2 && (ks[0] != wd[2] || ks[1] != wd[3])))
    return 0;
  for (int i = 0; i < 2; ++i) {
    w->k[i] = wd[2 + i];
    w->s[i] = s[i];
    w->d[i] = d[i];
    int64_t pb = p[i], pe = p[i + 2], in = xd[2 + i];
    if (w->s[i] < 1 || w->s[i] > 4096 || w->d[i] < 1 || w->d[i] > 4096 || pb < 0 || pe < 0 ||
        pb > 4096 || pe > 4096 || w->k[i] < 1)
      return 0;
    int64_t eff = (w->k[i] - 1) * w->d[i] + 1, span = in + pb + pe - eff;
    if (span < 0) return 0;
    w->out[i] = span / w->s[i] + 1;
    int64_t after = (w->out[i] - 1) * w->s[i] + eff - in - pb;
    if (after < 0) return 0;
    w->pad[2 * i] = pb;
    w->pad[2 * i + 1] = after;
  }
  return 1;
}

static te_value_t conv_s8_op(onnx_ctx_t *c, const char *name, te_value_t x, te_value_t w,
                             te_value_t bias, int32_t x_zp, const qwin_t *win, int64_t oc) {
  char props[400], p[96], s[64], d[64];
  te_array_attr(64, win->pad, 4, p, sizeof p);
  te_array_attr(64, win->s, 2, s, sizeof s);
  te_array_attr(64, win->d, 2, d, sizeof d);
  snprintf(props, sizeof props, "acc_type = i32, dilation = %s, pad = %s, stride = %s", d, p, s);
  int64_t od[4] = {x.type.dims[0], win->out[0], win->out[1], oc};
  te_type_t t = te_type(TE_I32, 4, od);
  te_value_t ops[5] = {x, w, bias, te_scalar_int(&c->e, TE_I8, x_zp), te_scalar_int(&c->e, TE_I8, 0)};
  return te_op(&c->e, name, ops, 5, props, &t);
}

/* Packs OIHW weights as OHWI (depthwise: [kh, kw, oc, 1]); 0 if one does
 * not fit int8. */
static int pack_conv(const onnx_qconv_t *q, int depthwise, int8_t *t) {
  const int64_t *wd = q->w->dims;
  int64_t oc = wd[0], ic = wd[1], kh = wd[2], kw = wd[3];
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < ic; ++i)
      for (int64_t y = 0; y < kh * kw; ++y) {
        int64_t dst = depthwise ? y * oc + o : (o * kh * kw + y) * ic + i;
        if (!pack_weight(q, (o * ic + i) * kh * kw + y, o, &t[dst])) return 0;
      }
  return 1;
}

static int qconv_shapes_ok(onnx_ctx_t *c, const onnx_qconv_t *q, int *depthwise) {
  const onnx_value_t *x = q->x, *w = q->w;
  if (x->rank != 4 || w->rank != 4 || !in_types_ok(q)) return 0;
  int64_t g = onnx_attr_int(c, "group", 1), ch = x->dims[1], oc = w->dims[0];
  *depthwise = g > 1 && g == ch && w->dims[1] == 1 && oc == ch;
  return (g == 1 && w->dims[1] == ch) || *depthwise;
}

int onnx_qconv_s8(onnx_ctx_t *c, const onnx_qconv_t *q, te_value_t *out) {
  int depthwise;
  qwin_t win;
  if (!qconv_shapes_ok(c, q, &depthwise) || !q_window(c, q->x->dims, q->w->dims, &win)) return 0;
  const int64_t *wd = q->w->dims;
  int64_t oc = wd[0], nw = onnx_numel(4, wd);
  qparams_t p;
  if (!qparams_make(c, q, oc, nw, &p) || !pack_conv(q, depthwise, p.w)) {
    qparams_free(c, &p);
    return 0;
  }
  int64_t cd[4] = {oc, wd[2], wd[3], wd[1]}, dd[4] = {wd[2], wd[3], oc, 1};
  te_type_t wt = te_type(TE_I8, 4, depthwise ? dd : cd), bt = te_type(TE_I32, 1, &oc);
  te_value_t w = te_const(&c->e, &wt, p.w), bias = te_const(&c->e, &bt, p.bias);
  static const int32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  te_value_t x = onnx_runtime(c, q->x);
  if (!x.id) {
    qparams_free(c, &p);
    return 0;
  }
  x = te_transpose(&c->e, flip_u8(c, x, q->x->dtype), to_nhwc);
  te_value_t acc = conv_s8_op(c, depthwise ? "tosa.depthwise_conv2d" : "tosa.conv2d", x, w, bias,
                              q->x_zp - s8_offset(q->x->dtype), &win, oc);
  *out = te_transpose(&c->e, requantise(c, q, acc, &p, oc), to_nchw);
  qparams_free(c, &p);
  return !c->error;
}

int onnx_qmatmul_s8(onnx_ctx_t *c, const onnx_qconv_t *q, te_value_t *out) {
  const onnx_value_t *xv = q->x, *wv = q->w;
  if (xv->rank < 1 || wv->rank != 2 || !in_types_ok(q)) return 0;
  int64_t k = wv->dims[q->transpose_w ? 1 : 0], n = wv->dims[q->transpose_w ? 0 : 1];
  if (xv->dims[xv->rank - 1] != k) return 0;
  int64_t rows = onnx_numel(xv->rank, xv->dims) / (k ? k : 1);
  qparams_t p;
  int ok = rows > 0 && qparams_make(c, q, n, n * k, &p);
  for (int64_t j = 0; ok && j < n; ++j)
    for (int64_t i = 0; ok && i < k; ++i)
      ok = pack_weight(q, q->transpose_w ? j * k + i : i * n + j, j, &p.w[j * k + i]);
  if (!ok) {
    if (rows > 0) qparams_free(c, &p);
    return 0;
  }
  te_type_t wt = te_type(TE_I8, 4, (int64_t[4]){n, 1, 1, k}), bt = te_type(TE_I32, 1, &n);
  te_value_t w = te_const(&c->e, &wt, p.w), bias = te_const(&c->e, &bt, p.bias);
  te_value_t x = onnx_runtime(c, q->x);
  if (x.id) {
    x = te_reshape(&c->e, flip_u8(c, x, xv->dtype), 4, (int64_t[4]){1, 1, rows, k});
    qwin_t win = {{1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, rows}};
    te_value_t acc = conv_s8_op(c, "tosa.conv2d", x, w, bias, q->x_zp - s8_offset(xv->dtype), &win, n);
    int64_t od[TE_MAX_RANK];
    memcpy(od, xv->dims, sizeof(int64_t) * xv->rank);
    od[xv->rank - 1] = n;
    *out = te_reshape(&c->e, requantise(c, q, acc, &p, n), xv->rank, od);
  }
  qparams_free(c, &p);
  return x.id && !c->error;
}
