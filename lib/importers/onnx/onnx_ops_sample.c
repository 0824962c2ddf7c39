/* ONNX lowerings that read their input at positions known only at run
 * time: GridSample and RoiAlign.  The output shapes are static; every tap
 * is one tosa.gather of [N*H*W, C] pixel rows with a run-time index per
 * output point, weighted as onnx/reference/ops/op_grid_sample.py and
 * op_roi_align.py do, in f32 as onnxruntime computes.  See onnx_lower.h. */
#include "onnx_elt_util.h"
#include "onnx_shape_util.h"

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct grid {
  int mode, pad, align;
  int64_t n, ch, h, w, ho, wo;
} grid_t;

/* ---- the arithmetic, on run-time [N, P, 1] coordinate tensors ----------- */

/* Where normalised coordinate g falls in an axis of `len` pixels. */
static te_value_t gs_denorm(onnx_ctx_t *c, const grid_t *g, te_value_t v, int64_t len) {
  v = addk(c, v, 1.0f);
  if (g->align) return mulk(c, mulk(c, v, 0.5f), (float)(len - 1));
  return mulk(c, addk(c, mulk(c, v, (float)len), -1.0f), 0.5f);
}

static float gs_lo(const grid_t *g) { return g->align ? 0.0f : -0.5f; }
static float gs_hi(const grid_t *g, int64_t len) {
  return g->align ? (float)len - 1.0f : (float)len - 0.5f;
}

static te_value_t gt(onnx_ctx_t *c, te_value_t a, float k) { return bin(c, "tosa.greater", a, kf(c, a, k)); }
static te_value_t lt(onnx_ctx_t *c, te_value_t a, float k) { return bin(c, "tosa.greater", kf(c, a, k), a); }
static te_value_t lor(onnx_ctx_t *c, te_value_t a, te_value_t b) { return bin(c, "tosa.logical_or", a, b); }
static te_value_t floor_(onnx_ctx_t *c, te_value_t x) { return un(c, "tosa.floor", x); }

/* Reflects v by the nearer border until it lies in [lo, hi]. */
static te_value_t gs_reflect(onnx_ctx_t *c, te_value_t v, float lo, float hi) {
  te_value_t below = lt(c, v, lo), above = gt(c, v, hi);
  te_value_t dx = te_select(&c->e, below, sub(c, kf(c, v, lo), v), addk(c, v, -hi));
  te_value_t n = floor_(c, fdiv(c, dx, kf(c, dx, hi - lo)));
  te_value_t r = sub(c, dx, mulk(c, n, hi - lo));
  te_value_t half = mulk(c, n, 0.5f);
  te_value_t even = bin(c, "tosa.equal", floor_(c, half), half);
  te_value_t from_lo = add(c, kf(c, r, lo), r), from_hi = sub(c, kf(c, r, hi), r);
  te_value_t inside_lo = bin(c, "tosa.logical_xor", below, lnot(c, even));
  te_value_t y = te_select(&c->e, inside_lo, from_lo, from_hi);
  return te_select(&c->e, lor(c, below, above), y, v);
}

/* The reference brings a coordinate outside the borders back in before
 * interpolating (zeros leaves it). */
static te_value_t gs_pad_coord(onnx_ctx_t *c, const grid_t *g, te_value_t v, int64_t len) {
  float lo = gs_lo(g), hi = gs_hi(g, len);
  if (g->pad == GS_REFLECTION) return gs_reflect(c, v, lo, hi);
  if (g->pad == GS_ZEROS) return v;
  te_value_t out = lor(c, lt(c, v, lo), gt(c, v, hi));
  return te_select(&c->e, out, te_clamp_f32(&c->e, v, 0.0f, (float)len - 1.0f), v);
}

/* Integral tap position t as an index in [0, len); *valid (zeros only)
 * says whether the reference reads the pixel or takes 0. */
static te_value_t gs_tap(onnx_ctx_t *c, const grid_t *g, te_value_t t, int64_t len,
                         te_value_t *valid) {
  valid->id = 0;
  if (g->pad == GS_ZEROS)
    *valid = lnot(c, lor(c, lt(c, t, 0.0f), gt(c, t, (float)len - 1.0f)));
  else if (g->pad == GS_REFLECTION)
    t = gs_reflect(c, t, gs_lo(g), gs_hi(g, len));
  return te_clamp_f32(&c->e, t, 0.0f, (float)len - 1.0f);
}

