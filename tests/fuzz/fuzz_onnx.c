/* libFuzzer target for the ONNX importer: protobuf-c parsing plus every
 * lowering, through a counting allocator so a leak on any path aborts; then,
 * for a small input, the whole compile and a run of its module
 * (fuzz_compile.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_compile.h"
#include "lib/common/alloc.h"
#include "lib/importers/onnx/onnx_import.h"

typedef struct counter {
  long live;
} counter_t;

static void *count_alloc(void *self, size_t size, size_t alignment) {
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                     size ? size : 1) != 0)
    return NULL;
  ((counter_t *)self)->live++;
  return p;
}

static void count_free(void *self, void *ptr) {
  if (!ptr) return;
  ((counter_t *)self)->live--;
  free(ptr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  counter_t c = {0};
  tinyml_allocator_t a = {&c, count_alloc, count_free};
  char *text = NULL;
  size_t len = 0;
  tinyml_status_t st = onnx_import(data, size, &a, &text, &len);
  if (st) tinyml_status_free(st);
  tinyml__free(&a, text);
  if (c.live != 0) abort(); /* a leak on this path */
  fuzz_compile(data, size);
  return 0;
}
