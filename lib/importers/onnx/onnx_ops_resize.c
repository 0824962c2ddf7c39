/* ONNX lowerings: Resize and Upsample.
 *
 * Shapes are static, so for each resized axis the source indices and
 * weights ("taps") of every output coordinate are computed here in double,
 * exactly as ONNX's reference (onnx/reference/ops/op_resize.py) computes
 * them.  Nearest is then one gather; linear with 2 taps per axis on at most
 * 3 axes is one gather per corner of the interpolation cell, each scaled by
 * a constant weight tensor, summed.  Everything else (cubic, antialias,
 * exclude_outside, tf_crop_and_resize, more axes) is separable as the
 * reference is: the last axis first, one gather per tap along it and a
 * weighted sum.  A constant input folds on the host in double, as the
 * reference computes. */
#include "onnx_shape_util.h"

enum { NEAREST, LINEAR, CUBIC };
enum { HALF_PIXEL, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_HALF_PIXEL_NN,
       TF_CROP_AND_RESIZE, HALF_PIXEL_SYMMETRIC };
enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL, FLOOR_UP_CEIL_DOWN };
enum { STRETCH, NOT_LARGER, NOT_SMALLER };

#define MAX_RESIZED_AXES 3 /* of the corner path */
#define MAX_TAPS 64        /* antialias on a downscale by 32 or more is refused */

typedef struct resize {
  int mode, coord, nearest, antialias, exclude_outside, policy;
  double cubic_a, extrapolation;
  uint32_t rank;
  int64_t in[TE_MAX_RANK], out[TE_MAX_RANK];
  double scale[TE_MAX_RANK];
  float roi_start[TE_MAX_RANK], roi_end[TE_MAX_RANK];
} resize_t;

/* One axis: output coordinate o takes sum_k w[o*n+k] * in[idx[o*n+k]], or
 * the extrapolation value when outside[o]. */
typedef struct taps {
  int n, identity, any_outside;
  int32_t *idx;
  double *w;
  uint8_t *outside;
} taps_t;

static int pick(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; ++i)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static int read_string(onnx_ctx_t *c, const char *attr, const char *def,
                       const char *const *names, int n, int *out) {
  char buf[64];
  const char *s = onnx_attr_string(c, attr, def, buf, sizeof buf);
  if ((*out = pick(s, names, n)) < 0) return onnx_fail(c, "%s '%s' is not supported", attr, s), 0;
  return 1;
}

static int read_modes(onnx_ctx_t *c, resize_t *r, int upsample) {
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                       "half_pixel_symmetric"};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                        "ceil"};
  static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
  int old = upsample || c->opset < 11;
  if (!read_string(c, "mode", "nearest", modes, old ? 2 : 3, &r->mode)) return 0;
  r->coord = ASYMMETRIC;
  /* Resize-10 names no rounding; onnxruntime floors an upscale's source
   * coordinate and rounds a downscale's up. */
  r->nearest = upsample ? FLOOR : FLOOR_UP_CEIL_DOWN;
  if (old) return 1;
  if (!read_string(c, "coordinate_transformation_mode", "half_pixel", coords, 7, &r->coord) ||
      !read_string(c, "nearest_mode", "round_prefer_floor", nearest, 4, &r->nearest) ||
      !read_string(c, "keep_aspect_ratio_policy", "stretch", policies, 3, &r->policy))
    return 0;
  r->cubic_a = onnx_attr_float(c, "cubic_coeff_a", -0.75f);
  r->extrapolation = onnx_attr_float(c, "extrapolation_value", 0.0f);
  r->exclude_outside = onnx_attr_int(c, "exclude_outside", 0) != 0;
  r->antialias = onnx_attr_int(c, "antialias", 0) != 0;
  /* ONNX's reference raises on both (its nearest weights are booleans). */
  if (r->mode == NEAREST && (r->antialias || r->exclude_outside))
    return onnx_fail(c, "antialias and exclude_outside are not defined for mode 'nearest'"), 0;
  /* The reference fails on it too (integer weights) and onnxruntime
   * refuses it: nothing to match. */
  if (r->mode == LINEAR && r->exclude_outside && !r->antialias)
    return onnx_fail(c, "exclude_outside needs mode 'cubic' or antialias"), 0;
  return 1;
}

