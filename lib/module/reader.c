/* tmod_read: verifies module bytes and fills a tmod_module_t.
 *
 * The bytes are hostile until proven otherwise.  Every position is a
 * uint64_t below the buffer size (itself capped at 2 GiB, the FlatBuffers
 * limit), so sums of a position and a 32-bit quantity never overflow, and
 * each is checked against the size before any byte is loaded.  Loads are
 * assembled byte by byte (little-endian), so neither alignment nor host byte
 * order matters.  Structure is checked as it is walked; the module's own
 * rules (sizes, ranges, checksums) right after each part is read. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "module.h"

#define MAX_BUFFER_SIZE 0x7FFFFFFFu
/* Caps on counts, so a corrupt count cannot ask for a giant allocation
 * (each count is also bounded by the bytes actually present). */
#define MAX_TENSORS (1u << 16)
#define MAX_STEPS (1u << 20)
#define MAX_BINDINGS (1u << 16)
#define MAX_EXECUTABLES (1u << 16)
#define MAX_ARENA_ALIGNMENT 4096u
#define BINDING_BYTES 24u /* struct Binding: uint, uint, ulong, ulong */

typedef struct reader {
  const uint8_t *data;
  uint64_t size;
  const tinyml_allocator_t *user; /* as given, for statuses */
  tinyml_allocator_t alloc;       /* resolved, for the arrays */
} reader_t;

/* A bounds-checked table: where it is, where its vtable is, their sizes. */
typedef struct table {
  uint64_t pos, vtable;
  uint32_t vtable_size, size;
} table_t;

/* A bounds-checked vector: position of element 0, and the count.  An
 * absent vector has present == 0 and count 0. */
typedef struct vec {
  uint64_t pos;
  uint32_t count;
  int present;
} vec_t;