/* Tap weights of fraction t in [0, 1): 2 linear or 4 cubic (Keys, -0.75). */
static void gs_weights(onnx_ctx_t *c, const grid_t *g, te_value_t t, te_value_t *w) {
  if (g->mode == GS_LINEAR) {
    w[0] = sub(c, kf(c, t, 1.0f), t);
    w[1] = t;
    return;
  }
  const float a = -0.75f;
  te_value_t t1 = addk(c, t, 1.0f), u = sub(c, kf(c, t, 1.0f), t), u1 = sub(c, kf(c, t, 2.0f), t);
  w[0] = addk(c, mul(c, addk(c, mul(c, addk(c, mulk(c, t1, a), -5 * a), t1), 8 * a), t1), -4 * a);
  w[1] = addk(c, mul(c, mul(c, addk(c, mulk(c, t, a + 2), -(a + 3)), t), t), 1.0f);
  w[2] = addk(c, mul(c, mul(c, addk(c, mulk(c, u, a + 2), -(a + 3)), u), u), 1.0f);
  w[3] = addk(c, mul(c, addk(c, mul(c, addk(c, mulk(c, u1, a), -5 * a), u1), 8 * a), u1), -4 * a);
}

/* The [N, P, C] pixels at row taps ty and column taps tx. */
static te_value_t gs_pixels(onnx_ctx_t *c, const grid_t *g, te_value_t rows, te_value_t ty,
                            te_value_t tx) {
  int64_t p = g->ho * g->wo;
  te_value_t vy, vx;
  te_value_t iy = gs_tap(c, g, ty, g->h, &vy), ix = gs_tap(c, g, tx, g->w, &vx);
  te_value_t flat = add(c, mulk(c, iy, (float)g->w), ix);
  te_value_t idx = te_reshape(&c->e, te_cast(&c->e, flat, TE_I32), 2, (int64_t[2]){g->n, p});
  te_type_t rt = te_type(TE_F32, 3, (int64_t[3]){g->n, p, g->ch});
  te_value_t ops[2] = {rows, idx};
  te_value_t px = te_op(&c->e, "tosa.gather", ops, 2, NULL, &rt);
  if (!vy.id) return px;
  te_value_t valid = bin(c, "tosa.logical_and", vy, vx);
  return te_select(&c->e, valid, px, kf(c, px, 0.0f));
}

/* Interpolates along x (columns) for each row tap, then along y, as the
 * reference's recursion over axes does. */
static te_value_t gs_interpolate(onnx_ctx_t *c, const grid_t *g, te_value_t rows, te_value_t y,
                                 te_value_t x) {
  int taps = g->mode == GS_LINEAR ? 2 : 4, first = g->mode == GS_LINEAR ? 0 : -1;
  te_value_t y0 = floor_(c, y), x0 = floor_(c, x), wy[4], wx[4], out = {0};
  gs_weights(c, g, sub(c, y, y0), wy);
  gs_weights(c, g, sub(c, x, x0), wx);
  for (int j = 0; j < taps; ++j) {
    te_value_t ty = addk(c, y0, (float)(first + j)), row = {0};
    for (int k = 0; k < taps; ++k) {
      te_value_t px = gs_pixels(c, g, rows, ty, addk(c, x0, (float)(first + k)));
      te_value_t term = mul(c, wx[k], px);
      row = k ? add(c, row, term) : term;
    }
    te_value_t term = mul(c, wy[j], row);
    out = j ? add(c, out, term) : term;
  }
  return out;
}

