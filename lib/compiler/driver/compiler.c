/* The compile driver: detect the format, import to TOSA, lower to Linalg,
 * partition, generate code, plan memory, write the module. */
#include "../compiler.h"

#include <mlir-c/IR.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../codegen/lower.h"
#include "../codegen/object.h"
#include "../linalg/graph.h"
#include "../linalg/guards.h"
#include "../linalg/inplace.h"
#include "../linalg/labels.h"
#include "../linalg/memory_plan.h"
#include "../linalg/partition.h"
#include "../toolchain/emit_c.h"
#include "../toolchain/lld.h"
#include "../tosa/layout_sink.h"
#include "../tosa/prepost.h"
#include "../tosa/uk_concat.h"
#include "../tosa/uk_dwpw.h"
#include "../tosa/uk_pool.h"
#include "../tosa/uk_residual.h"
#include "../tosa/uk_select.h"
#include "deliver.h"
#include "import.h"
#include "limits.h"
#include "variants.h"

/* tosa-to-scf: a run-time WHILE (tosa.while_loop) becomes scf.while, which
 * partition.c keeps whole in one dispatch. */
#define TOSA_TO_LINALG                                                          \
  "builtin.module(func.func(tosa-optional-decompositions),canonicalize,"        \
  "func.func(tosa-to-scf),"                                                     \
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
  int strip;
  tc_limits_t limits; /* resolved: no field is 0 */
  const te_bindings_t *bindings;
  tc_variants_t variants; /* the module's besides the baseline (variants.h) */
} session_t;

static tinyml_status_t import_and_partition(session_t *s, const void *model,
                                            size_t size) {
  MlirModule m;
  const tc_import_t im = {s->ctx, &s->diag, s->a, s->dump_tosa, s->dump_user,
                          &s->limits.import,
                          s->bindings};
  TINYML_RETURN_IF_ERROR(tc_import(&im, model, size, &m));
  tinyml_status_t st = tc_prepost_apply(s->ctx, m, s->pre, s->post, &s->diag, s->a,
                                        s->dump_tosa, s->dump_user);
  /* Every format and the stages added, before any pass can make a
   * tensor of the claimed size: the importers checked their own files
   * already, this holds the limits for TOSA text too. */
  if (!st) st = tc_check_graph_limits(m, &s->limits, s->a);
  if (!st && s->target.ukernels)
    st = tc_ukernels_select(s->ctx, m, &s->target, s->winograd, s->a, NULL);
  /* After selection, which moves the importer's transposes below the
   * kernels; before the canonicaliser in TOSA_TO_LINALG folds the pairs. */
  if (!st)
    st = tc_run_pipeline(s->ctx, mlirModuleGetOperation(m), "builtin.module(canonicalize)",
                         &s->diag, s->a, "canonicalizing TOSA");
  /* The canonicaliser just dropped the dead ops after any dead kernel;
   * erasing one may leave its producers, another kernel among them, dead. */
  while (!st && s->target.ukernels && tc_uk_erase_dead(m))
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
  if (!st) st = tc_guard_indices(m, s->a);
  if (!st) st = tc_partition(s->ctx, m, s->a, &s->graph);
  /* Only armv7em's int8 kernels are known to walk output pixels in order
   * (backends/armv7em/ukernels.c), which streaming needs. */
  if (!st) tc_note_inplace(&s->graph, strcmp(s->target.backend->name, "armv7em") == 0);
  if (!st && !s->strip) st = tc_label_dispatches(&s->graph, s->a);
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

static void session_free(session_t *s) {
  tinyml__free(s->a, s->so);
  tinyml__free(s->a, s->obj);
  tc_variants_free(&s->variants, s->a);
  tc_graph_free(&s->graph, s->a);
  mlirContextDestroy(s->ctx);
  tc_target_release(&s->target);
}

static tinyml_status_t compile_with(const void *model, size_t model_size,
                                    const tinyml__compile_request_t *req, unsigned builds,
                                    const tinyml_allocator_t *a, tinyml__files_t *out);

/* Once more, with only the variants the first compile kept: blobs packed
 * for a variant that was then left out would carry its scratch and dot4
 * block for nothing.  The first compile has said its notes and dumps. */
static tinyml_status_t compile_again(const void *model, size_t model_size,
                                     const tinyml__compile_request_t *req, unsigned builds,
                                     const tinyml_allocator_t *a, tinyml__files_t *out) {
  tinyml__compile_request_t quiet = *req;
  quiet.bindings.note = NULL;
  quiet.dump_tosa = NULL;
  return compile_with(model, model_size, &quiet, builds, a, out);
}

tinyml_status_t tinyml__compile_files(const void *model, size_t model_size,
                                      const tinyml__compile_request_t *req,
                                      const tinyml_allocator_t *a, tinyml__files_t *out) {
  return compile_with(model, model_size, req, ~0u, a, out);
}

/* builds: the variant builds to consider (tc_variants_begin). */
static tinyml_status_t compile_with(const void *model, size_t model_size,
                                    const tinyml__compile_request_t *req, unsigned builds,
                                    const tinyml_allocator_t *a, tinyml__files_t *out) {
  memset(out, 0, sizeof(*out));
  session_t s = {.a = a, .dump_tosa = req->dump_tosa, .dump_user = req->dump_user,
                 .emit = req->emit, .name = req->name ? req->name : "model",
                 .pre = req->preprocess, .post = req->postprocess,
                 .winograd = req->winograd, .strip = req->strip};
  const tc_limits_t asked = {{req->max_tensor_bytes, req->max_constant_bytes, req->max_ops},
                             req->max_arena_bytes};
  s.limits = tc_limits_resolve(&asked);
  s.bindings = &req->bindings;
  if (!tc_is_c_identifier(s.name))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: name '%s' must be a C identifier of at most 48 "
                               "characters", s.name);
  snprintf(s.query_symbol, sizeof(s.query_symbol), "%s_query", s.name);
  if (req->arena_regions[0] && s.emit != TINYML_EMIT_MODULE)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compile: arena regions need the module form (emit module): "
                               "generated C and static libraries take one arena");
  TINYML_RETURN_IF_ERROR(tc_target_resolve(req->backend, req->cpu, req->features,
                                           req->opt_level, a, &s.target));
  const unsigned variants = tc_variants_begin(&s.variants, &s.target, req, builds);
  s.ctx = tc_context_create(&s.diag);
  tinyml_status_t st = import_and_partition(&s, model, model_size);
  s.graph.split_min_work = req->split_min_work;
  if (!st && variants)
    st = tc_variants_generate(&s.variants, &s.target, s.ctx, &s.graph, &s.diag, req, a);
  if (!st) st = generate_code(&s);
  if (!st && variants) tc_variants_check(&s.variants, &s.graph, req, a);
  unsigned kept = 0;
  if (!st && variants && tc_variants_overpacked(&s.variants, &kept)) {
    session_free(&s);
    return compile_again(model, model_size, req, kept, a, out);
  }
  for (int i = 0; i < TINYML_MAX_ARENA_REGIONS; ++i) s.graph.region_caps[i] = req->arena_regions[i];
  if (!st) st = tc_plan_memory(&s.graph, a);
  if (!st) st = tc_check_arena_limit(s.graph.region_sizes, s.graph.region_count, &s.limits, a);
  const tc_product_t product = {&s.graph, &s.target, s.emit,  s.name,
                                s.so,     s.so_size, &s.obj, s.obj_size, &s.variants};
  if (!st) st = tc_deliver(&product, a, out);
  if (st) tinyml__files_free(out, a);
  session_free(&s);
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