static tinyml_status_t bad(const reader_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static tinyml_status_t bad(const reader_t *r, const char *fmt, ...) {
  char message[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  return tinyml__status_make(r->user, TINYML_STATUS_INVALID_MODULE,
                             "module: %s", message);
}

static tinyml_status_t out_of_memory(const reader_t *r, const char *what,
                                     uint64_t bytes) {
  return tinyml__status_make(r->user, TINYML_STATUS_OUT_OF_MEMORY,
                             "module: out of memory for %s (%" PRIu64 " bytes)",
                             what, bytes);
}

/* Little-endian load of `n` bytes at `pos`; the caller checked bounds. */
static uint64_t load(const reader_t *r, uint64_t pos, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = (v << 8) | r->data[pos + i];
  return v;
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

static int fits_size_t(uint64_t n) { return n == (uint64_t)(size_t)n; }

/* ------------------------------------------------------------------------
 * FlatBuffers structure
 * ---------------------------------------------------------------------- */

static tinyml_status_t open_table(const reader_t *r, uint64_t pos,
                                  const char *what, table_t *t) {
  if (pos % 4 || pos >= r->size || r->size - pos < 4)
    return bad(r, "%s: table offset %" PRIu64 " is misaligned or out of bounds",
               what, pos);
  uint32_t raw = (uint32_t)load(r, pos, 4);
  int64_t soffset = raw <= INT32_MAX ? (int64_t)raw : (int64_t)raw - 0x100000000;
  int64_t vtable = (int64_t)pos - soffset;
  if (vtable < 0 || vtable % 2 || (uint64_t)vtable + 4 > r->size)
    return bad(r, "%s: vtable offset %" PRId64 " is misaligned or out of bounds",
               what, vtable);
  t->pos = pos;
  t->vtable = (uint64_t)vtable;
  t->vtable_size = (uint32_t)load(r, t->vtable, 2);
  t->size = (uint32_t)load(r, t->vtable + 2, 2);
  if (t->vtable_size < 4 || t->vtable_size % 2 ||
      t->vtable + t->vtable_size > r->size)
    return bad(r, "%s: vtable size %u is invalid", what, t->vtable_size);
  if (t->size < 4 || pos + t->size > r->size)
    return bad(r, "%s: table size %u is invalid", what, t->size);
  return TINYML_OK;
}

/* Position of field `id` (`n` bytes), or 0 when the field is absent (0 is
 * never a field position: the root offset lives there). */
static tinyml_status_t field(const reader_t *r, const table_t *t, unsigned id,
                             unsigned n, const char *what, uint64_t *out) {
  *out = 0;
  uint64_t slot = 4 + 2 * (uint64_t)id;
  if (slot + 2 > t->vtable_size) return TINYML_OK;
  uint32_t offset = (uint32_t)load(r, t->vtable + slot, 2);
  if (offset == 0) return TINYML_OK;
  if (offset < 4 || offset + n > t->size)
    return bad(r, "%s: field %u lies outside its table", what, id);
  *out = t->pos + offset;
  return TINYML_OK;
}

/* A scalar field, zero-extended; every default in the schema is 0. */
static tinyml_status_t scalar(const reader_t *r, const table_t *t, unsigned id,
                              unsigned n, const char *what, uint64_t *out) {
  uint64_t at;
  TINYML_RETURN_IF_ERROR(field(r, t, id, n, what, &at));
  *out = at ? load(r, at, n) : 0;
  return TINYML_OK;
}

/* Follows the uoffset in field `id`; *out = 0 when the field is absent. */
static tinyml_status_t follow(const reader_t *r, const table_t *t, unsigned id,
                              const char *what, uint64_t *out) {
  uint64_t at;
  TINYML_RETURN_IF_ERROR(field(r, t, id, 4, what, &at));
  *out = 0;
  if (!at) return TINYML_OK;
  uint64_t offset = load(r, at, 4);
  if (offset == 0 || offset > INT32_MAX || at + offset >= r->size)
    return bad(r, "%s: offset in field %u points outside the module", what, id);
  *out = at + offset;
  return TINYML_OK;
}

/* The vector in field `id`, whose elements are `elem_size` bytes. */
static tinyml_status_t vector(const reader_t *r, const table_t *t, unsigned id,
                              uint32_t elem_size, const char *what, vec_t *v) {
  uint64_t at;
  TINYML_RETURN_IF_ERROR(follow(r, t, id, what, &at));
  v->pos = 0;
  v->count = 0;
  v->present = at != 0;
  if (!at) return TINYML_OK;
  if (at % 4 || r->size - at < 4)
    return bad(r, "%s: vector in field %u is misaligned or out of bounds", what, id);
  v->count = (uint32_t)load(r, at, 4);
  v->pos = at + 4;
  if ((uint64_t)v->count * elem_size > r->size - v->pos)
    return bad(r, "%s: vector in field %u (%u elements) overruns the module",
               what, id, v->count);
  return TINYML_OK;
}

/* The string in field `id`, pointing into the module; "" when absent. */
static tinyml_status_t string(const reader_t *r, const table_t *t, unsigned id,
                              const char *what, const char **out) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, t, id, 1, what, &v));
  *out = "";
  if (!v.present) return TINYML_OK;
  if (v.pos + v.count >= r->size || r->data[v.pos + v.count] != 0)
    return bad(r, "%s: string in field %u is not NUL-terminated", what, id);
  *out = (const char *)r->data + v.pos;
  return TINYML_OK;
}

/* Table number `i` of a vector of tables. */
static tinyml_status_t element_table(const reader_t *r, const vec_t *v,
                                     uint32_t i, const char *what, table_t *t) {
  uint64_t at = v->pos + 4 * (uint64_t)i;
  uint64_t offset = load(r, at, 4);
  if (offset == 0 || offset > INT32_MAX || at + offset >= r->size)
    return bad(r, "%s: offset points outside the module", what);
  return open_table(r, at + offset, what, t);
}

/* A byte vector that must start TMOD_CONSTANT_ALIGNMENT-aligned and match
 * its CRC-32. */
static tinyml_status_t blob(const reader_t *r, const table_t *t, unsigned id,
                            uint32_t checksum, const char *what,
                            const uint8_t **data, uint64_t *size) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, t, id, 1, what, &v));
  *data = v.present ? r->data + v.pos : NULL;
  *size = v.count;
  if (v.present && v.pos % TMOD_CONSTANT_ALIGNMENT)
    return bad(r, "%s: data at offset %" PRIu64 " is not %u-byte aligned", what,
               v.pos, TMOD_CONSTANT_ALIGNMENT);
  uint32_t actual = tmod_crc32(*data, v.count);
  if (actual != checksum)
    return bad(r, "%s: checksum 0x%08" PRIx32 " does not match the data (0x%08" PRIx32 ")",
               what, checksum, actual);
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Tensors
 * ---------------------------------------------------------------------- */

/* Element size, 0 for an invalid dtype.  Range-checked before the
 * conversion, as a hostile value need not fit the enum. */