/* The resized axes (attribute `axes`, opset 18; all by default). */
static int64_t read_axes(onnx_ctx_t *c, const resize_t *r, uint32_t *axes) {
  int64_t a[TE_MAX_RANK], n = onnx_attr_ints(c, "axes", a, TE_MAX_RANK);
  if (c->error) return -1;
  if (n < 0) {
    for (uint32_t d = 0; d < r->rank; ++d) axes[d] = d;
    return r->rank;
  }
  uint32_t seen = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t d = onnx_axis(a[i], r->rank);
    if (d < 0 || (seen >> d) & 1) return onnx_fail(c, "axes[%lld] is invalid", (long long)i), -1;
    seen |= 1u << d;
    axes[i] = (uint32_t)d;
  }
  return n;
}

static int read_roi(onnx_ctx_t *c, resize_t *r, const uint32_t *axes, int64_t n) {
  for (uint32_t d = 0; d < r->rank; ++d) {
    r->roi_start[d] = 0.0f;
    r->roi_end[d] = 1.0f;
  }
  if (r->coord != TF_CROP_AND_RESIZE) return 1;
  const onnx_value_t *v = onnx_const_input(c, 1);
  if (!v || v->dtype != ONNX_FLOAT || numel(v->rank, v->dims) != 2 * n)
    return onnx_fail(c, "roi must be a FLOAT constant with 2 entries per resized axis"), 0;
  const float *f = v->data;
  for (int64_t i = 0; i < n; ++i) {
    r->roi_start[axes[i]] = f[i];
    r->roi_end[axes[i]] = f[n + i];
  }
  return 1;
}

/* keep_aspect_ratio_policy: one scale for every resized axis, and the
 * output size rounded half up, as the reference does. */
static void keep_aspect(resize_t *r, const uint32_t *axes, int64_t n) {
  double s = r->scale[axes[0]];
  for (int64_t i = 1; i < n; ++i) {
    double t = r->scale[axes[i]];
    if (r->policy == NOT_LARGER ? t < s : t > s) s = t;
  }
  for (int64_t i = 0; i < n; ++i) {
    r->scale[axes[i]] = s;
    double size = s * (double)r->in[axes[i]] + 0.5;
    r->out[axes[i]] = size < (double)MAX_MAP ? (int64_t)size : MAX_MAP + 1; /* refused */
  }
}

/* Output sizes from constant scales (floor(in * s)) or sizes. */
static int read_sizes(onnx_ctx_t *c, resize_t *r, uint32_t scales_in, uint32_t sizes_in) {
  uint32_t axes[TE_MAX_RANK];
  int64_t n = read_axes(c, r, axes);
  if (n < 0 || !read_roi(c, r, axes, n)) return 0;
  for (uint32_t d = 0; d < r->rank; ++d) {
    r->out[d] = r->in[d];
    r->scale[d] = 1.0;
  }
  const onnx_value_t *s = onnx_const_input(c, scales_in);
  int64_t sizes[TE_MAX_RANK], ns = sizes_in ? onnx_const_ints(c, sizes_in, sizes, TE_MAX_RANK) : -1;
  if (s && s->dtype == ONNX_FLOAT && numel(s->rank, s->dims) == n && n > 0) {
    const float *f = s->data;
    for (int64_t i = 0; i < n; ++i) {
      if (!(f[i] > 0) || !((double)r->in[axes[i]] * f[i] < (double)MAX_MAP))
        return onnx_fail(c, "scales[%lld] must be positive and give at most %lld elements",
                         (long long)i, (long long)MAX_MAP), 0;
      r->scale[axes[i]] = f[i];
      r->out[axes[i]] = (int64_t)floor((double)r->in[axes[i]] * (double)f[i]);
      if (r->out[axes[i]] != (int64_t)floorf((float)r->in[axes[i]] * f[i]))
        return onnx_fail(c, "the size of axis %u is ambiguous: %lld * %g rounds to %lld in double "
                         "and %lld in float", axes[i], (long long)r->in[axes[i]], (double)f[i],
                         (long long)r->out[axes[i]],
                         (long long)floorf((float)r->in[axes[i]] * f[i])), 0;
    }
    return 1;
  }
  if (ns != n || n == 0)
    return onnx_fail(c, "scales or sizes must be a constant with one entry per resized axis"), 0;
  for (int64_t i = 0; i < n; ++i) {
    r->out[axes[i]] = sizes[i];
    r->scale[axes[i]] = (double)sizes[i] / (double)r->in[axes[i]];
  }
  if (r->policy != STRETCH) keep_aspect(r, axes, n);
  return 1;
}

