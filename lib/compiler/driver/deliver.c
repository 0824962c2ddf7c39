/* A compile's products as files (deliver.h): the module FlatBuffer, or
 * generated C with the kernels object, or a static library. */
#include "deliver.h"
#include "variants.h"

#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../module/module.h"
#include "../toolchain/emit_c.h"
#include "../toolchain/static_lib.h"

/* The model's state (graph.h) lives in the context: the values an invoke
 * reads at [0, half), state k at cur[k], and the values it computes for the
 * next invoke at the same places + half, copied down in one step at the
 * end (a kernel may still read state k after another writes its next
 * value). */
typedef struct state_plan {
  uint32_t inputs, outputs; /* the caller's: state bindings come after */
  uint64_t half;
  uint64_t *cur;
} state_plan_t;

static uint64_t align64(uint64_t x) { return (x + 63) / 64 * 64; }

static int plan_state(const tc_graph_t *g, const tinyml_allocator_t *a, state_plan_t *p) {
  p->inputs = g->input_count - g->state_count;
  p->outputs = g->output_count - g->state_count;
  p->half = 0;
  p->cur = tinyml__calloc(a, g->state_count + 1, sizeof(uint64_t), 8);
  if (!p->cur) return 0;
  for (uint32_t k = 0; k < g->state_count; ++k) {
    p->cur[k] = p->half;
    p->half = align64(p->half + g->input_info[p->inputs + k].byte_size);
  }
  return 1;
}

/* Where binding b really is: the state's part of the context for a state
 * input or output, b itself otherwise. */
static tmod_binding_t placed(const state_plan_t *p, tmod_binding_t b) {
  if (b.kind == TMOD_BUFFER_INPUT && b.index >= p->inputs)
    return (tmod_binding_t){TMOD_BUFFER_STATE, 0, p->cur[b.index - p->inputs] + b.offset, b.size};
  if (b.kind == TMOD_BUFFER_OUTPUT && b.index >= p->outputs)
    return (tmod_binding_t){TMOD_BUFFER_STATE, 0,
                            p->half + p->cur[b.index - p->outputs] + b.offset, b.size};
  return b;
}

static uint32_t count_copies(const tc_graph_t *g) {
  uint32_t n = 0;
  for (uint32_t j = 0; j < g->output_count; ++j) {
    tmod_binding_t b = g->buffers[g->outputs[j]].binding;
    if (b.kind != TMOD_BUFFER_OUTPUT || b.index != j) ++n;
  }
  return n;
}

static tmod_binding_t output_binding(const tc_graph_t *g, uint32_t j) {
  return (tmod_binding_t){TMOD_BUFFER_OUTPUT, j, 0, g->output_info[j].byte_size};
}

/* Fills steps/bindings; `bindings` has room for every argument + copies. */
static uint32_t fill_steps(const tc_graph_t *g, const state_plan_t *p, tmod_step_t *steps,
                           tmod_binding_t *bindings) {
  uint32_t n = 0, nb = 0;
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    uint32_t args = dp->input_count + dp->output_count;
    tmod_step_t *st = &steps[n++];
    *st = (tmod_step_t){TMOD_STEP_DISPATCH, 0, d, 0, &bindings[nb], dp->label};
    for (uint32_t i = 0; i < args; ++i)
      bindings[nb++] = placed(p, g->buffers[dp->args[i]].binding);
    if (dp->scratch_size) bindings[nb++] = dp->scratch;
    st->binding_count = args + (dp->scratch_size ? 1 : 0);
  }
  for (uint32_t j = 0; j < g->output_count; ++j) {
    tmod_binding_t src = g->buffers[g->outputs[j]].binding;
    if (src.kind == TMOD_BUFFER_OUTPUT && src.index == j) continue;
    steps[n++] = (tmod_step_t){TMOD_STEP_COPY, 0, 0, 2, &bindings[nb], NULL};
    bindings[nb++] = placed(p, src);
    bindings[nb++] = placed(p, output_binding(g, j));
  }
  if (p->half) {
    steps[n++] = (tmod_step_t){TMOD_STEP_COPY, 0, 0, 2, &bindings[nb], NULL};
    bindings[nb++] = (tmod_binding_t){TMOD_BUFFER_STATE, 0, p->half, p->half};
    bindings[nb++] = (tmod_binding_t){TMOD_BUFFER_STATE, 0, 0, p->half};
  }
  return n;
}

/* The state's initial value: both halves as the model says it starts. */
static uint8_t *initial_state(const tc_graph_t *g, const state_plan_t *p,
                              const tinyml_allocator_t *a) {
  uint8_t *blob = tinyml__calloc(a, 1, 2 * p->half + 1, 64);
  const uint8_t *init = g->state_init;
  for (uint32_t k = 0; blob && k < g->state_count; ++k) {
    size_t n = (size_t)g->input_info[p->inputs + k].byte_size;
    memcpy(blob + p->cur[k], init, n);
    memcpy(blob + p->half + p->cur[k], init, n);
    init += n;
  }
  return blob;
}

