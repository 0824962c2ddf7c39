#include "module_test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"

static void fill(uint8_t *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (uint8_t)(seed >> 16);
  }
}

static tmod_binding_t binding(uint32_t kind, uint32_t index, uint64_t offset,
                              uint64_t size) {
  tmod_binding_t b = {kind, index, offset, size};
  return b;
}

static void sample_tensors(sample_t *s) {
  static const float scales0[3] = {0.5f, 0.25f, 0.125f};
  static const int64_t zero_points0[3] = {-1, 0, 7};
  memcpy(s->scales0, scales0, sizeof(scales0));
  memcpy(s->zero_points0, zero_points0, sizeof(zero_points0));
  s->scales1[0] = 0.0625f;
  s->zero_points1[0] = 128;
  s->inputs[0] = (tmod_tensor_t){.name = "image", .dtype = TINYML_DTYPE_INT8,
                                 .rank = 4, .dims = {1, 3, 4, 4}, .byte_size = 48,
                                 .quant_count = 3, .quant_axis = 1,
                                 .scales = s->scales0,
                                 .zero_points = s->zero_points0};
  s->inputs[1] = (tmod_tensor_t){.name = "bias_in", .dtype = TINYML_DTYPE_UINT8,
                                 .rank = 2, .dims = {2, 5}, .byte_size = 10,
                                 .quant_count = 1, .quant_axis = 0,
                                 .scales = s->scales1,
                                 .zero_points = s->zero_points1};
  s->outputs[0] = (tmod_tensor_t){.name = "logits", .dtype = TINYML_DTYPE_FLOAT32,
                                  .rank = 2, .dims = {1, 10}, .byte_size = 40};
  s->outputs[1] = (tmod_tensor_t){.name = "indices", .dtype = TINYML_DTYPE_INT64,
                                  .rank = 2, .dims = {2, 2}, .byte_size = 32};
}

static void sample_steps(sample_t *s) {
  s->bindings0[0] = binding(TMOD_BUFFER_INPUT, 0, 0, 48);
  s->bindings0[1] = binding(TMOD_BUFFER_CONSTANT, 0, 0, 256);
  s->bindings0[2] = binding(TMOD_BUFFER_ARENA, 0, 0, 4096);
  s->bindings1[0] = binding(TMOD_BUFFER_ARENA, 0, 0, 40);
  s->bindings1[1] = binding(TMOD_BUFFER_OUTPUT, 0, 0, 40);
  s->bindings2[0] = binding(TMOD_BUFFER_INPUT, 1, 0, 10);
  s->bindings2[1] = binding(TMOD_BUFFER_CONSTANT, 0, 256, 744);
  s->bindings2[2] = binding(TMOD_BUFFER_ARENA, 0, 4096, 1904);
  s->bindings2[3] = binding(TMOD_BUFFER_OUTPUT, 1, 0, 32);
  /* Step 2 has no label: the reader gives "" for an absent one. */
  s->steps[0] = (tmod_step_t){TMOD_STEP_DISPATCH, 0, 0, 3, s->bindings0, "CONV_2D conv/\"1\""};
  s->steps[1] = (tmod_step_t){TMOD_STEP_COPY, 0, 0, 2, s->bindings1, ""};
  s->steps[2] = (tmod_step_t){TMOD_STEP_DISPATCH, 1, 2, 4, s->bindings2, NULL};
}

void sample_init(sample_t *s) {
  memset(s, 0, sizeof(*s));
  sample_tensors(s);
  sample_steps(s);
  fill(s->constants, sizeof(s->constants), 1);
  fill(s->image0, sizeof(s->image0), 2);
  fill(s->image1, sizeof(s->image1), 3);
  s->executables[0] = (tmod_executable_t){"elf", "x86_64", s->image0,
                                          sizeof(s->image0), 0};
  s->executables[1] = (tmod_executable_t){"elf", "x86_64", s->image1,
                                          sizeof(s->image1), 0};
  tmod_module_t *m = &s->module;
  m->format_version = TMOD_FORMAT_VERSION;
  m->target = "x86-64";
  m->cpu = "znver3";
  m->features = "+avx2,+fma";
  m->arena_size = 6000;
  m->arena_alignment = 64;
  m->input_count = 2;
  m->output_count = 2;
  m->inputs = s->inputs;
  m->outputs = s->outputs;
  m->constants = s->constants;
  m->constants_size = sizeof(s->constants);
  m->step_count = 3;
  m->steps = s->steps;
  m->executable_count = 2;
  m->executables = s->executables;
}

void with_state(sample_t *s) {
  s->bindings2[2] = binding(TMOD_BUFFER_STATE, 0, 128, 128);
  s->module.state = s->constants + 512;
  s->module.state_size = 256;
}