/* The source coordinate of output x on axis d, in the reference's order of
 * operations; 0 when tf_crop_and_resize puts it outside the input.  The
 * "output width" is scale * input width as a real number. */
static int source(const resize_t *r, uint32_t d, int64_t x, double *o) {
  double s = r->scale[d], in = (double)r->in[d], ow = s * in, xd = (double)x;
  switch (r->coord) {
    case HALF_PIXEL: *o = (xd + 0.5) / s - 0.5; return 1;
    case PYTORCH_HALF_PIXEL: *o = ow == 1.0 ? -0.5 : (xd + 0.5) / s - 0.5; return 1;
    case ALIGN_CORNERS: *o = ow == 1.0 ? 0.0 : xd * (in - 1.0) / (ow - 1.0); return 1;
    case TF_HALF_PIXEL_NN: *o = (xd + 0.5) / s; return 1;
    case HALF_PIXEL_SYMMETRIC: {
      double adjustment = (double)r->out[d] / ow, offset = in / 2.0 * (1.0 - adjustment);
      *o = offset + (xd + 0.5) / s - 0.5;
      return 1;
    }
    case TF_CROP_AND_RESIZE: {
      /* The ROI's extent is a float difference there too. */
      float extent = r->roi_end[d] - r->roi_start[d];
      *o = ow == 1.0 ? (double)extent * (in - 1.0) / 2.0
                     : xd * (double)extent * (in - 1.0) / (ow - 1.0);
      *o += (double)r->roi_start[d] * (in - 1.0);
      return !(*o < 0.0 || *o > in - 1.0);
    }
    default: *o = xd / s; return 1;
  }
}

static double cubic_weight(double x, double a) {
  x = fabs(x);
  double x2 = x * x, x3 = x * x2;
  if (x <= 1.0) return (a + 2.0) * x3 - (a + 3.0) * x2 + 1.0;
  if (x < 2.0) return a * x3 - 5.0 * a * x2 + 8.0 * a * x - 4.0 * a;
  return 0.0;
}

/* Antialiased weights: the filter stretched by 1/scale on a downscale, over
 * offsets start.. from the left tap, normalised. */
static int antialias_weights(const resize_t *r, double ratio, double scale, double *w) {
  double s = scale < 1.0 ? scale : 1.0, sum = 0.0;
  int64_t start = (int64_t)floor((r->mode == LINEAR ? -1.0 : -2.0) / s) + 1, n = 2 - 2 * start;
  if (n > MAX_TAPS) return -1;
  for (int64_t k = 0; k < n; ++k) {
    double a = r->mode == LINEAR ? ((double)(start + k) - ratio) * s : s * ((double)(start + k) - ratio);
    double v = r->mode == LINEAR ? 1.0 - fabs(a) : cubic_weight(a, r->cubic_a);
    w[k] = r->mode == LINEAR ? (v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v) : v;
    sum += w[k];
  }
  for (int64_t k = 0; k < n; ++k) w[k] /= sum;
  return (int)n;
}

/* The weights of the taps for a coordinate `ratio` (in (0, 1]) past the
 * left tap; their count, or -1 when over MAX_TAPS. */
