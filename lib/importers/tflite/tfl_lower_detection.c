/* TFLite_Detection_PostProcess, the custom operator that ends TF1's SSD
 * detectors: decode the box encodings against the anchors, then keep the
 * best non-overlapping boxes (fast multi-class non-max suppression, or the
 * regular per-class one), as TFLite Micro's detection_postprocess.cc
 * computes them.
 *
 * Inputs: box encodings [1, N, >=4] (y, x, h, w), class predictions
 * [1, N, num_classes (+1 background)], anchors [N, 4] (y, x, h, w; a
 * constant).  Quantised (uint8) inputs are dequantised to float first, as
 * TFLite does.  Outputs (float): boxes [1, D, 4] (ymin, xmin, ymax, xmax),
 * classes [1, D] (without the background), scores [1, D] and the count
 * [1], D = max_detections * max_classes_per_detection (C), as TFLite's
 * Prepare sizes them.
 *
 * The suppression is greedy and its length is static, so it is unrolled D
 * times: take the first best active score (TFLite sorts stably, so equal
 * scores go by box index, which is what tosa.argmax's first maximum
 * gives), gather its box, and drop it and every box whose IoU with it is
 * above the threshold.  Rows past the count are zero (TFLite's regular
 * path writes zeros there; its fast path leaves them unwritten).
 *
 * The regular path runs that suppression for every class at once, one row
 * per class, min(detections_per_class, max_detections) steps, then takes
 * the max_detections best of what the classes selected.  TFLM merges class
 * by class with a partial sort on (score descending, position ascending),
 * which orders equal scores by class, then by their rank in the class,
 * i.e. by box index: the first maximum of the selections laid out class
 * by class.  (Desktop TFLite's partial sort leaves the order of equal
 * scores unspecified.)  It writes max_detections rows; the other rows of
 * its D are zero here.
 *
 * With C > 1 the fast path still suppresses on each box's best score, and
 * each selected box k fills rows k * C .. k * C + C - 1 with its
 * min(C, num_classes) best classes (TFLM's partial sort: score descending,
 * equal scores by class), then zeros; the count is the number of boxes.
 * That is desktop TFLite's layout (its fix of tensorflow issue 47551):
 * TFLM's kernel still steps its row index inside the class loop and
 * writes past the rows Prepare sized, so it cannot be followed there. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_flexbuf.h"
#include "tfl_lower.h"

typedef struct det_options {
  int32_t max_detections, max_classes, detections_per_class, num_classes;
  int32_t regular_nms;
  float score_threshold, iou_threshold;
  float y_scale, x_scale, h_scale, w_scale;
} det_options_t;

/* ---- options ------------------------------------------------------------ */

/* Option `key` into *out; a missing key gives `def`, or an error when
 * `required`.  1 on success; 0 with `err` set. */
static int option(const tfl_flex_map_t *m, const char *key, int required, double def,
                  double *out, char *err, size_t cap) {
  int found = tfl_flex_number(m, key, out, err, cap);
  if (found < 0) return 0;
  if (found) return 1;
  if (required) {
    snprintf(err, cap, "option '%s' is missing", key);
    return 0;
  }
  *out = def;
  return 1;
}

/* Ints as flexbuffers' AsInt32 reads them (floats truncate). */
static int int_option(const tfl_flex_map_t *m, const char *key, int required, int32_t def,
                      int32_t *out, char *err, size_t cap) {
  double v;
  if (!option(m, key, required, def, &v, err, cap)) return 0;
  if (!(v > -2147483649.0 && v < 2147483648.0)) {
    snprintf(err, cap, "option '%s' (%g) is out of the int32 range", key, v);
    return 0;
  }
  *out = (int32_t)v;
  return 1;
}

static int float_option(const tfl_flex_map_t *m, const char *key, float *out, char *err,
                        size_t cap) {
  double v;
  if (!option(m, key, 1, 0, &v, err, cap)) return 0;
  *out = (float)v;
  return 1;
}

/* Reads the options map; the defaults are TFLite's (Init). */
static int parse_options(const tfl_operator_t *op, det_options_t *o, char *err, size_t cap) {
  tfl_flex_map_t m;
  if (!tfl_flex_open(op->custom_options, op->custom_options_size, &m, err, cap)) return 0;
  return int_option(&m, "max_detections", 1, 0, &o->max_detections, err, cap) &&
         int_option(&m, "max_classes_per_detection", 1, 0, &o->max_classes, err, cap) &&
         int_option(&m, "detections_per_class", 0, 100, &o->detections_per_class, err, cap) &&
         int_option(&m, "use_regular_nms", 0, 0, &o->regular_nms, err, cap) &&
         int_option(&m, "num_classes", 1, 0, &o->num_classes, err, cap) &&
         float_option(&m, "nms_score_threshold", &o->score_threshold, err, cap) &&
         float_option(&m, "nms_iou_threshold", &o->iou_threshold, err, cap) &&
         float_option(&m, "y_scale", &o->y_scale, err, cap) &&
         float_option(&m, "x_scale", &o->x_scale, err, cap) &&
         float_option(&m, "h_scale", &o->h_scale, err, cap) &&
         float_option(&m, "w_scale", &o->w_scale, err, cap);
}

