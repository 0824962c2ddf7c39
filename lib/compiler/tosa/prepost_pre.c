/* Pre-processing stages: the image gather (resize with colour conversion
 * at each source pixel), normalisation, quantisation and layout.
 *
 * The gather is one linalg.generic over the model's input shape that reads
 * the raw uint8 pixels it needs with tensor.extract, the way tosa.resize
 * lowers.  Reading raw bytes directly means no pass over the full-size image
 * and no full-size float copy of it.  Normalisation, quantisation and the
 * NCHW transpose are TOSA elementwise ops on its result, which the
 * pipeline's elementwise fusion folds into the same loop nest. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "prepost_internal.h"

/* The model's image geometry. */
typedef struct geom {
  int nchw;
  int64_t h, w, c;     /* model input */
  int64_t ih, iw, ic;  /* the module's image input */
} geom_t;

static int64_t pixel_channels(tinyml_pixel_format_t f) {
  return f == TINYML_PIXELS_GRAY8 ? 1 : f == TINYML_PIXELS_RGB565 ? 2 : 3;
}

/* AUTO: NHWC unless dim 1 looks like channels and the last dim does not. */
static int is_nchw(const pp_t *p) {
  const int64_t *d = p->in.type.dims;
  if (p->pre->model_layout != TINYML_LAYOUT_AUTO) return p->pre->model_layout == TINYML_LAYOUT_NCHW;
  int dim1 = d[1] == 1 || d[1] == 3, last = d[3] == 1 || d[3] == 3;
  return dim1 && !last;
}

static geom_t geometry(const pp_t *p) {
  const int64_t *d = p->in.type.dims;
  geom_t g = {.nchw = is_nchw(p)};
  g.c = g.nchw ? d[1] : d[3];
  g.h = g.nchw ? d[2] : d[1];
  g.w = g.nchw ? d[3] : d[2];
  g.ih = p->pre->image_height;
  g.iw = p->pre->image_width;
  g.ic = pixel_channels(p->pre->pixels);
  return g;
}

int pp_check_image(pp_t *p) {
  const pp_port_t *in = &p->in;
  char dims[96];
  pp_dims_text(&in->type, dims, sizeof(dims));
  if (in->type.rank != 4)
    return pp_fail(p, "image pre-processing needs a 4-D model input (NHWC or NCHW); input 0 "
                      "'%s' is %s", in->name, dims);
  if (in->type.elem != TE_F32 && in->type.elem != TE_I8 && in->type.elem != TE_I16)
    return pp_fail(p, "image pre-processing feeds float32, int8, uint8 or int16 inputs; input "
                      "0 '%s' is %s", in->name, pp_dtype_name(in));
  if (in->type.dims[0] != 1)
    return pp_fail(p, "image pre-processing needs batch 1; input 0 '%s' is %s", in->name, dims);
  geom_t g = geometry(p);
  if (g.h < 1 || g.w < 1)
    return pp_fail(p, "input 0 '%s' is %s: an image needs height and width", in->name, dims);
  if (g.c != 1 && g.c != 3)
    return pp_fail(p, "channel count mismatch: input 0 '%s' is %s, %s, so it has %lld "
                      "channels; image pre-processing makes 1 or 3", in->name, dims,
                   g.nchw ? "NCHW" : "NHWC", (long long)g.c);
  if (p->pre->channel_count != 1 && p->pre->channel_count != g.c)
    return pp_fail(p, "channel count mismatch: mean/std have %u channels but input 0 '%s' "
                      "(%s) has %lld", p->pre->channel_count, in->name, dims, (long long)g.c);
  return 0;
}

te_type_t pp_image_type(const pp_t *p) {
  geom_t g = geometry(p);
  int64_t dims[4] = {1, g.ih, g.iw, g.ic};
  return te_type(TE_I8, 4, dims);
}

/* ---- the gather's body ------------------------------------------------- */

/* Writes the body's SSA values as %b<N>. */
typedef struct body {
  strbuf_t *sb;
  uint32_t n;
  uint32_t image;   /* id of the image argument (%v<image>) */
  int64_t ih, iw, ic;
  uint32_t c0;      /* index constant 0 */
  uint32_t channel; /* linalg.index 3 */
} body_t;

