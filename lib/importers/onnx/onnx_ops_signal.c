/* ONNX lowerings of the signal operators: DFT, STFT, the Hann, Hamming and
 * Blackman windows and MelWeightMatrix, as onnx/reference/ops computes
 * them.  See onnx_lower.h for the contract.
 *
 * A DFT of static length is a matrix product against a constant table of
 * cos/sin terms, computed in double and rounded once to f32, so the error
 * is the f32 product's alone.  Lengths, frame sizes and window sizes decide
 * shapes, so they must be compile-time constants (a graph input there is
 * refused with the hint to bind it). */
#include <math.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_elt_util.h"

/* Tables and windows beyond this many elements are refused (host memory). */
#define MAX_TABLE (1LL << 24)

/* Input i as a constant integer scalar (or 1-element tensor) in *out. */
static int const_int(onnx_ctx_t *c, uint32_t i, const char *what, int64_t *out) {
  int64_t v[1];
  if (onnx_const_ints(c, i, v, 1) != 1)
    return onnx_fail(c, "%s (input %u) must be a constant integer scalar", what, i), 0;
  *out = v[0];
  return 1;
}

static int const_float(onnx_ctx_t *c, uint32_t i, const char *what, double *out) {
  float f;
  if (!onnx_const_float(c, i, &f))
    return onnx_fail(c, "%s (input %u) must be a constant float scalar", what, i), 0;
  *out = f;
  return 1;
}

/* A float output only: the other output_datatype values are not lowered. */
static int float_output_type(onnx_ctx_t *c) {
  int64_t t = onnx_attr_int(c, "output_datatype", ONNX_FLOAT);
  if (t != ONNX_FLOAT)
    return onnx_fail(c, "output_datatype %lld is not supported (FLOAT is)", (long long)t), 0;
  return 1;
}

static int bool_attr(onnx_ctx_t *c, const char *name, int64_t def, int *out) {
  int64_t v = onnx_attr_int(c, name, def);
  if (v != 0 && v != 1) return onnx_fail(c, "%s must be 0 or 1, not %lld", name, (long long)v), 0;
  *out = (int)v;
  return 1;
}

static tinyml_status_t out_floats(onnx_ctx_t *c, uint32_t rank, const int64_t *dims,
                                  const double *v) {
  int64_t n = onnx_numel(rank, dims);
  float *f = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!f) return onnx_oom(c);
  for (int64_t i = 0; i < n; ++i) f[i] = (float)v[i];
  tinyml_status_t st = onnx_set_out_const(c, 0, ONNX_FLOAT, rank, dims, f);
  tinyml__free(c->allocator, f);
  return st;
}

/* The result's size against max_tensor_bytes, before it is computed. */
static int check_out(onnx_ctx_t *c, uint32_t rank, const int64_t *dims) {
  int64_t n = onnx_numel(rank, dims);
  if (n < 0 || (uint64_t)n > c->limits.max_tensor_bytes / 4)
    return onnx_fail(c, "the result would be larger than max_tensor_bytes"), 0;
  return 1;
}

/* ---- windows ---- */

enum { HANN, HAMMING, BLACKMAN };

static double window_at(int kind, int64_t n, double den) {
  double a = 2.0 * M_PI * (double)n / den;
  if (kind == HANN) {
    double s = sin(a / 2.0);
    return s * s;
  }
  if (kind == HAMMING) return 25.0 / 46.0 - cos(a) * (21.0 / 46.0);
  return 0.42 - 0.5 * cos(a) + 0.08 * cos(2.0 * a);
}

static tinyml_status_t lower_window(onnx_ctx_t *c, int kind) {
  int64_t size;
  int periodic;
  if (!const_int(c, 0, "size", &size) || !float_output_type(c) ||
      !bool_attr(c, "periodic", 1, &periodic))
    return c->error;
  if (size < 1 || size > MAX_TABLE)
    return onnx_fail(c, "a window of size %lld is not supported", (long long)size);
  /* The symmetric form divides by size - 1. */
  if (!periodic && size == 1) return onnx_fail(c, "a symmetric window of size 1 divides by zero");
  if (!check_out(c, 1, &size)) return c->error;
  double den = (double)(periodic ? size : size - 1);
  double *w = tinyml__alloc(c->allocator, (size_t)size * sizeof(double), 16);
  if (!w) return onnx_oom(c);
  for (int64_t n = 0; n < size; ++n) w[n] = window_at(kind, n, den);
  tinyml_status_t st = out_floats(c, 1, &size, w);
  tinyml__free(c->allocator, w);
  return st;
}