static int weights(const resize_t *r, double ratio, double scale, double *w) {
  if (r->antialias) return antialias_weights(r, ratio, scale, w);
  if (r->mode == LINEAR) {
    w[0] = 1.0 - ratio;
    w[1] = ratio;
    return 2;
  }
  if (r->mode == CUBIC) {
    double a = r->cubic_a, p = ratio + 1.0, q = 1.0 - ratio, q1 = q + 1.0;
    w[0] = ((a * p - 5.0 * a) * p + 8.0 * a) * p - 4.0 * a;
    w[1] = ((a + 2.0) * ratio - (a + 3.0)) * ratio * ratio + 1.0;
    w[2] = ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0;
    w[3] = ((a * q1 - 5.0 * a) * q1 + 8.0 * a) * q1 - 4.0 * a;
    return 4;
  }
  int hi;
  if (ratio == floor(ratio)) hi = 1;
  else if (r->nearest == ROUND_PREFER_FLOOR) hi = ratio > 0.5;
  else if (r->nearest == ROUND_PREFER_CEIL) hi = ratio >= 0.5;
  else if (r->nearest == FLOOR_UP_CEIL_DOWN) hi = scale < 1.0;
  else hi = r->nearest == CEIL;
  w[0] = !hi;
  w[1] = hi;
  return 2;
}

/* The reference pads the axis by ceil(n/2) edge values and takes the n
 * indices nearest to the padded coordinate (ties to the smaller): a window
 * kept inside the padded axis, whose taps read the clamped index. */
static int64_t window_start(double o, int n, int64_t in) {
  int64_t pad = (n + 1) / 2;
  double xp = o + (double)pad, fl = floor(xp);
  int64_t start = (int64_t)fl - n / 2 + (xp == fl ? 0 : 1);
  return clamp64(start, 0, in + 2 * pad - n) - pad;
}

/* The same in float, as onnxruntime computes it: a nearest pick or an
 * extrapolation that the two decide differently is refused. */
static int source_f(const resize_t *r, uint32_t d, int64_t x, float *o) {
  float s = (float)r->scale[d], in = (float)r->in[d], ow = s * in, xf = (float)x;
  switch (r->coord) {
    case HALF_PIXEL: *o = (xf + 0.5f) / s - 0.5f; return 1;
    case PYTORCH_HALF_PIXEL: *o = ow == 1.0f ? -0.5f : (xf + 0.5f) / s - 0.5f; return 1;
    case ALIGN_CORNERS: *o = ow == 1.0f ? 0.0f : xf * (in - 1.0f) / (ow - 1.0f); return 1;
    case TF_HALF_PIXEL_NN: *o = (xf + 0.5f) / s; return 1;
    case HALF_PIXEL_SYMMETRIC: {
      float adjustment = (float)r->out[d] / ow, offset = in / 2.0f * (1.0f - adjustment);
      *o = offset + (xf + 0.5f) / s - 0.5f;
      return 1;
    }
    case TF_CROP_AND_RESIZE: {
      float extent = r->roi_end[d] - r->roi_start[d];
      *o = ow == 1.0f ? extent * (in - 1.0f) / 2.0f : xf * extent * (in - 1.0f) / (ow - 1.0f);
      *o += r->roi_start[d] * (in - 1.0f);
      return !(*o < 0.0f || *o > in - 1.0f);
    }
    default: *o = xf / s; return 1;
  }
}

static int64_t nearest_pick(const resize_t *r, uint32_t d, double o) {
  double f = floor(o), w[2];
  weights(r, o == f ? 1.0 : o - f, r->scale[d], w);
  int64_t i = o == f ? (int64_t)f : (int64_t)f + (w[1] == 1.0);
  return clamp64(i, 0, r->in[d] - 1);
}

/* Refuses output x of axis d where float and double arithmetic pick
 * different pixels (a tie such as 0.3f * 5), and pytorch_half_pixel's
 * output of one element, where the spec (source 0) and its reference
 * (-0.5) disagree unless the mode makes the two the same. */
static int check_ambiguity(onnx_ctx_t *c, const resize_t *r, uint32_t d, int64_t x, double o,
                           int inside) {
  float of;
  int inside_f = source_f(r, d, x, &of);
  if (inside != inside_f ||
      (inside && r->mode == NEAREST && nearest_pick(r, d, o) != nearest_pick(r, d, of)))
    return onnx_fail(c, "output %lld of axis %u falls on a rounding tie that float and double "
                     "arithmetic decide differently", (long long)x, d), 0;
  int same = r->mode == NEAREST ? nearest_pick(r, d, o) == nearest_pick(r, d, 0.0)
             : r->mode == LINEAR && !r->antialias ? o > -1.0 && o <= 0.0 : o == 0.0;
  if (r->coord == PYTORCH_HALF_PIXEL && r->out[d] == 1 && !same)
    return onnx_fail(c, "pytorch_half_pixel to one element: the spec's source 0 and the "
                     "reference's %g disagree in this mode", o), 0;
  return 1;
}


