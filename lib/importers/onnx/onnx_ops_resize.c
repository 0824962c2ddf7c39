/* ONNX lowerings: Resize and Upsample (nearest and linear).
 *
 * Shapes are static, so every output coordinate's source coordinates and
 * weights are computed here in double, exactly as ONNX's reference
 * implementation computes them.  Nearest is one gather; linear is one gather
 * per corner of the interpolation cell (2^k for k resized axes), each scaled
 * by a constant weight tensor, summed. */
#include "onnx_shape_util.h"

enum { NEAREST, LINEAR };
enum { HALF_PIXEL, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_HALF_PIXEL_NN };
enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL };

#define MAX_RESIZED_AXES 3

typedef struct resize {
  int mode, coord, nearest;
  uint32_t rank;
  int64_t in[TE_MAX_RANK], out[TE_MAX_RANK];
  double scale[TE_MAX_RANK];
} resize_t;

static int pick(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; ++i)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static int read_modes(onnx_ctx_t *c, resize_t *r, int upsample) {
  static const char *const modes[] = {"nearest", "linear"};
  static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn"};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                        "ceil"};
  char buf[64];
  const char *m = onnx_attr_string(c, "mode", "nearest", buf, sizeof buf);
  if ((r->mode = pick(m, modes, 2)) < 0) return onnx_fail(c, "mode '%s' is not supported", m), 0;
  if (upsample) {
    r->coord = ASYMMETRIC;
    r->nearest = FLOOR;
    return 1;
  }
  const char *def = c->opset < 11 ? "asymmetric" : "half_pixel";
  const char *t = onnx_attr_string(c, "coordinate_transformation_mode", def, buf, sizeof buf);
  if ((r->coord = pick(t, coords, 5)) < 0)
    return onnx_fail(c, "coordinate_transformation_mode '%s' is not supported", t), 0;
  const char *n = onnx_attr_string(c, "nearest_mode", "round_prefer_floor", buf, sizeof buf);
  if ((r->nearest = pick(n, nearest, 4)) < 0)
    return onnx_fail(c, "nearest_mode '%s' is not supported", n), 0;
  if (onnx_attr_int(c, "antialias", 0) || onnx_attr_int(c, "exclude_outside", 0) ||
      onnx_attr(c, "axes") ||
      strcmp(onnx_attr_string(c, "keep_aspect_ratio_policy", "stretch", buf, sizeof buf), "stretch"))
    return onnx_fail(c, "antialias, exclude_outside, axes and aspect-ratio policies are not supported"), 0;
  return 1;
}

/* Output sizes from constant scales or sizes (float scales: floor(in * s)). */
static int read_sizes(onnx_ctx_t *c, resize_t *r, uint32_t scales_in, uint32_t sizes_in) {
  const onnx_value_t *s = onnx_const_input(c, scales_in);
  int64_t sizes[TE_MAX_RANK], ns = sizes_in ? onnx_const_ints(c, sizes_in, sizes, TE_MAX_RANK) : -1;
  if (s && s->dtype == ONNX_FLOAT && numel(s->rank, s->dims) == r->rank) {
    const float *f = s->data;
    for (uint32_t d = 0; d < r->rank; ++d) {
      r->scale[d] = f[d];
      r->out[d] = (int64_t)floor((double)r->in[d] * (double)f[d]);
      if (!(f[d] > 0)) return onnx_fail(c, "scales must be positive"), 0;
    }
    return 1;
  }
  if (ns == (int64_t)r->rank) {
    for (uint32_t d = 0; d < r->rank; ++d) {
      r->out[d] = sizes[d];
      r->scale[d] = (double)sizes[d] / (double)r->in[d];
    }
    return 1;
  }
  return onnx_fail(c, "scales or sizes must be a constant with one entry per dimension"), 0;
}

/* As ONNX's reference: the "output width" here is scale * input width as a
 * real number, not the integral output size. */
static double original(const resize_t *r, uint32_t d, int64_t x) {
  double s = r->scale[d], ow = s * (double)r->in[d];
  switch (r->coord) {
    case HALF_PIXEL: return ((double)x + 0.5) / s - 0.5;
    case PYTORCH_HALF_PIXEL: return ow == 1.0 ? -0.5 : ((double)x + 0.5) / s - 0.5;
    case ALIGN_CORNERS:
      return ow == 1.0 ? 0.0 : (double)x * (double)(r->in[d] - 1) / (ow - 1.0);
    case TF_HALF_PIXEL_NN: return ((double)x + 0.5) / s;
    default: return (double)x / s;
  }
}

