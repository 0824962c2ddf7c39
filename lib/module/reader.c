/* tmod_read: verifies module bytes and fills a tmod_module_t.
 *
 * The bytes are hostile until proven otherwise.  The buffer is capped at
 * 2^31 - 1 bytes (the FlatBuffers limit) before anything else is read, so
 * every position is a size_t below 2^31 and a position plus any quantity
 * below 2^31 fits even a 32-bit size_t; products of 32-bit counts are
 * compared by division instead.  Each position is checked against the size
 * before any byte is loaded.  Loads are assembled byte by byte
 * (little-endian), so neither alignment nor host byte order matters.
 * Structure is checked as it is walked; the module's own rules (sizes,
 * ranges, checksums) right after each part is read.
 *
 * Problems are sticky: the first one is recorded in the reader, and from
 * then on every helper returns an empty value (position 0, count 0, "", the
 * empty table), which its caller may use without checking, since nothing is
 * read through an empty value.  Loops stop at the first problem, and nothing
 * is allocated after one.
 *
 * This file is a large part of a Cortex-M runtime, hence the shape of the
 * code: size_t positions rather than uint64_t, sticky problems rather than a
 * check after every call, tables that carry their reader and name, and
 * names formatted only for a message. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "reader_internal.h"

#define MAX_BUFFER_SIZE 0x7FFFFFFFu
/* Caps on counts, so a corrupt count cannot ask for a giant allocation
 * (each count is also bounded by the bytes actually present). */
#define MAX_TENSORS (1u << 16)
#define MAX_STEPS (1u << 20)
#define MAX_BINDINGS (1u << 16)
#define MAX_EXECUTABLES (1u << 16)
#define MAX_ARENA_ALIGNMENT 4096u
#define BINDING_BYTES 24u /* struct Binding: uint, uint, ulong, ulong */

static void name_of(const name_t *n, char *out, size_t size) {
  snprintf(out, size, n->what, n->index, n->sub);
}

/* Records the first problem (later ones are its consequences) and returns
 * 0, the empty value of every helper.  The message is "module: ", then for
 * nbad name `n` and for tbad the name of table `t`, and ": ", then the
 * text.  Without TINYML_STATUS_VALUES (freestanding builds, see status.h)
 * it keeps the name and the text but not the values. */
#if TINYML_STATUS_VALUES
TMOD_READER_FN int tmod__bad_at(reader_t *r, const name_t *n, const char *fmt, ...) {
  if (r->status) return 0;
  char message[256], where[48];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  if (n) name_of(n, where, sizeof(where));
  r->status = n ? tinyml__status_make(r->user, TINYML_STATUS_INVALID_MODULE,
                                      "module: %s%s: %s", TMOD_SCOPE(r), where, message)
                : tinyml__status_make(r->user, TINYML_STATUS_INVALID_MODULE,
                                      "module: %s", message);
  return 0;
}
#else
/* Cold: the paths to it are errors, so they need be short, not fast. */
__attribute__((cold))
TMOD_READER_FN int tmod__bad_at(reader_t *r, const name_t *n, const char *text) {
  if (r->status) return 0;
  char where[48], prefix[64];
  where[0] = 0;
  if (n) name_of(n, where, sizeof(where));
  snprintf(prefix, sizeof(prefix), n ? "module: %s: " : "module: ", where);
  r->status = tinyml__status_text(r->user, TINYML_STATUS_INVALID_MODULE, prefix, text);
  return 0;
}
#endif

/* Only called before any problem: nothing is allocated after one. */
TMOD_READER_FN void tmod__out_of_memory(reader_t *r, const char *what, uint64_t bytes) {
  r->status = TINYML_STATUS_MAKE(r->user, TINYML_STATUS_OUT_OF_MEMORY,
                                 "module: out of memory for %s (%" PRIu64 " bytes)",
                                 what, bytes);
}

/* Little-endian loads at `pos`; the caller checked bounds.  Always inlined:
 * a call costs more code than the load it makes (GCC -Os keeps them out of
 * line otherwise). */
