/* The compile driver: detect the format, import to TOSA, lower to Linalg,
 * partition, generate code, plan memory, write the module. */
#include "../compiler.h"

#include <mlir-c/IR.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/list.h"
#include "../../common/status.h"
#include <stdio.h>

#include "../codegen/codegen.h"
#include "../toolchain/static_lib.h"
#include "../toolchain/emit_c.h"
#include "../linalg/graph.h"
#include "../tosa/layout_sink.h"
#include "../tosa/prepost.h"
#include "../linalg/guard_divisions.h"
#include "../tosa/ukernel.h"
#include "../../importers/onnx/onnx_import.h"
#include "../../importers/tflite/tflite_import.h"

#define TOSA_TO_LINALG                                                          \
  "builtin.module(func.func(tosa-optional-decompositions),canonicalize,"        \
  "func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,"     \
  "convert-elementwise-to-linalg),"                                             \
  "canonicalize,linalg-fuse-elementwise-ops,canonicalize,cse)"

typedef struct session {
  const tinyml_allocator_t *a;
  MlirContext ctx;
  tc_diag_t diag;
  tc_graph_t graph;
  tc_target_t target;
  uint8_t *so, *obj; /* the linked executable, or the kernels object */
  size_t so_size, obj_size;
  tinyml_emit_t emit;
  const char *name;
  char query_symbol[64];
  void (*dump_tosa)(void *user, const char *text, size_t length);
  void *dump_user;
  const tinyml_preprocess_t *pre;
  const tinyml_postprocess_t *post;
  int winograd;
} session_t;

static int looks_like_mlir_text(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] == 0 || (p[i] < 0x09) || (p[i] > 0x0d && p[i] < 0x20)) return 0;
  return n > 0;
}

static tinyml_status_t parse_text(session_t *s, const char *text, size_t size,
                                  MlirModule *out) {
  *out = mlirModuleCreateParse(s->ctx, mlirStringRefCreate(text, size));
  if (mlirModuleIsNull(*out))
    return tinyml__status_make(s->a, TINYML_STATUS_INVALID_MODEL,
                               "compile: cannot parse the model: %s",
                               s->diag.len ? s->diag.text : "(no diagnostic)");
  return TINYML_OK;
}

/* The format comes from the bytes: TFLite FlatBuffers carry "TFL3" at
 * offset 4; anything else must be TOSA MLIR text. */