static tinyml_status_t lower_hann(onnx_ctx_t *c) { return lower_window(c, HANN); }
static tinyml_status_t lower_hamming(onnx_ctx_t *c) { return lower_window(c, HAMMING); }
static tinyml_status_t lower_blackman(onnx_ctx_t *c) { return lower_window(c, BLACKMAN); }

/* ---- the DFT table ---- */

/* One DFT along a signal axis: `len` samples of `chans` (1 real, 2
 * complex) values in, `bins` complex values out, of an `n`-point DFT (the
 * samples past n are dropped, the missing ones are zeros). */
typedef struct dft {
  int64_t len, chans, n, bins;
  int inverse;
} dft_t;

/* The [len * chans, bins * 2] matrix taking a row of samples to its row of
 * bins: x e^{-+2 pi j k m / n} (divided by n when inverse), with k m
 * reduced mod n first so the angle is exact before sin and cos.  NULL on
 * out of memory (recorded). */
static double *dft_table(onnx_ctx_t *c, const dft_t *d) {
  int64_t rows = d->len * d->chans, cols = d->bins * 2;
  double *t = tinyml__calloc(c->allocator, (size_t)(rows * cols), sizeof(double), 16);
  if (!t) return onnx_oom(c), NULL;
  double s = d->inverse ? 1.0 : -1.0, scale = d->inverse ? 1.0 / (double)d->n : 1.0;
  int64_t used = d->len < d->n ? d->len : d->n;
  for (int64_t m = 0; m < used; ++m)
    for (int64_t k = 0; k < d->bins; ++k) {
      double a = 2.0 * M_PI * (double)((k * m) % d->n) / (double)d->n;
      double re = cos(a) * scale, im = s * sin(a) * scale;
      double *row = t + m * d->chans * cols + 2 * k;
      row[0] = re, row[1] = im;        /* the real part of the sample */
      if (d->chans == 2) row[cols] = -im, row[cols + 1] = re; /* times j */
    }
  return t;
}

/* The table's size against the limits; 0 with an error when too large. */
static int check_table(onnx_ctx_t *c, const dft_t *d) {
  int64_t n = onnx_mul_sat(d->len * d->chans, d->bins * 2);
  if (n < 0 || n > MAX_TABLE)
    return onnx_fail(c, "the DFT table would be too large (%lld samples to %lld bins)",
                     (long long)d->len, (long long)d->bins), 0;
  const char *name = c->node->output[0];
  return onnx_check_constant(c, name, (uint64_t)n * 4);
}

/* Whether r rows are few enough to transform at compile time; more run
 * (the constant materialised) rather than stall the import. */
static int fold_ok(int64_t r, const dft_t *d) {
  return onnx_mul_sat(r, onnx_mul_sat(d->len * d->chans, d->bins * 2)) <= (1LL << 26);
}

/* rows [r, len * chans] times the table, to [r, bins * 2], summed in double
 * (the constant-folded form). */
static void host_product(const dft_t *d, const double *t, const float *x, int64_t r, double *y) {
  int64_t in = d->len * d->chans, cols = d->bins * 2;
  for (int64_t i = 0; i < r; ++i)
    for (int64_t k = 0; k < cols; ++k) {
      double sum = 0.0;
      for (int64_t m = 0; m < in; ++m) sum += (double)x[i * in + m] * t[m * cols + k];
      y[i * cols + k] = sum;
    }
}

/* [1, r, len * chans] f32 times the table as one tosa.matmul, to [1, r,
 * bins * 2]. */
static te_value_t emit_product(onnx_ctx_t *c, const dft_t *d, const double *t, te_value_t x) {
  int64_t in = d->len * d->chans, cols = d->bins * 2, r = x.type.dims[1];
  float *f = tinyml__alloc(c->allocator, (size_t)(in * cols) * 4, 16);
  if (!f) return onnx_oom(c), (te_value_t){0};
  for (int64_t i = 0; i < in * cols; ++i) f[i] = (float)t[i];
  te_type_t tt = te_type(TE_F32, 3, (int64_t[3]){1, in, cols});
  te_value_t table = te_const(&c->e, &tt, f);
  tinyml__free(c->allocator, f);
  te_type_t yt = te_type(TE_F32, 3, (int64_t[3]){1, r, cols});
  te_value_t zp = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[4] = {x, table, zp, zp};
  return te_op(&c->e, "tosa.matmul", ops, 4, NULL, &yt);
}