/* The taps of output coordinate x on axis d into idx[], w[]; -1 when
 * there are too many, 0 when outside. */
static int coordinate_taps(onnx_ctx_t *c, const resize_t *r, uint32_t d, int64_t x,
                           int32_t *idx, double *w) {
  double o;
  int inside = source(r, d, x, &o);
  if (!check_ambiguity(c, r, d, x, o, inside)) return -1;
  if (!inside) return 0;
  double f = floor(o);
  double ratio = o == f ? 1.0 : o - f;
  int n = weights(r, ratio, r->scale[d], w);
  if (n < 0) return onnx_fail(c, "antialias over more than %d taps is not supported", MAX_TAPS), -1;
  int64_t start = window_start(o, n, r->in[d]);
  double sum = 0.0;
  for (int k = 0; k < n; ++k) {
    int64_t i = start + k;
    if (r->exclude_outside && (i < 0 || i >= r->in[d])) w[k] = 0.0;
    sum += w[k];
    idx[k] = (int32_t)clamp64(i, 0, r->in[d] - 1);
  }
  if (r->exclude_outside)
    for (int k = 0; k < n; ++k) w[k] /= sum;
  return n;
}

static int is_identity(const resize_t *r, uint32_t d, const taps_t *t) {
  if (r->in[d] != r->out[d] || t->any_outside) return 0;
  for (int64_t o = 0; o < r->out[d]; ++o)
    for (int k = 0; k < t->n; ++k) {
      double w = t->w[o * t->n + k];
      if (w != 0.0 && !(w == 1.0 && t->idx[o * t->n + k] == o)) return 0;
    }
  return 1;
}

static void free_taps(onnx_ctx_t *c, taps_t *t) {
  tinyml__free(c->allocator, t->idx);
  tinyml__free(c->allocator, t->w);
  tinyml__free(c->allocator, t->outside);
  memset(t, 0, sizeof *t);
}

/* The taps of every output coordinate of axis d. */
static int axis_taps(onnx_ctx_t *c, const resize_t *r, uint32_t d, taps_t *t) {
  int32_t idx[MAX_TAPS];
  double w[MAX_TAPS];
  int64_t n_out = r->out[d];
  memset(t, 0, sizeof *t);
  for (int64_t x = 0; x < n_out && !t->n; ++x) t->n = coordinate_taps(c, r, d, x, idx, w);
  if (t->n < 0) return 0;
  if (t->n == 0) t->n = 1; /* all outside */
  size_t m = (size_t)(n_out * t->n);
  t->idx = tinyml__alloc(c->allocator, m * 4 + 4, 16);
  t->w = tinyml__alloc(c->allocator, m * 8 + 8, 16);
  t->outside = tinyml__alloc(c->allocator, (size_t)n_out + 1, 16);
  if (!t->idx || !t->w || !t->outside) return onnx_oom(c), free_taps(c, t), 0;
  for (int64_t x = 0; x < n_out; ++x) {
    int n = coordinate_taps(c, r, d, x, t->idx + x * t->n, t->w + x * t->n);
    if (n < 0) return free_taps(c, t), 0;
    t->outside[x] = n == 0;
    t->any_outside |= n == 0;
    for (int k = n; k < t->n; ++k) {
      t->idx[x * t->n + k] = 0;
      t->w[x * t->n + k] = 0.0;
    }
  }
  t->identity = is_identity(r, d, t);
  return 1;
}

/* Nearest: one gather of the whole output (any element type). */
static tinyml_status_t lower_nearest(onnx_ctx_t *c, const resize_t *r, const taps_t *taps) {
  int64_t n = numel(r->rank, r->out), coord[TE_MAX_RANK], st[TE_MAX_RANK];
  int64_t *map = alloc_map(c, n);
  if (!map) return c->error;
  strides_of(r->rank, r->in, st);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, r->rank, r->out, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < r->rank; ++d) {
      const taps_t *t = &taps[d];
      int64_t o = coord[d] * t->n;
      src += st[d] * t->idx[o + (t->w[o] == 1.0 ? 0 : 1)];
    }
    map[i] = src;
  }
  return out_gathered(c, 0, 0, r->rank, r->out, map);
}

