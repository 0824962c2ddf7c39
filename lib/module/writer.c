/* tmod_write: a small FlatBuffer builder for schema/tinyml_module.fbs.
 *
 * Unlike the usual back-to-front FlatBuffers builders, this one writes front
 * to back: the root table first, then each object's children after it.
 * uoffsets only need to point forward, so a table is written with
 * placeholder offsets that are patched once its children have been placed.
 * Each vtable sits just before its table (a positive soffset).
 *
 * The whole emission runs twice: once only counting bytes, then into one
 * exactly sized buffer.  That keeps alignment relative to the buffer start
 * trivial and needs a single allocation. */
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "module.h"

/* FlatBuffers offsets are 32-bit and signed offsets must stay positive. */
#define MAX_BUFFER_SIZE 0x7FFFFFFFu
#define MAX_FIELDS 16

typedef struct writer {
  uint8_t *out; /* NULL while measuring */
  uint64_t pos; /* bytes emitted so far */
  int too_big;  /* the module does not fit in a FlatBuffer */
} writer_t;

static uint64_t align_up(uint64_t x, uint64_t align) {
  return (x + align - 1) & ~(align - 1);
}

/* Appends `n` bytes from `src`, or zeros when `src` is NULL. */
static void put_bytes(writer_t *w, const void *src, uint64_t n) {
  if (w->too_big || n > MAX_BUFFER_SIZE - w->pos) {
    w->too_big = 1;
    return;
  }
  if (w->out && src) memcpy(w->out + w->pos, src, (size_t)n);
  if (w->out && !src) memset(w->out + w->pos, 0, (size_t)n);
  w->pos += n;
}

