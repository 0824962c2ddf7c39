/* reference.c - see reference.h. */
#include "reference.h"

#include <math.h>

#define REF_MAX_RANK 8

void ref_weights(float *dst, size_t count, int seed) {
  /* Same integer arithmetic as weight() in gen_models.py; k / 32 is exact. */
  for (size_t i = 0; i < count; ++i) {
    long k = (long)((i * 37 + (size_t)seed * 13) % 31) - 15;
    dst[i] = (float)k / 32.0f;
  }
}

int ref_window_out_h(const ref_window_t *g) {
  return (g->h + g->pad_top + g->pad_bottom - g->kh) / g->stride_y + 1;
}

int ref_window_out_w(const ref_window_t *g) {
  return (g->w + g->pad_left + g->pad_right - g->kw) / g->stride_x + 1;
}

/* Index of input pixel (n, y, x, 0), or -1 when (y, x) lies in the padding. */
static long input_pixel(const ref_window_t *g, int n, int y, int x) {
  if (y < 0 || y >= g->h || x < 0 || x >= g->w) return -1;
  return (((long)n * g->h + y) * g->w + x) * g->c;
}

/* Input row and column under kernel tap (ky, kx) of output (oy, ox). */
static int tap_y(const ref_window_t *g, int oy, int ky) {
  return oy * g->stride_y - g->pad_top + ky;
}

static int tap_x(const ref_window_t *g, int ox, int kx) {
  return ox * g->stride_x - g->pad_left + kx;
}

static double conv_point(const ref_window_t *g, const float *in,
                         const float *weights, int n, int oy, int ox, int o) {
  double acc = 0.0;
  for (int ky = 0; ky < g->kh; ++ky) {
    for (int kx = 0; kx < g->kw; ++kx) {
      long p = input_pixel(g, n, tap_y(g, oy, ky), tap_x(g, ox, kx));
      if (p < 0) continue; /* zero padding contributes nothing */
      const float *w = weights + (((long)o * g->kh + ky) * g->kw + kx) * g->c;
      for (int ic = 0; ic < g->c; ++ic) acc += (double)in[p + ic] * w[ic];
    }
  }
  return acc;
}

void ref_conv2d(const ref_window_t *g, const float *in, const float *weights,
                const float *bias, int out_c, float *out) {
  int oh = ref_window_out_h(g), ow = ref_window_out_w(g);
  for (int n = 0; n < g->n; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int o = 0; o < out_c; ++o)
          *out++ = (float)(bias[o] + conv_point(g, in, weights, n, oy, ox, o));
}

static double depthwise_point(const ref_window_t *g, const float *in,
                              const float *weights, int mult, int n, int oy,
                              int ox, int c, int m) {
  double acc = 0.0;
  for (int ky = 0; ky < g->kh; ++ky) {
    for (int kx = 0; kx < g->kw; ++kx) {
      long p = input_pixel(g, n, tap_y(g, oy, ky), tap_x(g, ox, kx));
      if (p < 0) continue;
      long w = (((long)ky * g->kw + kx) * g->c + c) * mult + m;
      acc += (double)in[p + c] * weights[w];
    }
  }
  return acc;
}

void ref_depthwise_conv2d(const ref_window_t *g, const float *in,
                          const float *weights, const float *bias, int mult,
                          float *out) {
  int oh = ref_window_out_h(g), ow = ref_window_out_w(g);
  for (int n = 0; n < g->n; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < g->c; ++c)
          for (int m = 0; m < mult; ++m)
            *out++ = (float)(bias[c * mult + m] +
                             depthwise_point(g, in, weights, mult, n, oy, ox,
                                             c, m));
}

static float pool_point(const ref_window_t *g, ref_pool_t kind,
                        const float *in, int n, int oy, int ox, int c) {
  double sum = 0.0, max = -INFINITY;
  int count = 0;
  for (int ky = 0; ky < g->kh; ++ky) {
    for (int kx = 0; kx < g->kw; ++kx) {
      long p = input_pixel(g, n, tap_y(g, oy, ky), tap_x(g, ox, kx));
      if (p < 0) continue; /* padding is neither a max candidate nor counted */
      sum += in[p + c];
      max = fmax(max, in[p + c]);
      ++count;
    }
  }
  return (float)(kind == REF_POOL_MAX ? max : sum / count);
}