/* ---- DFT ---- */

/* The input seen as [outer, len, inner, chans] around the DFT axis. */
typedef struct dft_shape {
  int64_t outer, inner;
  uint32_t rank;
  int64_t out_dims[TE_MAX_RANK];
} dft_shape_t;

/* Rows of the constant input, [outer * inner, len * chans], as f32. */
static void host_rows(const dft_t *d, const dft_shape_t *s, const float *x, float *rows) {
  int64_t in = d->len * d->chans;
  for (int64_t o = 0; o < s->outer; ++o)
    for (int64_t i = 0; i < s->inner; ++i)
      for (int64_t m = 0; m < d->len; ++m)
        for (int64_t ch = 0; ch < d->chans; ++ch)
          rows[(o * s->inner + i) * in + m * d->chans + ch] =
              x[((o * d->len + m) * s->inner + i) * d->chans + ch];
}

static tinyml_status_t dft_fold(onnx_ctx_t *c, const dft_t *d, const dft_shape_t *s,
                                const float *x, const double *t) {
  int64_t r = s->outer * s->inner, in = d->len * d->chans, cols = d->bins * 2;
  float *rows = tinyml__alloc(c->allocator, (size_t)(r * in) * 4, 16);
  double *y = tinyml__alloc(c->allocator, (size_t)(r * cols) * 8, 16);
  double *out = tinyml__alloc(c->allocator, (size_t)(r * cols) * 8, 16);
  tinyml_status_t st = rows && y && out ? TINYML_OK : onnx_oom(c);
  if (!st) {
    host_rows(d, s, x, rows);
    host_product(d, t, rows, r, y);
    /* [outer, inner, bins, 2] back to [outer, bins, inner, 2] */
    for (int64_t o = 0; o < s->outer; ++o)
      for (int64_t i = 0; i < s->inner; ++i)
        for (int64_t k = 0; k < cols; ++k)
          out[((o * d->bins + k / 2) * s->inner + i) * 2 + k % 2] = y[(o * s->inner + i) * cols + k];
    st = out_floats(c, s->rank, s->out_dims, out);
  }
  tinyml__free(c->allocator, rows);
  tinyml__free(c->allocator, y);
  tinyml__free(c->allocator, out);
  return st;
}

static te_value_t dft_emit(onnx_ctx_t *c, const dft_t *d, const dft_shape_t *s, const double *t) {
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return x;
  int32_t swap[4] = {0, 2, 1, 3};
  x = te_reshape(&c->e, x, 4, (int64_t[4]){s->outer, d->len, s->inner, d->chans});
  if (s->inner > 1) x = te_transpose(&c->e, x, swap);
  x = te_reshape(&c->e, x, 3, (int64_t[3]){1, s->outer * s->inner, d->len * d->chans});
  te_value_t y = emit_product(c, d, t, x);
  if (!y.id) return y;
  y = te_reshape(&c->e, y, 4, (int64_t[4]){s->outer, s->inner, d->bins, 2});
  if (s->inner > 1) y = te_transpose(&c->e, y, swap);
  return te_reshape(&c->e, y, s->rank, s->out_dims);
}

/* The DFT axis: attribute `axis` (default 1) before opset 20, the optional
 * constant input 2 (default -2) from it.  Negative values count from the
 * back of the input, as the spec and onnxruntime do. */
static int dft_axis(onnx_ctx_t *c, uint32_t rank, int64_t *axis) {
  *axis = c->opset < 20 ? onnx_attr_int(c, "axis", 1) : -2;
  if (c->opset >= 20 && onnx_input(c, 2) && !const_int(c, 2, "axis", axis)) return 0;
  int64_t a = *axis < 0 ? *axis + (int64_t)rank : *axis;
  if (a < 0 || a > (int64_t)rank - 2)
    return onnx_fail(c, "axis %lld is outside [-%u, %u]", (long long)*axis, rank, rank - 2), 0;
  *axis = a;
  return 1;
}

