/* The resource limits on an ONNX file's initializers and node count,
 * checked on the protobuf wire format before protobuf-c unpacks it:
 * unpacking copies every initializer's data, so a file holding a 1 GiB
 * constant would otherwise cost a second gigabyte before any check could
 * refuse it.  Reads only lengths, dims and types, and copies nothing.
 *
 * Anything malformed ends the scan quietly: protobuf-c then refuses the
 * file with its own message, so this scan never has to agree with it on
 * what is valid. */
#include <inttypes.h>
#include <stdio.h>

#include "../../common/status.h"
#include "onnx_lower.h"

typedef struct wire {
  const uint8_t *p, *end;
} wire_t;

/* One varint; 0 when it runs out or is longer than 10 bytes. */
static int get_varint(wire_t *w, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 70 && w->p < w->end; shift += 7) {
    uint8_t b = *w->p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* The next field: its number, and for a length-delimited one its bytes
 * (`sub`); other wire types are skipped.  0 at the end or on bad bytes. */
static int next_field(wire_t *w, uint32_t *number, int *is_len, uint64_t *varint,
                      wire_t *sub) {
  uint64_t key, len;
  if (w->p >= w->end || !get_varint(w, &key)) return 0;
  *number = (uint32_t)(key >> 3);
  *is_len = 0;
  switch (key & 7) {
    case 0: return get_varint(w, varint);
    case 1: if (w->end - w->p < 8) return 0; w->p += 8; return 1;
    case 5: if (w->end - w->p < 4) return 0; w->p += 4; return 1;
    case 2:
      if (!get_varint(w, &len) || len > (uint64_t)(w->end - w->p)) return 0;
      *sub = (wire_t){w->p, w->p + len};
      w->p += len;
      *is_len = 1;
      return 1;
    default: return 0; /* groups: long deprecated, left to protobuf-c */
  }
}

static uint64_t mul_sat(uint64_t a, uint64_t b) {
  return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* A TensorProto's claimed bytes (dims times element size, or its data
 * if larger) and its name. */
static uint64_t tensor_claim(wire_t t, char *name, size_t name_size) {
  uint64_t numel = 1, dtype = 0, data = 0, v;
  uint32_t number;
  int is_len;
  wire_t sub;
  name[0] = '\0';
  while (next_field(&t, &number, &is_len, &v, &sub)) {
    if (number == 1 && !is_len) numel = mul_sat(numel, v);
    else if (number == 1) /* packed dims */
      while (sub.p < sub.end && get_varint(&sub, &v)) numel = mul_sat(numel, v);
    else if (number == 2 && !is_len) dtype = v;
    else if (number == 8 && is_len)
      snprintf(name, name_size, "%.*s", (int)(sub.end - sub.p > 100 ? 100 : sub.end - sub.p),
               (const char *)sub.p);
    else if (is_len && ((number >= 4 && number <= 7) || (number >= 9 && number <= 11)))
      data += (uint64_t)(sub.end - sub.p); /* raw_data and the packed *_data */
  }
  size_t es = dtype <= INT32_MAX ? onnx_dtype_size((int32_t)dtype) : 0;
  uint64_t claim = mul_sat(numel, es ? es : 1);
  return claim > data ? claim : data;
}

static tinyml_status_t scan_graph(onnx_ctx_t *c, wire_t g, uint64_t *nodes) {
  uint32_t number;
  int is_len;
  uint64_t v;
  wire_t sub;
  while (next_field(&g, &number, &is_len, &v, &sub)) {
    if (number == 1 && is_len && ++*nodes > c->limits.max_ops)
      return tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                 "onnx: the graph has more than max_ops (%" PRIu64 ") nodes",
                                 c->limits.max_ops);
    if (number != 5 || !is_len) continue;
    char name[112];
    uint64_t bytes = tensor_claim(sub, name, sizeof name);
    if (bytes > c->limits.max_tensor_bytes)
      return tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                 "onnx: initializer '%s' is %" PRIu64 " bytes, more than "
                                 "max_tensor_bytes (%" PRIu64 ")",
                                 name, bytes, c->limits.max_tensor_bytes);
    c->constant_bytes = bytes > UINT64_MAX - c->constant_bytes ? UINT64_MAX
                                                               : c->constant_bytes + bytes;
    if (c->constant_bytes > c->limits.max_constant_bytes)
      return tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                 "onnx: constants reach %" PRIu64 " bytes at initializer "
                                 "'%s', more than max_constant_bytes (%" PRIu64 ")",
                                 c->constant_bytes, name, c->limits.max_constant_bytes);
  }
  return TINYML_OK;
}

tinyml_status_t onnx_prescan(onnx_ctx_t *c, const void *bytes, size_t size) {
  wire_t m = {bytes, (const uint8_t *)bytes + size};
  uint32_t number;
  int is_len;
  uint64_t v, nodes = 0;
  wire_t sub;
  while (next_field(&m, &number, &is_len, &v, &sub))
    if (number == 7 && is_len) TINYML_RETURN_IF_ERROR(scan_graph(c, sub, &nodes));
  /* The decoder counts the initializers again as it copies them. */
  c->constant_bytes = 0;
  return TINYML_OK;
}
