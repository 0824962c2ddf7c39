#include "bmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t le32(const uint8_t *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

void *read_whole_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data ? (size_t)n : 0;
  return data;
}

typedef struct header {
  uint32_t data_offset, width, height, bpp, palette_size;
  int top_down;
  const uint8_t *palette; /* BGRA entries */
} header_t;

static const char *parse_header(const uint8_t *d, size_t n, header_t *h) {
  if (n < 54 || d[0] != 'B' || d[1] != 'M') return "not a BMP file";
  uint32_t info = le32(d + 14);
  if (info < 40 || 14 + (size_t)info > n) return "unsupported BMP header";
  int32_t w = (int32_t)le32(d + 18), hh = (int32_t)le32(d + 22);
  h->bpp = le16(d + 28);
  if (le32(d + 30) != 0) return "compressed BMP files are not supported";
  if (h->bpp != 8 && h->bpp != 24) return "only 8-bit and 24-bit BMP files are supported";
  if (w <= 0 || hh == 0 || w > 16384 || hh > 16384 || hh < -16384) return "bad BMP dimensions";
  h->width = (uint32_t)w;
  h->top_down = hh < 0;
  h->height = (uint32_t)(hh < 0 ? -hh : hh);
  h->data_offset = le32(d + 10);
  h->palette = d + 14 + info;
  h->palette_size = h->bpp == 8 ? (le32(d + 46) ? le32(d + 46) : 256) : 0;
  if (h->palette_size > 256 || 14 + info + 4 * (size_t)h->palette_size > n)
    return "bad BMP palette";
  size_t row = ((size_t)h->width * h->bpp / 8 + 3) & ~(size_t)3;
  if (h->data_offset > n || (n - h->data_offset) / row < h->height) return "BMP file is truncated";
  return NULL;
}

static int gray_palette(const header_t *h) {
  for (uint32_t i = 0; i < h->palette_size; ++i) {
    const uint8_t *e = h->palette + 4 * i;
    if (e[0] != e[1] || e[1] != e[2]) return 0;
  }
  return 1;
}

static void convert_row(const header_t *h, const uint8_t *src, uint8_t *dst, uint32_t channels) {
  for (uint32_t x = 0; x < h->width; ++x) {
    const uint8_t *bgr = h->bpp == 24 ? src + 3 * x : h->palette + 4 * (src[x] % h->palette_size);
    if (channels == 1) {
      dst[x] = bgr[0];
    } else {
      dst[3 * x] = bgr[2];
      dst[3 * x + 1] = bgr[1];
      dst[3 * x + 2] = bgr[0];
    }
  }
}

int bmp_read(const char *path, bmp_image_t *out, char *why, size_t why_size) {
  memset(out, 0, sizeof(*out));
  size_t n;
  uint8_t *d = read_whole_file(path, &n);
  header_t h;
  const char *err = d ? parse_header(d, n, &h) : "cannot read the file";
  if (!err) {
    out->channels = h.bpp == 8 && gray_palette(&h) ? 1 : 3;
    out->pixels = malloc((size_t)h.width * h.height * out->channels);
    if (!out->pixels) err = "out of memory";
  }
  if (err) {
    snprintf(why, why_size, "%s: %s", path, err);
    free(d);
    return -1;
  }
  out->width = h.width;
  out->height = h.height;
  size_t row = ((size_t)h.width * h.bpp / 8 + 3) & ~(size_t)3;
  for (uint32_t y = 0; y < h.height; ++y) {
    uint32_t file_row = h.top_down ? y : h.height - 1 - y;
    convert_row(&h, d + h.data_offset + file_row * row,
                out->pixels + (size_t)y * h.width * out->channels, out->channels);
  }
  free(d);
  return 0;
}

void bmp_free(bmp_image_t *image) {
  free(image->pixels);
  image->pixels = NULL;
}
