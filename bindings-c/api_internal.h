/* Private to bindings-c: the layout behind the public opaque blob. */
#ifndef TINYML_BINDINGS_API_INTERNAL_H
#define TINYML_BINDINGS_API_INTERNAL_H

#include "tinyml.h"

struct tinyml_blob_s {
  tinyml_allocator_t allocator;
  void *data;
  size_t size;
};

#endif