static tinyml_status_t gs_runtime(onnx_ctx_t *c, const grid_t *g) {
  te_value_t x = onnx_in(c, 0), grid = onnx_in(c, 1);
  if (!x.id || !grid.id) return c->error;
  int64_t p = g->ho * g->wo;
  x = te_transpose(&c->e, x, (int32_t[4]){0, 2, 3, 1});
  te_value_t rows = te_reshape(&c->e, x, 3, (int64_t[3]){g->n, g->h * g->w, g->ch});
  grid = te_reshape(&c->e, grid, 3, (int64_t[3]){g->n, p, 2});
  te_value_t gx = te_slice(&c->e, grid, (int64_t[3]){0, 0, 0}, (int64_t[3]){g->n, p, 1});
  te_value_t gy = te_slice(&c->e, grid, (int64_t[3]){0, 0, 1}, (int64_t[3]){g->n, p, 1});
  te_value_t cx = gs_denorm(c, g, gx, g->w), cy = gs_denorm(c, g, gy, g->h), y;
  if (g->mode == GS_NEAREST) {
    cx = te_round_half_even(&c->e, cx);
    cy = te_round_half_even(&c->e, cy);
  }
  cx = gs_pad_coord(c, g, cx, g->w);
  cy = gs_pad_coord(c, g, cy, g->h);
  if (g->mode == GS_NEAREST) y = gs_pixels(c, g, rows, cy, cx);
  else y = gs_interpolate(c, g, rows, cy, cx);
  y = te_reshape(&c->e, y, 4, (int64_t[4]){g->n, g->ho, g->wo, g->ch});
  return onnx_set_out(c, 0, te_transpose(&c->e, y, (int32_t[4]){0, 3, 1, 2}));
}

/* ---- the same on the host, for constant inputs --------------------------- */

static float h_reflect(float v, float lo, float hi) {
  if (v >= lo && v <= hi) return v;
  int below = v < lo;
  float dx = below ? lo - v : v - hi, n = floorf(dx / (hi - lo)), r = dx - n * (hi - lo);
  int even = floorf(n * 0.5f) == n * 0.5f;
  return below == even ? lo + r : hi - r;
}

static float h_pad_coord(const grid_t *g, float v, int64_t len) {
  float lo = gs_lo(g), hi = gs_hi(g, len);
  if (g->pad == GS_REFLECTION) return h_reflect(v, lo, hi);
  if (g->pad == GS_ZEROS || (v >= lo && v <= hi)) return v;
  return fminf(fmaxf(v, 0.0f), (float)len - 1.0f);
}

static float h_pixel(const grid_t *g, const float *img, float ty, float tx) {
  float t[2] = {ty, tx};
  int64_t len[2] = {g->h, g->w}, at[2];
  for (int i = 0; i < 2; ++i) {
    if (g->pad == GS_ZEROS && (t[i] < 0.0f || t[i] > (float)len[i] - 1.0f)) return 0.0f;
    if (g->pad == GS_REFLECTION) t[i] = h_reflect(t[i], gs_lo(g), gs_hi(g, len[i]));
    at[i] = (int64_t)fminf(fmaxf(t[i], 0.0f), (float)len[i] - 1.0f);
  }
  return img[at[0] * g->w + at[1]];
}

static void h_weights(const grid_t *g, float t, float *w) {
  if (g->mode == GS_LINEAR) {
    w[0] = 1.0f - t;
    w[1] = t;
    return;
  }
  const float a = -0.75f;
  float t1 = t + 1.0f, u = 1.0f - t, u1 = 2.0f - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1.0f;
  w[2] = ((a + 2) * u - (a + 3)) * u * u + 1.0f;
  w[3] = ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a;
}

static float h_sample(const grid_t *g, const float *img, float gx, float gy) {
  float x = g->align ? (gx + 1.0f) * 0.5f * (float)(g->w - 1)
                             : ((gx + 1.0f) * (float)g->w - 1.0f) * 0.5f;
  float y = g->align ? (gy + 1.0f) * 0.5f * (float)(g->h - 1)
                             : ((gy + 1.0f) * (float)g->h - 1.0f) * 0.5f;
  if (g->mode == GS_NEAREST) {
    x = nearbyintf(x);
    y = nearbyintf(y);
  }
  x = h_pad_coord(g, x, g->w);
  y = h_pad_coord(g, y, g->h);
  if (g->mode == GS_NEAREST) return h_pixel(g, img, y, x);
  int taps = g->mode == GS_LINEAR ? 2 : 4, first = g->mode == GS_LINEAR ? 0 : -1;
  float y0 = floorf(y), x0 = floorf(x), wy[4], wx[4], out = 0.0f;
  h_weights(g, y - y0, wy);
  h_weights(g, x - x0, wx);
  for (int j = 0; j < taps; ++j) {
    float row = 0.0f;
    for (int k = 0; k < taps; ++k)
      row += wx[k] * h_pixel(g, img, y0 + (float)(first + j), x0 + (float)(first + k));
    out += wy[j] * row;
  }
  return out;
}

