/* Developer tool, not installed: prints the TOSA text the TFLite importer
 * makes of a .tflite file.  Usage: tflite2tosa MODEL.tflite > model.mlir */
#include <stdio.h>
#include <stdlib.h>

#include "lib/importers/tflite/tflite_import.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.tflite\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { fclose(f); return 1; }
  fclose(f);
  char *text = NULL;
  size_t len = 0;
  tinyml_status_t st = tfl_import(buf, (size_t)n, NULL, &text, &len);
  free(buf);
  if (st) {
    fprintf(stderr, "%s\n", tinyml_status_message(st));
    tinyml_status_free(st);
    return 1;
  }
  fwrite(text, 1, len, stdout);
  free(text); /* the default allocator is malloc/free */
  return 0;
}