/* The values TFLite would fail an invoke on, and what we do not support. */
static tinyml_status_t check_options(tfl_ctx_t *c, const det_options_t *o) {
  if (o->regular_nms && o->detections_per_class < 1)
    return tfl_fail(c, "detections_per_class %d must be positive", o->detections_per_class);
  if (o->max_classes < 1)
    return tfl_fail(c, "max_classes_per_detection %d must be positive", o->max_classes);
  if (o->max_detections < 1 || o->max_detections > 10000)
    return tfl_fail(c, "max_detections %d is out of range (1 to 10000)", o->max_detections);
  if ((int64_t)o->max_detections * o->max_classes > 10000)
    return tfl_fail(c, "max_detections %d times max_classes_per_detection %d is more than "
                       "10000 output rows", o->max_detections, o->max_classes);
  if (o->num_classes < 1) return tfl_fail(c, "num_classes %d must be positive", o->num_classes);
  if (!(o->iou_threshold > 0.0f && o->iou_threshold <= 1.0f))
    return tfl_fail(c, "nms_iou_threshold %g must be in (0, 1]", (double)o->iou_threshold);
  /* A dropped box scores -inf below; no score may pass as -inf. */
  if (o->score_threshold == -INFINITY)
    return tfl_fail(c, "nms_score_threshold -inf is not supported");
  if (!(o->y_scale != 0 && o->x_scale != 0 && o->h_scale != 0 && o->w_scale != 0))
    return tfl_fail(c, "y_scale, x_scale, h_scale and w_scale must be non-zero");
  return TINYML_OK;
}

static tinyml_status_t read_options(tfl_ctx_t *c, det_options_t *o) {
  char err[160];
  if (!c->op->custom_options) return tfl_fail(c, "the custom options are missing");
  if (!parse_options(c->op, o, err, sizeof err)) return tfl_fail(c, "custom options: %s", err);
  return check_options(c, o);
}

/* ---- output shapes -------------------------------------------------------- */

/* TFLite's Prepare sets the output shapes, so converters often leave them
 * empty in the file; an output of rank 0 gets its shape here. */
tinyml_status_t tfl_shape_detection(const tinyml_allocator_t *a, const tfl_operator_t *op,
                                    tfl_tensor_t *tensors) {
  det_options_t o;
  char err[160];
  if (op->output_count != 4 || !op->custom_options ||
      !parse_options(op, &o, err, sizeof err) || o.max_detections < 1 || o.max_classes < 1 ||
      (int64_t)o.max_detections * o.max_classes > 10000)
    return TINYML_OK; /* the lowering says what is wrong */
  const int32_t d = o.max_detections * o.max_classes;
  const int32_t dims[4][3] = {{1, d, 4}, {1, d, 0}, {1, d, 0}, {1, 0, 0}};
  const uint32_t ranks[4] = {3, 2, 2, 1};
  for (uint32_t i = 0; i < 4; ++i) {
    tfl_tensor_t *t = &tensors[op->outputs[i]];
    if (t->rank != 0) continue;
    int32_t *shape = tinyml__alloc(a, sizeof(int32_t) * ranks[i], 4);
    if (!shape) return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
    memcpy(shape, dims[i], sizeof(int32_t) * ranks[i]);
    tinyml__free(a, t->shape);
    t->shape = shape;
    t->rank = ranks[i];
  }
  return TINYML_OK;
}

/* ---- inputs ---------------------------------------------------------------- */

/* Input i as float: uint8 (carried as int8 with zero point - 128) becomes
 * (q - zp) * scale, TFLite's Dequantizer, exact in float up to the product. */
static te_value_t float_input(tfl_ctx_t *c, uint32_t i) {
  const tfl_tensor_t *t = tfl_in(c, i);
  te_value_t v = tfl_value_in(c, i);
  if (!v.id || t->type == TFL_FLOAT32) return v;
  te_value_t f = te_cast(&c->e, v, TE_F32);
  f = te_binary(&c->e, "tosa.sub", f, te_scalar_f32(&c->e, (float)tfl_zero_point(t)));
  return te_mul(&c->e, f, te_scalar_f32(&c->e, tfl_scale(t)), 0);
}