static tinyml_status_t gs_fold(onnx_ctx_t *c, const grid_t *g, const onnx_value_t *xv,
                               const onnx_value_t *gv) {
  int64_t p = g->ho * g->wo, dims[4] = {g->n, g->ch, g->ho, g->wo};
  float *out = tinyml__alloc(c->allocator, (size_t)(g->n * g->ch * p) * 4 + 4, 16);
  if (!out) return onnx_oom(c);
  const float *x = xv->data, *grid = gv->data;
  for (int64_t n = 0; n < g->n; ++n)
    for (int64_t ch = 0; ch < g->ch; ++ch)
      for (int64_t i = 0; i < p; ++i) {
        const float *at = grid + (n * p + i) * 2;
        const float *img = x + (n * g->ch + ch) * g->h * g->w;
        out[(n * g->ch + ch) * p + i] = h_sample(g, img, at[0], at[1]);
      }
  tinyml_status_t st = onnx_set_out_const(c, 0, ONNX_FLOAT, 4, dims, out);
  tinyml__free(c->allocator, out);
  return st;
}

/* ---- GridSample ------------------------------------------------------------ */

static int gs_pick(onnx_ctx_t *c, const char *attr, const char *def, const char *const *names,
                   int *out) {
  char buf[32];
  const char *s = onnx_attr_string(c, attr, def, buf, sizeof buf);
  for (int i = 0; i < 3; ++i)
    if (names[i] && strcmp(s, names[i]) == 0) return *out = i, 1;
  onnx_fail(c, "%s '%s' is not supported", attr, s);
  return 0;
}

static int gs_read(onnx_ctx_t *c, grid_t *g) {
  static const char *const old_modes[3] = {"bilinear", "nearest", "bicubic"};
  static const char *const modes[3] = {"linear", "nearest", "cubic"};
  static const char *const pads[3] = {"zeros", "border", "reflection"};
  int old = c->opset < 20;
  if (!gs_pick(c, "mode", old ? "bilinear" : "linear", old ? old_modes : modes, &g->mode) ||
      !gs_pick(c, "padding_mode", "zeros", pads, &g->pad))
    return 0;
  g->align = onnx_attr_int(c, "align_corners", 0) != 0;
  const onnx_value_t *x = onnx_input(c, 0), *grid = onnx_input(c, 1);
  if (!x || !grid) return onnx_fail(c, "X and grid are required"), 0;
  if (x->dtype != ONNX_FLOAT || grid->dtype != ONNX_FLOAT)
    return onnx_fail(c, "only FLOAT X and grid are supported"), 0;
  if (x->rank != 4 || grid->rank != 4 || grid->dims[3] != 2 || grid->dims[0] != x->dims[0])
    return onnx_fail(c, "only 2-D sampling (X [N, C, H, W], grid [N, H_out, W_out, 2]) is supported"), 0;
  g->n = x->dims[0], g->ch = x->dims[1], g->h = x->dims[2], g->w = x->dims[3];
  g->ho = grid->dims[1], g->wo = grid->dims[2];
  if (onnx_numel(4, x->dims) == 0 || onnx_numel(4, grid->dims) == 0)
    return onnx_fail(c, "empty tensors are not supported"), 0;
  /* Flat pixel indices are formed exactly in f32. */
  if (onnx_mul_sat(g->h, g->w) >= (1 << 24) ||
      (uint64_t)onnx_mul_sat(onnx_mul_sat(g->n, g->ch), onnx_mul_sat(g->ho, g->wo)) >
          c->limits.max_tensor_bytes / 4)
    return onnx_fail(c, "the image or the output is too large"), 0;
  /* The reference clamps a coordinate outside the borders before taking
   * its 4x4 taps, onnxruntime clamps each tap (as PyTorch): they differ. */
  if (g->mode == GS_CUBIC && g->pad == GS_BORDER)
    return onnx_fail(c, "cubic with padding_mode border is not supported: the ONNX reference and onnxruntime disagree outside the image"), 0;
  /* The reference divides by a zero-width span here. */
  if (g->pad == GS_REFLECTION && g->align && (g->h == 1 || g->w == 1))
    return onnx_fail(c, "reflection with align_corners=1 on a 1-pixel axis is undefined"), 0;
  return 1;
}

static tinyml_status_t lower_grid_sample(onnx_ctx_t *c) {
  grid_t g;
  if (!gs_read(c, &g)) return c->error;
  const onnx_value_t *x = onnx_const_probe(c, 0), *grid = onnx_const_probe(c, 1);
  if (x && grid) return gs_fold(c, &g, x, grid);
  return gs_runtime(c, &g);
}

