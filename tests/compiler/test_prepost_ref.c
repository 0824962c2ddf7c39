/* Reference pre/post-processing loops; see test_prepost_ref.h. */
#include "test_prepost_ref.h"

#include <math.h>
#include <string.h>

uint32_t ppref_pixel_bytes(tinyml_pixel_format_t format) {
  return format == TINYML_PIXELS_GRAY8 ? 1 : format == TINYML_PIXELS_RGB565 ? 2 : 3;
}

static float luma(float r, float g, float b) {
  float wr = r * 0.299f, wg = g * 0.587f, wb = b * 0.114f;
  return (wr + wg) + wb;
}

static uint32_t widen(uint32_t v, int l, int r) { return (v << l) | (v >> r); }

static void rgb_of(const uint8_t *px, tinyml_pixel_format_t format, float rgb[3]) {
  if (format == TINYML_PIXELS_RGB565) {
    uint32_t lo = px[0], hi = px[1];
    rgb[0] = (float)widen(hi >> 3, 3, 2);
    rgb[1] = (float)widen(((hi & 7) << 3) | (lo >> 5), 2, 4);
    rgb[2] = (float)widen(lo & 31, 3, 2);
  } else if (format == TINYML_PIXELS_GRAY8) {
    rgb[0] = rgb[1] = rgb[2] = (float)px[0];
  } else {
    int bgr = format == TINYML_PIXELS_BGR888;
    rgb[0] = (float)px[bgr ? 2 : 0];
    rgb[1] = (float)px[1];
    rgb[2] = (float)px[bgr ? 0 : 2];
  }
}

void ppref_colour(const uint8_t *image, uint32_t w, uint32_t h, tinyml_pixel_format_t format,
                  uint32_t channels, float *out) {
  uint32_t pb = ppref_pixel_bytes(format);
  for (size_t i = 0; i < (size_t)w * h; ++i) {
    const uint8_t *px = image + i * pb;
    float rgb[3];
    rgb_of(px, format, rgb);
    if (channels == 3) {
      for (int c = 0; c < 3; ++c) out[i * 3 + (size_t)c] = rgb[c];
    } else {
      out[i] = format == TINYML_PIXELS_GRAY8 ? (float)px[0] : luma(rgb[0], rgb[1], rgb[2]);
    }
  }
}

typedef struct taps {
  uint32_t i0, i1;
  float w;
} taps_t;

static taps_t axis(uint32_t i, uint32_t in, uint32_t out, tinyml_resize_t mode) {
  uint64_t num = (uint64_t)i * in;
  taps_t t = {(uint32_t)(num / out), 0, 0.0f};
  t.i1 = t.i0 + 1 < in ? t.i0 + 1 : in - 1;
  if (mode == TINYML_RESIZE_BILINEAR) t.w = (float)(uint32_t)(num % out) / (float)out;
  return t;
}

static float lerp(float a, float b, float w) { return a + (b - a) * w; }

void ppref_resize(const float *in, uint32_t ih, uint32_t iw, uint32_t c, float *out,
                  uint32_t oh, uint32_t ow, tinyml_resize_t mode) {
  for (uint32_t y = 0; y < oh; ++y) {
    taps_t ty = axis(y, ih, oh, mode);
    for (uint32_t x = 0; x < ow; ++x) {
      taps_t tx = axis(x, iw, ow, mode);
      for (uint32_t k = 0; k < c; ++k) {
        const float *r0 = in + (size_t)ty.i0 * iw * c, *r1 = in + (size_t)ty.i1 * iw * c;
        float tl = r0[tx.i0 * c + k], *o = &out[((size_t)y * ow + x) * c + k];
        if (mode == TINYML_RESIZE_NEAREST) {
          *o = tl;
          continue;
        }
        /* A weight of 0 leaves a finite value exactly as it is, so this
         * equals the graph's skipping of axes that keep their size. */
        float top = lerp(tl, r0[tx.i1 * c + k], tx.w);
        float bottom = lerp(r1[tx.i0 * c + k], r1[tx.i1 * c + k], tx.w);
        *o = lerp(top, bottom, ty.w);
      }
    }
  }
}

/* The affine map and rounding of lib/compiler/prepost_pre.c, folded the
 * same way (in double, then rounded to float). */
static void affine(const tinyml_preprocess_t *pre, const ppref_model_input_t *mi, uint32_t c,
                   float *a, float *b) {
  uint32_t k = pre->channel_count == 1 ? 0 : c;
  double mul = 1.0 / (double)pre->std[k], add = -(double)pre->mean[k] / (double)pre->std[k];
  if (mi->dtype != TINYML_DTYPE_FLOAT32) {
    double s = (double)mi->scale;
    mul /= s;
    add = add / s + (double)mi->zero_point - (mi->dtype == TINYML_DTYPE_UINT8 ? 128.0 : 0.0);
  }
  *a = (float)mul;
  *b = (float)add;
}