static int is_uint8_quantized(const tfl_tensor_t *t) {
  return t->type == TFL_UINT8 && t->quant.scale_count == 1;
}

static tinyml_status_t check_types(tfl_ctx_t *c) {
  const tfl_tensor_t *box = tfl_in(c, 0), *cls = tfl_in(c, 1), *anc = tfl_in(c, 2);
  if (box->type == TFL_FLOAT32 ? anc->type != TFL_FLOAT32
                               : !is_uint8_quantized(box) || !is_uint8_quantized(anc))
    return tfl_fail(c, "box encodings %s with anchors %s: need both FLOAT32 or both "
                       "per-tensor quantized UINT8", tfl_type_name(box->type),
                    tfl_type_name(anc->type));
  if (cls->type != TFL_FLOAT32 && !is_uint8_quantized(cls))
    return tfl_fail(c, "class predictions %s: need FLOAT32 or per-tensor quantized UINT8",
                    tfl_type_name(cls->type));
  for (uint32_t i = 0; i < 4; ++i)
    if (tfl_out(c, i)->type != TFL_FLOAT32)
      return tfl_fail(c, "output %u is %s, not FLOAT32", i, tfl_type_name(tfl_out(c, i)->type));
  return TINYML_OK;
}

/* Shapes [1, N, >=4], [1, N, num_classes (+1)], [N, 4]; *n = N. */
static tinyml_status_t check_shapes(tfl_ctx_t *c, const det_options_t *o, int64_t *n) {
  const tfl_tensor_t *box = tfl_in(c, 0), *cls = tfl_in(c, 1), *anc = tfl_in(c, 2);
  if (box->rank != 3 || box->shape[0] != 1 || box->shape[1] < 1 || box->shape[2] < 4)
    return tfl_fail(c, "box encodings must be [1, N, 4 or more]");
  *n = box->shape[1];
  if (cls->rank != 3 || cls->shape[0] != 1 || cls->shape[1] != *n ||
      cls->shape[2] < o->num_classes || cls->shape[2] > (int64_t)o->num_classes + 1)
    return tfl_fail(c, "class predictions must be [1, %lld, %d or %d] (num_classes %d)",
                    (long long)*n, o->num_classes, o->num_classes + 1, o->num_classes);
  if (anc->rank != 2 || anc->shape[0] != *n || anc->shape[1] != 4)
    return tfl_fail(c, "anchors must be [%lld, 4]", (long long)*n);
  if (!anc->data || anc->is_variable)
    return tfl_fail(c, "anchors must be a constant tensor");
  return TINYML_OK;
}

static tinyml_status_t check_operands(tfl_ctx_t *c, const det_options_t *o, int64_t *n) {
  if (c->op->input_count != 3 || c->op->output_count != 4 || !tfl_in(c, 0) || !tfl_in(c, 1) ||
      !tfl_in(c, 2) || !tfl_out(c, 0) || !tfl_out(c, 1) || !tfl_out(c, 2) || !tfl_out(c, 3))
    return tfl_fail(c, "needs 3 inputs and 4 outputs");
  TINYML_RETURN_IF_ERROR(check_types(c));
  return check_shapes(c, o, n);
}

/* The anchors as floats (y, x, h, w per row), dequantised as TFLite's
 * Dequantizer does; NULL after recording an error. */
static float *anchors_host(tfl_ctx_t *c, int64_t n) {
  const tfl_tensor_t *t = tfl_in(c, 2);
  size_t count = (size_t)n * 4, esize = t->type == TFL_FLOAT32 ? 4 : 1;
  if (t->data_size != count * esize) {
    tfl_fail(c, "anchors hold %zu bytes, their shape needs %zu", t->data_size, count * esize);
    return NULL;
  }
  float *f = tinyml__alloc(c->allocator, count * sizeof(float), 16);
  if (!f) {
    tfl_out_of_memory(c);
    return NULL;
  }
  if (esize == 4) memcpy(f, t->data, count * 4);
  for (size_t i = 0; esize == 1 && i < count; ++i)
    f[i] = ((float)t->data[i] - (float)t->quant.zero_point[0]) * t->quant.scale[0];
  for (size_t i = 0; i < (size_t)n; ++i)
    if (!(f[4 * i + 2] >= 0 && f[4 * i + 3] >= 0)) {
      /* TFLite's ValidateBoxes would fail: ymin > ymax. */
      tfl_fail(c, "anchor %zu has a negative or NaN height or width", i);
      tinyml__free(c->allocator, f);
      return NULL;
    }
  return f;
}

/* ---- decoding ---------------------------------------------------------------- */