static tinyml_status_t lower_dft(onnx_ctx_t *c) {
  const onnx_value_t *v = onnx_input(c, 0);
  if (!v || v->dtype != ONNX_FLOAT) return onnx_fail(c, "the input must be a float tensor");
  if (v->rank < 2 || (v->dims[v->rank - 1] != 1 && v->dims[v->rank - 1] != 2))
    return onnx_fail(c, "the input must be [..., 1] (real) or [..., 2] (complex)");
  int64_t axis;
  dft_t d = {.chans = v->dims[v->rank - 1]};
  int onesided;
  if (!dft_axis(c, v->rank, &axis) || !bool_attr(c, "inverse", 0, &d.inverse) ||
      !bool_attr(c, "onesided", 0, &onesided))
    return c->error;
  /* The spec has no onesided complex transform, and onnxruntime reads an
   * inverse onesided one as a half spectrum where the reference takes the
   * first half of the full inverse: neither is guessed. */
  if (onesided && (d.chans == 2 || d.inverse))
    return onnx_fail(c, "onesided with %s is not supported",
                     d.inverse ? "inverse" : "complex input");
  d.len = d.n = v->dims[axis];
  if (onnx_input(c, 1) && !const_int(c, 1, "dft_length", &d.n)) return c->error;
  if (d.n < 1) return onnx_fail(c, "dft_length %lld is not positive", (long long)d.n);
  d.bins = onesided ? d.n / 2 + 1 : d.n;
  dft_shape_t s = {.outer = 1, .inner = 1, .rank = v->rank};
  for (uint32_t i = 0; i < v->rank; ++i) {
    s.out_dims[i] = (int64_t)i == axis ? d.bins : v->dims[i];
    if ((int64_t)i < axis) s.outer *= v->dims[i];
    if ((int64_t)i > axis && i + 1 < v->rank) s.inner *= v->dims[i];
  }
  s.out_dims[v->rank - 1] = 2;
  if (onnx_numel(v->rank, v->dims) == 0) return onnx_fail(c, "empty tensors are not supported");
  if (!check_out(c, s.rank, s.out_dims) || !check_table(c, &d)) return c->error;
  double *t = dft_table(c, &d);
  if (!t) return c->error;
  tinyml_status_t st;
  if (v->data && fold_ok(s.outer * s.inner, &d)) {
    st = dft_fold(c, &d, &s, v->data, t);
  } else {
    te_value_t y = dft_emit(c, &d, &s, t);
    st = y.id ? onnx_set_out(c, 0, y) : c->error;
  }
  tinyml__free(c->allocator, t);
  return st;
}

/* ---- STFT ---- */

typedef struct stft {
  dft_t d;
  int64_t batch, signal_len, step, frames;
} stft_t;

/* Frames of the constant signal, each sample times the window in f32 as
 * the reference weighs them, as rows [batch * frames, len * chans]. */
static void stft_rows(const stft_t *f, const float *x, const float *w, float *rows) {
  const dft_t *d = &f->d;
  for (int64_t b = 0; b < f->batch; ++b)
    for (int64_t k = 0; k < f->frames; ++k)
      for (int64_t m = 0; m < d->len; ++m)
        for (int64_t ch = 0; ch < d->chans; ++ch) {
          float v = x[(b * f->signal_len + k * f->step + m) * d->chans + ch];
          rows[((b * f->frames + k) * d->len + m) * d->chans + ch] = w ? v * w[m] : v;
        }
}

static tinyml_status_t stft_fold(onnx_ctx_t *c, const stft_t *f, const float *x, const float *w,
                                 const double *t, const int64_t *dims) {
  int64_t r = f->batch * f->frames, in = f->d.len * f->d.chans;
  float *rows = tinyml__alloc(c->allocator, (size_t)(r * in) * 4, 16);
  double *y = tinyml__alloc(c->allocator, (size_t)(r * f->d.bins * 2) * 8, 16);
  tinyml_status_t st = rows && y ? TINYML_OK : onnx_oom(c);
  if (!st) {
    stft_rows(f, x, w, rows);
    host_product(&f->d, t, rows, r, y);
    st = out_floats(c, 4, dims, y);
  }
  tinyml__free(c->allocator, rows);
  tinyml__free(c->allocator, y);
  return st;
}

