/* Multi-versioned modules (variants.h). */
#include "variants.h"

#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/list.h"
#include "../../common/status.h"
#include "../codegen/lower.h"
#include "../mlir_util.h"
#include "../codegen/object.h"
#include "../toolchain/lld.h"

unsigned tc_variants_begin(tc_variants_t *vs, tc_target_t *baseline,
                           const tinyml__compile_request_t *req, unsigned builds) {
  memset(vs, 0, sizeof(*vs));
  if (req->emit != TINYML_EMIT_MODULE || req->cpu || req->features || !baseline->ukernels)
    return 0;
  const tc_ukernels_t *uk = &baseline->backend->ukernels;
  vs->pack = *baseline->ukernels;
  for (unsigned i = 0; i < uk->build_count && vs->count < TMOD_MAX_VARIANTS; ++i) {
    const tc_ukernel_build_t *b = &uk->builds[i];
    if (!b->variant_cpu || b == baseline->ukernels || !(builds >> i & 1u)) continue;
    vs->v[vs->count].index = i;
    vs->v[vs->count++].build = b;
    if (b->scratch_per_k > vs->pack.scratch_per_k) vs->pack.scratch_per_k = b->scratch_per_k;
    if (b->dot4) vs->pack.dot4 = 1;
  }
  if (!vs->count) return 0;
  vs->base = baseline->ukernels;
  baseline->ukernels = &vs->pack;
  baseline->dot4_blobs = &vs->dot4_blobs;
  baseline->conv_blobs = &vs->conv_blobs;
  return vs->count;
}

int tc_variants_overpacked(const tc_variants_t *vs, unsigned *out_builds) {
  *out_builds = 0;
  if (!vs->base || !vs->conv_blobs) return 0;
  int scratch = vs->base->scratch_per_k, dot4 = vs->base->dot4;
  for (unsigned i = 0; i < vs->count; ++i) {
    const tc_ukernel_build_t *b = vs->v[i].build;
    if (b->scratch_per_k > scratch) scratch = b->scratch_per_k;
    dot4 |= b->dot4;
    *out_builds |= 1u << vs->v[i].index;
  }
  return scratch < vs->pack.scratch_per_k || dot4 < vs->pack.dot4;
}

/* Its kernels call functions built for features it lacks, trusting the
 * blob's dot4 to say whether the CPU has them (backend.h). */
static int trusts_dot4(const tc_ukernel_build_t *b) {
  return b->function_features && !tinyml__list_has_all(b->features, b->function_features);
}

/* Whether variant i is worth its bytes and safe with the blobs as packed. */
static int keep(const tc_variants_t *vs, unsigned i) {
  const tc_ukernel_build_t *b = vs->v[i].build;
  if (vs->dot4_blobs) return !trusts_dot4(b);
  /* Without dot4 blobs a build's code is a later one's with the same
   * tiling (the same bitcode, or one that differs in its dot4 path only),
   * and the later one runs on more CPUs. */
  for (unsigned j = i + 1; j < vs->count; ++j) {
    const tc_ukernel_build_t *later = vs->v[j].build;
    if (later->transform_script == b->transform_script &&
        (later->bitcode == b->bitcode || (b->dot4 && !later->dot4)))
      return 0;
  }
  return 1;
}

static tinyml_status_t oom(const tinyml_allocator_t *a) {
  return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compile: out of memory");
}

/* Lowers a copy of g's dispatch module for v and links it; g is restored. */
static tinyml_status_t lower_copy(tc_variant_t *v, MlirContext ctx, tc_graph_t *g,
                                  tc_diag_t *diag, const tinyml_allocator_t *a) {
  const uint32_t n = g->dispatch_count;
  tc_dispatch_t *saved = tinyml__calloc(a, n + 1, sizeof(*saved), 8);
  v->shape = tinyml__calloc(a, 3 * (size_t)n + 1, sizeof(uint64_t), 8);
  if (!saved || !v->shape) {
    tinyml__free(a, saved);
    return oom(a);
  }
  memcpy(saved, g->dispatches, n * sizeof(*saved));
  MlirModule original = g->dispatch_module;
  g->dispatch_module = mlirModuleFromOperation(mlirOperationClone(mlirModuleGetOperation(original)));
  uint8_t *obj = NULL;
  size_t obj_size = 0;
  tinyml_status_t st = tc_lower_dispatches(ctx, &v->target, g, diag, a);
  if (!st) st = tc_emit_object(g, &v->target, NULL, a, &obj, &obj_size);
  if (!st) st = tc_link_shared(obj, obj_size, &v->target, a, &v->so, &v->so_size);
  for (uint32_t d = 0; d < n; ++d) {
    v->shape[3 * d] = g->dispatches[d].scratch_size;
    v->shape[3 * d + 1] = g->dispatches[d].reuse_in;
    v->shape[3 * d + 2] = g->dispatches[d].reuse_out;
  }
  mlirModuleDestroy(g->dispatch_module);
  g->dispatch_module = original;
  memcpy(g->dispatches, saved, n * sizeof(*saved));
  tinyml__free(a, saved);
  tinyml__free(a, obj);
  return st;
}