/* A [1, N, 2] constant of columns (a, b) of the anchors times `scale`. */
static te_value_t anchor_pairs(tfl_ctx_t *c, const float *anchors, int64_t n, int a, int b,
                               double scale) {
  float *v = tinyml__alloc(c->allocator, (size_t)n * 2 * sizeof(float), 16);
  if (!v) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < n; ++i) {
    v[2 * i] = (float)(scale * anchors[4 * i + a]);
    v[2 * i + 1] = (float)(scale * anchors[4 * i + b]);
  }
  te_type_t t = te_type(TE_F32, 3, (int64_t[3]){1, n, 2});
  te_value_t k = te_const(&c->e, &t, v);
  tinyml__free(c->allocator, v);
  return k;
}

static te_value_t pair_const(tfl_ctx_t *c, float a, float b) {
  te_type_t t = te_type(TE_F32, 3, (int64_t[3]){1, 1, 2});
  return te_const(&c->e, &t, (float[2]){a, b});
}

/* center = yx / scale * anchor_hw + anchor_yx;
 * half = 0.5 * exp(hw / scale) * anchor_hw; box = (center - half, center + half). */
static te_value_t decode_boxes(tfl_ctx_t *c, const det_options_t *o, te_value_t enc,
                               const float *anchors, int64_t n) {
  te_t *e = &c->e;
  te_value_t yx = te_slice(e, enc, (int64_t[3]){0, 0, 0}, (int64_t[3]){1, n, 2});
  te_value_t hw = te_slice(e, enc, (int64_t[3]){0, 0, 2}, (int64_t[3]){1, n, 2});
  te_value_t size = anchor_pairs(c, anchors, n, 2, 3, 1.0);
  te_value_t half_size = anchor_pairs(c, anchors, n, 2, 3, 0.5);
  te_value_t origin = anchor_pairs(c, anchors, n, 0, 1, 1.0);
  if (c->error) return (te_value_t){0};
  te_value_t center = te_divf(e, yx, pair_const(c, o->y_scale, o->x_scale));
  center = te_binary(e, "tosa.add", te_mul(e, center, size, 0), origin);
  te_value_t half = te_unary(e, "tosa.exp", te_divf(e, hw, pair_const(c, o->h_scale, o->w_scale)));
  half = te_mul(e, half, half_size, 0);
  te_value_t corners[2] = {te_binary(e, "tosa.sub", center, half),
                           te_binary(e, "tosa.add", center, half)};
  return te_concat(e, corners, 2, 2);
}

/* The class scores after the background, [1, N, num_classes]. */
static te_value_t class_scores(tfl_ctx_t *c, const det_options_t *o, int64_t n) {
  te_value_t p = float_input(c, 1);
  if (!p.id) return p;
  int64_t offset = p.type.dims[2] - o->num_classes;
  return te_slice(&c->e, p, (int64_t[3]){0, 0, offset}, (int64_t[3]){1, n, o->num_classes});
}

/* ---- suppression ----------------------------------------------------------- */

typedef struct nms {
  int64_t n;
  te_value_t boxes;                    /* [1, N, 4] */
  te_value_t ymin, xmin, ymax, xmax;   /* [1, N] */
  te_value_t area;                     /* [1, N] */
  te_value_t area_positive;            /* [1, N] i1 */
  te_value_t iota;                     /* [1, N] i32 */
  int64_t per, used;                   /* fast path: C, min(C, num_classes) */
  te_value_t top, cls;                 /* [1, N, C]: each box's best scores, classes */
  te_value_t score_threshold, iou_threshold, minus_inf, zero;
  te_value_t cur;                      /* active scores, -inf when dropped */
} nms_t;

static te_value_t column(tfl_ctx_t *c, te_value_t boxes, int64_t n, int64_t j) {
  te_value_t s = te_slice(&c->e, boxes, (int64_t[3]){0, 0, j}, (int64_t[3]){1, n, 1});
  return te_reshape(&c->e, s, 2, (int64_t[2]){1, n});
}

/* [1, n] of 0 .. n - 1 as int32, or of floor(i / per) as float32 when
 * per > 0; {0} after recording an error. */
static te_value_t counting(tfl_ctx_t *c, int64_t n, int64_t per) {
  int32_t *v = tinyml__alloc(c->allocator, (size_t)n * sizeof(int32_t), 16);
  if (!v) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < n; ++i) {
    if (per > 0) {
      float f = (float)(i / per);
      memcpy(&v[i], &f, sizeof f);
    } else {
      v[i] = (int32_t)i;
    }
  }
  te_type_t t = te_type(per > 0 ? TE_F32 : TE_I32, 2, (int64_t[2]){1, n});
  te_value_t k = te_const(&c->e, &t, v);
  tinyml__free(c->allocator, v);
  return k;
}

