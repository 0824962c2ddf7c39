#include "fixture_file.h"

#include <stdio.h>
#include <stdlib.h>

uint8_t *fixture_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0) goto fail;
  long n = ftell(f);
  if (n <= 0 || fseek(f, 0, SEEK_SET) != 0) goto fail;
  uint8_t *data = malloc((size_t)n);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) goto fail;
  fclose(f);
  *size = (size_t)n;
  return data;
fail:
  fprintf(stderr, "cannot read fixture %s\n", path);
  exit(2);
}