static void variant_free(tc_variant_t *v, const tinyml_allocator_t *a) {
  tinyml__free(a, v->so);
  tinyml__free(a, v->shape);
  tc_target_release(&v->target);
  memset(v, 0, sizeof(*v));
}

/* Ops whose code the ISA level changes a lot: microkernel calls and the
 * contractions the strategy tiles per build.  A module without any (most
 * small graphs: elementwise, shape and index ops) gains little from a wider
 * vector unit and would pay a second code generation for it. */
static const char *const kHeavyOps[] = {
    "tinyml.uk",          "linalg.batch_matmul",  "linalg.matmul",
    "linalg.conv_2d_nhwc_fhwc", "linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwc",
    "tosa.matmul",        "tosa.conv2d",          "tosa.depthwise_conv2d",
    "tosa.conv3d",        "tosa.transpose_conv2d", NULL};

static int worth_variants(const tc_graph_t *g, const tinyml_allocator_t *a) {
  unsigned n = 0;
  MlirOperation *ops =
      tc_collect_ops(mlirModuleGetOperation(g->dispatch_module), kHeavyOps, 1, a, &n);
  tinyml__free(a, ops);
  return n > 0;
}

tinyml_status_t tc_variants_generate(tc_variants_t *vs, tc_target_t *baseline, MlirContext ctx,
                                     tc_graph_t *g, tc_diag_t *diag,
                                     const tinyml__compile_request_t *req,
                                     const tinyml_allocator_t *a) {
  baseline->ukernels = vs->base;
  baseline->dot4_blobs = NULL;
  baseline->conv_blobs = NULL;
  unsigned kept = 0;
  for (unsigned i = 0; i < vs->count; ++i)
    if (keep(vs, i)) vs->v[kept++] = vs->v[i];
  vs->count = worth_variants(g, a) ? kept : 0;
  for (unsigned i = 0; i < vs->count; ++i) {
    tc_variant_t *v = &vs->v[i];
    tinyml_status_t st = tc_target_resolve(req->backend, v->build->variant_cpu,
                                           v->build->features, req->opt_level, a, &v->target);
    if (!st && v->target.ukernels != v->build)
      st = tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compile: variant '%s' resolves to microkernels '%s'",
                               v->build->name, v->target.ukernels ? v->target.ukernels->name : "none");
    if (!st) st = lower_copy(v, ctx, g, diag, a);
    if (st) return TINYML_STATUS_ANNOTATE(st, "compile: variant %s", v->build->name);
  }
  return TINYML_OK;
}

static const char *const shape_names[3] = {"scratch bytes", "reused input", "reused output"};

/* The first way v's dispatches differ from g's, or -1; *out_d: which. */
static int difference(const tc_variant_t *v, const tc_graph_t *g, uint32_t *out_d) {
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    const uint64_t base[3] = {dp->scratch_size, dp->reuse_in, dp->reuse_out};
    for (int k = 0; k < 3; ++k)
      if (v->shape[3 * d + k] != base[k]) {
        *out_d = d;
        return k;
      }
  }
  return -1;
}

/* The baseline's value of what difference() reports as k. */
static uint64_t base_value(const tc_dispatch_t *dp, int k) {
  return k == 0 ? dp->scratch_size : k == 1 ? dp->reuse_in : dp->reuse_out;
}

static void note_dropped(const tc_variant_t *v, const tc_graph_t *g, uint32_t d, int k,
                         const tinyml__compile_request_t *req) {
  if (!req->bindings.note) return;
  const tc_dispatch_t *dp = &g->dispatches[d];
  char msg[384];
  snprintf(msg, sizeof(msg),
           "compile: variant %s (%s) left out, the module has one variant: dispatch %u "
           "(%s) has other %s than the baseline's (%llu, not %llu)",
           v->build->name, v->target.cpu, d, dp->label ? dp->label : "-", shape_names[k],
           (unsigned long long)v->shape[3 * d + k], (unsigned long long)base_value(dp, k));
  req->bindings.note(req->bindings.note_user, msg);
}

void tc_variants_check(tc_variants_t *vs, const tc_graph_t *g,
                       const tinyml__compile_request_t *req, const tinyml_allocator_t *a) {
  unsigned kept = 0;
  for (unsigned i = 0; i < vs->count; ++i) {
    tc_variant_t *v = &vs->v[i];
    uint32_t d = 0;
    int k = difference(v, g, &d);
    if (k < 0) {
      vs->v[kept++] = *v;
      continue;
    }
    note_dropped(v, g, d, k, req);
    variant_free(v, a);
  }
  vs->count = kept;
}

uint32_t tc_variants_describe(const tc_variants_t *vs, tmod_variant_t *out,
                              tmod_executable_t *exes) {
  for (unsigned i = 0; i < vs->count; ++i) {
    const tc_variant_t *v = &vs->v[i];
    exes[i] = (tmod_executable_t){"elf", v->target.backend->elf_arch, v->so, v->so_size, 0};
    out[i] = (tmod_variant_t){v->target.cpu, v->target.features, &exes[i]};
  }
  return vs->count;
}

void tc_variants_free(tc_variants_t *vs, const tinyml_allocator_t *a) {
  for (unsigned i = 0; i < vs->count; ++i) variant_free(&vs->v[i], a);
  vs->count = 0;
}