/* The next best class of each box ([1, N, 1] i32) among those not
 * `taken` ([1, N, K] i1): the first holding their best score, or, when
 * none does, the first of them.  None does when their scores are all
 * -inf: tosa.reduce_max starts from the lowest finite float. */
static te_value_t next_class(tfl_ctx_t *c, const nms_t *s, te_value_t p, te_value_t taken) {
  te_t *e = &c->e;
  te_value_t best = te_reduce(e, "tosa.reduce_max", te_select(e, taken, s->minus_inf, p), 2);
  te_value_t untaken = te_unary(e, "tosa.logical_not", taken);
  te_value_t cand = te_binary(e, "tosa.logical_and", untaken,
                              te_binary(e, "tosa.equal", p, best));
  te_value_t open = te_select(e, untaken, te_scalar_f32(e, 1.0f), s->zero);
  te_value_t hit = te_select(e, cand, te_scalar_f32(e, 2.0f), open);
  return te_reshape(e, te_argmax(e, hit, 2), 3, (int64_t[3]){1, s->n, 1});
}

/* s->top and s->cls: each box's s->used best classes (of p, [1, N, K])
 * and their scores, as TFLM's DecreasingPartialArgSort orders them (score
 * descending, equal scores by class; the first column is TFLite's
 * ArgMaxVector, the first maximum), then zero columns up to s->per.  A
 * score is read as a sum over the class's one-hot row, which keeps -inf
 * (see next_class). */
static void top_classes(tfl_ctx_t *c, nms_t *s, te_value_t p) {
  te_t *e = &c->e;
  const int64_t n = s->n, k = p.type.dims[2], col[3] = {1, n, 1};
  te_value_t *cols = tinyml__calloc(c->allocator, 2 * (size_t)s->per, sizeof(te_value_t), 8);
  te_value_t kiota = counting(c, k, 0);
  if (!cols || !kiota.id) {
    if (!cols) tfl_out_of_memory(c);
    tinyml__free(c->allocator, cols);
    return;
  }
  kiota = te_reshape(e, kiota, 3, (int64_t[3]){1, 1, k});
  te_value_t taken = {0};
  for (int64_t j = 0; j < s->used; ++j) {
    te_value_t cls = j ? next_class(c, s, p, taken)
                       : te_reshape(e, te_argmax(e, p, 2), 3, col);
    te_value_t now = te_binary(e, "tosa.equal", kiota, cls);
    cols[j] = te_reduce(e, "tosa.reduce_sum", te_select(e, now, p, s->zero), 2);
    cols[s->per + j] = te_cast(e, cls, TE_F32);
    if (j + 1 < s->used) taken = j ? te_binary(e, "tosa.logical_or", taken, now) : now;
  }
  te_type_t zt = te_type(TE_F32, 3, col);
  for (int64_t j = s->used; j < s->per; ++j)
    cols[j] = cols[s->per + j] = te_splat_f32(e, &zt, 0.0f);
  uint32_t per = (uint32_t)s->per;
  s->top = per == 1 ? cols[0] : te_concat(e, cols, per, 2);
  s->cls = per == 1 ? cols[per] : te_concat(e, cols + per, per, 2);
  tinyml__free(c->allocator, cols);
}

/* s->cur holds `scores` ([rows, N]) at or above the threshold, -inf below. */
static void nms_init(tfl_ctx_t *c, const det_options_t *o, nms_t *s, te_value_t scores) {
  te_t *e = &c->e;
  int64_t n = s->n;
  s->ymin = column(c, s->boxes, n, 0);
  s->xmin = column(c, s->boxes, n, 1);
  s->ymax = column(c, s->boxes, n, 2);
  s->xmax = column(c, s->boxes, n, 3);
  s->area = te_mul(e, te_binary(e, "tosa.sub", s->ymax, s->ymin),
                   te_binary(e, "tosa.sub", s->xmax, s->xmin), 0);
  s->zero = te_scalar_f32(e, 0.0f);
  s->minus_inf = te_scalar_f32(e, -INFINITY);
  s->score_threshold = te_scalar_f32(e, o->score_threshold);
  s->iou_threshold = te_scalar_f32(e, o->iou_threshold);
  s->area_positive = te_binary(e, "tosa.greater", s->area, s->zero);
  s->iota = counting(c, n, 0);
  /* TFLite keeps the candidates scoring at least the threshold. */
  te_value_t keep = te_binary(e, "tosa.greater_equal", scores, s->score_threshold);
  s->cur = te_select(e, keep, scores, s->minus_inf);
}

/* Whether each box overlaps box (y0, x0, y1, x1) of area `a` by an IoU
 * above the threshold, as TFLite's ComputeIntersectionOverUnion: IoU 0
 * when either area is not positive. */