/* One corner of the linear cell: its gather and weight over the output. */
static te_value_t linear_corner(onnx_ctx_t *c, const resize_t *r, const taps_t *taps,
                                te_value_t flat, uint32_t corner) {
  int64_t n = numel(r->rank, r->out), coord[TE_MAX_RANK], st[TE_MAX_RANK];
  int32_t *idx = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  float *w = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  te_value_t y = {0};
  if (!idx || !w) {
    onnx_oom(c);
    goto done;
  }
  strides_of(r->rank, r->in, st);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, r->rank, r->out, coord);
    int64_t src = 0;
    double weight = 1.0;
    for (uint32_t d = 0, j = 0; d < r->rank; ++d) {
      if (taps[d].identity) {
        src += st[d] * coord[d];
        continue;
      }
      int64_t k = coord[d] * 2 + ((corner >> j++) & 1);
      src += st[d] * taps[d].idx[k];
      weight *= taps[d].w[k];
    }
    idx[i] = (int32_t)src;
    w[i] = (float)weight;
  }
  te_type_t it = te_type(TE_I32, 2, (int64_t[2]){1, n}), wt = te_type(TE_F32, r->rank, r->out);
  te_value_t ops[2] = {flat, te_const(&c->e, &it, idx)};
  te_type_t gt = te_type(TE_F32, 3, (int64_t[3]){1, n, 1});
  y = te_reshape(&c->e, te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt), r->rank, r->out);
  y = te_mul(&c->e, y, te_const(&c->e, &wt, w), 0);
done:
  tinyml__free(c->allocator, idx);
  tinyml__free(c->allocator, w);
  return y;
}

static tinyml_status_t lower_linear(onnx_ctx_t *c, const resize_t *r, const taps_t *taps,
                                    te_value_t x, uint32_t k) {
  if (numel(r->rank, r->out) > MAX_MAP) return onnx_fail(c, "the result is too large");
  te_value_t flat = te_reshape(&c->e, x, 3, (int64_t[3]){1, te_numel(&x.type), 1});
  te_value_t sum = {0};
  for (uint32_t corner = 0; corner < (1u << k) && !c->error; ++corner) {
    te_value_t y = linear_corner(c, r, taps, flat, corner);
    sum = corner ? te_binary(&c->e, "tosa.add", sum, y) : y;
  }
  if (c->error) return c->error;
  return onnx_set_out(c, 0, sum);
}

/* A constant tensor of one value per output coordinate of axis d, shaped
 * to broadcast along the other axes. */
static te_value_t axis_const(onnx_ctx_t *c, uint32_t rank, uint32_t d, int64_t n, te_elem_t elem,
                             const void *data) {
  int64_t dims[TE_MAX_RANK];
  for (uint32_t i = 0; i < rank; ++i) dims[i] = i == d ? n : 1;
  te_type_t t = te_type(elem, rank, dims);
  return te_const(&c->e, &t, data);
}

/* Tap k of axis d on x: the gathered values times their weights, or id 0
 * when every weight of the tap is zero. */
static te_value_t axis_tap(onnx_ctx_t *c, te_value_t x, uint32_t d, int64_t n_out,
                           const taps_t *t, int k, int32_t *idx, float *w) {
  int any = 0;
  for (int64_t o = 0; o < n_out; ++o) {
    idx[o] = t->idx[o * t->n + k];
    w[o] = (float)t->w[o * t->n + k];
    any |= w[o] != 0.0f;
  }
  if (!any) return (te_value_t){0};
  uint32_t rank = x.type.rank;
  int64_t dims[TE_MAX_RANK], outer = 1, inner = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    dims[i] = i == d ? n_out : x.type.dims[i];
    if (i < d) outer *= dims[i];
    if (i > d) inner *= dims[i];
  }
  te_type_t it = te_type(TE_I32, 1, &n_out);
  te_value_t g = te_gather_axis(&c->e, x, outer, x.type.dims[d], inner,
                                te_const(&c->e, &it, idx), rank, dims);
  return te_mul(&c->e, g, axis_const(c, rank, d, n_out, TE_F32, w), 0);
}