/* The frames gathered from the signal by one constant index map. */
static te_value_t stft_emit(onnx_ctx_t *c, const stft_t *f, const double *t, const int64_t *dims) {
  const dft_t *d = &f->d;
  int64_t n = f->frames * d->len;
  int32_t *idx = tinyml__alloc(c->allocator, (size_t)n * 4, 16);
  if (!idx) return onnx_oom(c), (te_value_t){0};
  for (int64_t k = 0; k < f->frames; ++k)
    for (int64_t m = 0; m < d->len; ++m) idx[k * d->len + m] = (int32_t)(k * f->step + m);
  te_type_t it = te_type(TE_I32, 1, &n);
  te_value_t map = te_const(&c->e, &it, idx);
  tinyml__free(c->allocator, idx);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return x;
  int64_t fd[4] = {f->batch, f->frames, d->len, d->chans};
  x = te_gather_axis(&c->e, x, f->batch, f->signal_len, d->chans, map, 4, fd);
  if (onnx_input(c, 2)) {
    te_value_t w = onnx_in(c, 2);
    if (!w.id) return w;
    x = mul(c, x, te_reshape(&c->e, w, 4, (int64_t[4]){1, 1, d->len, 1}));
  }
  x = te_reshape(&c->e, x, 3, (int64_t[3]){1, f->batch * f->frames, d->len * d->chans});
  te_value_t y = emit_product(c, d, t, x);
  return y.id ? te_reshape(&c->e, y, 4, dims) : y;
}

/* frame_step and the frame length (frame_length, else the window's,
 * else the signal's) decide the shape. */
static int stft_shape(onnx_ctx_t *c, const onnx_value_t *v, stft_t *f) {
  const onnx_value_t *w = onnx_input(c, 2);
  if (w && (w->dtype != ONNX_FLOAT || w->rank != 1))
    return onnx_fail(c, "the window must be a float vector"), 0;
  int64_t len = w ? w->dims[0] : v->dims[1];
  if (!const_int(c, 1, "frame_step", &f->step)) return 0;
  if (onnx_input(c, 3) && !const_int(c, 3, "frame_length", &len)) return 0;
  if (w && w->dims[0] != len)
    return onnx_fail(c, "the window's length %lld is not frame_length %lld",
                     (long long)w->dims[0], (long long)len), 0;
  f->batch = v->dims[0], f->signal_len = v->dims[1];
  if (f->step < 1 || len < 1 || len > f->signal_len)
    return onnx_fail(c, "frame_step %lld and frame length %lld do not fit a signal of %lld",
                     (long long)f->step, (long long)len, (long long)f->signal_len), 0;
  if (f->signal_len > INT32_MAX) return onnx_fail(c, "the signal is too long"), 0;
  f->frames = 1 + (f->signal_len - len) / f->step;
  f->d.len = f->d.n = len;
  f->d.chans = v->dims[2];
  return 1;
}

static tinyml_status_t lower_stft(onnx_ctx_t *c) {
  const onnx_value_t *v = onnx_input(c, 0);
  if (!v || v->dtype != ONNX_FLOAT || v->rank != 3 || (v->dims[2] != 1 && v->dims[2] != 2))
    return onnx_fail(c, "the signal must be a float [batch, length, 1 or 2] tensor");
  if (onnx_numel(v->rank, v->dims) == 0) return onnx_fail(c, "empty tensors are not supported");
  stft_t f = {0};
  int onesided;
  if (!bool_attr(c, "onesided", 1, &onesided) || !stft_shape(c, v, &f)) return c->error;
  if (onesided && f.d.chans == 2)
    return onnx_fail(c, "onesided with a complex signal is not supported (the spec has no such "
                        "output)");
  f.d.bins = onesided ? f.d.len / 2 + 1 : f.d.len;
  int64_t dims[4] = {f.batch, f.frames, f.d.bins, 2};
  if (!check_out(c, 4, dims) || !check_table(c, &f.d)) return c->error;
  double *t = dft_table(c, &f.d);
  if (!t) return c->error;
  const onnx_value_t *w = onnx_input(c, 2);
  tinyml_status_t st;
  if (v->data && (!w || w->data) && fold_ok(f.batch * f.frames, &f.d)) {
    st = stft_fold(c, &f, v->data, w ? w->data : NULL, t, dims);
  } else {
    te_value_t y = stft_emit(c, &f, t, dims);
    st = y.id ? onnx_set_out(c, 0, y) : c->error;
  }
  tinyml__free(c->allocator, t);
  return st;
}

/* ---- MelWeightMatrix ---- */

typedef struct mel {
  int64_t bins, dft_length, rate;
  double lower, upper;
} mel_t;

