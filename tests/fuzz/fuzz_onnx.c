/* libFuzzer target for the ONNX importer: protobuf-c parsing plus every
 * lowering, through a counting allocator so a leak on any path aborts; then,
 * for a small input, the whole compile and a run of its module
 * (fuzz_compile.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_alloc.h"
#include "fuzz_compile.h"
#include "lib/common/alloc.h"
#include "lib/importers/onnx/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_counter_t c = {0};
  tinyml_allocator_t a = fuzz_counting_allocator(&c);
  char *text = NULL;
  size_t len = 0;
  tinyml_status_t st = onnx_import(data, size, &a, &text, &len);
  if (st) tinyml_status_free(st);
  tinyml__free(&a, text);
  if (c.live != 0) abort(); /* a leak on this path */
  fuzz_compile(data, size);
  return 0;
}
