/* Private to bindings-c: the layout behind the public opaque blob. */
#ifndef TINYML_BINDINGS_API_INTERNAL_H
#define TINYML_BINDINGS_API_INTERNAL_H

#include "tinyml.h"

struct tinyml_blob_s {
  tinyml_allocator_t allocator;
  void *data;
  size_t size;
};

#define TINYML_FILES_MAX 3

struct tinyml_files_s {
  tinyml_allocator_t allocator;
  size_t count;
  char names[TINYML_FILES_MAX][64];
  tinyml_blob_t blobs[TINYML_FILES_MAX];
};

#endif