static int64_t clamp_index(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

static int64_t nearest_index(const resize_t *r, uint32_t d, int64_t x) {
  double o = original(r, d, x), f = floor(o);
  int64_t i;
  switch (r->nearest) {
    case ROUND_PREFER_FLOOR: i = (int64_t)(o - f == 0.5 ? f : floor(o + 0.5)); break;
    case ROUND_PREFER_CEIL: i = (int64_t)(o - f == 0.5 ? f + 1 : floor(o + 0.5)); break;
    case FLOOR: i = (int64_t)f; break;
    default: i = (int64_t)ceil(o); break;
  }
  return clamp_index(i, r->in[d]);
}

/* Linear: the two source indices and the weight of the second. */
static void linear_taps(const resize_t *r, uint32_t d, int64_t x, int64_t *i0, int64_t *i1,
                        double *w1) {
  double o = original(r, d, x), f = floor(o);
  /* ONNX's reference prefers the left pixel: an integral coordinate takes
   * all its weight from the right tap of the cell that ends there. */
  int64_t lo = (int64_t)f;
  double ratio = o - f;
  if (ratio == 0.0) {
    lo -= 1;
    ratio = 1.0;
  }
  *i0 = clamp_index(lo, r->in[d]);
  *i1 = clamp_index(lo + 1, r->in[d]);
  *w1 = ratio;
}

static tinyml_status_t lower_nearest(onnx_ctx_t *c, const resize_t *r) {
  int64_t n = numel(r->rank, r->out), coord[TE_MAX_RANK], st[TE_MAX_RANK];
  int64_t *map = alloc_map(c, n);
  if (!map) return c->error;
  strides_of(r->rank, r->in, st);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, r->rank, r->out, coord);
    int64_t src = 0;
    for (uint32_t d = 0; d < r->rank; ++d) src += st[d] * nearest_index(r, d, coord[d]);
    map[i] = src;
  }
  return out_gathered(c, 0, 0, r->rank, r->out, map);
}

/* One corner of the linear cell: its gather and weight over the output. */
static te_value_t linear_corner(onnx_ctx_t *c, const resize_t *r, te_value_t flat,
                                const uint32_t *axes, uint32_t k, uint32_t corner) {
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
      if (j < k && axes[j] == d) {
        int64_t i0, i1;
        double w1;
        linear_taps(r, d, coord[d], &i0, &i1, &w1);
        int hi = (corner >> j) & 1;
        src += st[d] * (hi ? i1 : i0);
        weight *= hi ? w1 : 1.0 - w1;
        ++j;
      } else {
        src += st[d] * coord[d];
      }
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

static tinyml_status_t lower_linear(onnx_ctx_t *c, const resize_t *r) {
  uint32_t axes[TE_MAX_RANK], k = 0;
  for (uint32_t d = 0; d < r->rank; ++d)
    if (r->in[d] != r->out[d] || r->scale[d] != 1.0) axes[k++] = d;
  if (k > MAX_RESIZED_AXES) return onnx_fail(c, "linear resize of more than 3 axes is not supported");
  if (numel(r->rank, r->out) > MAX_MAP) return onnx_fail(c, "the result is too large");
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.elem != TE_F32) return onnx_fail(c, "linear resize needs FLOAT data");
  te_value_t flat = te_reshape(&c->e, x, 3, (int64_t[3]){1, te_numel(&x.type), 1});
  te_value_t sum = {0};
  for (uint32_t corner = 0; corner < (1u << k) && !c->error; ++corner) {
    te_value_t y = linear_corner(c, r, flat, axes, k, corner);
    sum = corner ? te_binary(&c->e, "tosa.add", sum, y) : y;
  }
  if (c->error) return c->error;
  if (k == 0) sum = te_reshape(&c->e, x, r->rank, r->out);
  return onnx_set_out(c, 0, sum);
}

static tinyml_status_t lower_resize_common(onnx_ctx_t *c, int upsample, uint32_t scales_in,
                                           uint32_t sizes_in) {
  onnx_value_t *x = need_input(c, 0);
  resize_t r;
  memset(&r, 0, sizeof r);
  if (!x || !read_modes(c, &r, upsample)) return c->error;
  r.rank = x->rank;
  memcpy(r.in, x->dims, sizeof(int64_t) * x->rank);
  if (upsample && c->opset < 9) {
    float s[TE_MAX_RANK];
    const Onnx__AttributeProto *a = onnx_attr(c, "scales");
    if (!a || a->n_floats != r.rank) return onnx_fail(c, "scales must have one entry per dimension");
    for (uint32_t d = 0; d < r.rank; ++d) {
      s[d] = a->floats[d];
      r.scale[d] = s[d];
      r.out[d] = (int64_t)floor((double)r.in[d] * (double)s[d]);
    }
  } else if (!read_sizes(c, &r, scales_in, sizes_in)) {
    return c->error;
  }
  for (uint32_t d = 0; d < r.rank; ++d)
    if (r.out[d] < 1 || r.in[d] < 1) return onnx_fail(c, "empty results are not supported");
  return r.mode == NEAREST ? lower_nearest(c, &r) : lower_linear(c, &r);
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