static uint32_t op(body_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint32_t op(body_t *b, const char *fmt, ...) {
  char text[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  strbuf_printf(b->sb, "      %%b%u = %s\n", ++b->n, text);
  return b->n;
}

static uint32_t index_const(body_t *b, int64_t v) {
  return op(b, "arith.constant %lld : index", (long long)v);
}

static uint32_t i32_const(body_t *b, int64_t v) {
  return op(b, "arith.constant %lld : i32", (long long)v);
}

static uint32_t f32_const(body_t *b, float v) {
  char attr[32];
  te_f32_attr(v, attr);
  return op(b, "arith.constant %s", attr);
}

static uint32_t binop(body_t *b, const char *name, uint32_t x, uint32_t y, const char *type) {
  return op(b, "%s %%b%u, %%b%u : %s", name, x, y, type);
}

/* Source coordinates along one axis: out index `i` of `out` from `in`.
 * TFLite's convention without half-pixel centres: src = i * in / out, here
 * computed exactly in integers; i0 = floor(src), i1 = min(i0 + 1, in - 1),
 * weight = frac(src) = (i * in mod out) / out as float32. */
typedef struct taps {
  uint32_t i0, i1, weight;
  int interpolate;
} taps_t;

static taps_t axis_taps(body_t *b, uint32_t i, int64_t in, int64_t out, int nearest) {
  taps_t t = {i, i, 0, 0};
  if (in == out) return t;
  uint32_t num = binop(b, "arith.muli", i, index_const(b, in), "index");
  uint32_t cout = index_const(b, out);
  t.i0 = binop(b, "arith.divui", num, cout, "index");
  if (nearest) return t;
  uint32_t rem = binop(b, "arith.remui", num, cout, "index");
  uint32_t next = binop(b, "arith.addi", t.i0, index_const(b, 1), "index");
  t.i1 = binop(b, "arith.minui", next, index_const(b, in - 1), "index");
  uint32_t r32 = op(b, "arith.index_cast %%b%u : index to i32", rem);
  uint32_t rf = op(b, "arith.uitofp %%b%u : i32 to f32", r32);
  t.weight = binop(b, "arith.divf", rf, f32_const(b, (float)out), "f32");
  t.interpolate = 1;
  return t;
}

/* Byte `k` (an index value) of pixel (y, x), zero-extended to i32. */
static uint32_t byte_at(body_t *b, uint32_t y, uint32_t x, uint32_t k) {
  uint32_t v = op(b, "tensor.extract %%v%u[%%b%u, %%b%u, %%b%u, %%b%u] : "
                     "tensor<1x%lldx%lldx%lldxi8>",
                  b->image, b->c0, y, x, k, (long long)b->ih, (long long)b->iw, (long long)b->ic);
  return op(b, "arith.extui %%b%u : i8 to i32", v);
}

static uint32_t to_float(body_t *b, uint32_t i32) {
  return op(b, "arith.uitofp %%b%u : i32 to f32", i32);
}

/* luma = 0.299 R + 0.587 G + 0.114 B, summed left to right in float32. */
static uint32_t luma(body_t *b, uint32_t r, uint32_t g, uint32_t bl) {
  uint32_t wr = binop(b, "arith.mulf", r, f32_const(b, 0.299f), "f32");
  uint32_t wg = binop(b, "arith.mulf", g, f32_const(b, 0.587f), "f32");
  uint32_t wb = binop(b, "arith.mulf", bl, f32_const(b, 0.114f), "f32");
  return binop(b, "arith.addf", binop(b, "arith.addf", wr, wg, "f32"), wb, "f32");
}

/* (v << l) | (v >> r): a 5- or 6-bit field widened to 8 bits. */
static uint32_t widen(body_t *b, uint32_t v, int l, int r) {
  uint32_t hi = binop(b, "arith.shli", v, i32_const(b, l), "i32");
  uint32_t lo = binop(b, "arith.shrui", v, i32_const(b, r), "i32");
  return binop(b, "arith.ori", hi, lo, "i32");
}

/* RGB565, low byte first: R = hi[7:3], G = hi[2:0] lo[7:5], B = lo[4:0]. */
static void rgb565(body_t *b, uint32_t y, uint32_t x, uint32_t rgb[3]) {
  uint32_t lo = byte_at(b, y, x, b->c0), hi = byte_at(b, y, x, index_const(b, 1));
  uint32_t r5 = binop(b, "arith.shrui", hi, i32_const(b, 3), "i32");
  uint32_t g_hi = binop(b, "arith.shli", binop(b, "arith.andi", hi, i32_const(b, 7), "i32"),
                        i32_const(b, 3), "i32");
  uint32_t g6 = binop(b, "arith.ori", g_hi, binop(b, "arith.shrui", lo, i32_const(b, 5), "i32"),
                      "i32");
  uint32_t b5 = binop(b, "arith.andi", lo, i32_const(b, 31), "i32");
  rgb[0] = widen(b, r5, 3, 2);
  rgb[1] = widen(b, g6, 2, 4);
  rgb[2] = widen(b, b5, 3, 2);
}

static uint32_t select_channel(body_t *b, const uint32_t v[3], const char *type) {
  uint32_t is0 = binop(b, "arith.cmpi eq,", b->channel, b->c0, "index");
  uint32_t is1 = binop(b, "arith.cmpi eq,", b->channel, index_const(b, 1), "index");
  uint32_t s12 = op(b, "arith.select %%b%u, %%b%u, %%b%u : %s", is1, v[1], v[2], type);
  return op(b, "arith.select %%b%u, %%b%u, %%b%u : %s", is0, v[0], s12, type);
}

/* The model-channel value of source pixel (y, x), as float32 0..255. */
static uint32_t pixel(body_t *b, const pp_t *p, int64_t model_c, uint32_t y, uint32_t x) {
  tinyml_pixel_format_t f = p->pre->pixels;
  if (f == TINYML_PIXELS_GRAY8) return to_float(b, byte_at(b, y, x, b->c0));
  if (f == TINYML_PIXELS_RGB565) {
    uint32_t rgb[3];
    rgb565(b, y, x, rgb);
    if (model_c == 3) return to_float(b, select_channel(b, rgb, "i32"));
    return luma(b, to_float(b, rgb[0]), to_float(b, rgb[1]), to_float(b, rgb[2]));
  }
  int bgr = f == TINYML_PIXELS_BGR888;
  if (model_c == 3) {
    uint32_t k = bgr ? binop(b, "arith.subi", index_const(b, 2), b->channel, "index") : b->channel;
    return to_float(b, byte_at(b, y, x, k));
  }
  uint32_t v[3];
  for (int k = 0; k < 3; ++k) v[k] = to_float(b, byte_at(b, y, x, index_const(b, k)));
  return luma(b, v[bgr ? 2 : 0], v[1], v[bgr ? 0 : 2]);
}

/* a + (c - a) * w: TFLite's interpolation step. */
static uint32_t lerp(body_t *b, uint32_t a, uint32_t c, uint32_t w) {
  uint32_t d = binop(b, "arith.subf", c, a, "f32");
  return binop(b, "arith.addf", a, binop(b, "arith.mulf", d, w, "f32"), "f32");
}

static uint32_t resized(body_t *b, const pp_t *p, const geom_t *g, uint32_t y, uint32_t x) {
  int nearest = p->pre->resize == TINYML_RESIZE_NEAREST;
  taps_t ty = axis_taps(b, y, g->ih, g->h, nearest), tx = axis_taps(b, x, g->iw, g->w, nearest);
  uint32_t tl = pixel(b, p, g->c, ty.i0, tx.i0);
  if (!ty.interpolate && !tx.interpolate) return tl;
  if (!ty.interpolate) return lerp(b, tl, pixel(b, p, g->c, ty.i0, tx.i1), tx.weight);
  uint32_t bl = pixel(b, p, g->c, ty.i1, tx.i0);
  if (!tx.interpolate) return lerp(b, tl, bl, ty.weight);
  uint32_t top = lerp(b, tl, pixel(b, p, g->c, ty.i0, tx.i1), tx.weight);
  uint32_t bottom = lerp(b, bl, pixel(b, p, g->c, ty.i1, tx.i1), tx.weight);
  return lerp(b, top, bottom, ty.weight);
}

static te_value_t emit_gather(pp_t *p, te_value_t image, const geom_t *g) {
  int64_t dims[4] = {1, g->h, g->w, g->c};
  te_type_t t = te_type(TE_F32, 4, dims);
  strbuf_t *sb = p->e.sb;
  uint32_t empty = ++p->e.next_id;
  strbuf_printf(sb, "    %%v%u = tensor.empty() : ", empty);
  te_print_type(&p->e, &t);
  te_value_t r = {++p->e.next_id, t};
  strbuf_printf(sb, "\n    %%v%u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, "
                    "d3) -> (d0, d1, d2, d3)>], iterator_types = [\"parallel\", \"parallel\", "
                    "\"parallel\", \"parallel\"]} outs(%%v%u : ", r.id, empty);
  te_print_type(&p->e, &t);
  strbuf_append(sb, ") {\n    ^bb0(%bout: f32):\n");
  body_t b = {.sb = sb, .image = image.id, .ih = g->ih, .iw = g->iw, .ic = g->ic};
  uint32_t y = op(&b, "linalg.index 1 : index"), x = op(&b, "linalg.index 2 : index");
  b.channel = op(&b, "linalg.index 3 : index");
  b.c0 = index_const(&b, 0);
  uint32_t v = resized(&b, p, g, y, x);
  strbuf_printf(sb, "      linalg.yield %%b%u : f32\n    } -> ", v);
  te_print_type(&p->e, &t);
  strbuf_append(sb, "\n");
  return r;
}

/* ---- normalisation and quantisation ----------------------------------- */

/* value * a[c] + b[c], the affine map of (value - mean) / std and, when the
 * model input is quantised, of / scale + zero_point; folded in double. */
static void affine(const pp_t *p, uint32_t c, double *a, double *b) {
  const tinyml_preprocess_t *pre = p->pre;
  uint32_t k = pre->channel_count == 1 ? 0 : c;
  double mul = 1.0 / (double)pre->std[k], add = -(double)pre->mean[k] / (double)pre->std[k];
  if (p->in.type.elem != TE_F32) {
    double s = (double)p->in.scale;
    mul /= s;
    add = add / s + (double)p->in.zero_point - (p->in.is_unsigned ? 128.0 : 0.0);
  }
  *a = mul;
  *b = add;
}

te_value_t pp_emit_normalise(pp_t *p, te_value_t x, uint32_t axis) {
  uint32_t n = p->pre->channel_count;
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < x.type.rank; ++d) dims[d] = d == axis ? n : 1;
  te_type_t ct = te_type(TE_F32, x.type.rank, dims);
  float a[4], b[4];
  for (uint32_t c = 0; c < n; ++c) {
    double da, db;
    affine(p, c, &da, &db);
    a[c] = (float)da;
    b[c] = (float)db;
  }
  te_value_t v = te_binary(&p->e, "tosa.add", te_mul(&p->e, x, te_const(&p->e, &ct, a), 0),
                           te_const(&p->e, &ct, b));
  if (p->in.type.elem == TE_F32) return v;
  /* tosa.cast from float rounds half to even and saturates. */
  v = te_cast(&p->e, v, p->in.type.elem);
  if (p->in.is_unsigned) v = te_binary(&p->e, "tosa.bitwise_xor", v, te_scalar_int(&p->e, TE_I8, -128));
  return v;
}

te_value_t pp_emit_image(pp_t *p, te_value_t image) {
  geom_t g = geometry(p);
  te_value_t v = pp_emit_normalise(p, emit_gather(p, image, &g), 3);
  if (!g.nchw) return v;
  static const int32_t to_nchw[4] = {0, 3, 1, 2};
  return te_transpose(&p->e, v, to_nchw);
}