/* Resizes axis d of x: the weighted sum of its taps, then the
 * extrapolation value where tf_crop_and_resize falls outside. */
static te_value_t resize_axis(onnx_ctx_t *c, const resize_t *r, te_value_t x, uint32_t d,
                              const taps_t *t) {
  int64_t n_out = r->out[d];
  int32_t *idx = tinyml__alloc(c->allocator, (size_t)n_out * 4 + 4, 16);
  float *w = tinyml__alloc(c->allocator, (size_t)n_out * 4 + 4, 16);
  te_value_t sum = {0};
  if (!idx || !w) {
    onnx_oom(c);
    goto done;
  }
  for (int k = 0; k < t->n; ++k) {
    te_value_t y = axis_tap(c, x, d, n_out, t, k, idx, w);
    if (y.id) sum = sum.id ? te_binary(&c->e, "tosa.add", sum, y) : y;
  }
  if (t->any_outside) {
    te_type_t ft = x.type;
    ft.dims[d] = n_out;
    te_value_t fill = te_splat_f32(&c->e, &ft, (float)r->extrapolation);
    sum = sum.id ? te_select(&c->e, axis_const(c, x.type.rank, d, n_out, TE_I1, t->outside),
                             fill, sum)
                 : fill;
  }
done:
  tinyml__free(c->allocator, idx);
  tinyml__free(c->allocator, w);
  return sum;
}

static tinyml_status_t lower_separable(onnx_ctx_t *c, const resize_t *r, const taps_t *taps,
                                       te_value_t x) {
  for (uint32_t d = r->rank; d-- > 0 && !c->error;)
    if (!taps[d].identity) x = resize_axis(c, r, x, d, &taps[d]);
  if (c->error) return c->error;
  return onnx_set_out(c, 0, x);
}

/* Axis d of `src` (dims) resized into `dst`, in double as the reference. */
static void fold_axis(const resize_t *r, const taps_t *t, uint32_t d, const int64_t *dims,
                      const double *src, double *dst) {
  int64_t outer = 1, inner = 1, dim = dims[d];
  for (uint32_t i = 0; i < r->rank; ++i) {
    if (i < d) outer *= dims[i];
    if (i > d) inner *= dims[i];
  }
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t o = 0; o < r->out[d]; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double v = r->extrapolation;
        if (!t->outside[o]) {
          v = 0.0;
          for (int k = 0; k < t->n; ++k)
            v += t->w[o * t->n + k] * src[(a * dim + t->idx[o * t->n + k]) * inner + i];
        }
        dst[(a * r->out[d] + o) * inner + i] = v;
      }
}

/* Constant FLOAT input: the result on the host. */
static tinyml_status_t fold(onnx_ctx_t *c, const resize_t *r, const taps_t *taps,
                            const float *data) {
  int64_t dims[TE_MAX_RANK], n = numel(r->rank, r->in), m = numel(r->rank, r->out), cap = n;
  memcpy(dims, r->in, sizeof(int64_t) * r->rank);
  for (uint32_t d = r->rank; d-- > 0;) {
    dims[d] = r->out[d];
    int64_t k = numel(r->rank, dims);
    if (k > cap) cap = k;
  }
  if (cap > MAX_MAP) return onnx_fail(c, "the result is too large");
  ++cap;
  double *a = tinyml__alloc(c->allocator, (size_t)cap * 8, 16);
  double *b = tinyml__alloc(c->allocator, (size_t)cap * 8, 16);
  float *y = tinyml__alloc(c->allocator, (size_t)m * 4 + 4, 16);
  if (!a || !b || !y) {
    onnx_oom(c);
    goto done;
  }
  memcpy(dims, r->in, sizeof(int64_t) * r->rank);
  for (int64_t i = 0; i < n; ++i) a[i] = data[i];
  for (uint32_t d = r->rank; d-- > 0;) {
    if (taps[d].identity) continue;
    fold_axis(r, &taps[d], d, dims, a, b);
    dims[d] = r->out[d];
    double *t = a;
    a = b;
    b = t;
  }
  for (int64_t i = 0; i < m; ++i) y[i] = (float)a[i];
  onnx_set_out_const(c, 0, ONNX_FLOAT, r->rank, r->out, y);
done:
  tinyml__free(c->allocator, a);
  tinyml__free(c->allocator, b);
  tinyml__free(c->allocator, y);
  return c->error;
}