static uint64_t dtype_size(uint32_t dtype) {
  if (dtype > TINYML_DTYPE_BOOL) return 0;
  return tinyml_dtype_size((tinyml_dtype_t)dtype);
}

static tinyml_status_t read_dims(const reader_t *r, const table_t *t,
                                 const char *what, tmod_tensor_t *out) {
  vec_t dims;
  TINYML_RETURN_IF_ERROR(vector(r, t, 2, 8, what, &dims));
  if (dims.count > TINYML_MAX_RANK)
    return bad(r, "%s: rank %u exceeds the maximum %d", what, dims.count,
               TINYML_MAX_RANK);
  out->rank = dims.count;
  for (uint32_t i = 0; i < dims.count; i++) {
    out->dims[i] = (int64_t)load(r, dims.pos + 8 * (uint64_t)i, 8);
    if (out->dims[i] < 0)
      return bad(r, "%s: dimension %u is negative (%" PRId64 ")", what, i,
                 out->dims[i]);
  }
  return TINYML_OK;
}

/* byte_size must be product(dims) * dtype size, computed without overflow. */
static tinyml_status_t check_byte_size(const reader_t *r, const char *what,
                                       const tmod_tensor_t *t) {
  uint64_t bytes = dtype_size(t->dtype);
  if (!bytes) return bad(r, "%s: dtype %u is invalid", what, t->dtype);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] == 0) bytes = 0;
  for (uint32_t i = 0; i < t->rank && bytes; i++) {
    uint64_t d = (uint64_t)t->dims[i];
    if (bytes > UINT64_MAX / d)
      return bad(r, "%s: the byte size of its dims overflows 64 bits", what);
    bytes *= d;
  }
  if (bytes != t->byte_size)
    return bad(r, "%s: byte size %" PRIu64 " does not match its dims and dtype (%" PRIu64 ")",
               what, t->byte_size, bytes);
  return TINYML_OK;
}

/* Positions of a tensor's quantisation arrays in the module. */
typedef struct quant_src {
  uint64_t scales, zero_points;
} quant_src_t;

static tinyml_status_t read_quantization(const reader_t *r, const table_t *t,
                                         const char *what, tmod_tensor_t *out,
                                         quant_src_t *src) {
  uint64_t at, axis;
  TINYML_RETURN_IF_ERROR(follow(r, t, 4, what, &at));
  if (!at) return TINYML_OK;
  table_t q;
  vec_t scales, zero_points;
  TINYML_RETURN_IF_ERROR(open_table(r, at, what, &q));
  TINYML_RETURN_IF_ERROR(vector(r, &q, 0, 4, what, &scales));
  TINYML_RETURN_IF_ERROR(vector(r, &q, 1, 8, what, &zero_points));
  TINYML_RETURN_IF_ERROR(scalar(r, &q, 2, 4, what, &axis));
  if (scales.count != zero_points.count)
    return bad(r, "%s: %u quantisation scales but %u zero points", what,
               scales.count, zero_points.count);
  out->quant_count = scales.count;
  out->quant_axis = (int32_t)(axis <= INT32_MAX ? (int64_t)axis : (int64_t)axis - 0x100000000);
  src->scales = scales.pos;
  src->zero_points = zero_points.pos;
  if (out->quant_count <= 1) return TINYML_OK;
  if (out->quant_axis < 0 || (uint32_t)out->quant_axis >= out->rank)
    return bad(r, "%s: quantisation axis %" PRId32 " is out of range for rank %u",
               what, out->quant_axis, out->rank);
  if ((uint64_t)out->dims[out->quant_axis] != out->quant_count)
    return bad(r, "%s: %u quantisation parameters but dimension %" PRId32 " has size %" PRId64,
               what, out->quant_count, out->quant_axis, out->dims[out->quant_axis]);
  return TINYML_OK;
}

/* Reads and checks tensor `i`; scales/zero_points are left NULL and their
 * positions returned in *src. */