void small_init(sample_t *s) {
  sample_init(s);
  /* Input 0 becomes int8 [3, 1] quantised per axis 0. */
  s->inputs[0].rank = 2;
  s->inputs[0].dims[0] = 3;
  s->inputs[0].dims[1] = 1;
  s->inputs[0].byte_size = 3;
  s->inputs[0].quant_axis = 0;
  s->outputs[0].dims[1] = 2;
  s->outputs[0].byte_size = 8;
  s->bindings0[0] = binding(TMOD_BUFFER_INPUT, 0, 0, 3);
  s->bindings0[1] = binding(TMOD_BUFFER_CONSTANT, 0, 8, 8);
  s->bindings0[2] = binding(TMOD_BUFFER_ARENA, 0, 0, 8);
  s->bindings1[0] = binding(TMOD_BUFFER_ARENA, 0, 0, 8);
  s->bindings1[1] = binding(TMOD_BUFFER_OUTPUT, 0, 0, 8);
  tmod_module_t *m = &s->module;
  m->features = "";
  m->arena_size = 64;
  m->input_count = 1;
  m->output_count = 1;
  m->constants_size = 16;
  m->step_count = 2;
  m->executable_count = 1;
  s->executables[0].image_size = 8;
}

static const char *or_empty(const char *s) { return s ? s : ""; }

static void assert_tensor_equal(const tmod_tensor_t *e, const tmod_tensor_t *a) {
  assert_string_equal(or_empty(e->name), a->name);
  assert_int_equal(e->dtype, a->dtype);
  assert_int_equal(e->rank, a->rank);
  for (uint32_t i = 0; i < e->rank; i++) assert_int_equal(e->dims[i], a->dims[i]);
  assert_int_equal(e->byte_size, a->byte_size);
  assert_int_equal(e->fixed_value != NULL, a->fixed_value != NULL);
  if (e->fixed_value && e->byte_size)
    assert_memory_equal(e->fixed_value, a->fixed_value, e->byte_size);
  assert_int_equal(e->quant_count, a->quant_count);
  if (!e->quant_count) {
    assert_null(a->scales);
    assert_null(a->zero_points);
    return;
  }
  assert_int_equal(e->quant_axis, a->quant_axis);
  assert_memory_equal(e->scales, a->scales, e->quant_count * sizeof(float));
  assert_memory_equal(e->zero_points, a->zero_points,
                      e->quant_count * sizeof(int64_t));
}

static void assert_step_equal(const tmod_step_t *e, const tmod_step_t *a) {
  assert_int_equal(e->kind, a->kind);
  assert_int_equal(e->executable, a->executable);
  assert_int_equal(e->entry, a->entry);
  assert_int_equal(e->binding_count, a->binding_count);
  assert_string_equal(e->label ? e->label : "", a->label);
  for (uint32_t b = 0; b < e->binding_count; b++) {
    assert_int_equal(e->bindings[b].kind, a->bindings[b].kind);
    assert_int_equal(e->bindings[b].index, a->bindings[b].index);
    assert_int_equal(e->bindings[b].offset, a->bindings[b].offset);
    assert_int_equal(e->bindings[b].size, a->bindings[b].size);
  }
}

static void assert_executable_equal(const tmod_executable_t *e,
                                    const tmod_executable_t *a) {
  assert_string_equal(or_empty(e->format), a->format);
  assert_string_equal(or_empty(e->arch), a->arch);
  assert_int_equal(e->image_size, a->image_size);
  assert_memory_equal(e->image, a->image, (size_t)e->image_size);
  assert_int_equal(tmod_crc32(e->image, (size_t)e->image_size), a->checksum);
}

/* The writer marks a module with a pinned input version 2 (module.h). */
static uint32_t expected_version(const tmod_module_t *m) {
  for (uint32_t i = 0; i < m->input_count; ++i)
    if (m->inputs[i].fixed_value) return TMOD_FORMAT_VERSION_PINNED;
  return TMOD_FORMAT_VERSION;
}