static float saturate(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

void ppref_normalise(const float *in, size_t count, uint32_t channels,
                     const tinyml_preprocess_t *pre, const ppref_model_input_t *mi, void *out) {
  for (size_t i = 0; i < count; ++i) {
    float a, b;
    affine(pre, mi, (uint32_t)(i % channels), &a, &b);
    float v = in[i] * a;
    v = v + b;
    float r = rintf(v); /* round half to even in the default mode */
    switch (mi->dtype) {
      case TINYML_DTYPE_FLOAT32: ((float *)out)[i] = v; break;
      case TINYML_DTYPE_INT8: ((int8_t *)out)[i] = (int8_t)saturate(r, -128.0f, 127.0f); break;
      case TINYML_DTYPE_UINT8:
        ((uint8_t *)out)[i] = (uint8_t)((int)saturate(r, -128.0f, 127.0f) + 128);
        break;
      default: ((int16_t *)out)[i] = (int16_t)saturate(r, -32768.0f, 32767.0f); break;
    }
  }
}

void ppref_to_chw(const void *in, uint32_t h, uint32_t w, uint32_t c, size_t elem_size,
                  void *out) {
  const uint8_t *src = in;
  uint8_t *dst = out;
  for (uint32_t k = 0; k < c; ++k)
    for (size_t i = 0; i < (size_t)h * w; ++i)
      memcpy(dst + ((size_t)k * h * w + i) * elem_size, src + (i * c + k) * elem_size, elem_size);
}

void ppref_int16_to_float(const int16_t *in, size_t count, float *out) {
  for (size_t i = 0; i < count; ++i) out[i] = (float)in[i];
}

void ppref_image(const uint8_t *image, const tinyml_preprocess_t *pre, uint32_t h, uint32_t w,
                 uint32_t c, int nchw, const ppref_model_input_t *mi, float *scratch,
                 void *model_in) {
  float *colour = scratch, *resized = scratch + (size_t)pre->image_width * pre->image_height * 3;
  ppref_colour(image, pre->image_width, pre->image_height, pre->pixels, c, colour);
  ppref_resize(colour, pre->image_height, pre->image_width, c, resized, h, w, pre->resize);
  if (!nchw) {
    ppref_normalise(resized, (size_t)h * w * c, c, pre, mi, model_in);
    return;
  }
  /* The graph normalises in HWC and then transposes. */
  void *hwc = resized + (size_t)h * w * c;
  ppref_normalise(resized, (size_t)h * w * c, c, pre, mi, hwc);
  ppref_to_chw(hwc, h, w, c, tinyml_dtype_size(mi->dtype), model_in);
}

/* The raw value as a signed number that orders as the output does. */
static int64_t raw_at(const void *raw, tinyml_dtype_t dtype, size_t i) {
  switch (dtype) {
    case TINYML_DTYPE_INT8: return ((const int8_t *)raw)[i];
    case TINYML_DTYPE_UINT8: return ((const uint8_t *)raw)[i];
    case TINYML_DTYPE_INT16: return ((const int16_t *)raw)[i];
    default: return ((const int32_t *)raw)[i];
  }
}

void ppref_dequantize(const void *raw, tinyml_dtype_t dtype, size_t count, float scale,
                      int64_t zero_point, float *out) {
  for (size_t i = 0; i < count; ++i) {
    if (dtype == TINYML_DTYPE_FLOAT32) {
      out[i] = ((const float *)raw)[i];
      continue;
    }
    /* As the graph: uint8 is carried as value - 128 with zero point - 128;
     * the subtraction is exact, the product rounds once. */
    int64_t q = raw_at(raw, dtype, i), zp = zero_point;
    if (dtype == TINYML_DTYPE_UINT8) {
      q -= 128;
      zp -= 128;
    }
    float f = (float)q + (float)-zp;
    out[i] = f * scale;
  }
}

void ppref_softmax(float *x, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    float *v = x + r * n, m = v[0], sum = 0.0f;
    for (size_t i = 1; i < n; ++i) m = v[i] > m ? v[i] : m;
    for (size_t i = 0; i < n; ++i) {
      v[i] = expf(v[i] - m);
      sum += v[i];
    }
    float inv = 1.0f / sum;
    for (size_t i = 0; i < n; ++i) v[i] = v[i] * inv;
  }
}

/* a ranks above b: larger, or equal with the lower index. */
static int above(const void *raw, tinyml_dtype_t dtype, size_t a, size_t b) {
  if (dtype == TINYML_DTYPE_FLOAT32) {
    float x = ((const float *)raw)[a], y = ((const float *)raw)[b];
    return x > y || (x == y && a < b);
  }
  int64_t x = raw_at(raw, dtype, a), y = raw_at(raw, dtype, b);
  return x > y || (x == y && a < b);
}

void ppref_top_k(const void *raw, tinyml_dtype_t dtype, size_t n, uint32_t k, int32_t *out) {
  for (uint32_t s = 0; s < k; ++s) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i) {
      int taken = 0;
      for (uint32_t t = 0; t < s; ++t) taken |= out[t] == (int32_t)i;
      if (!taken && (best == n || above(raw, dtype, i, best))) best = i;
    }
    out[s] = (int32_t)best;
  }
}