static te_value_t overlaps(tfl_ctx_t *c, const nms_t *s, const te_value_t *k, te_value_t a) {
  te_t *e = &c->e;
  te_value_t iy0 = te_binary(e, "tosa.maximum", k[0], s->ymin);
  te_value_t ix0 = te_binary(e, "tosa.maximum", k[1], s->xmin);
  te_value_t iy1 = te_binary(e, "tosa.minimum", k[2], s->ymax);
  te_value_t ix1 = te_binary(e, "tosa.minimum", k[3], s->xmax);
  te_value_t dy = te_binary(e, "tosa.maximum", te_binary(e, "tosa.sub", iy1, iy0), s->zero);
  te_value_t dx = te_binary(e, "tosa.maximum", te_binary(e, "tosa.sub", ix1, ix0), s->zero);
  te_value_t inter = te_mul(e, dy, dx, 0);
  te_value_t uni = te_binary(e, "tosa.sub", te_binary(e, "tosa.add", a, s->area), inter);
  te_value_t above = te_binary(e, "tosa.greater", te_divf(e, inter, uni), s->iou_threshold);
  te_value_t both = te_binary(e, "tosa.logical_and", s->area_positive,
                              te_binary(e, "tosa.greater", a, s->zero));
  return te_binary(e, "tosa.logical_and", above, both);
}

/* One suppression step on each of the rows of s->cur ([rows, N]): the
 * best active box's index ([rows]), score ([rows, 1]) and box ([rows, 4]);
 * drops it and the boxes it overlaps.  Returns whether it exists
 * ([rows, 1]): dropped boxes score -inf, below any threshold. */
static te_value_t nms_step(tfl_ctx_t *c, nms_t *s, int64_t rows, te_value_t *idx,
                           te_value_t *best, te_value_t *box) {
  te_t *e = &c->e;
  const int64_t n = s->n, col[2] = {rows, 1};
  *idx = te_argmax(e, s->cur, 1);
  *best = te_reduce(e, "tosa.reduce_max", s->cur, 1);
  *box = te_gather_axis(e, s->boxes, 1, n, 4, *idx, 2, (int64_t[2]){rows, 4});
  te_value_t a = te_gather_axis(e, s->area, 1, n, 1, *idx, 2, col);
  te_value_t corner[4];
  for (int64_t j = 0; j < 4; ++j)
    corner[j] = te_slice(e, *box, (int64_t[2]){0, j}, col);
  te_value_t chosen = te_binary(e, "tosa.equal", s->iota, te_reshape(e, *idx, 2, col));
  te_value_t drop = te_binary(e, "tosa.logical_or", chosen, overlaps(c, s, corner, a));
  s->cur = te_select(e, drop, s->minus_inf, s->cur);
  return te_binary(e, "tosa.greater_equal", *best, s->score_threshold);
}

/* A detection's output rows (box b, class k, score best), or zeros when
 * it does not exist (!valid). */
static void detection_row(tfl_ctx_t *c, const nms_t *s, te_value_t valid, te_value_t b,
                          te_value_t k, te_value_t best, te_value_t *box, te_value_t *cls,
                          te_value_t *score, te_value_t *found) {
  te_t *e = &c->e;
  *box = te_select(e, valid, b, s->zero);
  *cls = te_select(e, valid, k, s->zero);
  *score = te_select(e, valid, best, s->zero);
  *found = te_select(e, valid, te_scalar_f32(e, 1.0f), s->zero);
}

/* Box b ([1, 4]) once per class of the fast path's rows, then zero rows:
 * [C, 4]. */
static te_value_t box_copies(tfl_ctx_t *c, const nms_t *s, te_value_t b) {
  te_t *e = &c->e;
  if (s->per == 1) return b;
  te_type_t t = te_type(TE_F32, 2, (int64_t[2]){s->used, 4});
  te_value_t ops[2] = {b, te_shape(e, 2, (int64_t[2]){s->used, 1})};
  te_value_t y = s->used == 1 ? b : te_op(e, "tosa.tile", ops, 2, NULL, &t);
  if (s->used == s->per) return y;
  te_type_t zt = te_type(TE_F32, 2, (int64_t[2]){s->per - s->used, 4});
  te_value_t parts[2] = {y, te_splat_f32(e, &zt, 0.0f)};
  return te_concat(e, parts, 2, 0);
}

/* One detection of the fast path: the box, class and score rows ([C, 4],
 * [1, C], [1, C]) and whether it exists ([1, 1] as 1.0 or 0.0). */