static tinyml_status_t read_tensor(const reader_t *r, const vec_t *v, uint32_t i,
                                   const char *kind, tmod_tensor_t *out,
                                   quant_src_t *src) {
  char what[32];
  snprintf(what, sizeof(what), "%s %" PRIu32, kind, i);
  memset(out, 0, sizeof(*out));
  memset(src, 0, sizeof(*src));
  table_t t;
  uint64_t dtype;
  TINYML_RETURN_IF_ERROR(element_table(r, v, i, what, &t));
  TINYML_RETURN_IF_ERROR(string(r, &t, 0, what, &out->name));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 1, 4, what, &dtype));
  out->dtype = (uint32_t)dtype;
  TINYML_RETURN_IF_ERROR(read_dims(r, &t, what, out));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 3, 8, what, &out->byte_size));
  TINYML_RETURN_IF_ERROR(check_byte_size(r, what, out));
  return read_quantization(r, &t, what, out, src);
}

/* Quantisation arrays are used in place when the host can read them there
 * (little-endian and aligned), otherwise copied behind the tensor array. */
static int in_place(const reader_t *r, uint64_t pos, size_t align) {
  return host_is_little_endian() && (uintptr_t)(r->data + pos) % align == 0;
}

static uint64_t copy_bytes(const reader_t *r, const tmod_tensor_t *t,
                           const quant_src_t *src) {
  uint64_t n = t->quant_count, bytes = 0;
  if (n && !in_place(r, src->scales, _Alignof(float))) bytes += (4 * n + 7) & ~(uint64_t)7;
  if (n && !in_place(r, src->zero_points, _Alignof(int64_t))) bytes += 8 * n;
  return bytes;
}

static void place_quantization(const reader_t *r, tmod_tensor_t *t,
                               const quant_src_t *src, uint8_t **tail) {
  uint64_t n = t->quant_count;
  if (!n) return;
  if (in_place(r, src->scales, _Alignof(float))) {
    t->scales = (const float *)(const void *)(r->data + src->scales);
  } else {
    float *scales = (float *)(void *)*tail;
    for (uint64_t i = 0; i < n; i++) {
      uint32_t bits = (uint32_t)load(r, src->scales + 4 * i, 4);
      memcpy(&scales[i], &bits, sizeof(bits));
    }
    t->scales = scales;
    *tail += (4 * n + 7) & ~(uint64_t)7;
  }
  if (in_place(r, src->zero_points, _Alignof(int64_t))) {
    t->zero_points = (const int64_t *)(const void *)(r->data + src->zero_points);
  } else {
    int64_t *zero_points = (int64_t *)(void *)*tail;
    for (uint64_t i = 0; i < n; i++)
      zero_points[i] = (int64_t)load(r, src->zero_points + 8 * i, 8);
    t->zero_points = zero_points;
    *tail += 8 * n;
  }
}

/* Reads the inputs (field 6) or outputs (field 7) into one allocation: the
 * tensors, followed by any quantisation arrays that had to be copied.  A
 * first pass verifies and sizes; the second fills. */
static tinyml_status_t read_tensors(const reader_t *r, const table_t *root,
                                    unsigned id, const char *kind,
                                    const tmod_tensor_t **out, uint32_t *count) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, root, id, 4, kind, &v));
  if (v.count > MAX_TENSORS)
    return bad(r, "%u %ss exceed the maximum %u", v.count, kind, MAX_TENSORS);
  if (!v.count) return TINYML_OK;
  uint64_t bytes = (uint64_t)v.count * sizeof(tmod_tensor_t);
  for (uint32_t i = 0; i < v.count; i++) {
    tmod_tensor_t t;
    quant_src_t src;
    TINYML_RETURN_IF_ERROR(read_tensor(r, &v, i, kind, &t, &src));
    bytes += copy_bytes(r, &t, &src);
  }
  if (!fits_size_t(bytes)) return out_of_memory(r, kind, bytes);
  tmod_tensor_t *tensors = tinyml__alloc(&r->alloc, (size_t)bytes,
                                         _Alignof(tmod_tensor_t));
  if (!tensors) return out_of_memory(r, kind, bytes);
  *out = tensors; /* owned by the module from here on */
  *count = v.count;
  uint8_t *tail = (uint8_t *)(tensors + v.count);
  for (uint32_t i = 0; i < v.count; i++) {
    quant_src_t src;
    TINYML_RETURN_IF_ERROR(read_tensor(r, &v, i, kind, &tensors[i], &src));
    place_quantization(r, &tensors[i], &src, &tail);
  }
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Executables
 * ---------------------------------------------------------------------- */

