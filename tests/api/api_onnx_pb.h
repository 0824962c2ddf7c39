/* A minimal protobuf writer for the public-API tests that write their ONNX
 * models byte by byte (field numbers are onnx.proto's).  Header-only: each
 * test includes it and builds with no other source. */
#ifndef TINYML_TESTS_API_ONNX_PB_H
#define TINYML_TESTS_API_ONNX_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
  uint8_t data[2048];
  size_t len;
} pb_t;

static inline void pb_varint(pb_t *b, uint64_t v) {
  do {
    b->data[b->len++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

static inline void pb_int(pb_t *b, int field, uint64_t v) {
  pb_varint(b, (uint64_t)field << 3);
  pb_varint(b, v);
}

static inline void pb_bytes(pb_t *b, int field, const void *p, size_t n) {
  pb_varint(b, (uint64_t)field << 3 | 2);
  pb_varint(b, n);
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static inline void pb_str(pb_t *b, int field, const char *s) { pb_bytes(b, field, s, strlen(s)); }
static inline void pb_msg(pb_t *b, int field, const pb_t *m) { pb_bytes(b, field, m->data, m->len); }

/* Appends to `graph`, as field 11 (input) or 12 (output), a ValueInfoProto
 * of a tensor of ONNX type `elem`; each dim is "N" (a number), a name, or
 * "" for a dimension with neither; rank -1 leaves the shape out. */
static inline void pb_value_info(pb_t *graph, int field, const char *name, int elem, int rank,
                                 const char *const *dims) {
  pb_t shape = {0}, tensor = {0}, type = {0}, vi = {0};
  for (int i = 0; i < rank; ++i) {
    pb_t d = {0};
    if (dims[i][0] >= '0' && dims[i][0] <= '9') pb_int(&d, 1, strtoull(dims[i], NULL, 10));
    else if (dims[i][0]) pb_str(&d, 2, dims[i]);
    pb_msg(&shape, 1, &d);
  }
  pb_int(&tensor, 1, (uint64_t)elem);
  if (rank >= 0) pb_msg(&tensor, 2, &shape);
  pb_msg(&type, 1, &tensor);
  pb_str(&vi, 1, name);
  pb_msg(&vi, 2, &type);
  pb_msg(graph, field, &vi);
}

/* The ModelProto (ir_version 8, default-domain opset 13) around `graph`. */
static inline void pb_model(pb_t *model, const pb_t *graph) {
  pb_t opset = {0};
  pb_int(&opset, 2, 13);
  model->len = 0;
  pb_int(model, 1, 8); /* ir_version */
  pb_msg(model, 8, &opset);
  pb_msg(model, 7, graph);
}

#endif