/* Appends the low `n` bytes of `v`, little-endian. */
static void put_le(writer_t *w, uint64_t v, unsigned n) {
  uint8_t b[8];
  for (unsigned i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
  put_bytes(w, b, n);
}

/* Pads with zeros until pos % align == phase. */
static void pad_to(writer_t *w, uint64_t align, uint64_t phase) {
  put_bytes(w, NULL, (phase + align - w->pos % align) % align);
}

/* Points the uoffset at `at` to `target` (which lies after it). */
static void patch_offset(writer_t *w, uint64_t at, uint64_t target) {
  if (!w->out || w->too_big) return;
  uint32_t v = (uint32_t)(target - at);
  for (unsigned i = 0; i < 4; i++) w->out[at + i] = (uint8_t)(v >> (8 * i));
}

/* A table being written: fields by id, each a scalar or a uoffset. */
typedef struct table {
  unsigned count;              /* vtable slots */
  uint8_t size[MAX_FIELDS];    /* bytes; 0 = absent */
  uint64_t value[MAX_FIELDS];  /* scalar value, 0 for a uoffset */
  uint64_t at[MAX_FIELDS];     /* where the field landed */
  uint64_t start;              /* where the table landed */
} table_t;

static void set_scalar(table_t *t, unsigned id, unsigned size, uint64_t v) {
  t->size[id] = (uint8_t)size;
  t->value[id] = v;
  if (id >= t->count) t->count = id + 1;
}

/* A uoffset field, patched once its target is written. */
static void set_offset(table_t *t, unsigned id) { set_scalar(t, id, 4, 0); }

static void put_table(writer_t *w, table_t *t) {
  pad_to(w, 2, 0);
  uint64_t vtable = w->pos;
  uint64_t start = align_up(vtable + 4 + 2 * (uint64_t)t->count, 4);
  /* Lay the fields out largest first, so little padding is needed. */
  uint16_t voffset[MAX_FIELDS] = {0};
  uint64_t p = start + 4;
  for (unsigned size = 8; size >= 1; size /= 2) {
    for (unsigned id = 0; id < t->count; id++) {
      if (t->size[id] != size) continue;
      p = align_up(p, size);
      t->at[id] = p;
      voffset[id] = (uint16_t)(p - start);
      p += size;
    }
  }
  put_le(w, 4 + 2 * (uint64_t)t->count, 2);
  put_le(w, p - start, 2);
  for (unsigned id = 0; id < t->count; id++) put_le(w, voffset[id], 2);
  pad_to(w, 4, 0);
  put_le(w, start - vtable, 4); /* soffset: vtable = table - soffset */
  for (unsigned size = 8; size >= 1; size /= 2) {
    for (unsigned id = 0; id < t->count; id++) {
      if (t->size[id] != size) continue;
      pad_to(w, size, 0);
      put_le(w, t->value[id], size);
    }
  }
  t->start = start;
}

/* Writes a vector's length so that its data starts `align`-aligned;
 * returns where the vector starts (what uoffsets point to). */
static uint64_t put_vector_start(writer_t *w, uint64_t count, uint64_t align) {
  if (align < 4) align = 4;
  pad_to(w, align, align - 4);
  uint64_t at = w->pos;
  put_le(w, count, 4);
  return at;
}

static void put_string(writer_t *w, uint64_t field_at, const char *s) {
  if (!s) s = "";
  size_t n = strlen(s);
  patch_offset(w, field_at, put_vector_start(w, n, 4));
  put_bytes(w, s, n);
  put_bytes(w, NULL, 1); /* the NUL FlatBuffers strings carry */
}

static void put_blob(writer_t *w, uint64_t field_at, const uint8_t *data,
                     uint64_t size) {
  patch_offset(w, field_at, put_vector_start(w, size, TMOD_CONSTANT_ALIGNMENT));
  put_bytes(w, data, size);
}

/* Quantization table: scales, zero_points, quant_axis. */
static uint64_t put_quantization(writer_t *w, const tmod_tensor_t *tensor) {
  table_t t = {0};
  set_offset(&t, 0);
  set_offset(&t, 1);
  set_scalar(&t, 2, 4, (uint32_t)tensor->quant_axis);
  put_table(w, &t);
  patch_offset(w, t.at[0], put_vector_start(w, tensor->quant_count, 4));
  for (uint32_t i = 0; i < tensor->quant_count; i++) {
    uint32_t bits;
    memcpy(&bits, &tensor->scales[i], sizeof(bits));
    put_le(w, bits, 4);
  }
  patch_offset(w, t.at[1], put_vector_start(w, tensor->quant_count, 8));
  for (uint32_t i = 0; i < tensor->quant_count; i++)
    put_le(w, (uint64_t)tensor->zero_points[i], 8);
  return t.start;
}

/* TensorInfo table: name, dtype, dims, byte_size, quantization, fixed_value. */
static uint64_t put_tensor(writer_t *w, const tmod_tensor_t *tensor) {
  table_t t = {0};
  set_offset(&t, 0);
  set_scalar(&t, 1, 4, tensor->dtype);
  set_offset(&t, 2);
  set_scalar(&t, 3, 8, tensor->byte_size);
  if (tensor->quant_count) set_offset(&t, 4);
  if (tensor->fixed_value) set_offset(&t, 5);
  put_table(w, &t);
  put_string(w, t.at[0], tensor->name);
  patch_offset(w, t.at[2], put_vector_start(w, tensor->rank, 8));
  for (uint32_t i = 0; i < tensor->rank; i++) put_le(w, (uint64_t)tensor->dims[i], 8);
  if (tensor->quant_count) patch_offset(w, t.at[4], put_quantization(w, tensor));
  if (tensor->fixed_value) { /* 8-aligned, so a reader may read elements in place */
    patch_offset(w, t.at[5], put_vector_start(w, tensor->byte_size, 8));
    put_bytes(w, tensor->fixed_value, tensor->byte_size);
  }
  return t.start;
}

static void put_tensors(writer_t *w, uint64_t field_at,
                        const tmod_tensor_t *tensors, uint32_t count) {
  patch_offset(w, field_at, put_vector_start(w, count, 4));
  uint64_t slots = w->pos;
  put_bytes(w, NULL, 4 * (uint64_t)count);
  for (uint32_t i = 0; i < count; i++)
    patch_offset(w, slots + 4 * (uint64_t)i, put_tensor(w, &tensors[i]));
}

/* Step table: kind, executable, entry, bindings (a vector of structs) and,
 * when there is one, the label (absent, not "", so a stripped module is
 * byte for byte what a writer without labels made). */
static uint64_t put_step(writer_t *w, const tmod_step_t *step) {
  table_t t = {0};
  int labelled = step->label && step->label[0];
  set_scalar(&t, 0, 4, step->kind);
  set_scalar(&t, 1, 4, step->executable);
  set_scalar(&t, 2, 4, step->entry);
  set_offset(&t, 3);
  if (labelled) set_offset(&t, 4);
  put_table(w, &t);
  patch_offset(w, t.at[3], put_vector_start(w, step->binding_count, 8));
  for (uint32_t i = 0; i < step->binding_count; i++) {
    const tmod_binding_t *b = &step->bindings[i];
    put_le(w, b->kind, 4);
    put_le(w, b->index, 4);
    put_le(w, b->offset, 8);
    put_le(w, b->size, 8);
  }
  if (labelled) put_string(w, t.at[4], step->label);
  return t.start;
}

static void put_steps(writer_t *w, uint64_t field_at, const tmod_step_t *steps,
                      uint32_t count) {
  patch_offset(w, field_at, put_vector_start(w, count, 4));
  uint64_t slots = w->pos;
  put_bytes(w, NULL, 4 * (uint64_t)count);
  for (uint32_t i = 0; i < count; i++)
    patch_offset(w, slots + 4 * (uint64_t)i, put_step(w, &steps[i]));
}

/* Executable table: format, arch, image, checksum. */
static uint64_t put_executable(writer_t *w, const tmod_executable_t *exe) {
  table_t t = {0};
  set_offset(&t, 0);
  set_offset(&t, 1);
  set_offset(&t, 2);
  /* Only the real pass pays for the checksum. */
  uint32_t crc = w->out ? tmod_crc32(exe->image, (size_t)exe->image_size) : 0;
  set_scalar(&t, 3, 4, crc);
  put_table(w, &t);
  put_string(w, t.at[0], exe->format);
  put_string(w, t.at[1], exe->arch);
  put_blob(w, t.at[2], exe->image, exe->image_size);
  return t.start;
}

static void put_executables(writer_t *w, uint64_t field_at,
                            const tmod_module_t *m) {
  patch_offset(w, field_at, put_vector_start(w, m->executable_count, 4));
  uint64_t slots = w->pos;
  put_bytes(w, NULL, 4 * (uint64_t)m->executable_count);
  for (uint32_t i = 0; i < m->executable_count; i++)
    patch_offset(w, slots + 4 * (uint64_t)i,
                 put_executable(w, &m->executables[i]));
}

#if !TINYML_FREESTANDING /* module.h: no variants there */
/* Variant table: cpu, features, executables. */
static uint64_t put_variant(writer_t *w, const tmod_variant_t *v, uint32_t count) {
  table_t t = {0};
  set_offset(&t, 0);
  set_offset(&t, 1);
  set_offset(&t, 2);
  put_table(w, &t);
  put_string(w, t.at[0], v->cpu);
  put_string(w, t.at[1], v->features);
  patch_offset(w, t.at[2], put_vector_start(w, count, 4));
  uint64_t slots = w->pos;
  put_bytes(w, NULL, 4 * (uint64_t)count);
  for (uint32_t i = 0; i < count; i++)
    patch_offset(w, slots + 4 * (uint64_t)i, put_executable(w, &v->executables[i]));
  return t.start;
}

static void put_variants(writer_t *w, uint64_t field_at, const tmod_module_t *m) {
  patch_offset(w, field_at, put_vector_start(w, m->variant_count, 4));
  uint64_t slots = w->pos;
  put_bytes(w, NULL, 4 * (uint64_t)m->variant_count);
  for (uint32_t i = 0; i < m->variant_count; i++)
    patch_offset(w, slots + 4 * (uint64_t)i,
                 put_variant(w, &m->variants[i], m->executable_count));
}
#endif

/* The lowest version whose readers honour everything the module holds. */
static uint32_t format_version(const tmod_module_t *m) {
  for (uint32_t i = 0; i < m->input_count; ++i)
    if (m->inputs[i].fixed_value) return TMOD_FORMAT_VERSION_PINNED;
  return TMOD_FORMAT_VERSION;
}

/* The whole buffer: root offset, file identifier, Module table, children.
 * Field ids follow the order of the fields in the schema. */
static void put_module(writer_t *w, const tmod_module_t *m) {
  put_bytes(w, NULL, 4);
  put_bytes(w, TMOD_FILE_IDENTIFIER, 4);
  table_t t = {0};
  set_scalar(&t, 0, 4, format_version(m));
  set_offset(&t, 1);
  set_offset(&t, 2);
  set_offset(&t, 3);
  set_scalar(&t, 4, 8, m->arena_size);
  set_scalar(&t, 5, 4, m->arena_alignment);
  set_offset(&t, 6);
  set_offset(&t, 7);
  set_offset(&t, 8);
  uint32_t crc = w->out ? tmod_crc32(m->constants, (size_t)m->constants_size) : 0;
  set_scalar(&t, 9, 4, crc);
  set_offset(&t, 10);
  set_offset(&t, 11);
  if (m->region_count > 1) set_offset(&t, 12);
  /* Absent when there is no state, so a stateless module is byte for byte
   * what a writer before state made. */
  if (m->state_size) {
    set_offset(&t, 13);
    set_scalar(&t, 14, 4, w->out ? tmod_crc32(m->state, (size_t)m->state_size) : 0);
  }
#if !TINYML_FREESTANDING
  if (m->variant_count) set_offset(&t, 15);
#endif
  put_table(w, &t);
  patch_offset(w, 0, t.start);
  put_string(w, t.at[1], m->target);
  put_string(w, t.at[2], m->cpu);
  put_string(w, t.at[3], m->features);
  put_tensors(w, t.at[6], m->inputs, m->input_count);
  put_tensors(w, t.at[7], m->outputs, m->output_count);
  put_blob(w, t.at[8], m->constants, m->constants_size);
  put_steps(w, t.at[10], m->steps, m->step_count);
  put_executables(w, t.at[11], m);
  if (m->region_count > 1) {
    patch_offset(w, t.at[12], put_vector_start(w, m->region_count - 1, 8));
    for (uint32_t i = 1; i < m->region_count; i++) put_le(w, m->region_sizes[i], 8);
  }
  if (m->state_size) put_blob(w, t.at[13], m->state, m->state_size);
#if !TINYML_FREESTANDING
  if (m->variant_count) put_variants(w, t.at[15], m);
#endif
}

static tinyml_status_t invalid(const tinyml_allocator_t *a, const char *what,
                               uint32_t index, const char *problem) {
  return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                             "module writer: %s %u: %s", what, index, problem);
}

