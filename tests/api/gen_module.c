/* Build-time helper: compiles one model with the public API and writes the
 * module bytes, so that tests which must not (or cannot) contain the
 * compiler get real modules.  Usage: gen_module MODEL.mlir OUT.tmlm */
#include <stdio.h>
#include <stdlib.h>

#include "api_test_util.h"
#include "tinyml.h"

static int report(tinyml_status_t st, const char *what) {
  fprintf(stderr, "gen_module: %s: %s: %s\n", what,
          tinyml_status_code_name(tinyml_status_code(st)), tinyml_status_message(st));
  tinyml_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.mlir OUT.tmlm\n", argv[0]);
    return 2;
  }
  size_t size = 0;
  char *text = api_read_file(argv[1], &size);
  if (!text) {
    fprintf(stderr, "gen_module: cannot read %s\n", argv[1]);
    return 1;
  }
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(text, size, NULL, &blob);
  free(text);
  if (st) return report(st, argv[1]);
  st = tinyml_blob_write_file(blob, argv[2]);
  tinyml_blob_release(blob);
  return st ? report(st, argv[2]) : 0;
}