/* The spectrogram bin of each of the bins + 2 mel edges, as the reference
 * computes them in double: evenly spaced mels back to Hz, then
 * floor((dft_length + 1) * hz / rate). */
static void mel_edges(const mel_t *m, int64_t *edge) {
  double low = 2595.0 * log10(1.0 + m->lower / 700.0);
  double high = 2595.0 * log10(1.0 + m->upper / 700.0);
  double step = (high - low) / (double)(m->bins + 2);
  for (int64_t i = 0; i < m->bins + 2; ++i) {
    double hz = 700.0 * (pow(10.0, ((double)i * step + low) / 2595.0) - 1.0);
    double bin = floor((double)(m->dft_length + 1) * hz / (double)m->rate);
    /* Casting an infinite or huge bin is undefined: -1 is refused below. */
    edge[i] = bin >= 0.0 && bin < 0x1p62 ? (int64_t)bin : -1;
  }
}

/* Triangles rising from edge i to i + 1 and falling to i + 2, written in
 * the reference's order (the falling side overwrites the peak with 1). */
static void mel_fill(const mel_t *m, const int64_t *edge, double *out) {
  for (int64_t i = 0; i < m->bins; ++i) {
    int64_t lo = edge[i], mid = edge[i + 1], hi = edge[i + 2];
    if (mid == lo) out[mid * m->bins + i] = 1.0;
    for (int64_t j = lo; mid > lo && j <= mid; ++j)
      out[j * m->bins + i] = (double)(j - lo) / (double)(mid - lo);
    for (int64_t j = mid; j < hi; ++j) out[j * m->bins + i] = (double)(hi - j) / (double)(hi - mid);
  }
}

static tinyml_status_t lower_mel_weight_matrix(onnx_ctx_t *c) {
  mel_t m;
  if (!const_int(c, 0, "num_mel_bins", &m.bins) || !const_int(c, 1, "dft_length", &m.dft_length) ||
      !const_int(c, 2, "sample_rate", &m.rate) || !const_float(c, 3, "lower_edge_hertz", &m.lower) ||
      !const_float(c, 4, "upper_edge_hertz", &m.upper) || !float_output_type(c))
    return c->error;
  int64_t dims[2] = {m.dft_length / 2 + 1, m.bins};
  if (m.bins < 1 || m.dft_length < 1 || m.rate < 1 || m.bins > MAX_TABLE ||
      onnx_mul_sat(dims[0], dims[1]) > MAX_TABLE)
    return onnx_fail(c, "num_mel_bins %lld, dft_length %lld and sample_rate %lld are not supported",
                     (long long)m.bins, (long long)m.dft_length, (long long)m.rate);
  if (!isfinite(m.lower) || !isfinite(m.upper))
    return onnx_fail(c, "lower_edge_hertz %g and upper_edge_hertz %g must be finite", m.lower, m.upper);
  if (!check_out(c, 2, dims)) return c->error;
  int64_t *edge = tinyml__alloc(c->allocator, (size_t)(m.bins + 2) * 8, 16);
  double *out = tinyml__calloc(c->allocator, (size_t)(dims[0] * dims[1]), 8, 16);
  tinyml_status_t st = edge && out ? TINYML_OK : onnx_oom(c);
  if (!st) {
    mel_edges(&m, edge);
    /* The reference indexes past the matrix there (an error, or a
     * negative index that numpy wraps); the last edge is only an end. */
    for (int64_t i = 0; i < m.bins + 2 && !st; ++i)
      if (edge[i] < 0 || edge[i] >= dims[0] + (i == m.bins + 1))
        st = onnx_fail(c, "mel edge %lld falls on spectrogram bin %lld, outside [0, %lld)",
                       (long long)i, (long long)edge[i], (long long)dims[0]);
  }
  if (!st) {
    mel_fill(&m, edge, out);
    st = out_floats(c, 2, dims, out);
  }
  tinyml__free(c->allocator, edge);
  tinyml__free(c->allocator, out);
  return st;
}

const onnx_lowering_t onnx_lowerings_signal[] = {
    {"DFT", 17, 23, lower_dft},
    {"STFT", 17, 23, lower_stft},
    {"HannWindow", 17, 23, lower_hann},
    {"HammingWindow", 17, 23, lower_hamming},
    {"BlackmanWindow", 17, 23, lower_blackman},
    {"MelWeightMatrix", 17, 23, lower_mel_weight_matrix},
    {NULL, 0, 0, NULL},
};