static tinyml_status_t check_tensors(const tinyml_allocator_t *a,
                                     const char *what,
                                     const tmod_tensor_t *tensors,
                                     uint32_t count) {
  if (count && !tensors) return invalid(a, what, 0, "the array is NULL");
  for (uint32_t i = 0; i < count; i++) {
    const tmod_tensor_t *t = &tensors[i];
    if (t->rank > TINYML_MAX_RANK) return invalid(a, what, i, "rank exceeds 8");
    if (t->quant_count && (!t->scales || !t->zero_points))
      return invalid(a, what, i, "quantisation arrays are NULL");
  }
  return TINYML_OK;
}

static tinyml_status_t check_steps(const tinyml_allocator_t *a, const char *what,
                                   const tmod_step_t *steps, uint32_t count) {
  if (count && !steps) return invalid(a, what, 0, "the array is NULL");
  for (uint32_t i = 0; i < count; i++)
    if (steps[i].binding_count && !steps[i].bindings)
      return invalid(a, what, i, "the bindings are NULL");
  return TINYML_OK;
}

/* Rejects what would make the writer read through a NULL or past an array;
 * everything else is the reader's to verify. */
static tinyml_status_t check_module(const tinyml_allocator_t *a,
                                    const tmod_module_t *m) {
  if (m->format_version > TMOD_FORMAT_VERSION_PINNED)
    return invalid(a, "format version", m->format_version, "is not writable");
  if (m->region_count > TMOD_MAX_ARENA_REGIONS)
    return invalid(a, "arena region count", m->region_count, "exceeds the maximum");
  if (m->constants_size && !m->constants)
    return invalid(a, "constants", 0, "the data is NULL");
  if (m->state_size && !m->state) return invalid(a, "state", 0, "the data is NULL");
  TINYML_RETURN_IF_ERROR(check_tensors(a, "input", m->inputs, m->input_count));
  TINYML_RETURN_IF_ERROR(check_tensors(a, "output", m->outputs, m->output_count));
  TINYML_RETURN_IF_ERROR(check_steps(a, "step", m->steps, m->step_count));
  if (m->executable_count && !m->executables)
    return invalid(a, "executable", 0, "the array is NULL");
  for (uint32_t i = 0; i < m->executable_count; i++)
    if (m->executables[i].image_size && !m->executables[i].image)
      return invalid(a, "executable", i, "the image is NULL");
#if !TINYML_FREESTANDING
  if (m->variant_count > TMOD_MAX_VARIANTS)
    return invalid(a, "variant count", m->variant_count, "exceeds the maximum");
  if (m->variant_count && !m->variants) return invalid(a, "variant", 0, "the array is NULL");
  for (uint32_t v = 0; v < m->variant_count; v++) {
    /* An empty cpu would read back as a variant for any CPU. */
    if (!m->variants[v].cpu || !m->variants[v].cpu[0])
      return invalid(a, "variant", v, "the cpu is NULL or empty");
    if (!m->variants[v].features) return invalid(a, "variant", v, "the features are NULL");
    for (uint32_t i = 0; i < m->executable_count; i++)
      if (!m->variants[v].executables || !m->variants[v].executables[i].image)
        return invalid(a, "variant", v, "an executable is NULL");
  }
#endif
  return TINYML_OK;
}