static void select_one(tfl_ctx_t *c, nms_t *s, te_value_t *box, te_value_t *cls,
                       te_value_t *score, te_value_t *found) {
  te_value_t idx, best, b;
  const int64_t dims[2] = {1, s->per};
  te_value_t valid = nms_step(c, s, 1, &idx, &best, &b);
  te_value_t k = te_gather_axis(&c->e, s->cls, 1, s->n, s->per, idx, 2, dims);
  te_value_t top = te_gather_axis(&c->e, s->top, 1, s->n, s->per, idx, 2, dims);
  detection_row(c, s, valid, box_copies(c, s, b), k, top, box, cls, score, found);
}

static int unroll_fits(tfl_ctx_t *c, int64_t steps, uint64_t step_ops) {
  if ((uint64_t)steps * step_ops <= c->limits.max_ops) return 1;
  tfl_fail(c, "unrolling %lld detections emits %llu TOSA ops, more than max_ops (%llu)",
           (long long)steps, (unsigned long long)((uint64_t)steps * step_ops),
           (unsigned long long)c->limits.max_ops);
  return 0;
}

/* rows[k] (per rows of w values) joined as [1, d * per, w], then zero
 * rows up to [1, total, w] (w = 0: as [1, total]). */
static te_value_t join_rows(tfl_ctx_t *c, te_value_t *rows, int64_t d, int64_t per, int64_t w,
                            int64_t total) {
  te_t *e = &c->e;
  for (int64_t k = 0; k < d; ++k)
    rows[k] = te_reshape(e, rows[k], 3, (int64_t[3]){1, per, w ? w : 1});
  te_value_t y = d == 1 ? rows[0] : te_concat(e, rows, (uint32_t)d, 1);
  if (d * per < total) {
    te_type_t t = te_type(TE_F32, 3, (int64_t[3]){1, total - d * per, w ? w : 1});
    te_value_t parts[2] = {y, te_splat_f32(e, &t, 0.0f)};
    y = te_concat(e, parts, 2, 1);
  }
  return w ? y : te_reshape(e, y, 2, (int64_t[2]){1, total});
}

/* Picks the next detection's rows (box, class, score, found). */
typedef void (*pick_fn)(tfl_ctx_t *c, void *state, te_value_t row[4]);

static void pick_fast(tfl_ctx_t *c, void *state, te_value_t row[4]) {
  select_one(c, state, &row[0], &row[1], &row[2], &row[3]);
}

/* The four outputs from d picks of `per` rows each, unrolled, padded with
 * zero rows to `total`. */
static tinyml_status_t emit_detections(tfl_ctx_t *c, pick_fn pick, void *state, int64_t d,
                                       int64_t per, int64_t total) {
  te_value_t *rows = tinyml__calloc(c->allocator, 4 * (size_t)d, sizeof(te_value_t), 8);
  if (!rows) {
    tfl_out_of_memory(c);
    return c->error;
  }
  te_value_t *box = rows, *cls = rows + d, *score = rows + 2 * d, *found = rows + 3 * d;
  uint32_t first = c->e.next_id;
  for (int64_t k = 0; k < d && !c->error; ++k) {
    te_value_t row[4];
    pick(c, state, row);
    box[k] = row[0], cls[k] = row[1], score[k] = row[2], found[k] = row[3];
    if (k == 0) unroll_fits(c, d, c->e.next_id - first);
  }
  if (!c->error) {
    te_value_t count = te_reduce(&c->e, "tosa.reduce_sum", join_rows(c, found, d, 1, 0, d), 1);
    tfl_set_out(c, 0, join_rows(c, box, d, per, 4, total));
    tfl_set_out(c, 1, join_rows(c, cls, d, per, 0, total));
    tfl_set_out(c, 2, join_rows(c, score, d, per, 0, total));
    tfl_set_out(c, 3, te_reshape(&c->e, count, 1, (int64_t[1]){1}));
  }
  tinyml__free(c->allocator, rows);
  return c->error;
}

/* ---- regular (per-class) suppression ------------------------------------------ */

typedef struct merge {
  nms_t *s;
  int64_t m;                     /* classes * steps */
  te_value_t scores, anchors;    /* [1, m]: the selections, class by class */
  te_value_t position, cls;      /* [1, m]: 0 .. m - 1 and each one's class */
} merge_t;

/* cols (k values of [rows, 1]) side by side as [1, rows * k], row-major. */
static te_value_t flatten_columns(tfl_ctx_t *c, te_value_t *cols, int64_t rows, int64_t k) {
  te_value_t y = k == 1 ? cols[0] : te_concat(&c->e, cols, (uint32_t)k, 1);
  return te_reshape(&c->e, y, 2, (int64_t[2]){1, rows * k});
}

/* `steps` suppression steps in every class at once (s->cur is [classes,
 * N]): the selected scores (-inf where a class ran out) and box indices. */