static tinyml_status_t read_executable(const reader_t *r, const vec_t *v,
                                       uint32_t i, tmod_executable_t *out) {
  char what[40];
  snprintf(what, sizeof(what), "executable %" PRIu32, i);
  table_t t;
  uint64_t checksum;
  TINYML_RETURN_IF_ERROR(element_table(r, v, i, what, &t));
  TINYML_RETURN_IF_ERROR(string(r, &t, 0, what, &out->format));
  TINYML_RETURN_IF_ERROR(string(r, &t, 1, what, &out->arch));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 3, 4, what, &checksum));
  out->checksum = (uint32_t)checksum;
  snprintf(what, sizeof(what), "executable %" PRIu32 " image", i);
  TINYML_RETURN_IF_ERROR(
      blob(r, &t, 2, out->checksum, what, &out->image, &out->image_size));
  /* An absent image has the CRC of no bytes (0, the default checksum), so
   * the checksum alone cannot catch a lost field. */
  if (out->image == NULL || out->image_size == 0)
    return bad(r, "executable %" PRIu32 " has no image", i);
  return TINYML_OK;
}

static tinyml_status_t read_executables(const reader_t *r, const table_t *root,
                                        tmod_module_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, root, 11, 4, "executables", &v));
  if (v.count > MAX_EXECUTABLES)
    return bad(r, "%u executables exceed the maximum %u", v.count, MAX_EXECUTABLES);
  if (!v.count) return TINYML_OK;
  uint64_t bytes = (uint64_t)v.count * sizeof(tmod_executable_t);
  tmod_executable_t *exes = tinyml__calloc(&r->alloc, v.count, sizeof(*exes),
                                           _Alignof(tmod_executable_t));
  if (!exes) return out_of_memory(r, "executables", bytes);
  m->executables = exes;
  m->executable_count = v.count;
  for (uint32_t i = 0; i < v.count; i++)
    TINYML_RETURN_IF_ERROR(read_executable(r, &v, i, &exes[i]));
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Steps
 * ---------------------------------------------------------------------- */

static tinyml_status_t step_bindings(const reader_t *r, const vec_t *steps,
                                     uint32_t i, table_t *t, vec_t *bindings) {
  char what[40];
  snprintf(what, sizeof(what), "step %" PRIu32, i);
  TINYML_RETURN_IF_ERROR(element_table(r, steps, i, what, t));
  TINYML_RETURN_IF_ERROR(vector(r, t, 3, BINDING_BYTES, what, bindings));
  if (bindings->count > MAX_BINDINGS)
    return bad(r, "step %" PRIu32 ": %u bindings exceed the maximum %u", i,
               bindings->count, MAX_BINDINGS);
  return TINYML_OK;
}

/* The byte range a binding names must lie inside what it refers to. */
static tinyml_status_t check_binding(const reader_t *r, const tmod_module_t *m,
                                     uint32_t s, uint32_t b,
                                     const tmod_binding_t *bind) {
  uint64_t limit = 0;
  char what[48];
  const char *limit_name = "byte size";
  if (bind->kind == TMOD_BUFFER_INPUT || bind->kind == TMOD_BUFFER_OUTPUT) {
    int input = bind->kind == TMOD_BUFFER_INPUT;
    uint32_t count = input ? m->input_count : m->output_count;
    if (bind->index >= count)
      return bad(r, "step %" PRIu32 " binding %" PRIu32 ": %s index %" PRIu32 " is out of range (%" PRIu32 " %ss)",
                 s, b, input ? "input" : "output", bind->index, count,
                 input ? "input" : "output");
    limit = (input ? m->inputs : m->outputs)[bind->index].byte_size;
    snprintf(what, sizeof(what), "%s %" PRIu32, input ? "input" : "output", bind->index);
  } else if (bind->kind == TMOD_BUFFER_CONSTANT) {
    limit = m->constants_size;
    snprintf(what, sizeof(what), "constant");
    limit_name = "constants size";
  } else if (bind->kind == TMOD_BUFFER_ARENA) {
    limit = m->arena_size;
    snprintf(what, sizeof(what), "arena");
    limit_name = "arena size";
  } else {
    return bad(r, "step %" PRIu32 " binding %" PRIu32 ": buffer kind %" PRIu32 " is invalid",
               s, b, bind->kind);
  }
  if (bind->offset > limit || bind->size > limit - bind->offset)
    return bad(r, "step %" PRIu32 " binding %" PRIu32 ": %s range [%" PRIu64 ", %" PRIu64 "%s) exceeds %s %" PRIu64,
               s, b, what, bind->offset,
               bind->size > UINT64_MAX - bind->offset ? UINT64_MAX : bind->offset + bind->size,
               bind->size > UINT64_MAX - bind->offset ? "+" : "", limit_name, limit);
  return TINYML_OK;
}