void assert_modules_equal(const tmod_module_t *e, const tmod_module_t *a) {
  assert_int_equal(expected_version(e), a->format_version);
  assert_string_equal(or_empty(e->target), a->target);
  assert_string_equal(or_empty(e->cpu), a->cpu);
  assert_string_equal(or_empty(e->features), a->features);
  assert_int_equal(e->arena_size, a->arena_size);
  assert_int_equal(e->arena_alignment, a->arena_alignment);
  assert_int_equal(e->input_count, a->input_count);
  assert_int_equal(e->output_count, a->output_count);
  for (uint32_t i = 0; i < e->input_count; i++)
    assert_tensor_equal(&e->inputs[i], &a->inputs[i]);
  for (uint32_t i = 0; i < e->output_count; i++)
    assert_tensor_equal(&e->outputs[i], &a->outputs[i]);
  assert_int_equal(e->constants_size, a->constants_size);
  assert_memory_equal(e->constants, a->constants, (size_t)e->constants_size);
  assert_int_equal(tmod_crc32(e->constants, (size_t)e->constants_size),
                   a->constants_checksum);
  assert_int_equal(e->step_count, a->step_count);
  for (uint32_t i = 0; i < e->step_count; i++)
    assert_step_equal(&e->steps[i], &a->steps[i]);
  assert_int_equal(e->executable_count, a->executable_count);
  for (uint32_t i = 0; i < e->executable_count; i++)
    assert_executable_equal(&e->executables[i], &a->executables[i]);
  assert_int_equal(e->state_size, a->state_size);
  assert_memory_equal(e->state, a->state, (size_t)e->state_size);
  if (e->state_size)
    assert_int_equal(tmod_crc32(e->state, (size_t)e->state_size), a->state_checksum);
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t touch_bytes(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++) h = mix(h, b[i]);
  return h;
}

static uint64_t touch_tensor(uint64_t h, const tmod_tensor_t *t) {
  h = touch_bytes(h, t->name, strlen(t->name));
  h = mix(h, t->byte_size);
  h = touch_bytes(h, t->scales, t->quant_count * sizeof(float));
  h = touch_bytes(h, t->fixed_value, t->fixed_value ? t->byte_size : 0);
  return touch_bytes(h, t->zero_points, t->quant_count * sizeof(int64_t));
}

uint64_t touch_module(const tmod_module_t *m) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = touch_bytes(h, m->target, strlen(m->target));
  h = touch_bytes(h, m->cpu, strlen(m->cpu));
  h = touch_bytes(h, m->features, strlen(m->features));
  for (uint32_t i = 0; i < m->input_count; i++) h = touch_tensor(h, &m->inputs[i]);
  for (uint32_t i = 0; i < m->output_count; i++) h = touch_tensor(h, &m->outputs[i]);
  h = touch_bytes(h, m->constants, (size_t)m->constants_size);
  for (uint32_t i = 0; i < m->step_count; i++)
    h = touch_bytes(h, m->steps[i].bindings,
                    m->steps[i].binding_count * sizeof(tmod_binding_t));
  for (uint32_t i = 0; i < m->executable_count; i++) {
    const tmod_executable_t *e = &m->executables[i];
    h = touch_bytes(h, e->format, strlen(e->format));
    h = touch_bytes(h, e->arch, strlen(e->arch));
    h = touch_bytes(h, e->image, (size_t)e->image_size);
  }
  return h;
}

uint8_t *write_module(const tmod_module_t *m, size_t *size) {
  uint8_t *data = NULL;
  tinyml_status_t status = tmod_write(m, NULL, &data, size);
  if (status) fail_msg("tmod_write: %s", tinyml_status_message(status));
  assert_non_null(data);
  return data;
}

void free_module_bytes(uint8_t *data) {
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml__free(&a, data);
}

static void *counting_alloc(void *self, size_t size, size_t alignment) {
  counting_alloc_t *c = self;
  c->calls++;
  if (c->fail_at && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at)))
    return NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, alignment, size) != 0) return NULL;
  c->live++;
  return p;
}

static void counting_free(void *self, void *ptr) {
  counting_alloc_t *c = self;
  assert_true(c->live > 0);
  c->live--;
  free(ptr);
}

void counting_alloc_init(counting_alloc_t *c) {
  memset(c, 0, sizeof(*c));
  c->allocator.self = c;
  c->allocator.alloc = counting_alloc;
  c->allocator.free = counting_free;
}

uint32_t fb_u32(const uint8_t *b, size_t pos) {
  return (uint32_t)b[pos] | (uint32_t)b[pos + 1] << 8 |
         (uint32_t)b[pos + 2] << 16 | (uint32_t)b[pos + 3] << 24;
}

void fb_put_u32(uint8_t *b, size_t pos, uint32_t v) {
  for (int i = 0; i < 4; i++) b[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

size_t fb_root(const uint8_t *b) { return fb_u32(b, 0); }

size_t fb_field(const uint8_t *b, size_t table, unsigned id) {
  size_t vtable = table - (size_t)(int32_t)fb_u32(b, table);
  size_t vtable_size = (size_t)b[vtable] | (size_t)b[vtable + 1] << 8;
  size_t slot = 4 + 2 * (size_t)id;
  if (slot + 2 > vtable_size) return 0;
  size_t offset = (size_t)b[vtable + slot] | (size_t)b[vtable + slot + 1] << 8;
  return offset ? table + offset : 0;
}

size_t fb_deref(const uint8_t *b, size_t at) { return at + fb_u32(b, at); }

size_t fb_element(const uint8_t *b, size_t vector, unsigned i) {
  return fb_deref(b, vector + 4 + 4 * (size_t)i);
}
