/* RESIZE_NEAREST_NEIGHBOR (any type: it moves values) and RESIZE_BILINEAR
 * (float32, int8, uint8) on NHWC tensors.  Which input rows and columns each
 * output reads, and with what weights, depend only on the sizes and
 * options, so they are computed here exactly as TFLite's reference kernels
 * compute them (in float, or for integers in TFLite's 10-bit fixed point,
 * ResizeBilinearInteger) and the graph only gathers and blends. */
#include <math.h>
#include <stdint.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"

enum { OP_RESIZE_BILINEAR = 23, OP_RESIZE_NEAREST = 97 };
enum { OPT_RESIZE_BILINEAR = 15, OPT_RESIZE_NEAREST = 74 };
enum { MAX_SIDE = 1 << 16 };

typedef struct resize {
  int align_corners, half_pixel;
  int64_t n, in_h, in_w, c, out_h, out_w;
} resize_t;

static float side_scale(const resize_t *r, int64_t in, int64_t out) {
  if (r->align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}

/* TFLite's GetNearestNeighbor. */
static int32_t nearest(const resize_t *r, int64_t o, int64_t in, int64_t out) {
  float scale = side_scale(r, in, out), offset = r->half_pixel ? 0.5f : 0.0f;
  float v = ((float)o + offset) * scale;
  int32_t i = r->align_corners ? (int32_t)roundf(v) : (int32_t)floorf(v);
  if (i > in - 1) i = (int32_t)(in - 1);
  if (r->half_pixel && i < 0) i = 0;
  return i;
}

/* TFLite's ComputeInterpolationValues: the two neighbours and the weight
 * of the upper one (which may fall outside [0, 1] at the borders, as in
 * TFLite, where both neighbours are then the same). */
static void bilinear(const resize_t *r, int64_t o, int64_t in, int64_t out, int32_t *lo,
                     int32_t *hi, float *w) {
  float scale = side_scale(r, in, out);
  float v = r->half_pixel ? ((float)o + 0.5f) * scale - 0.5f : (float)o * scale;
  float f = floorf(v);
  *lo = (int32_t)f < 0 ? 0 : (int32_t)f;
  *hi = (int32_t)ceilf(v) > in - 1 ? (int32_t)(in - 1) : (int32_t)ceilf(v);
  *w = v - (float)*lo;
}

/* ResizeBilinearInteger's scale in 1/1024ths, rounded to nearest. */
static int32_t side_scale_10(const resize_t *r, int64_t in, int64_t out) {
  if (r->align_corners && out > 1) return (int32_t)((1024 * (in - 1) + (out - 1) / 2) / (out - 1));
  return (int32_t)((1024 * in + out / 2) / out);
}

/* TFLite's ComputeInterpolationValuesInteger: the neighbours and the upper
 * one's weight in 1/1024ths (C division truncates toward zero, so near the
 * top border the weight goes negative while both neighbours are row 0). */
static void bilinear_10(const resize_t *r, int64_t o, int64_t in, int64_t out, int32_t *lo,
                        int32_t *hi, int32_t *w) {
  int32_t scale = side_scale_10(r, in, out);
  int32_t v = (int32_t)o * scale + (r->half_pixel ? scale / 2 - 512 : 0);
  int32_t l = v / 1024, h = (v + 1023) / 1024;
  *lo = l < 0 ? 0 : l > in - 1 ? (int32_t)(in - 1) : l;
  *hi = h > in - 1 ? (int32_t)(in - 1) : h;
  *w = v - 1024 * *lo;
}

/* x's rows (axis 1) or columns (axis 2) picked by `idx`. */
static te_value_t pick(tfl_ctx_t *c, const resize_t *r, te_value_t x, int axis,
                       const int32_t *idx, int64_t count) {
  te_type_t it = te_type(TE_I32, 1, &count);
  te_value_t i = te_const(&c->e, &it, idx);
  int64_t h = x.type.dims[1], w = x.type.dims[2];
  if (axis == 1)
    return te_gather_axis(&c->e, x, r->n, h, w * r->c, i, 4, (int64_t[4]){r->n, count, w, r->c});
  return te_gather_axis(&c->e, x, r->n * h, w, r->c, i, 4, (int64_t[4]){r->n, h, count, r->c});
}

/* a + (b - a) * w with float weights; with int32 weights in 1/1024ths,
 * a * 1024 + (b - a) * w, exact.  w is a constant along `axis`. */
static te_value_t blend(tfl_ctx_t *c, te_value_t a, te_value_t b, int axis, const void *w,
                        int64_t count) {
  int64_t dims[4] = {1, 1, 1, 1};
  dims[axis] = count;
  int integer = a.type.elem == TE_I32;
  te_type_t wt = te_type(integer ? TE_I32 : TE_F32, 4, dims);
  te_value_t d = te_mul(&c->e, te_binary(&c->e, "tosa.sub", b, a), te_const(&c->e, &wt, w), 0);
  if (integer) a = te_mul(&c->e, a, te_scalar_int(&c->e, TE_I32, 1024), 0);
  return te_binary(&c->e, "tosa.add", a, d);
}

/* One axis of the resize: nearest picks; bilinear picks both neighbours
 * and blends them (`w` holds float weights, or int32 ones for integers). */
static te_value_t resize_axis(tfl_ctx_t *c, const resize_t *r, te_value_t x, int axis,
                              int32_t *lo, int32_t *hi, float *w) {
  int64_t in = axis == 1 ? r->in_h : r->in_w, out = axis == 1 ? r->out_h : r->out_w;
  int is_nearest = c->op->builtin_code == OP_RESIZE_NEAREST;
  int integer = x.type.elem == TE_I32;
  int32_t *w10 = (int32_t *)w;
  for (int64_t o = 0; o < out; ++o) {
    if (is_nearest) lo[o] = nearest(r, o, in, out);
    else if (integer) bilinear_10(r, o, in, out, &lo[o], &hi[o], &w10[o]);
    else bilinear(r, o, in, out, &lo[o], &hi[o], &w[o]);
  }
  if (is_nearest) return pick(c, r, x, axis, lo, out);
  te_value_t a = pick(c, r, x, axis, lo, out), b = pick(c, r, x, axis, hi, out);
  return blend(c, a, b, axis, w, out);
}

/* Integer bilinear: the raw values (uint8 as stored, 0..255) in int32,
 * both axes blended exactly (weights 1/1024 each: the sum is the kernel's
 * output_20), then TFLite's rounding, half away from zero, by 2^20. */
static te_value_t to_blend(tfl_ctx_t *c, te_value_t x, int is_uint8) {
  te_value_t v = te_cast(&c->e, x, TE_I32);
  return is_uint8 ? te_binary(&c->e, "tosa.add", v, te_scalar_int(&c->e, TE_I32, 128)) : v;
}

static te_value_t from_blend(tfl_ctx_t *c, te_value_t v, int is_uint8) {
  te_value_t pos = te_binary(&c->e, "tosa.greater", v, te_scalar_int(&c->e, TE_I32, 0));
  te_value_t half = te_select(&c->e, pos, te_scalar_int(&c->e, TE_I32, 1 << 19),
                              te_scalar_int(&c->e, TE_I32, -(1 << 19)));
  te_value_t q = te_binary(&c->e, "tosa.intdiv", te_binary(&c->e, "tosa.add", v, half),
                           te_scalar_int(&c->e, TE_I32, 1 << 20));
  if (is_uint8) q = te_binary(&c->e, "tosa.sub", q, te_scalar_int(&c->e, TE_I32, 128));
  return te_cast(&c->e, te_clamp_int(&c->e, q, -128, 127), TE_I8);
}

static int read_options(tfl_ctx_t *c, resize_t *r) {
  int bilinear_op = c->op->builtin_code == OP_RESIZE_BILINEAR, bad = 0;
  const tfl_table_t *o = tfl_options(c, bilinear_op ? OPT_RESIZE_BILINEAR : OPT_RESIZE_NEAREST);
  if (!o) return 0;
  r->align_corners = tfl_table_bool(o, bilinear_op ? 2 : 0, 0, &bad);
  r->half_pixel = tfl_table_bool(o, bilinear_op ? 3 : 1, 0, &bad);
  if (bad) tfl_fail(c, "malformed options");
  return !bad;
}

tinyml_status_t tfl_lower_resize(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  resize_t r = {0};
  if (!in || !out || in->rank != 4 || out->rank != 4) return tfl_fail(c, "input and output must be NHWC");
  if (!read_options(c, &r)) return c->error;
  int bilinear_op = c->op->builtin_code == OP_RESIZE_BILINEAR;
  int integer = bilinear_op && (in->type == TFL_INT8 || in->type == TFL_UINT8);
  if (bilinear_op ? !(in->type == TFL_FLOAT32 || integer) || !tfl_quant_matches(in, out)
                  : !tfl_quant_matches(in, out) || in->type == TFL_BOOL)
    return tfl_fail(c, "unsupported types %s -> %s%s", tfl_type_name(in->type),
                    tfl_type_name(out->type),
                    bilinear_op ? " (FLOAT32, INT8 or UINT8, the same quantisation in and out)" : "");
  r.n = in->shape[0], r.in_h = in->shape[1], r.in_w = in->shape[2], r.c = in->shape[3];
  r.out_h = out->shape[1], r.out_w = out->shape[2];
  if (out->shape[0] != r.n || out->shape[3] != r.c || r.in_h < 1 || r.in_w < 1 || r.out_h < 1 ||
      r.out_w < 1 || r.out_h > MAX_SIDE || r.out_w > MAX_SIDE)
    return tfl_fail(c, "sizes %lldx%lld -> %lldx%lld are not supported", (long long)r.in_h,
                    (long long)r.in_w, (long long)r.out_h, (long long)r.out_w);
  int64_t most = r.out_h > r.out_w ? r.out_h : r.out_w;
  int32_t *lo = tinyml__calloc(c->allocator, (size_t)most, 2 * sizeof(int32_t), 4);
  float *w = tinyml__calloc(c->allocator, (size_t)most, sizeof(float), 4);
  te_value_t x = tfl_value_in(c, 0);
  if (integer && x.id) x = to_blend(c, x, in->type == TFL_UINT8);
  if (lo && w && x.id) x = resize_axis(c, &r, x, 1, lo, lo + most, w);
  if (lo && w && x.id) x = resize_axis(c, &r, x, 2, lo, lo + most, w);
  if (integer && lo && w && x.id) x = from_blend(c, x, in->type == TFL_UINT8);
  tinyml__free(c->allocator, lo);
  tinyml__free(c->allocator, w);
  if (!lo || !w) return tfl_out_of_memory(c), c->error;
  return x.id ? tfl_set_out(c, 0, x) : c->error;
}