static tinyml_status_t check_step(const reader_t *r, const tmod_module_t *m,
                                  uint32_t s, const tmod_step_t *step) {
  for (uint32_t b = 0; b < step->binding_count; b++)
    TINYML_RETURN_IF_ERROR(check_binding(r, m, s, b, &step->bindings[b]));
  if (step->kind == TMOD_STEP_DISPATCH) {
    if (step->executable >= m->executable_count)
      return bad(r, "step %" PRIu32 ": executable %" PRIu32 " is out of range (%" PRIu32 " executables)",
                 s, step->executable, m->executable_count);
    return TINYML_OK;
  }
  if (step->kind != TMOD_STEP_COPY)
    return bad(r, "step %" PRIu32 ": step kind %" PRIu32 " is invalid", s, step->kind);
  if (step->binding_count != 2)
    return bad(r, "step %" PRIu32 ": a copy needs 2 bindings, not %" PRIu32, s,
               step->binding_count);
  const tmod_binding_t *dst = &step->bindings[1];
  if (step->bindings[0].size != dst->size)
    return bad(r, "step %" PRIu32 ": copy source size %" PRIu64 " differs from destination size %" PRIu64,
               s, step->bindings[0].size, dst->size);
  if (dst->kind == TMOD_BUFFER_INPUT || dst->kind == TMOD_BUFFER_CONSTANT)
    return bad(r, "step %" PRIu32 ": copy destination is %s, which is read-only", s,
               dst->kind == TMOD_BUFFER_INPUT ? "an input" : "the constants");
  return TINYML_OK;
}

static tinyml_status_t read_step(const reader_t *r, const tmod_module_t *m,
                                 const vec_t *steps, uint32_t s,
                                 tmod_step_t *out, tmod_binding_t *bindings) {
  table_t t;
  vec_t v;
  uint64_t kind, executable, entry;
  char what[40];
  snprintf(what, sizeof(what), "step %" PRIu32, s);
  TINYML_RETURN_IF_ERROR(step_bindings(r, steps, s, &t, &v));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 0, 4, what, &kind));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 1, 4, what, &executable));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 2, 4, what, &entry));
  out->kind = (uint32_t)kind;
  out->executable = (uint32_t)executable;
  out->entry = (uint32_t)entry;
  out->binding_count = v.count;
  out->bindings = v.count ? bindings : NULL;
  for (uint32_t b = 0; b < v.count; b++) {
    uint64_t at = v.pos + (uint64_t)b * BINDING_BYTES;
    bindings[b].kind = (uint32_t)load(r, at, 4);
    bindings[b].index = (uint32_t)load(r, at + 4, 4);
    bindings[b].offset = load(r, at + 8, 8);
    bindings[b].size = load(r, at + 16, 8);
  }
  return check_step(r, m, s, out);
}

/* Reads the steps into one allocation: the steps, then all their bindings.
 * A first pass counts the bindings; the second fills and checks. */
static tinyml_status_t read_steps(const reader_t *r, const table_t *root,
                                  tmod_module_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, root, 10, 4, "steps", &v));
  if (v.count > MAX_STEPS)
    return bad(r, "%u steps exceed the maximum %u", v.count, MAX_STEPS);
  if (!v.count) return TINYML_OK;
  uint64_t binding_total = 0;
  for (uint32_t s = 0; s < v.count; s++) {
    table_t t;
    vec_t b;
    TINYML_RETURN_IF_ERROR(step_bindings(r, &v, s, &t, &b));
    binding_total += b.count;
  }
  uint64_t bytes = (uint64_t)v.count * sizeof(tmod_step_t) +
                   binding_total * sizeof(tmod_binding_t);
  if (!fits_size_t(bytes)) return out_of_memory(r, "steps", bytes);
  tmod_step_t *steps = tinyml__alloc(&r->alloc, (size_t)bytes, _Alignof(tmod_binding_t));
  if (!steps) return out_of_memory(r, "steps", bytes);
  m->steps = steps; /* owned by the module from here on */
  m->step_count = v.count;
  tmod_binding_t *next = (tmod_binding_t *)(void *)(steps + v.count);
  for (uint32_t s = 0; s < v.count; s++) {
    TINYML_RETURN_IF_ERROR(read_step(r, m, &v, s, &steps[s], next));
    next += steps[s].binding_count;
  }
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Module
 * ---------------------------------------------------------------------- */