/* ---- RoiAlign ---------------------------------------------------------------- */

typedef struct roi {
  int half;                /* coordinate_transformation_mode half_pixel */
  float scale;             /* spatial_scale */
  int64_t ph, pw, sh, sw;  /* output bins and samples per bin, per axis */
  int64_t r, n, ch, h, w;
} roi_t;

/* A roi's first sample row or column and bin size along one axis, from
 * its two box edges, in the reference's order of operations. */
static void ra_box(const roi_t *q, float lo, float hi, int64_t bins, float *start, float *bin,
                   float *size) {
  float off = q->half ? 0.5f : 0.0f;
  *start = lo * q->scale - off;
  *size = (hi * q->scale - off) - *start;
  if (!q->half) *size = fmaxf(*size, 1.0f);
  *bin = *size / (float)bins;
}

/* Bilinear taps of sample position p on an axis of `len` pixels: the two
 * pixels, the weight of the high one, and 0 when the reference drops the
 * sample (it lies more than one pixel outside). */
static int ra_taps(float p, int64_t len, float *low, float *high, float *l) {
  if (p < -1.0f || p > (float)len) return *low = *high = *l = 0.0f, 0;
  p = fmaxf(p, 0.0f);
  *low = floorf(p);
  if (*low >= (float)len - 1.0f) *low = *high = p = (float)len - 1.0f;
  else *high = *low + 1.0f;
  *l = p - *low;
  return 1;
}

static float ra_bin(const roi_t *q, const float *img, const float *box, int64_t i, int64_t j) {
  float sy, sx, by, bx, hy, hx, sum = 0.0f;
  ra_box(q, box[1], box[3], q->ph, &sy, &by, &hy);
  ra_box(q, box[0], box[2], q->pw, &sx, &bx, &hx);
  for (int64_t a = 0; a < q->sh; ++a) {
    float row = 0.0f;
    for (int64_t b = 0; b < q->sw; ++b) {
      float y = sy + (float)i * by + ((float)a + 0.5f) * by / (float)q->sh;
      float x = sx + (float)j * bx + ((float)b + 0.5f) * bx / (float)q->sw;
      float y0, y1, ly, x0, x1, lx;
      int ok = ra_taps(y, q->h, &y0, &y1, &ly) & ra_taps(x, q->w, &x0, &x1, &lx);
      float w[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
      int64_t at[4] = {(int64_t)(y0 * q->w + x0), (int64_t)(y0 * q->w + x1),
                       (int64_t)(y1 * q->w + x0), (int64_t)(y1 * q->w + x1)};
      float v = 0.0f;
      for (int k = 0; k < 4; ++k) v += (ok ? w[k] : 0.0f) * img[ok ? at[k] : 0];
      row += v;
    }
    sum += row;
  }
  return sum / (float)(q->sh * q->sw > 1 ? q->sh * q->sw : 1);
}

static tinyml_status_t ra_fold(onnx_ctx_t *c, const roi_t *q, const float *x, const float *boxes,
                               const int64_t *batch) {
  int64_t dims[4] = {q->r, q->ch, q->ph, q->pw}, k = 0;
  float *out = tinyml__alloc(c->allocator, (size_t)onnx_numel(4, dims) * 4 + 4, 16);
  if (!out) return onnx_oom(c);
  for (int64_t r = 0; r < q->r; ++r)
    for (int64_t ch = 0; ch < q->ch; ++ch) {
      const float *img = x + (clamp64(batch[r], 0, q->n - 1) * q->ch + ch) * q->h * q->w;
      for (int64_t i = 0; i < q->ph; ++i)
        for (int64_t j = 0; j < q->pw; ++j) out[k++] = ra_bin(q, img, boxes + r * 4, i, j);
    }
  tinyml_status_t st = onnx_set_out_const(c, 0, ONNX_FLOAT, 4, dims, out);
  tinyml__free(c->allocator, out);
  return st;
}

/* A [1, n, 1]-shaped (or `rank`/`axis` placed) f32 constant off, off+1, ... */
static te_value_t f32_steps(onnx_ctx_t *c, uint32_t rank, uint32_t axis, int64_t n, float off) {
  int64_t dims[TE_MAX_RANK];
  float *v = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!v) return onnx_oom(c), (te_value_t){0};
  for (uint32_t d = 0; d < rank; ++d) dims[d] = d == axis ? n : 1;
  for (int64_t i = 0; i < n; ++i) v[i] = (float)i + off;
  te_type_t t = te_type(TE_F32, rank, dims);
  te_value_t k = te_const(&c->e, &t, v);
  tinyml__free(c->allocator, v);
  return k;
}