static int read_resize(onnx_ctx_t *c, resize_t *r, int upsample, uint32_t scales_in,
                       uint32_t sizes_in) {
  onnx_value_t *x = need_input(c, 0);
  memset(r, 0, sizeof *r);
  if (!x || !read_modes(c, r, upsample)) return 0;
  r->rank = x->rank;
  memcpy(r->in, x->dims, sizeof(int64_t) * x->rank);
  for (uint32_t d = 0; d < r->rank; ++d)
    if (r->in[d] < 1) return onnx_fail(c, "empty inputs are not supported"), 0;
  if (upsample && c->opset < 9) {
    const Onnx__AttributeProto *a = onnx_attr(c, "scales");
    if (!a || a->n_floats != r->rank)
      return onnx_fail(c, "scales must have one entry per dimension"), 0;
    for (uint32_t d = 0; d < r->rank; ++d) {
      r->scale[d] = a->floats[d];
      if (!(a->floats[d] > 0) || !((double)r->in[d] * a->floats[d] < (double)MAX_MAP))
        return onnx_fail(c, "scales must be positive and give at most %lld elements",
                         (long long)MAX_MAP), 0;
      r->out[d] = (int64_t)floor((double)r->in[d] * (double)a->floats[d]);
    }
  } else if (!read_sizes(c, r, scales_in, sizes_in)) {
    return 0;
  }
  for (uint32_t d = 0; d < r->rank; ++d) {
    if (r->out[d] < 1) return onnx_fail(c, "empty results are not supported"), 0;
    if (r->out[d] > MAX_MAP) return onnx_fail(c, "the result is too large"), 0;
  }
  return 1;
}

/* The fastest lowering that computes the taps exactly. */
static tinyml_status_t lower_taps(onnx_ctx_t *c, const resize_t *r, const taps_t *taps) {
  uint32_t k = 0;
  int outside = 0, two = 1;
  for (uint32_t d = 0; d < r->rank; ++d) {
    k += !taps[d].identity;
    outside |= taps[d].any_outside;
    two &= taps[d].identity || taps[d].n == 2;
  }
  if (r->mode == NEAREST && !outside) return lower_nearest(c, r, taps);
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  if (v->dtype != ONNX_FLOAT)
    return onnx_fail(c, "mode '%s' needs FLOAT data (%s given)",
                     r->mode == NEAREST ? "nearest with extrapolation" : "linear or cubic",
                     onnx_dtype_name(v->dtype));
  if (v->data) return fold(c, r, taps, v->data);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (k == 0) return onnx_set_out(c, 0, x);
  if (two && !outside && k <= MAX_RESIZED_AXES) return lower_linear(c, r, taps, x, k);
  return lower_separable(c, r, taps, x);
}

static tinyml_status_t lower_resize_common(onnx_ctx_t *c, int upsample, uint32_t scales_in,
                                           uint32_t sizes_in) {
  resize_t r;
  taps_t taps[TE_MAX_RANK];
  if (!read_resize(c, &r, upsample, scales_in, sizes_in)) return c->error;
  memset(taps, 0, sizeof taps);
  uint32_t d = 0;
  while (d < r.rank && axis_taps(c, &r, d, &taps[d])) ++d;
  if (d == r.rank) lower_taps(c, &r, taps);
  for (uint32_t i = 0; i < d; ++i) free_taps(c, &taps[i]);
  return c->error;
}

static tinyml_status_t lower_resize10(onnx_ctx_t *c) { return lower_resize_common(c, 0, 1, 0); }
static tinyml_status_t lower_resize(onnx_ctx_t *c) { return lower_resize_common(c, 0, 2, 3); }
static tinyml_status_t lower_upsample(onnx_ctx_t *c) { return lower_resize_common(c, 1, 1, 0); }

const onnx_lowering_t onnx_lowerings_resize[] = {
    {"Resize", 10, 10, lower_resize10},
    {"Resize", 11, 23, lower_resize},
    {"Upsample", 7, 9, lower_upsample},
    {NULL, 0, 0, NULL},
};
