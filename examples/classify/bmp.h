/* A small BMP reader: uncompressed 8-bit (palette or grayscale) and 24-bit
 * files of any size, bottom-up or top-down. */
#ifndef CLASSIFY_BMP_H
#define CLASSIFY_BMP_H

#include <stddef.h>
#include <stdint.h>

typedef struct bmp_image {
  uint32_t width, height;
  uint32_t channels; /* 1: gray (8-bit file with a gray palette), 3: RGB */
  uint8_t *pixels;   /* height x width x channels, top row first; malloc'd */
} bmp_image_t;

/* Reads `path`; on failure returns -1 and writes a reason to `why`. */
int bmp_read(const char *path, bmp_image_t *out, char *why, size_t why_size);
void bmp_free(bmp_image_t *image);

/* The whole file, malloc'd; NULL when it cannot be read or is empty. */
void *read_whole_file(const char *path, size_t *size);

#endif