typedef struct ra_axis {
  te_value_t low, high, l, valid;
} ra_axis_t;

/* Sample positions along one axis, [R, bins, samples], and their taps:
 * the run-time form of ra_box and ra_taps. */
static ra_axis_t ra_axis_taps(onnx_ctx_t *c, const roi_t *q, te_value_t boxes, int lo_col,
                              int64_t bins, int64_t samples, int64_t len) {
  int64_t start[2] = {0, lo_col}, size[2] = {q->r, 1}, end[2] = {0, lo_col + 2}, d3[3] = {q->r, 1, 1};
  te_value_t lo = te_reshape(&c->e, te_slice(&c->e, boxes, start, size), 3, d3);
  te_value_t hi = te_reshape(&c->e, te_slice(&c->e, boxes, end, size), 3, d3);
  float off = q->half ? 0.5f : 0.0f;
  te_value_t s = addk(c, mulk(c, lo, q->scale), -off);
  te_value_t extent = sub(c, addk(c, mulk(c, hi, q->scale), -off), s);
  if (!q->half) extent = bin(c, "tosa.maximum", extent, kf(c, extent, 1.0f));
  te_value_t b = fdiv(c, extent, kf(c, extent, (float)bins));
  te_value_t p = add(c, add(c, s, mul(c, f32_steps(c, 3, 1, bins, 0.0f), b)),
                     fdiv(c, mul(c, f32_steps(c, 3, 2, samples, 0.5f), b), kf(c, b, (float)samples)));
  ra_axis_t a;
  a.valid = lnot(c, lor(c, lt(c, p, -1.0f), gt(c, p, (float)len)));
  p = bin(c, "tosa.maximum", p, kf(c, p, 0.0f));
  te_value_t f = floor_(c, p), last = kf(c, p, (float)len - 1.0f);
  te_value_t edge = bin(c, "tosa.greater_equal", f, last);
  a.low = te_select(&c->e, edge, last, f);
  a.high = te_select(&c->e, edge, last, addk(c, f, 1.0f));
  a.l = sub(c, te_select(&c->e, edge, last, p), a.low);
  te_value_t zero = kf(c, p, 0.0f);
  a.low = te_select(&c->e, a.valid, a.low, zero);
  a.high = te_select(&c->e, a.valid, a.high, zero);
  a.l = te_select(&c->e, a.valid, a.l, zero);
  return a;
}

/* Weight * pixel for one corner: rows of [N*H*W, C] gathered at
 * base + row * W + col, all points shaped [R*PH, SH, PW, SW, 1]. */
static te_value_t ra_corner(onnx_ctx_t *c, const roi_t *q, te_value_t rows, te_value_t base,
                            te_value_t y, te_value_t x, te_value_t w) {
  int64_t pts = q->r * q->ph * q->sh * q->pw * q->sw;
  int64_t d5[5] = {q->r * q->ph, q->sh, q->pw, q->sw, 1};
  te_value_t at = add(c, base, add(c, mulk(c, y, (float)q->w), x));
  te_value_t idx = te_reshape(&c->e, te_cast(&c->e, at, TE_I32), 2, (int64_t[2]){1, pts});
  te_type_t rt = te_type(TE_F32, 3, (int64_t[3]){1, pts, q->ch});
  te_value_t ops[2] = {rows, idx};
  te_value_t px = te_op(&c->e, "tosa.gather", ops, 2, NULL, &rt);
  px = te_reshape(&c->e, px, 5, (int64_t[5]){q->r * q->ph, q->sh, q->pw, q->sw, q->ch});
  return mul(c, te_reshape(&c->e, w, 5, d5), px);
}