static void select_per_class(tfl_ctx_t *c, merge_t *g, int64_t classes, int64_t steps) {
  te_t *e = &c->e;
  te_value_t *cols = tinyml__calloc(c->allocator, 2 * (size_t)steps, sizeof(te_value_t), 8);
  if (!cols) {
    tfl_out_of_memory(c);
    return;
  }
  uint32_t first = e->next_id;
  for (int64_t k = 0; k < steps && !c->error; ++k) {
    te_value_t idx, best, b;
    te_value_t valid = nms_step(c, g->s, classes, &idx, &best, &b);
    cols[k] = te_select(e, valid, best, g->s->minus_inf);
    cols[steps + k] = te_reshape(e, idx, 2, (int64_t[2]){classes, 1});
    if (k == 0) unroll_fits(c, steps, e->next_id - first);
  }
  if (!c->error) {
    g->scores = flatten_columns(c, cols, classes, steps);
    g->anchors = flatten_columns(c, cols + steps, classes, steps);
  }
  tinyml__free(c->allocator, cols);
}

/* The best remaining selection: the first maximum, so equal scores go by
 * class, then by box index, as TFLM's merge orders them. */
static void pick_regular(tfl_ctx_t *c, void *state, te_value_t row[4]) {
  merge_t *g = state;
  te_t *e = &c->e;
  const int64_t one[2] = {1, 1};
  te_value_t j = te_argmax(e, g->scores, 1);
  te_value_t best = te_reduce(e, "tosa.reduce_max", g->scores, 1);
  te_value_t anchor = te_gather_axis(e, g->anchors, 1, g->m, 1, j, 2, one);
  te_value_t k = te_gather_axis(e, g->cls, 1, g->m, 1, j, 2, one);
  te_value_t b = te_gather_axis(e, g->s->boxes, 1, g->s->n, 4, anchor, 2, (int64_t[2]){1, 4});
  te_value_t taken = te_binary(e, "tosa.equal", g->position, te_reshape(e, j, 2, one));
  g->scores = te_select(e, taken, g->s->minus_inf, g->scores);
  te_value_t valid = te_binary(e, "tosa.greater_equal", best, g->s->score_threshold);
  detection_row(c, g->s, valid, b, k, best, &row[0], &row[1], &row[2], &row[3]);
}

static tinyml_status_t regular_nms(tfl_ctx_t *c, const det_options_t *o, nms_t *s,
                                  te_value_t class_scores) {
  const int64_t classes = o->num_classes, d = o->max_detections;
  /* A class's selections past max_detections can never be among the best
   * max_detections, so TFLM's detections_per_class is capped there. */
  const int64_t steps = o->detections_per_class < d ? o->detections_per_class : d;
  te_value_t t = te_transpose(&c->e, class_scores, (int32_t[3]){0, 2, 1});
  nms_init(c, o, s, te_reshape(&c->e, t, 2, (int64_t[2]){classes, s->n}));
  merge_t g = {.s = s, .m = classes * steps};
  if (!c->error) select_per_class(c, &g, classes, steps);
  if (!c->error) g.position = counting(c, g.m, 0);
  if (!c->error) g.cls = counting(c, g.m, steps);
  if (c->error) return c->error;
  return emit_detections(c, pick_regular, &g, d, 1, d * o->max_classes);
}

tinyml_status_t tfl_lower_detection(tfl_ctx_t *c) {
  det_options_t o;
  int64_t n = 0;
  TINYML_RETURN_IF_ERROR(read_options(c, &o));
  TINYML_RETURN_IF_ERROR(check_operands(c, &o, &n));
  float *anchors = anchors_host(c, n);
  if (!anchors) return c->error;
  nms_t s = {.n = n};
  te_value_t enc = float_input(c, 0), scores = {0};
  if (enc.id) s.boxes = decode_boxes(c, &o, enc, anchors, n);
  tinyml__free(c->allocator, anchors);
  te_value_t p = class_scores(c, &o, n);
  if (c->error) return c->error;
  if (o.regular_nms) return regular_nms(c, &o, &s, p);
  s.per = o.max_classes;
  s.used = o.max_classes < o.num_classes ? o.max_classes : o.num_classes;
  s.minus_inf = te_scalar_f32(&c->e, -INFINITY);
  s.zero = te_scalar_f32(&c->e, 0.0f);
  top_classes(c, &s, p);
  if (c->error) return c->error;
  scores = te_slice(&c->e, s.top, (int64_t[3]){0, 0, 0}, (int64_t[3]){1, n, 1});
  nms_init(c, &o, &s, te_reshape(&c->e, scores, 2, (int64_t[2]){1, n}));
  if (c->error) return c->error;
  return emit_detections(c, pick_fast, &s, o.max_detections, s.per,
                         (int64_t)o.max_detections * s.per);
}