void ref_pool2d(const ref_window_t *g, ref_pool_t kind, const float *in,
                float *out) {
  int oh = ref_window_out_h(g), ow = ref_window_out_w(g);
  for (int n = 0; n < g->n; ++n)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int c = 0; c < g->c; ++c)
          *out++ = pool_point(g, kind, in, n, oy, ox, c);
}

void ref_matmul(const float *a, const float *b, int batch, int m, int k, int n,
                float *out) {
  for (int bi = 0; bi < batch; ++bi) {
    const float *ab = a + (long)bi * m * k, *bb = b + (long)bi * k * n;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int p = 0; p < k; ++p)
          acc += (double)ab[(long)i * k + p] * bb[(long)p * n + j];
        *out++ = (float)acc;
      }
    }
  }
}

/* Row-major strides of `dims`, with 0 for size-1 dims so that stepping the
 * output coordinate re-reads the broadcast element. */
static void broadcast_strides(int rank, const int *dims, long *strides) {
  long s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = dims[i] == 1 ? 0 : s;
    s *= dims[i];
  }
}

static long element_count(int rank, const int *dims) {
  long n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

/* Offset into a tensor with `strides` of output element `index`. */
static long offset_of(long index, int rank, const int *out_dims,
                      const long *strides) {
  long off = 0;
  for (int i = rank - 1; i >= 0; --i) {
    off += (index % out_dims[i]) * strides[i];
    index /= out_dims[i];
  }
  return off;
}

static float apply_binary(ref_binary_t op, float x, float y) {
  switch (op) {
  case REF_ADD: return x + y;
  case REF_SUB: return x - y;
  case REF_MUL: return x * y;
  }
  return NAN;
}

void ref_broadcast_binary(ref_binary_t op, int rank, const int *out_dims,
                          const float *a, const int *a_dims,
                          const float *b, const int *b_dims, float *out) {
  long sa[REF_MAX_RANK], sb[REF_MAX_RANK];
  broadcast_strides(rank, a_dims, sa);
  broadcast_strides(rank, b_dims, sb);
  long total = element_count(rank, out_dims);
  for (long i = 0; i < total; ++i)
    out[i] = apply_binary(op, a[offset_of(i, rank, out_dims, sa)],
                          b[offset_of(i, rank, out_dims, sb)]);
}

void ref_relu(float *x, size_t count) {
  for (size_t i = 0; i < count; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void ref_transpose(const float *in, int rank, const int *in_dims,
                   const int *perms, float *out) {
  long in_strides[REF_MAX_RANK], strides[REF_MAX_RANK];
  int out_dims[REF_MAX_RANK];
  long s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    in_strides[i] = s;
    s *= in_dims[i];
  }
  /* Output axis i walks input axis perms[i]. */
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perms[i]];
    strides[i] = in_strides[perms[i]];
  }
  long total = element_count(rank, out_dims);
  for (long i = 0; i < total; ++i)
    out[i] = in[offset_of(i, rank, out_dims, strides)];
}

void ref_concat(const float *const *inputs, const int *axis_sizes, int count,
                int outer, int inner, float *out) {
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      long chunk = (long)axis_sizes[i] * inner;
      const float *src = inputs[i] + o * chunk;
      for (long e = 0; e < chunk; ++e) *out++ = src[e];
    }
  }
}

void ref_softmax(const float *in, int rows, int cols, float *out) {
  for (int r = 0; r < rows; ++r) {
    const float *x = in + (long)r * cols;
    double max = -INFINITY, sum = 0.0;
    for (int j = 0; j < cols; ++j) max = fmax(max, x[j]);
    for (int j = 0; j < cols; ++j) sum += exp((double)x[j] - max);
    for (int j = 0; j < cols; ++j)
      out[(long)r * cols + j] = (float)(exp((double)x[j] - max) / sum);
  }
}