static tinyml_status_t ra_runtime(onnx_ctx_t *c, const roi_t *q) {
  te_value_t x = onnx_in(c, 0), boxes = onnx_in(c, 1), batch = onnx_in(c, 2);
  if (!x.id || !boxes.id || !batch.id) return c->error;
  x = te_transpose(&c->e, x, (int32_t[4]){0, 2, 3, 1});
  te_value_t rows = te_reshape(&c->e, x, 3, (int64_t[3]){1, q->n * q->h * q->w, q->ch});
  ra_axis_t ay = ra_axis_taps(c, q, boxes, 1, q->ph, q->sh, q->h);
  ra_axis_t ax = ra_axis_taps(c, q, boxes, 0, q->pw, q->sw, q->w);
  int64_t dy[5] = {q->r, q->ph, q->sh, 1, 1}, dx[5] = {q->r, 1, 1, q->pw, q->sw};
  te_value_t y0 = te_reshape(&c->e, ay.low, 5, dy), y1 = te_reshape(&c->e, ay.high, 5, dy);
  te_value_t ly = te_reshape(&c->e, ay.l, 5, dy), hy = sub(c, kf(c, ly, 1.0f), ly);
  te_value_t x0 = te_reshape(&c->e, ax.low, 5, dx), x1 = te_reshape(&c->e, ax.high, 5, dx);
  te_value_t lx = te_reshape(&c->e, ax.l, 5, dx), hx = sub(c, kf(c, lx, 1.0f), lx);
  te_value_t ok = bin(c, "tosa.logical_and", te_reshape(&c->e, ay.valid, 5, dy),
                      te_reshape(&c->e, ax.valid, 5, dx));
  te_value_t zero = kf(c, ok, 0.0f);
  /* Batch indices outside [0, N) are undefined in ONNX: clamp them so the
   * gather stays inside X. */
  te_value_t b = te_clamp_int(&c->e, te_cast(&c->e, batch, TE_I32), 0, q->n - 1);
  b = te_reshape(&c->e, te_cast(&c->e, b, TE_F32), 5, (int64_t[5]){q->r, 1, 1, 1, 1});
  b = mulk(c, b, (float)(q->h * q->w));
  te_value_t w1 = te_select(&c->e, ok, mul(c, hy, hx), zero), w2 = te_select(&c->e, ok, mul(c, hy, lx), zero);
  te_value_t w3 = te_select(&c->e, ok, mul(c, ly, hx), zero), w4 = te_select(&c->e, ok, mul(c, ly, lx), zero);
  te_value_t s = ra_corner(c, q, rows, b, y0, x0, w1);
  s = add(c, s, ra_corner(c, q, rows, b, y0, x1, w2));
  s = add(c, s, ra_corner(c, q, rows, b, y1, x0, w3));
  s = add(c, s, ra_corner(c, q, rows, b, y1, x1, w4));
  s = te_reduce(&c->e, "tosa.reduce_sum", te_reduce(&c->e, "tosa.reduce_sum", s, 3), 1);
  s = fdiv(c, s, kf(c, s, (float)(q->sh * q->sw > 1 ? q->sh * q->sw : 1)));
  s = te_reshape(&c->e, s, 4, (int64_t[4]){q->r, q->ph, q->pw, q->ch});
  return onnx_set_out(c, 0, te_transpose(&c->e, s, (int32_t[4]){0, 3, 1, 2}));
}

/* sampling_ratio 0 takes ceil(roi size / bins) samples per bin, which only
 * constant rois decide; all of them must agree, in float and double. */
static int ra_adaptive(onnx_ctx_t *c, roi_t *q) {
  const onnx_value_t *bv = onnx_const_input(c, 1);
  if (!bv) return onnx_fail(c, "sampling_ratio 0 with run-time rois is not supported: the samples per bin depend on them"), 0;
  const float *b = bv->data;
  for (int64_t r = 0; r < q->r; ++r) {
    float s, bin, size[2];
    ra_box(q, b[r * 4 + 1], b[r * 4 + 3], q->ph, &s, &bin, &size[0]);
    ra_box(q, b[r * 4], b[r * 4 + 2], q->pw, &s, &bin, &size[1]);
    int64_t bins[2] = {q->ph, q->pw}, n[2];
    for (int i = 0; i < 2; ++i) {
      double off = q->half ? 0.5 : 0.0;
      double lo = (double)b[r * 4 + 1 - i] * q->scale - off, hi = (double)b[r * 4 + 3 - i] * q->scale - off;
      double extent = q->half ? hi - lo : fmax(hi - lo, 1.0);
      n[i] = (int64_t)ceil(extent / (double)bins[i]);
      if (n[i] != (int64_t)ceilf(size[i] / (float)bins[i]) || n[i] < 1 || n[i] > 64)
        return onnx_fail(c, "sampling_ratio 0: roi %lld needs a sample count that float and double disagree on or out of [1, 64]", (long long)r), 0;
    }
    if (r && (n[0] != q->sh || n[1] != q->sw))
      return onnx_fail(c, "sampling_ratio 0 with rois of different sample counts is not supported"), 0;
    q->sh = n[0], q->sw = n[1];
  }
  return 1;
}