static tinyml_status_t parse_model(session_t *s, const void *model, size_t size,
                                   MlirModule *out) {
  const uint8_t *p = model;
  char *text = NULL;
  size_t len = 0;
  if (size >= 8 && memcmp(p + 4, "TFL3", 4) == 0) {
    TINYML_RETURN_IF_ERROR(tfl_import(model, size, s->a, &text, &len));
  } else if (!looks_like_mlir_text(p, size) && onnx_looks_like(p, size)) {
    TINYML_RETURN_IF_ERROR(onnx_import(model, size, s->a, &text, &len));
  } else {
    if (!looks_like_mlir_text(p, size))
      return tinyml__status_make(s->a, TINYML_STATUS_INVALID_MODEL,
                                 "compile: unrecognised model format (expected a "
                                 ".tflite FlatBuffer, an ONNX model or TOSA MLIR text)");
    text = tinyml__alloc(s->a, size + 1, 1);
    if (!text)
      return tinyml__status_make(s->a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
    memcpy(text, model, size);
    text[size] = '\0';
    len = size;
  }
  if (s->dump_tosa) s->dump_tosa(s->dump_user, text, len);
  tinyml_status_t st = parse_text(s, text, len, out);
  tinyml__free(s->a, text);
  return st;
}

static tinyml_status_t import_and_partition(session_t *s, const void *model,
                                            size_t size) {
  MlirModule m;
  TINYML_RETURN_IF_ERROR(parse_model(s, model, size, &m));
  tinyml_status_t st = tc_prepost_apply(s->ctx, m, s->pre, s->post, &s->diag, s->a,
                                        s->dump_tosa, s->dump_user);
  if (!st && s->target.ukernels)
    st = tc_ukernels_select(s->ctx, m, &s->target, s->winograd, s->a, NULL);
  /* After selection, which moves the importer's transposes below the
   * kernels; before the canonicaliser in TOSA_TO_LINALG folds the pairs. */
  if (!st)
    st = tc_run_pipeline(s->ctx, mlirModuleGetOperation(m), "builtin.module(canonicalize)",
                         &s->diag, s->a, "canonicalizing TOSA");
  if (!st) tc_layout_sink(m);
  /* The residual adds meet their conv in NHWC only now, and only once the
   * canonicaliser has dropped the transposes the sink left unused.  Other
   * targets have no f32 kernels and skip these, so their code stays as it was. */
  if (!st && tc_target_has_f32_kernels(&s->target)) {
    st = tc_run_pipeline(s->ctx, mlirModuleGetOperation(m), "builtin.module(canonicalize)",
                         &s->diag, s->a, "canonicalizing TOSA");
    const tc_uk_pass_t pass = {s->ctx, s->a, &s->target.backend->ukernels.f32_tuning};
    if (!st) tc_ukernels_fuse_residual(&pass, m);
    if (!st) tc_ukernels_fuse_dwpw(&pass, m);
    if (!st) tc_ukernels_fuse_concat(&pass, m);
    if (!st) tc_ukernels_fuse_pool(&pass, m);
  }
  if (!st)
    st = tc_run_pipeline(s->ctx, mlirModuleGetOperation(m), TOSA_TO_LINALG, &s->diag, s->a,
                         "lowering TOSA to Linalg");
  if (!st) st = tc_guard_divisions(m, s->a);
  if (!st) st = tc_partition(s->ctx, m, s->a, &s->graph);
  /* Constants are borrowed from attributes, which the context owns. */
  mlirModuleDestroy(m);
  return st;
}

static tinyml_status_t generate_code(session_t *s) {
  TINYML_RETURN_IF_ERROR(tc_lower_dispatches(s->ctx, &s->target, &s->graph, &s->diag, s->a));
  const char *query = s->emit == TINYML_EMIT_MODULE ? NULL : s->query_symbol;
  TINYML_RETURN_IF_ERROR(
      tc_emit_object(&s->graph, &s->target, query, s->a, &s->obj, &s->obj_size));
  if (s->emit != TINYML_EMIT_MODULE) return TINYML_OK; /* the object is the deliverable */
  return tc_link_shared(s->obj, s->obj_size, &s->target, s->a, &s->so, &s->so_size);
}

/* ---- module assembly -------------------------------------------------- */

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
static uint32_t fill_steps(const tc_graph_t *g, tmod_step_t *steps,
                           tmod_binding_t *bindings) {
  uint32_t n = 0, nb = 0;
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    uint32_t args = dp->input_count + dp->output_count;
    tmod_step_t *st = &steps[n++];
    *st = (tmod_step_t){TMOD_STEP_DISPATCH, 0, d, 0, &bindings[nb]};
    for (uint32_t i = 0; i < args; ++i) bindings[nb++] = g->buffers[dp->args[i]].binding;
    if (dp->scratch_size) bindings[nb++] = dp->scratch;
    st->binding_count = args + (dp->scratch_size ? 1 : 0);
  }
  for (uint32_t j = 0; j < g->output_count; ++j) {
    tmod_binding_t src = g->buffers[g->outputs[j]].binding;
    if (src.kind == TMOD_BUFFER_OUTPUT && src.index == j) continue;
    steps[n++] = (tmod_step_t){TMOD_STEP_COPY, 0, 0, 2, &bindings[nb]};
    bindings[nb++] = src;
    bindings[nb++] = output_binding(g, j);
  }
  return n;
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

static tinyml_status_t add_file(session_t *s, tinyml__files_t *out, const char *fmt,
                                uint8_t *data, size_t size) {
  tinyml__file_t *f = &out->file[out->count++];
  snprintf(f->name, sizeof(f->name), fmt, s->name);
  f->data = data;
  f->size = size;
  return TINYML_OK;
}

static tinyml_status_t deliver(session_t *s, const tmod_module_t *m, tinyml__files_t *out) {
  uint8_t *data = NULL;
  size_t size = 0;
  if (s->emit == TINYML_EMIT_MODULE) {
    TINYML_RETURN_IF_ERROR(tmod_write(m, s->a, &data, &size));
    return add_file(s, out, "%s.tmlm", data, size);
  }
  tc_c_source_t c;
  TINYML_RETURN_IF_ERROR(tc_emit_c(m, s->name, s->a, &c));
  tinyml_status_t st = TINYML_OK;
  if (s->emit == TINYML_EMIT_STATIC_LIB) {
    st = tc_build_static_lib(&c, s->obj, s->obj_size, s->name, &s->target, s->a, &data, &size);
    if (!st) add_file(s, out, "lib%s.a", data, size);
  } else {
    add_file(s, out, "%s.c", (uint8_t *)c.source, c.source_size);
    c.source = NULL;
    add_file(s, out, "%s_kernels.o", s->obj, s->obj_size);
    s->obj = NULL;
  }
  if (!st) add_file(s, out, "%s.h", (uint8_t *)c.header, c.header_size);
  if (!st) c.header = NULL;
  tc_c_source_free(&c, s->a);
  return st;
}

static tinyml_status_t write_module(session_t *s, tinyml__files_t *out) {
  const tc_graph_t *g = &s->graph;
  uint32_t step_cap = g->dispatch_count + count_copies(g) + 1;
  size_t binding_cap = 2 * (size_t)g->output_count + 1;
  for (uint32_t d = 0; d < g->dispatch_count; ++d)
    binding_cap += g->dispatches[d].input_count + g->dispatches[d].output_count + 1;
  tmod_step_t *steps = tinyml__calloc(s->a, step_cap, sizeof(tmod_step_t), 8);
  tmod_binding_t *bindings = tinyml__calloc(s->a, binding_cap, sizeof(tmod_binding_t), 8);
  uint8_t *constants = gather_constants(g, s->a);
  tinyml_status_t st = TINYML_OK;
  if (!steps || !bindings || !constants) {
    st = tinyml__status_make(s->a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
  } else {
    tmod_executable_t exe = {"elf", s->target.backend->elf_arch, s->so, s->so_size, 0};
    tmod_module_t m = {
        .format_version = TMOD_FORMAT_VERSION,
        .target = s->target.backend->name,
        .cpu = s->target.cpu,
        .features = s->target.features,
        .arena_size = g->arena_size,
        .arena_alignment = 64,
        .input_count = g->input_count,
        .output_count = g->output_count,
        .inputs = g->input_info,
        .outputs = g->output_info,
        .constants = constants,
        .constants_size = g->constants_size,
        .step_count = fill_steps(g, steps, bindings),
        .steps = steps,
        .executable_count = 1,
        .executables = &exe,
    };
    if (s->emit != TINYML_EMIT_MODULE) m.executable_count = 0; /* kernels go alongside */
    st = deliver(s, &m, out);
  }
  tinyml__free(s->a, steps);
  tinyml__free(s->a, bindings);
  tinyml__free(s->a, constants);
  return st;
}

tinyml_status_t tinyml__compile_files(const void *model, size_t model_size,
                                      const tinyml__compile_request_t *req,
                                      const tinyml_allocator_t *a, tinyml__files_t *out) {
  memset(out, 0, sizeof(*out));
  session_t s = {.a = a, .dump_tosa = req->dump_tosa, .dump_user = req->dump_user,
                 .emit = req->emit, .name = req->name ? req->name : "model",
                 .pre = req->preprocess, .post = req->postprocess,
                 .winograd = req->winograd};
  if (!tc_is_c_identifier(s.name))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: name '%s' must be a C identifier of at most 48 "
                               "characters", s.name);
  snprintf(s.query_symbol, sizeof(s.query_symbol), "%s_query", s.name);
  TINYML_RETURN_IF_ERROR(tc_target_resolve(req->backend, req->cpu, req->features,
                                           req->opt_level, a, &s.target));
  s.ctx = tc_context_create(&s.diag);
  tinyml_status_t st = import_and_partition(&s, model, model_size);
  if (!st) st = generate_code(&s);
  if (!st) st = tc_plan_memory(&s.graph, a);
  if (!st) st = write_module(&s, out);
  if (st) tinyml__files_free(out, a);
  tinyml__free(a, s.so);
  tinyml__free(a, s.obj);
  tc_graph_free(&s.graph, a);
  mlirContextDestroy(s.ctx);
  tc_target_release(&s.target);
  return st;
}

void tinyml__files_free(tinyml__files_t *files, const tinyml_allocator_t *a) {
  for (uint32_t i = 0; i < files->count; ++i) tinyml__free(a, files->file[i].data);
  memset(files, 0, sizeof(*files));
}

tinyml_status_t tinyml__compile(const void *model, size_t model_size,
                                const tinyml__compile_request_t *req,
                                const tinyml_allocator_t *a, uint8_t **out_data,
                                size_t *out_size) {
  tinyml__compile_request_t r = *req;
  r.emit = TINYML_EMIT_MODULE;
  tinyml__files_t files;
  TINYML_RETURN_IF_ERROR(tinyml__compile_files(model, model_size, &r, a, &files));
  *out_data = files.file[0].data;
  *out_size = files.file[0].size;
  return TINYML_OK;
}