tinyml_status_t tmod_write(const tmod_module_t *module,
                           const tinyml_allocator_t *allocator,
                           uint8_t **out_data, size_t *out_size) {
  if (!module || !out_data || !out_size)
    return tinyml__status_make(allocator, TINYML_STATUS_INVALID_ARGUMENT,
                               "module writer: NULL argument");
  TINYML_RETURN_IF_ERROR(check_module(allocator, module));
  writer_t measure = {NULL, 0, 0};
  put_module(&measure, module);
  if (measure.too_big)
    return tinyml__status_make(allocator, TINYML_STATUS_INVALID_ARGUMENT,
                               "module writer: the module exceeds the 2 GiB "
                               "FlatBuffer limit");
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  uint8_t *data = tinyml__alloc(&a, (size_t)measure.pos, TMOD_CONSTANT_ALIGNMENT);
  if (!data)
    return tinyml__status_make(allocator, TINYML_STATUS_OUT_OF_MEMORY,
                               "module writer: out of memory for %zu bytes",
                               (size_t)measure.pos);
  writer_t w = {data, 0, 0};
  put_module(&w, module);
  if (w.too_big || w.pos != measure.pos) {
    tinyml__free(&a, data);
    return tinyml__status_make(allocator, TINYML_STATUS_INTERNAL,
                               "module writer: the two passes disagree");
  }
  *out_data = data;
  *out_size = (size_t)w.pos;
  return TINYML_OK;
}