static int ra_read(onnx_ctx_t *c, roi_t *q) {
  char buf[32];
  const char *mode = onnx_attr_string(c, "mode", "avg", buf, sizeof buf);
  /* onnxruntime's max takes the largest weighted corner differently from
   * the reference, and Debian's suite has no case to settle it. */
  if (strcmp(mode, "avg") != 0) return onnx_fail(c, "mode '%s' is not supported (avg only)", mode), 0;
  const char *ctm = onnx_attr_string(c, "coordinate_transformation_mode",
                                     c->opset >= 16 ? "half_pixel" : "output_half_pixel", buf, sizeof buf);
  if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
    return onnx_fail(c, "coordinate_transformation_mode '%s' is not supported", ctm), 0;
  q->half = strcmp(ctm, "half_pixel") == 0;
  q->scale = onnx_attr_float(c, "spatial_scale", 1.0f);
  q->ph = onnx_attr_int(c, "output_height", 1), q->pw = onnx_attr_int(c, "output_width", 1);
  int64_t sr = onnx_attr_int(c, "sampling_ratio", 0);
  const onnx_value_t *x = onnx_input(c, 0), *b = onnx_input(c, 1), *i = onnx_input(c, 2);
  if (!x || !b || !i) return onnx_fail(c, "X, rois and batch_indices are required"), 0;
  if (x->dtype != ONNX_FLOAT || b->dtype != ONNX_FLOAT || (i->dtype != ONNX_INT64 && i->dtype != ONNX_INT32))
    return onnx_fail(c, "only FLOAT X and rois with INT64 or INT32 batch_indices are supported"), 0;
  if (x->rank != 4 || b->rank != 2 || b->dims[1] != 4 || i->rank != 1 || i->dims[0] != b->dims[0])
    return onnx_fail(c, "X must be [N, C, H, W], rois [R, 4] and batch_indices [R]"), 0;
  q->r = b->dims[0], q->n = x->dims[0], q->ch = x->dims[1], q->h = x->dims[2], q->w = x->dims[3];
  if (onnx_numel(4, x->dims) == 0 || q->r == 0 || q->ph < 1 || q->pw < 1 || q->ph > 4096 || q->pw > 4096 || sr < 0 || sr > 64)
    return onnx_fail(c, "empty tensors, output sizes outside [1, 4096] or sampling_ratio outside [0, 64] are not supported"), 0;
  if (onnx_numel(4, x->dims) >= (1 << 24))
    return onnx_fail(c, "X is too large for exact f32 pixel indices"), 0;
  q->sh = q->sw = sr;
  if (!sr && !ra_adaptive(c, q)) return 0;
  int64_t pts = onnx_mul_sat(onnx_mul_sat(q->r * q->ph, q->pw), q->sh * q->sw);
  if ((uint64_t)onnx_mul_sat(pts, q->ch) > c->limits.max_tensor_bytes / 4)
    return onnx_fail(c, "the sampled tensor is too large"), 0;
  return 1;
}

static tinyml_status_t lower_roi_align(onnx_ctx_t *c) {
  roi_t q;
  if (!ra_read(c, &q)) return c->error;
  const onnx_value_t *x = onnx_const_probe(c, 0), *b = onnx_const_probe(c, 1), *i = onnx_const_probe(c, 2);
  if (!x || !b || !i) return ra_runtime(c, &q);
  int64_t *batch = tinyml__alloc(c->allocator, (size_t)q.r * 8, 16);
  if (!batch) return onnx_oom(c);
  onnx_const_ints(c, 2, batch, (uint32_t)q.r);
  tinyml_status_t st = ra_fold(c, &q, x->data, b->data, batch);
  tinyml__free(c->allocator, batch);
  return st;
}

const onnx_lowering_t onnx_lowerings_sample[] = {
    {"GridSample", 16, 22, lower_grid_sample},
    {"RoiAlign", 10, 22, lower_roi_align},
    {NULL, 0, 0, NULL},
};