static tinyml_status_t read_header(const reader_t *r, table_t *root) {
  if (r->size < 8)
    return bad(r, "%" PRIu64 " bytes are too few for a module", r->size);
  if (r->size > MAX_BUFFER_SIZE)
    return bad(r, "%" PRIu64 " bytes exceed the 2 GiB FlatBuffer limit", r->size);
  if (memcmp(r->data + 4, TMOD_FILE_IDENTIFIER, 4) != 0)
    return bad(r, "wrong file identifier (expected \"%s\")", TMOD_FILE_IDENTIFIER);
  uint64_t pos = load(r, 0, 4);
  if (pos < 8) return bad(r, "root table offset %" PRIu64 " is invalid", pos);
  return open_table(r, pos, "root table", root);
}

static tinyml_status_t read_root_scalars(const reader_t *r, const table_t *t,
                                         tmod_module_t *m) {
  uint64_t version, alignment;
  TINYML_RETURN_IF_ERROR(scalar(r, t, 0, 4, "module", &version));
  if (version != TMOD_FORMAT_VERSION)
    return bad(r, "format version %" PRIu64 " is not supported (expected %u)",
               version, TMOD_FORMAT_VERSION);
  m->format_version = (uint32_t)version;
  TINYML_RETURN_IF_ERROR(string(r, t, 1, "target", &m->target));
  TINYML_RETURN_IF_ERROR(string(r, t, 2, "cpu", &m->cpu));
  TINYML_RETURN_IF_ERROR(string(r, t, 3, "features", &m->features));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 4, 8, "module", &m->arena_size));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 5, 4, "module", &alignment));
  if (alignment == 0 || (alignment & (alignment - 1)) ||
      alignment > MAX_ARENA_ALIGNMENT)
    return bad(r, "arena alignment %" PRIu64 " is not a power of two up to %u",
               alignment, MAX_ARENA_ALIGNMENT);
  m->arena_alignment = (uint32_t)alignment;
  return TINYML_OK;
}

static tinyml_status_t read_module(const reader_t *r, tmod_module_t *m) {
  table_t root;
  uint64_t checksum;
  TINYML_RETURN_IF_ERROR(read_header(r, &root));
  TINYML_RETURN_IF_ERROR(read_root_scalars(r, &root, m));
  TINYML_RETURN_IF_ERROR(scalar(r, &root, 9, 4, "module", &checksum));
  m->constants_checksum = (uint32_t)checksum;
  TINYML_RETURN_IF_ERROR(blob(r, &root, 8, m->constants_checksum, "constants",
                              &m->constants, &m->constants_size));
  TINYML_RETURN_IF_ERROR(read_executables(r, &root, m));
  TINYML_RETURN_IF_ERROR(
      read_tensors(r, &root, 6, "input", &m->inputs, &m->input_count));
  TINYML_RETURN_IF_ERROR(
      read_tensors(r, &root, 7, "output", &m->outputs, &m->output_count));
  return read_steps(r, &root, m); /* last: it checks against all the rest */
}

tinyml_status_t tmod_read(const uint8_t *data, size_t size,
                          const tinyml_allocator_t *allocator,
                          tmod_module_t *out_module) {
  if (!data || !out_module)
    return tinyml__status_make(allocator, TINYML_STATUS_INVALID_ARGUMENT,
                               "module: NULL argument");
  reader_t r = {data, size, allocator, tinyml__allocator_or_default(allocator)};
  tmod_module_t m;
  memset(&m, 0, sizeof(m));
  tinyml_status_t status = read_module(&r, &m);
  if (status) {
    tmod_read_free(&m, allocator);
    return status;
  }
  *out_module = m;
  return TINYML_OK;
}

void tmod_read_free(tmod_module_t *module, const tinyml_allocator_t *allocator) {
  if (!module) return;
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  /* Each array owns its trailing data (quantisation copies, bindings).
   * The fields are const for the module's users; the reader owns them. */
  tinyml__free(&a, (void *)(uintptr_t)module->inputs);
  tinyml__free(&a, (void *)(uintptr_t)module->outputs);
  tinyml__free(&a, (void *)(uintptr_t)module->steps);
  tinyml__free(&a, (void *)(uintptr_t)module->executables);
  memset(module, 0, sizeof(*module));
}