#define LOAD_FN static inline __attribute__((always_inline))
LOAD_FN uint32_t ld16(const reader_t *r, size_t pos) {
  const uint8_t *p = r->data + pos;
  return (uint32_t)(p[0] | p[1] << 8);
}
LOAD_FN uint32_t ld32(const reader_t *r, size_t pos) {
  const uint8_t *p = r->data + pos;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
LOAD_FN uint64_t ld64(const reader_t *r, size_t pos) {
  return ld32(r, pos) | (uint64_t)ld32(r, pos + 4) << 32;
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

/* Opens the table at `pos` into `t`, whose reader and name are set: 1, or
 * 0 and the empty table (also once an earlier problem was found). */
static int open_table(table_t *t, size_t pos) {
  reader_t *r = t->r;
  t->pos = t->vtable = 0;
  t->vtable_size = t->size = 0;
  if (r->status) return 0;
  if (pos % 4 || pos >= r->size || r->size - pos < 4)
    return tbad(t, "table offset %zu is misaligned or out of bounds", pos);
  uint32_t raw = ld32(r, pos);
  int64_t soffset = raw <= INT32_MAX ? (int64_t)raw : (int64_t)raw - 0x100000000;
  /* pos - soffset modulo size_t: one that lies before the buffer comes out
   * at 2^31 or more, beyond any buffer, so one comparison refuses both. */
  size_t vtable = pos - (size_t)soffset;
  if (vtable % 2 || vtable > r->size - 4)
    return tbad(t, "vtable offset %" PRId64 " is misaligned or out of bounds",
                (int64_t)pos - soffset);
  uint32_t vtable_size = ld16(r, vtable);
  uint32_t size = ld16(r, vtable + 2);
  if (vtable_size < 4 || vtable_size % 2 || vtable + vtable_size > r->size)
    return tbad(t, "vtable size %u is invalid", vtable_size);
  if (size < 4 || pos + size > r->size)
    return tbad(t, "table size %u is invalid", size);
  t->pos = pos;
  t->vtable = vtable;
  t->vtable_size = vtable_size;
  t->size = size;
  return 1;
}

/* Position of field `id` (`n` bytes), or 0 when the field is absent (0 is
 * never a field position: the root offset lives there). */
static size_t field(const table_t *t, unsigned id, unsigned n) {
  size_t slot = 4 + 2 * (size_t)id;
  if (slot + 2 > t->vtable_size) return 0;
  uint32_t offset = ld16(t->r, t->vtable + slot);
  if (offset == 0) return 0;
  if (offset < 4 || offset + n > t->size)
    return tbad(t, "field %u lies outside its table", id);
  return t->pos + offset;
}

/* Scalar fields; every default in the schema is 0. */
static uint32_t u32_at(const table_t *t, unsigned id) {
  size_t at = field(t, id, 4);
  return at ? ld32(t->r, at) : 0;
}
static uint64_t u64_at(const table_t *t, unsigned id) {
  size_t at = field(t, id, 8);
  return at ? ld64(t->r, at) : 0;
}

/* Follows the uoffset in field `id`; 0 when the field is absent. */
static size_t follow(const table_t *t, unsigned id) {
  size_t at = field(t, id, 4);
  if (!at) return 0;
  uint32_t offset = ld32(t->r, at);
  if (offset == 0 || offset > INT32_MAX || at + offset >= t->r->size)
    return tbad(t, "offset in field %u points outside the module", id);
  return at + offset;
}

/* The vector in field `id`, whose elements are `elem_size` bytes. */
TMOD_READER_FN void tmod__vector(const table_t *t, unsigned id, uint32_t elem_size, vec_t *v) {
  reader_t *r = t->r;
  size_t at = follow(t, id);
  *v = (vec_t){0, 0, 0};
  if (!at) return;
  if (at % 4 || r->size - at < 4) {
    tbad(t, "vector in field %u is misaligned or out of bounds", id);
    return;
  }
  uint32_t count = ld32(r, at);
  if (count > (r->size - at - 4) / elem_size) {
    tbad(t, "vector in field %u (%u elements) overruns the module", id, count);
    return;
  }
  *v = (vec_t){at + 4, count, 1};
}

/* The string in field `id`, pointing into the module; "" when absent. */
TMOD_READER_FN const char *tmod__string(const table_t *t, unsigned id) {
  const reader_t *r = t->r;
  vec_t v;
  tmod__vector(t, id, 1, &v);
  if (!v.present) return "";
  if (v.pos + v.count >= r->size || r->data[v.pos + v.count] != 0) {
    tbad(t, "string in field %u is not NUL-terminated", id);
    return "";
  }
  return (const char *)r->data + v.pos;
}

/* Table number `i` (< v->count) of a vector of tables, named `what`
 * (which formats `i`). */
TMOD_READER_FN int tmod__element_table(reader_t *r, const vec_t *v, uint32_t i,
                         const char *what, table_t *t) {
  size_t at = v->pos + 4 * (size_t)i;
  uint32_t offset = ld32(r, at);
  t->r = r; /* open_table sets the rest */
  t->name = (name_t){what, i, 0};
  if (offset == 0 || offset > INT32_MAX || at + offset >= r->size)
    tbad(t, "offset points outside the module");
  return open_table(t, at + offset); /* empty after a problem */
}

/* A byte vector of table `t` that must start TMOD_CONSTANT_ALIGNMENT-aligned
 * and match its CRC-32; its messages are named `what` (a name format, as in
 * table_t, of t's index). */
static void blob(const table_t *t, unsigned id, uint32_t checksum,
                 const char *what, const uint8_t **data, uint64_t *size) {
  reader_t *r = t->r;
  table_t named = *t;
  named.name.what = what;
  vec_t v;
  tmod__vector(&named, id, 1, &v);
  *data = v.present ? r->data + v.pos : NULL;
  *size = v.count;
  if (v.present && v.pos % TMOD_CONSTANT_ALIGNMENT) {
    tbad(&named, "data at offset %zu is not %u-byte aligned", v.pos,
         TMOD_CONSTANT_ALIGNMENT);
    return;
  }
  uint32_t actual = tmod_crc32(*data, v.count);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  /* tests/fuzz/fuzz_module.c: mutated images must reach the ELF loader. */
  actual = checksum;
#endif
  if (actual != checksum)
    tbad(&named, "checksum 0x%08" PRIx32 " does not match the data (0x%08" PRIx32 ")",
         checksum, actual);
}

/* ------------------------------------------------------------------------
 * Tensors
 * ---------------------------------------------------------------------- */

/* Element size, 0 for an invalid dtype.  Range-checked before the
 * conversion, as a hostile value need not fit the enum. */
static uint64_t dtype_size(uint32_t dtype) {
  if (dtype > TINYML_DTYPE_UINT64) return 0;
  return tinyml_dtype_size((tinyml_dtype_t)dtype);
}

static void read_dims(const table_t *t, tmod_tensor_t *out) {
  vec_t dims;
  tmod__vector(t, 2, 8, &dims);
  if (dims.count > TINYML_MAX_RANK) {
    tbad(t, "rank %u exceeds the maximum %d", dims.count, TINYML_MAX_RANK);
    return;
  }
  out->rank = dims.count;
  for (uint32_t i = 0; i < dims.count; i++) {
    out->dims[i] = (int64_t)ld64(t->r, dims.pos + 8 * (size_t)i);
    if (out->dims[i] < 0) {
      tbad(t, "dimension %u is negative (%" PRId64 ")", i, out->dims[i]);
      return;
    }
  }
}

/* byte_size must be product(dims) * dtype size, computed without overflow. */
static void check_byte_size(const table_t *t, const tmod_tensor_t *x) {
  uint64_t bytes = dtype_size(x->dtype);
  if (!bytes) {
    tbad(t, "dtype %u is invalid", x->dtype);
    return;
  }
  for (uint32_t i = 0; i < x->rank; i++)
    if (x->dims[i] == 0) bytes = 0;
  for (uint32_t i = 0; i < x->rank && bytes; i++) {
    uint64_t d = (uint64_t)x->dims[i];
    if (bytes > UINT64_MAX / d) {
      tbad(t, "the byte size of its dims overflows 64 bits");
      return;
    }
    bytes *= d;
  }
  if (bytes != x->byte_size)
    tbad(t, "byte size %" PRIu64 " does not match its dims and dtype (%" PRIu64 ")",
         x->byte_size, bytes);
}

/* Quantisation arrays are used in place when the host can read them there
 * (little-endian and aligned), otherwise copied behind the tensor array.
 * A freestanding runtime leaves the copying out and refuses such a module
 * instead: FlatBuffers aligns every vector to its element size, so in a
 * well-formed module at a 16-byte aligned address (as tinyml_module_load
 * requires) on a little-endian core they are always in place. */
#if TINYML_FREESTANDING
#define COPIES_QUANTIZATION 0
#else
#define COPIES_QUANTIZATION 1
#endif

static int in_place(const reader_t *r, size_t pos, size_t align) {
  return host_is_little_endian() && (uintptr_t)(r->data + pos) % align == 0;
}

/* Positions of a tensor's quantisation arrays in the module. */
typedef struct quant_src {
  size_t scales, zero_points;
} quant_src_t;

static void read_quantization(const table_t *t, tmod_tensor_t *out, quant_src_t *src) {
  size_t at = follow(t, 4);
  if (!at) return;
  table_t q = *t; /* named as its tensor */
  vec_t scales, zero_points;
  open_table(&q, at);
  tmod__vector(&q, 0, 4, &scales);
  tmod__vector(&q, 1, 8, &zero_points);
  uint32_t raw_axis = u32_at(&q, 2);
  if (scales.count != zero_points.count) {
    tbad(t, "%u quantisation scales but %u zero points", scales.count,
         zero_points.count);
    return;
  }
  out->quant_count = scales.count;
  out->quant_axis = (int32_t)(raw_axis <= INT32_MAX ? (int64_t)raw_axis
                                                    : (int64_t)raw_axis - 0x100000000);
  src->scales = scales.pos;
  src->zero_points = zero_points.pos;
  uint32_t n = out->quant_count;
  int32_t axis = out->quant_axis;
  if (n > 1 && (axis < 0 || (uint32_t)axis >= out->rank))
    tbad(t, "quantisation axis %" PRId32 " is out of range for rank %u", axis,
         out->rank);
  else if (n > 1 && (uint64_t)out->dims[axis] != n)
    tbad(t, "%u quantisation parameters but dimension %" PRId32 " has size %" PRId64,
         n, axis, out->dims[axis]);
  else if (!COPIES_QUANTIZATION && n &&
           !(in_place(t->r, src->scales, _Alignof(float)) &&
             in_place(t->r, src->zero_points, _Alignof(int64_t))))
    tbad(t, "quantisation arrays are misaligned");
}

/* An input's fixed value: exactly byte_size bytes, used in place (bytes
 * need no alignment).  An output has none: nothing would check it. */
static void read_fixed_value(const table_t *t, tmod_tensor_t *out, int is_input) {
  vec_t v;
  tmod__vector(t, 5, 1, &v);
  /* One test for both rules: no u32 count equals an output's UINT64_MAX. */
  uint64_t allowed = is_input ? out->byte_size : UINT64_MAX;
  if (v.present && v.count != allowed)
    tbad(t, "'%s' has a fixed value of %u bytes; only an input may have one, of its "
            "byte size %" PRIu64, out->name, v.count, out->byte_size);
  out->fixed_value = v.present ? t->r->data + v.pos : NULL;
}

/* Reads and checks tensor `i`; scales/zero_points are left NULL and their
 * positions returned in *src. */
static void read_tensor(reader_t *r, const vec_t *v, uint32_t i, const char *what,
                        int is_input, tmod_tensor_t *out, quant_src_t *src) {
  memset(out, 0, sizeof(*out));
  memset(src, 0, sizeof(*src));
  table_t t;
  tmod__element_table(r, v, i, what, &t);
  out->name = tmod__string(&t, 0);
  out->dtype = u32_at(&t, 1);
  read_dims(&t, out);
  out->byte_size = u64_at(&t, 3);
  check_byte_size(&t, out);
  read_quantization(&t, out, src);
  read_fixed_value(&t, out, is_input);
}

static uint64_t copy_bytes(const reader_t *r, const tmod_tensor_t *t,
                           const quant_src_t *src) {
  uint64_t n = COPIES_QUANTIZATION ? t->quant_count : 0, bytes = 0;
  if (n && !in_place(r, src->scales, _Alignof(float))) bytes += (4 * n + 7) & ~(uint64_t)7;
  if (n && !in_place(r, src->zero_points, _Alignof(int64_t))) bytes += 8 * n;
  return bytes;
}

static void place_quantization(const reader_t *r, tmod_tensor_t *t,
                               const quant_src_t *src, uint8_t **tail) {
  size_t n = t->quant_count;
  if (!n) return;
  if (!COPIES_QUANTIZATION || in_place(r, src->scales, _Alignof(float))) {
    t->scales = (const float *)(const void *)(r->data + src->scales);
  } else {
    float *scales = (float *)(void *)*tail;
    for (size_t i = 0; i < n; i++) {
      uint32_t bits = ld32(r, src->scales + 4 * i);
      memcpy(&scales[i], &bits, sizeof(bits));
    }
    t->scales = scales;
    *tail += (4 * n + 7) & ~(size_t)7;
  }
  if (!COPIES_QUANTIZATION || in_place(r, src->zero_points, _Alignof(int64_t))) {
    t->zero_points = (const int64_t *)(const void *)(r->data + src->zero_points);
  } else {
    int64_t *zero_points = (int64_t *)(void *)*tail;
    for (size_t i = 0; i < n; i++)
      zero_points[i] = (int64_t)ld64(r, src->zero_points + 8 * i);
    t->zero_points = zero_points;
    *tail += 8 * n;
  }
}

/* Reads the inputs (field 6) or outputs (field 7) into one allocation: the
 * tensors, followed by any quantisation arrays that had to be copied.  When
 * arrays may be copied, a first pass verifies and sizes them; the second,
 * over the same verified bytes, fills.  Otherwise the one pass does both. */
static void read_tensors(table_t *root, unsigned id, const char *kind,
                         const char *name, const tmod_tensor_t **out,
                         uint32_t *count) {
  reader_t *r = root->r;
  vec_t v;
  root->name.what = kind;
  tmod__vector(root, id, 4, &v);
  if (v.count > MAX_TENSORS) {
    bad(r, "%u %ss exceed the maximum %u", v.count, kind, MAX_TENSORS);
    return;
  }
  uint64_t bytes = (uint64_t)v.count * sizeof(tmod_tensor_t);
  for (uint32_t i = 0; COPIES_QUANTIZATION && i < v.count && !r->status; i++) {
    tmod_tensor_t t;
    quant_src_t src;
    read_tensor(r, &v, i, name, id == 6, &t, &src);
    bytes += copy_bytes(r, &t, &src);
  }
  if (r->status || !v.count) return;
  tmod_tensor_t *tensors = NULL;
  if (fits_size_t(bytes))
    tensors = tinyml__alloc(&r->alloc, (size_t)bytes, _Alignof(tmod_tensor_t));
  if (!tensors) {
    tmod__out_of_memory(r, kind, bytes);
    return;
  }
  *out = tensors; /* owned by the module from here on */
  *count = v.count;
  uint8_t *tail = (uint8_t *)(tensors + v.count);
  for (uint32_t i = 0; i < v.count && !r->status; i++) {
    quant_src_t src;
    read_tensor(r, &v, i, name, id == 6, &tensors[i], &src);
    place_quantization(r, &tensors[i], &src, &tail);
  }
}

/* ------------------------------------------------------------------------
 * Executables
 * ---------------------------------------------------------------------- */

TMOD_READER_FN void tmod__read_executable(reader_t *r, const vec_t *v, uint32_t i,
                            tmod_executable_t *out) {
  table_t t;
  tmod__element_table(r, v, i, "executable %u", &t);
  out->format = tmod__string(&t, 0);
  out->arch = tmod__string(&t, 1);
  out->checksum = u32_at(&t, 3);
  blob(&t, 2, out->checksum, "executable %u image", &out->image, &out->image_size);
  /* An absent image has the CRC of no bytes (0, the default checksum), so
   * the checksum alone cannot catch a lost field. */
  if (out->image_size == 0) /* also when absent: blob gives size 0 */
    bad(r, "executable %" PRIu32 " has no image", i);
}

static void read_executables(table_t *root, tmod_module_t *m) {
  reader_t *r = root->r;
  vec_t v;
  root->name.what = "executables";
  tmod__vector(root, 11, 4, &v);
  if (v.count > MAX_EXECUTABLES) {
    bad(r, "%u executables exceed the maximum %u", v.count, MAX_EXECUTABLES);
    return;
  }
  if (r->status || !v.count) return;
  tmod_executable_t *exes = tinyml__calloc(&r->alloc, v.count, sizeof(*exes),
                                           _Alignof(tmod_executable_t));
  if (!exes) {
    tmod__out_of_memory(r, "executables", (uint64_t)v.count * sizeof(*exes));
    return;
  }
  m->executables = exes;
  m->executable_count = v.count;
  for (uint32_t i = 0; i < v.count && !r->status; i++)
    tmod__read_executable(r, &v, i, &exes[i]);
}


/* ------------------------------------------------------------------------
 * Steps
 * ---------------------------------------------------------------------- */

/* Opens step `i` and its bindings vector. */
static void step_bindings(reader_t *r, const vec_t *steps, uint32_t i, table_t *t,
                          vec_t *bindings) {
  tmod__element_table(r, steps, i, "step %u", t);
  tmod__vector(t, 3, BINDING_BYTES, bindings);
  if (bindings->count > MAX_BINDINGS)
    tbad(t, "%u bindings exceed the maximum %u", bindings->count, MAX_BINDINGS);
}

/* What a binding may refer to, by tmod_buffer_kind_t. */
static const char *const kind_names[] = {"input", "output", "constant", "arena", "state"};

/* The byte range binding `b` of step `step` names must lie inside what it
 * refers to. */
static void check_binding(const table_t *step, const tmod_module_t *m, uint32_t b,
                          const tmod_binding_t *bind) {
  reader_t *r = step->r;
  const name_t n = {"step %u binding %u", step->name.index, b};
  if (bind->kind > TMOD_BUFFER_STATE) {
    nbad(r, &n, "buffer kind %" PRIu32 " is invalid", bind->kind);
    return;
  }
  const char *name = kind_names[bind->kind];
  const char *what = name;
  const char *limit_name = "byte size";
  uint64_t limit;
  char io[24];
  if (bind->kind == TMOD_BUFFER_INPUT || bind->kind == TMOD_BUFFER_OUTPUT) {
    int input = bind->kind == TMOD_BUFFER_INPUT;
    uint32_t count = input ? m->input_count : m->output_count;
    if (bind->index >= count) {
      nbad(r, &n, "%s index %" PRIu32 " is out of range (%" PRIu32 " %ss)", name,
           bind->index, count, name);
      return;
    }
    limit = (input ? m->inputs : m->outputs)[bind->index].byte_size;
    if (TINYML_STATUS_VALUES) { /* the index only shows with values */
      snprintf(io, sizeof(io), "%s %" PRIu32, name, bind->index);
      what = io;
    }
  } else if (bind->kind != TMOD_BUFFER_ARENA) {
    int state = bind->kind == TMOD_BUFFER_STATE;
    limit = state ? m->state_size : m->constants_size;
    limit_name = state ? "state size" : "constants size";
  } else {
    if (bind->index >= m->region_count) {
      nbad(r, &n, "arena region %" PRIu32 " is out of range (%" PRIu32 " regions)",
           bind->index, m->region_count);
      return;
    }
    limit = m->region_sizes[bind->index];
    limit_name = bind->index ? "arena region size" : "arena size";
  }
  if (bind->offset <= limit && bind->size <= limit - bind->offset) return;
  uint64_t end = bind->offset + bind->size;
  int wraps = end < bind->offset; /* shown as UINT64_MAX "+" */
  nbad(r, &n, "%s range [%" PRIu64 ", %" PRIu64 "%s) exceeds %s %" PRIu64, what,
       bind->offset, wraps ? UINT64_MAX : end, wraps ? "+" : "", limit_name, limit);
}

/* Step `t`'s bindings, kind, executable and, for a copy, its two ends. */
static void check_step(const table_t *t, const tmod_module_t *m,
                       const tmod_step_t *step) {
  for (uint32_t b = 0; b < step->binding_count; b++)
    check_binding(t, m, b, &step->bindings[b]);
  if (step->kind == TMOD_STEP_DISPATCH) {
    if (step->executable >= m->executable_count)
      tbad(t, "executable %" PRIu32 " is out of range (%" PRIu32 " executables)",
           step->executable, m->executable_count);
    return;
  }
  if (step->kind != TMOD_STEP_COPY) {
    tbad(t, "step kind %" PRIu32 " is invalid", step->kind);
    return;
  }
  if (step->binding_count != 2) {
    tbad(t, "a copy needs 2 bindings, not %" PRIu32, step->binding_count);
    return;
  }
  const tmod_binding_t *dst = &step->bindings[1];
  if (step->bindings[0].size != dst->size)
    tbad(t, "copy source size %" PRIu64 " differs from destination size %" PRIu64,
         step->bindings[0].size, dst->size);
  else if (dst->kind == TMOD_BUFFER_INPUT)
    tbad(t, "copy destination is an input, which is read-only");
  else if (dst->kind == TMOD_BUFFER_CONSTANT)
    tbad(t, "copy destination is the constants, which is read-only");
}

static void read_step(reader_t *r, const tmod_module_t *m, const vec_t *steps,
                      uint32_t s, tmod_step_t *out, tmod_binding_t *bindings) {
  table_t t;
  vec_t v;
  step_bindings(r, steps, s, &t, &v);
  out->kind = u32_at(&t, 0);
  out->executable = u32_at(&t, 1);
  out->entry = u32_at(&t, 2);
  out->label = tmod__string(&t, 4);
  out->binding_count = v.count;
  out->bindings = v.count ? bindings : NULL;
  for (uint32_t b = 0; b < v.count; b++) {
    size_t at = v.pos + (size_t)b * BINDING_BYTES;
    bindings[b].kind = ld32(r, at);
    bindings[b].index = ld32(r, at + 4);
    bindings[b].offset = ld64(r, at + 8);
    bindings[b].size = ld64(r, at + 16);
  }
  check_step(&t, m, out);
}

/* Reads the steps into one allocation: the steps, then all their bindings.
 * A first pass counts the bindings; the second, over the same verified
 * bytes, fills and checks. */
static void read_steps(table_t *root, tmod_module_t *m) {
  reader_t *r = root->r;
  vec_t v;
  root->name.what = "steps";
  tmod__vector(root, 10, 4, &v);
  if (v.count > MAX_STEPS) {
    bad(r, "%u steps exceed the maximum %u", v.count, MAX_STEPS);
    return;
  }
  uint64_t binding_total = 0;
  for (uint32_t s = 0; s < v.count && !r->status; s++) {
    table_t t;
    vec_t b;
    step_bindings(r, &v, s, &t, &b);
    binding_total += b.count;
  }
  if (r->status || !v.count) return;
  uint64_t bytes = (uint64_t)v.count * sizeof(tmod_step_t) +
                   binding_total * sizeof(tmod_binding_t);
  tmod_step_t *steps = NULL;
  if (fits_size_t(bytes))
    steps = tinyml__alloc(&r->alloc, (size_t)bytes, _Alignof(tmod_binding_t));
  if (!steps) {
    tmod__out_of_memory(r, "steps", bytes);
    return;
  }
  m->steps = steps; /* owned by the module from here on */
  m->step_count = v.count;
  tmod_binding_t *next = (tmod_binding_t *)(void *)(steps + v.count);
  for (uint32_t s = 0; s < v.count && !r->status; s++) {
    read_step(r, m, &v, s, &steps[s], next);
    next += steps[s].binding_count;
  }
}

/* ------------------------------------------------------------------------
 * Module
 * ---------------------------------------------------------------------- */

static int read_header(reader_t *r, table_t *root) {
  if (r->size < 8) return bad(r, "%zu bytes are too few for a module", r->size);
  if (r->size > MAX_BUFFER_SIZE)
    return bad(r, "%zu bytes exceed the 2 GiB FlatBuffer limit", r->size);
  /* One load against a constant, not a call to memcmp. */
  const char *id = TMOD_FILE_IDENTIFIER;
  if (ld32(r, 4) != ((uint32_t)id[0] | (uint32_t)id[1] << 8 | (uint32_t)id[2] << 16 |
                     (uint32_t)id[3] << 24))
    return bad(r, "wrong file identifier (expected \"%s\")", TMOD_FILE_IDENTIFIER);
  uint32_t pos = ld32(r, 0);
  if (pos < 8) return bad(r, "root table offset %" PRIu32 " is invalid", pos);
  root->r = r; /* open_table sets the rest */
  root->name = (name_t){"root table", 0, 0};
  return open_table(root, pos);
}

static void read_root_scalars(table_t *t, tmod_module_t *m) {
  t->name.what = "module";
  m->format_version = u32_at(t, 0);
  if (m->format_version - TMOD_FORMAT_VERSION > 1u) {
    bad(t->r, "format version %" PRIu32 " is not supported (expected 1 or 2)",
        m->format_version);
    return;
  }
  t->name.what = "target";
  m->target = tmod__string(t, 1);
  t->name.what = "cpu";
  m->cpu = tmod__string(t, 2);
  t->name.what = "features";
  m->features = tmod__string(t, 3);
  t->name.what = "module";
  m->arena_size = u64_at(t, 4);
  m->arena_alignment = u32_at(t, 5);
  uint32_t alignment = m->arena_alignment;
  if (alignment == 0 || (alignment & (alignment - 1)) ||
      alignment > MAX_ARENA_ALIGNMENT)
    bad(t->r, "arena alignment %" PRIu32 " is not a power of two up to %u",
        alignment, MAX_ARENA_ALIGNMENT);
}

/* Sizes of arena regions 1.. (region 0 is arena_size); absent: one.  A
 * region this runtime cannot address (a 32-bit target) would be allocated
 * short, so it is refused before any binding is checked against it. */
static void read_regions(table_t *t, tmod_module_t *m) {
  vec_t v;
  tmod__vector(t, 12, 8, &v);
  if (v.count >= TMOD_MAX_ARENA_REGIONS) {
    bad(t->r, "more arena regions than the 4 allowed");
    return;
  }
  m->region_count = v.count + 1;
  for (uint32_t i = 0; i < m->region_count; ++i) {
    uint64_t size = i ? ld64(t->r, v.pos + 8 * (size_t)(i - 1)) : m->arena_size;
    m->region_sizes[i] = size;
    if ((size_t)size != size) bad(t->r, "arena region %" PRIu32 " is too large for this target", i);
  }
}

static void read_module(reader_t *r, tmod_module_t *m) {
  table_t root;
  if (!read_header(r, &root)) return;
  read_root_scalars(&root, m);
  read_regions(&root, m);
  m->constants_checksum = u32_at(&root, 9);
  blob(&root, 8, m->constants_checksum, "constants", &m->constants,
       &m->constants_size);
  read_executables(&root, m);
#if !TINYML_FREESTANDING
  tmod__read_variants(&root, m);
#endif
  read_tensors(&root, 6, "input", "input %u", &m->inputs, &m->input_count);
  read_tensors(&root, 7, "output", "output %u", &m->outputs, &m->output_count);
  m->state_checksum = u32_at(&root, 14);
  blob(&root, 13, m->state_checksum, "state", &m->state, &m->state_size);
  read_steps(&root, m); /* last: it checks against all the rest */
}

tinyml_status_t tmod_read(const uint8_t *data, size_t size,
                          const tinyml_allocator_t *allocator,
                          tmod_module_t *out_module) {
  reader_t r = {.data = data, .size = size, .user = allocator,
                .alloc = tinyml__allocator_or_default(allocator), .status = TINYML_OK};
#if !TINYML_FREESTANDING
  r.scope = "";
#endif
  tmod_module_t m;
  memset(&m, 0, sizeof(m));
  read_module(&r, &m);
  if (r.status) {
    tmod_read_free(&m, allocator);
    return r.status;
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
#if !TINYML_FREESTANDING
  tinyml__free(&a, (void *)(uintptr_t)module->variants);
#endif
  memset(module, 0, sizeof(*module));
}