static uint8_t *gather_constants(const tc_graph_t *g, const tinyml_allocator_t *a) {
  uint8_t *blob = tinyml__calloc(a, 1, g->constants_size + 1, 64);
  if (!blob) return NULL;
  for (uint32_t i = 0; i < g->buffer_count; ++i) {
    const tc_buffer_t *b = &g->buffers[i];
    if (b->kind != TC_BUFFER_CONSTANT) continue;
    memcpy(blob + b->binding.offset, g->constants[b->index].data, b->size);
  }
  return blob;
}

static tinyml_status_t add_file(const tc_product_t *s, tinyml__files_t *out, const char *fmt,
                                uint8_t *data, size_t size) {
  tinyml__file_t *f = &out->file[out->count++];
  snprintf(f->name, sizeof(f->name), fmt, s->name);
  f->data = data;
  f->size = size;
  return TINYML_OK;
}

static tinyml_status_t deliver(const tc_product_t *s, const tmod_module_t *m,
                               const tinyml_allocator_t *a, tinyml__files_t *out) {
  uint8_t *data = NULL;
  size_t size = 0;
  if (s->emit == TINYML_EMIT_MODULE) {
    TINYML_RETURN_IF_ERROR(tmod_write(m, a, &data, &size));
    return add_file(s, out, "%s.tmlm", data, size);
  }
  tc_c_source_t c;
  TINYML_RETURN_IF_ERROR(tc_emit_c(m, s->name, a, &c));
  tinyml_status_t st = TINYML_OK;
  if (s->emit == TINYML_EMIT_STATIC_LIB) {
    st = tc_build_static_lib(&c, *s->obj, s->obj_size, s->name, s->target, a, &data, &size);
    if (!st) add_file(s, out, "lib%s.a", data, size);
  } else {
    add_file(s, out, "%s.c", (uint8_t *)c.source, c.source_size);
    c.source = NULL;
    add_file(s, out, "%s_kernels.o", *s->obj, s->obj_size);
    *s->obj = NULL;
  }
  if (!st) add_file(s, out, "%s.h", (uint8_t *)c.header, c.header_size);
  if (!st) c.header = NULL;
  tc_c_source_free(&c, a);
  return st;
}

tinyml_status_t tc_deliver(const tc_product_t *s, const tinyml_allocator_t *a,
                           tinyml__files_t *out) {
  const tc_graph_t *g = s->graph;
  uint32_t step_cap = g->dispatch_count + count_copies(g) + 2;
  size_t binding_cap = 2 * (size_t)g->output_count + 3;
  for (uint32_t d = 0; d < g->dispatch_count; ++d)
    binding_cap += g->dispatches[d].input_count + g->dispatches[d].output_count + 1;
  state_plan_t p = {0};
  tmod_step_t *steps = tinyml__calloc(a, step_cap, sizeof(tmod_step_t), 8);
  tmod_binding_t *bindings = tinyml__calloc(a, binding_cap, sizeof(tmod_binding_t), 8);
  uint8_t *constants = gather_constants(g, a);
  uint8_t *state = plan_state(g, a, &p) ? initial_state(g, &p, a) : NULL;
  tinyml_status_t st = TINYML_OK;
  if (!steps || !bindings || !constants || !state) {
    st = tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
  } else {
    tmod_executable_t exe = {"elf", s->target->backend->elf_arch, s->so, s->so_size, 0};
    tmod_module_t m = {
        .format_version = TMOD_FORMAT_VERSION,
        .target = s->target->backend->name,
        .cpu = s->target->cpu,
        .features = s->target->features,
        .arena_size = g->arena_size,
        .arena_alignment = 64,
        .region_count = g->region_count,
        .input_count = p.inputs,
        .output_count = p.outputs,
        .inputs = g->input_info,
        .outputs = g->output_info,
        .constants = constants,
        .constants_size = g->constants_size,
        .step_count = fill_steps(g, &p, steps, bindings),
        .steps = steps,
        .executable_count = 1,
        .executables = &exe,
        .state = state,
        .state_size = 2 * p.half,
    };
    memcpy(m.region_sizes, g->region_sizes, sizeof m.region_sizes);
    tmod_variant_t vars[TMOD_MAX_VARIANTS];
    tmod_executable_t var_exes[TMOD_MAX_VARIANTS];
    if (s->variants && s->emit == TINYML_EMIT_MODULE) {
      m.variant_count = tc_variants_describe(s->variants, vars, var_exes);
      m.variants = vars;
    }
    if (s->emit != TINYML_EMIT_MODULE) m.executable_count = 0; /* kernels go alongside */
    st = deliver(s, &m, a, out);
  }
  tinyml__free(a, p.cur);
  tinyml__free(a, state);
  tinyml__free(a, steps);
  tinyml__free(a, bindings);
  tinyml__free(a, constants);
  return st;
}
