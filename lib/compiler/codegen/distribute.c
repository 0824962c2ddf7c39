/* Splits each dispatch into phases whose work the runtime's threads share
 * (executable ABI 2, lib/module/executable_abi.h).
 *
 * Runs on the bufferized dispatch functions, after the backend strategy and
 * the scratch rewrite.  Every function gets three trailing index arguments:
 * (phase, workgroup, workgroup_count).
 *
 *  1. Tiling.  Each linalg op at the top of a function that does enough work
 *     is tiled along its outermost parallel dimension of extent > 1 (the
 *     transform dialect's tile_using_for), so it becomes a loop whose
 *     iterations write disjoint slices of its outputs.
 *  2. Phases.  The ops at the top of the function that touch memory are cut
 *     into phases, in order.  A phase is a parallel loop (one of step 1's,
 *     or a loop of the strategy's loop nest whose iterations provably write
 *     disjoint memory: see loop_is_parallel and pick_loop), or a run of
 *     other ops, which stays on one thread.  Consecutive parallel loops
 *     with the same bounds share a phase when iteration i of each touches
 *     what the other writes only in iteration i's slice (can_share_phase).
 *     With several phases, the body becomes `scf.index_switch %phase`; the
 *     runtime runs the phases in order and waits for each before the next.
 *  3. Workgroups.  The parallel loop of a phase is cut into workgroup_count
 *     contiguous blocks of iterations, and workgroup w runs block w
 *     (split_loop).  Iterations keep their arithmetic, so results do not
 *     depend on the split.  The number of iterations is the phase's useful
 *     workgroup count.
 *
 * A microkernel call is one phase whose workgroups the kernel itself cuts
 * into bands of output pixels (distribute_uk.c).
 *
 * Pure ops at the top (constants, views, index arithmetic) stay in front of
 * the phases and run in every call.  A function whose shape does not fit
 * (a value crossing phases, too many phases) keeps one phase of one
 * workgroup. */
#include "distribute.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../common/strbuf.h"

/* An op is tiled when its iteration space has at least this many points
 * (heavier ops count 8 per point), and each tile gets about TILE_WORK
 * points: below that, waking a thread costs more than it saves. */
#define MIN_WORK 32768
#define TILE_WORK 1024
#define MAX_RANK 12
#define MAX_TOP_OPS 256

typedef struct tile_group {
  int rank;
  int64_t sizes[MAX_RANK];
} tile_group_t;

typedef struct dist {
  MlirContext ctx;
  tc_diag_t *diag;
  const tinyml_allocator_t *a;
  tile_group_t *groups;
  unsigned group_count, group_cap;
} dist_t;

/* ---- small helpers ---------------------------------------------------- */

static bool name_starts(MlirOperation op, const char *prefix) {
  return strncmp(tc_op_name(op), prefix, strlen(prefix)) == 0;
}

static bool is_memref(MlirValue v) { return mlirTypeIsAMemRef(mlirValueGetType(v)); }

static bool const_index(MlirValue v, int64_t *out) {
  MlirOperation op = tc_value_owner_op(v);
  if (mlirOperationIsNull(op) || !tc_op_is(op, "arith.constant")) return false;
  MlirAttribute val = mlirOperationGetAttributeByName(op, tc_str("value"));
  if (mlirAttributeIsNull(val) || !mlirAttributeIsAInteger(val)) return false;
  *out = mlirIntegerAttrGetValueInt(val);
  return true;
}

/* The op that owns `v`'s definition: its defining op, or for a block
 * argument the op whose region holds the block. */
static MlirOperation defining_scope(MlirValue v) {
  if (mlirValueIsABlockArgument(v))
    return mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
  return mlirOpResultGetOwner(v);
}

/* `op` is `ancestor` or nested inside it. */
static bool is_within(MlirOperation op, MlirOperation ancestor) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
    if (mlirOperationEqual(op, ancestor)) return true;
  return false;
}

static bool is_view(MlirOperation op) {
  return tc_op_is(op, "memref.subview") || tc_op_is(op, "memref.expand_shape") ||
         tc_op_is(op, "memref.collapse_shape") || tc_op_is(op, "memref.cast") ||
         tc_op_is(op, "memref.reinterpret_cast") || tc_op_is(op, "memref.view");
}

static bool has_memref_operand(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    if (is_memref(mlirOperationGetOperand(op, i))) return true;
  return false;
}

/* No memory effects and no regions: safe to run in every phase. */
static bool is_pure(MlirOperation op) {
  if (mlirOperationGetNumRegions(op) != 0) return false;
  if (is_view(op) || tc_op_is(op, "memref.get_global") || tc_op_is(op, "memref.dim") ||
      tc_op_is(op, "memref.extract_strided_metadata"))
    return true;
  if (name_starts(op, "arith.") || name_starts(op, "math.") || name_starts(op, "index.") ||
      name_starts(op, "ub.") || tc_op_is(op, "affine.apply") || tc_op_is(op, "affine.min") ||
      tc_op_is(op, "affine.max"))
    return true;
  return name_starts(op, "vector.") && !tc_op_is(op, "vector.print") &&
         !has_memref_operand(op);
}

static void append_index_args(MlirContext ctx, MlirOperation func, MlirBlock body, int n) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirType ft = mlirTypeAttrGetValue(
      mlirOperationGetAttributeByName(func, tc_str("function_type")));
  intptr_t k = mlirFunctionTypeGetNumInputs(ft);
  MlirType ins[k + n];
  for (intptr_t i = 0; i < k; ++i) ins[i] = mlirFunctionTypeGetInput(ft, i);
  for (int i = 0; i < n; ++i) {
    ins[k + i] = index;
    mlirBlockAddArgument(body, index, mlirLocationUnknownGet(ctx));
  }
  mlirOperationSetAttributeByName(
      func, tc_str("function_type"),
      mlirTypeAttrGet(mlirFunctionTypeGet(ctx, k + n, ins, 0, NULL)));
}

static MlirValue build_binary(MlirContext ctx, const char *name, MlirValue x, MlirValue y,
                              MlirOperation before) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirOperationState st = mlirOperationStateGet(tc_str(name), mlirLocationUnknownGet(ctx));
  MlirValue operands[2] = {x, y};
  mlirOperationStateAddOperands(&st, 2, operands);
  mlirOperationStateAddResults(&st, 1, &index);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}

/* ---- 1. tiling the linalg ops at the top of each function ------------ */

static bool shape_of(MlirValue v, int64_t *dims, int *rank) {
  MlirType t = mlirValueGetType(v);
  if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasRank(t)) return false;
  *rank = (int)mlirShapedTypeGetRank(t);
  if (*rank > MAX_RANK) return false;
  for (int i = 0; i < *rank; ++i) {
    dims[i] = mlirShapedTypeGetDimSize(t, i);
    if (mlirShapedTypeIsDynamicSize(dims[i])) return false;
  }
  return true;
}

/* Follows views up to the buffer they slice. */
static MlirValue buffer_root(MlirValue v) {
  for (;;) {
    MlirOperation op = tc_value_owner_op(v);
    if (mlirOperationIsNull(op) || !is_view(op) || tc_op_is(op, "memref.view")) return v;
    v = mlirOperationGetOperand(op, 0);
  }
}

/* Inputs then inits of a structured op on buffers. */
static bool dps_split(MlirOperation op, intptr_t *inputs, intptr_t *inits) {
  intptr_t n = mlirOperationGetNumOperands(op);
  MlirAttribute seg = mlirOperationGetAttributeByName(op, tc_str("operandSegmentSizes"));
  if (!mlirAttributeIsNull(seg) && mlirAttributeIsADenseI32Array(seg) &&
      mlirDenseArrayGetNumElements(seg) == 2) {
    *inputs = mlirDenseI32ArrayGetElement(seg, 0);
    *inits = mlirDenseI32ArrayGetElement(seg, 1);
  } else if (tc_op_is(op, "linalg.reduce")) {
    *inputs = *inits = n / 2;
  } else if (tc_op_is(op, "linalg.transpose") || tc_op_is(op, "linalg.broadcast") ||
             tc_op_is(op, "linalg.map")) {
    *inputs = n - 1;
    *inits = 1;
  } else {
    return false;
  }
  return *inputs + *inits == n && *inits >= 1;
}

static bool is_heavy_named(MlirOperation op) {
  return name_starts(op, "linalg.conv_") || name_starts(op, "linalg.depthwise_conv_") ||
         name_starts(op, "linalg.pooling_") || name_starts(op, "linalg.matmul") ||
         name_starts(op, "linalg.batch_matmul");
}

/* Named ops whose leading loops are the dimensions of their (first) init,
 * all parallel, in order. */
static bool leads_with_init_dims(MlirOperation op) {
  return tc_op_is(op, "linalg.copy") || tc_op_is(op, "linalg.fill") ||
         tc_op_is(op, "linalg.map") || tc_op_is(op, "linalg.transpose") ||
         tc_op_is(op, "linalg.broadcast") || tc_op_is(op, "linalg.elementwise") ||
         is_heavy_named(op);
}

typedef struct domain {
  int rank;
  int64_t extent[MAX_RANK];
  bool parallel[MAX_RANK];
  bool in_init[MAX_RANK]; /* a plain dimension of every init's indexing */
} domain_t;

static void print_to_buf(MlirStringRef s, void *user) {
  char *buf = user;
  size_t have = strlen(buf);
  size_t n = s.length < 63 - have ? s.length : 63 - have;
  memcpy(buf + have, s.data, n);
  buf[have + n] = '\0';
}

static bool generic_domain(MlirOperation op, intptr_t inputs, domain_t *d) {
  MlirAttribute maps = mlirOperationGetAttributeByName(op, tc_str("indexing_maps"));
  MlirAttribute iters = mlirOperationGetAttributeByName(op, tc_str("iterator_types"));
  if (mlirAttributeIsNull(maps) || mlirAttributeIsNull(iters)) return false;
  intptr_t n = mlirArrayAttrGetNumElements(iters);
  if (n <= 0 || n > MAX_RANK ||
      mlirArrayAttrGetNumElements(maps) != mlirOperationGetNumOperands(op))
    return false;
  d->rank = (int)n;
  for (intptr_t i = 0; i < n; ++i) {
    char text[64] = "";
    mlirAttributePrint(mlirArrayAttrGetElement(iters, i), print_to_buf, text);
    d->parallel[i] = strstr(text, "parallel") != NULL;
    d->extent[i] = -1;
    d->in_init[i] = true;
  }
  for (intptr_t k = 0; k < mlirOperationGetNumOperands(op); ++k) {
    MlirAffineMap map = mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, k));
    int64_t dims[MAX_RANK];
    int rank = 0;
    MlirValue v = mlirOperationGetOperand(op, k);
    bool shaped = mlirTypeIsAShaped(mlirValueGetType(v));
    if (shaped && !shape_of(v, dims, &rank)) return false;
    if (!shaped) rank = 0;
    if (mlirAffineMapGetNumResults(map) != rank) return false;
    bool seen[MAX_RANK] = {false};
    for (int j = 0; j < rank; ++j) {
      MlirAffineExpr e = mlirAffineMapGetResult(map, j);
      if (!mlirAffineExprIsADim(e)) continue;
      intptr_t p = mlirAffineDimExprGetPosition(e);
      if (p < 0 || p >= n) return false;
      d->extent[p] = dims[j];
      seen[p] = true;
    }
    if (k >= inputs)
      for (intptr_t i = 0; i < n; ++i) d->in_init[i] = d->in_init[i] && seen[i];
  }
  for (intptr_t i = 0; i < n; ++i)
    if (d->extent[i] < 0) return false;
  return true;
}

static bool linalg_domain(MlirOperation op, intptr_t inputs, domain_t *d, int64_t *work) {
  int64_t dims[MAX_RANK];
  int rank = 0;
  if (tc_op_is(op, "linalg.generic")) {
    if (!generic_domain(op, inputs, d)) return false;
  } else if (tc_op_is(op, "linalg.reduce")) {
    MlirAttribute red = mlirOperationGetAttributeByName(op, tc_str("dimensions"));
    if (mlirAttributeIsNull(red) || !mlirAttributeIsADenseI64Array(red) ||
        !shape_of(mlirOperationGetOperand(op, 0), dims, &rank))
      return false;
    d->rank = rank;
    for (int i = 0; i < rank; ++i) {
      d->extent[i] = dims[i];
      d->parallel[i] = d->in_init[i] = true;
    }
    for (intptr_t j = 0; j < mlirDenseArrayGetNumElements(red); ++j) {
      int64_t r = mlirDenseI64ArrayGetElement(red, j);
      if (r < 0 || r >= rank) return false;
      d->parallel[r] = d->in_init[r] = false;
    }
  } else if (leads_with_init_dims(op)) {
    if (!shape_of(mlirOperationGetOperand(op, inputs), dims, &rank) || rank == 0)
      return false;
    d->rank = rank;
    for (int i = 0; i < rank; ++i) {
      d->extent[i] = dims[i];
      d->parallel[i] = d->in_init[i] = true;
    }
  } else {
    return false;
  }
  *work = 1;
  for (int i = 0; i < d->rank; ++i) *work *= d->extent[i] > 0 ? d->extent[i] : 1;
  if (is_heavy_named(op)) *work *= 8;
  return true;
}

/* An input that is also an init must be read exactly where it is written
 * (generic ops with equal maps); anything else could read another tile's
 * output, so such ops stay whole. */
static bool inputs_safe(MlirOperation op, intptr_t inputs) {
  intptr_t n = mlirOperationGetNumOperands(op);
  MlirAttribute maps = mlirOperationGetAttributeByName(op, tc_str("indexing_maps"));
  for (intptr_t i = 0; i < inputs; ++i) {
    MlirValue in = mlirOperationGetOperand(op, i);
    if (!is_memref(in)) continue;
    for (intptr_t k = inputs; k < n; ++k) {
      if (!mlirValueEqual(buffer_root(in), buffer_root(mlirOperationGetOperand(op, k))))
        continue;
      if (!tc_op_is(op, "linalg.generic") || mlirAttributeIsNull(maps) ||
          !mlirValueEqual(in, mlirOperationGetOperand(op, k)) ||
          !mlirAffineMapEqual(mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, i)),
                              mlirAffineMapAttrGetValue(mlirArrayAttrGetElement(maps, k))))
        return false;
    }
  }
  return true;
}

static int group_of(dist_t *ds, const tile_group_t *t) {
  for (unsigned i = 0; i < ds->group_count; ++i)
    if (ds->groups[i].rank == t->rank &&
        memcmp(ds->groups[i].sizes, t->sizes, sizeof(int64_t) * (size_t)t->rank) == 0)
      return (int)i;
  if (ds->group_count == ds->group_cap) {
    unsigned cap = ds->group_cap ? 2 * ds->group_cap : 16;
    tile_group_t *g = tinyml__alloc(ds->a, cap * sizeof(*g), 8);
    if (!g) return -1;
    if (ds->group_count) memcpy(g, ds->groups, ds->group_count * sizeof(*g));
    tinyml__free(ds->a, ds->groups);
    ds->groups = g;
    ds->group_cap = cap;
  }
  ds->groups[ds->group_count] = *t;
  return (int)ds->group_count++;
}

/* Marks `op` with tinyml.tile = <group> when it is worth splitting. */
static tinyml_status_t plan_tiling(dist_t *ds, MlirOperation op) {
  intptr_t inputs, inits;
  domain_t d;
  int64_t work;
  if (!dps_split(op, &inputs, &inits) || !linalg_domain(op, inputs, &d, &work) ||
      work < MIN_WORK || !inputs_safe(op, inputs))
    return TINYML_OK;
  for (intptr_t k = inputs; k < inputs + inits; ++k)
    if (!is_memref(mlirOperationGetOperand(op, k))) return TINYML_OK;
  int dim = -1;
  for (int i = 0; i < d.rank && dim < 0; ++i)
    if (d.parallel[i] && d.extent[i] > 1) dim = i;
  if (dim < 0 || !d.in_init[dim]) return TINYML_OK;
  int64_t inner = 1;
  for (int i = dim + 1; i < d.rank; ++i) inner *= d.extent[i] > 0 ? d.extent[i] : 1;
  int64_t tile = inner >= TILE_WORK ? 1 : (TILE_WORK + inner - 1) / inner;
  if (tile >= d.extent[dim]) return TINYML_OK;
  tile_group_t t = {.rank = dim + 1};
  t.sizes[dim] = tile;
  int g = group_of(ds, &t);
  if (g < 0)
    return tinyml__status_make(ds->a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  mlirOperationSetAttributeByName(op, tc_str("tinyml.tile"),
                                  mlirIntegerAttrGet(mlirIntegerTypeGet(ds->ctx, 64), g));
  return TINYML_OK;
}

static MlirOperation find_main(MlirModule lib) {
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(lib));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute n = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(n) && mlirAttributeIsAString(n) &&
        mlirStringRefEqual(mlirStringAttrGetValue(n), tc_str("__transform_main")))
      return op;
  }
  MlirOperation none = {NULL};
  return none;
}

static MlirWalkResult strip_tile_attr(MlirOperation op, void *user) {
  (void)user;
  mlirOperationRemoveAttributeByName(op, tc_str("tinyml.tile"));
  return MlirWalkResultAdvance;
}

/* One tile_using_for per distinct tile-size list; each loop it makes is
 * marked tinyml.wg (parallel by construction). */
static tinyml_status_t apply_tiling(dist_t *ds, MlirModule module) {
  if (!ds->group_count) return TINYML_OK;
  strbuf_t sb;
  strbuf_init(&sb, ds->a);
  strbuf_append(&sb,
                "module attributes {transform.with_named_sequence} {\n"
                "transform.named_sequence @__transform_main(%root: !transform.any_op "
                "{transform.readonly}) {\n");
  for (unsigned g = 0; g < ds->group_count; ++g) {
    strbuf_printf(&sb,
                  "%%m%u = transform.structured.match attributes{tinyml.tile = %u : i64} "
                  "in %%root : (!transform.any_op) -> !transform.any_op\n"
                  "%%t%u, %%l%u = transform.structured.tile_using_for %%m%u tile_sizes [",
                  g, g, g, g, g);
    for (int i = 0; i < ds->groups[g].rank; ++i)
      strbuf_printf(&sb, "%s%lld", i ? ", " : "", (long long)ds->groups[g].sizes[i]);
    strbuf_printf(&sb,
                  "] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
                  "transform.annotate %%l%u \"tinyml.wg\" : !transform.any_op\n", g);
  }
  strbuf_append(&sb, "transform.yield\n}\n}\n");
  size_t len = 0;
  char *text = strbuf_take(&sb, &len);
  strbuf_free(&sb);
  if (!text)
    return tinyml__status_make(ds->a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  MlirModule lib = mlirModuleCreateParse(ds->ctx, mlirStringRefCreate(text, len));
  tinyml__free(ds->a, text);
  if (mlirModuleIsNull(lib))
    return tinyml__status_make(ds->a, TINYML_STATUS_INTERNAL,
                               "compiler: workgroup tiling script: %s", ds->diag->text);
  MlirTransformOptions opts = mlirTransformOptionsCreate();
  MlirLogicalResult r = mlirTransformApplyNamedSequence(
      mlirModuleGetOperation(module), find_main(lib), mlirModuleGetOperation(lib), opts);
  mlirTransformOptionsDestroy(opts);
  mlirModuleDestroy(lib);
  mlirOperationWalk(mlirModuleGetOperation(module), strip_tile_attr, NULL, MlirWalkPreOrder);
  if (mlirLogicalResultIsFailure(r))
    return tinyml__status_make(ds->a, TINYML_STATUS_INTERNAL,
                               "compiler: workgroup tiling: %s", ds->diag->text);
  return TINYML_OK;
}

/* ---- 2. which loops may be split ------------------------------------- */

/* One memory access inside a candidate loop: the buffer it reaches and, when
 * the view chain slices a loop-invariant `parent` at the induction variable
 * along `dim` with a footprint no wider than the step, that slice. */
typedef struct access {
  MlirValue root;
  bool write, sliced;
  MlirValue parent;
  intptr_t dim;
} access_t;

typedef struct loop_scan {
  MlirOperation loop;
  MlirValue iv;
  int64_t step;
  access_t *acc;
  size_t count, cap;
  const tinyml_allocator_t *a;
  bool unknown; /* an op with memory effects we cannot describe */
} loop_scan_t;

/* Is dimension j of this subview sliced at `iv`, footprint <= step? */
static bool subview_at_iv(MlirOperation sv, MlirValue iv, int64_t step, intptr_t *dim) {
  MlirAttribute offs = mlirOperationGetAttributeByName(sv, tc_str("static_offsets"));
  MlirAttribute sizes = mlirOperationGetAttributeByName(sv, tc_str("static_sizes"));
  MlirAttribute strides = mlirOperationGetAttributeByName(sv, tc_str("static_strides"));
  if (mlirAttributeIsNull(offs) || mlirAttributeIsNull(sizes) || mlirAttributeIsNull(strides))
    return false;
  intptr_t dynamic = 0;
  for (intptr_t j = 0; j < mlirDenseArrayGetNumElements(offs); ++j) {
    int64_t o = mlirDenseI64ArrayGetElement(offs, j);
    if (!mlirShapedTypeIsDynamicSize(o) && o != mlirShapedTypeGetDynamicStrideOrOffset())
      continue;
    MlirValue v = mlirOperationGetOperand(sv, 1 + dynamic++);
    int64_t size = mlirDenseI64ArrayGetElement(sizes, j);
    int64_t stride = mlirDenseI64ArrayGetElement(strides, j);
    if (!mlirValueEqual(v, iv) || mlirShapedTypeIsDynamicSize(size) || size < 1 ||
        stride == mlirShapedTypeGetDynamicStrideOrOffset() || stride < 1)
      continue;
    if ((size - 1) * stride + 1 <= step) {
      *dim = j;
      return true;
    }
  }
  return false;
}

/* Extent along each dimension of `memref` that an access of `vector`
 * through `perm` (memref dims -> vector dims; null: minor identity) covers. */
static bool vector_extents(MlirValue memref, MlirType vector, MlirAttribute perm,
                           int64_t *extent, intptr_t *rank) {
  MlirType mt = mlirValueGetType(memref);
  *rank = mlirShapedTypeGetRank(mt);
  if (*rank > MAX_RANK) return false;
  for (intptr_t j = 0; j < *rank; ++j) extent[j] = 1;
  if (mlirTypeIsNull(vector)) return true; /* scalar access */
  if (!mlirTypeIsAVector(vector)) return false;
  intptr_t vr = mlirShapedTypeGetRank(vector);
  if (mlirAttributeIsNull(perm)) {
    if (vr > *rank) return false;
    for (intptr_t k = 0; k < vr; ++k)
      extent[*rank - vr + k] = mlirShapedTypeGetDimSize(vector, k);
    return true;
  }
  MlirAffineMap map = mlirAffineMapAttrGetValue(perm);
  if (mlirAffineMapGetNumResults(map) != vr) return false;
  for (intptr_t k = 0; k < vr; ++k) {
    MlirAffineExpr e = mlirAffineMapGetResult(map, k);
    if (!mlirAffineExprIsADim(e)) continue; /* a broadcast dimension */
    intptr_t j = mlirAffineDimExprGetPosition(e);
    if (j < 0 || j >= *rank) return false;
    extent[j] = mlirShapedTypeGetDimSize(vector, k);
  }
  return true;
}

/* `op` indexes `memref` at `first` (operands first, first + 1, ... one per
 * dimension) with the induction variable along some dimension whose extent
 * is no wider than the step. */
static bool indexed_at_iv(const loop_scan_t *s, MlirOperation op, MlirValue memref,
                          intptr_t first, MlirType vector, intptr_t *dim) {
  int64_t extent[MAX_RANK];
  intptr_t rank;
  MlirAttribute perm = mlirOperationGetAttributeByName(op, tc_str("permutation_map"));
  if (!vector_extents(memref, vector, perm, extent, &rank) ||
      first + rank > mlirOperationGetNumOperands(op))
    return false;
  for (intptr_t j = 0; j < rank; ++j)
    if (mlirValueEqual(mlirOperationGetOperand(op, first + j), s->iv) && extent[j] >= 1 &&
        extent[j] <= s->step) {
      *dim = j;
      return true;
    }
  return false;
}

/* Records an access to `v`; `direct` (when not null) is `v` sliced by the
 * accessing op's own indices. */
static void record(loop_scan_t *s, MlirValue v, bool write, const access_t *direct) {
  if (!is_memref(v)) return;
  access_t acc = {.write = write};
  for (;;) {
    MlirOperation op = tc_value_owner_op(v);
    if (mlirOperationIsNull(op) || !is_view(op) || tc_op_is(op, "memref.view")) break;
    MlirValue src = mlirOperationGetOperand(op, 0);
    intptr_t dim;
    if (!acc.sliced && tc_op_is(op, "memref.subview") &&
        !is_within(defining_scope(src), s->loop) &&
        subview_at_iv(op, s->iv, s->step, &dim)) {
      acc.sliced = true;
      acc.parent = src;
      acc.dim = dim;
    }
    v = src;
  }
  if (!acc.sliced && direct) {
    acc.sliced = true;
    acc.parent = direct->parent;
    acc.dim = direct->dim;
  }
  acc.root = v;
  if (is_within(defining_scope(v), s->loop)) return; /* private to an iteration */
  if (s->count == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    access_t *n = tinyml__alloc(s->a, cap * sizeof(*n), 8);
    if (!n) {
      s->unknown = true; /* no memory: do not split */
      return;
    }
    if (s->count) memcpy(n, s->acc, s->count * sizeof(*n));
    tinyml__free(s->a, s->acc);
    s->acc = n;
    s->cap = cap;
  }
  s->acc[s->count++] = acc;
}

/* An access by `op` to its operand `operand`, indexed by the operands from
 * `first` on; `vector` is the accessed vector type (null: one element). */
static void record_indexed(loop_scan_t *s, MlirOperation op, intptr_t operand, bool write,
                           intptr_t first, MlirType vector) {
  MlirValue m = mlirOperationGetOperand(op, operand);
  access_t direct = {.parent = m};
  bool sliced = !is_within(defining_scope(m), s->loop) &&
                indexed_at_iv(s, op, m, first, vector, &direct.dim);
  record(s, m, write, sliced ? &direct : NULL);
}

static MlirWalkResult scan_op(MlirOperation op, void *user) {
  loop_scan_t *s = user;
  MlirType scalar = {NULL};
  if (mlirOperationEqual(op, s->loop)) return MlirWalkResultAdvance;
  if (tc_op_is(op, "vector.transfer_read") || tc_op_is(op, "vector.load")) {
    record_indexed(s, op, 0, false, 1, mlirValueGetType(mlirOperationGetResult(op, 0)));
  } else if (tc_op_is(op, "memref.load")) {
    record_indexed(s, op, 0, false, 1, scalar);
  } else if (tc_op_is(op, "vector.transfer_write") || tc_op_is(op, "vector.store")) {
    record_indexed(s, op, 1, true, 2, mlirValueGetType(mlirOperationGetOperand(op, 0)));
  } else if (tc_op_is(op, "memref.store")) {
    record_indexed(s, op, 1, true, 2, scalar);
  } else if (tc_op_is(op, "vector.maskedload") || tc_op_is(op, "vector.gather") ||
             tc_op_is(op, "vector.expandload")) {
    record(s, mlirOperationGetOperand(op, 0), false, NULL);
  } else if (tc_op_is(op, "vector.maskedstore") || tc_op_is(op, "vector.scatter") ||
             tc_op_is(op, "vector.compressstore")) {
    record(s, mlirOperationGetOperand(op, 0), true, NULL);
  } else if (tc_op_is(op, "memref.copy")) {
    record(s, mlirOperationGetOperand(op, 0), false, NULL);
    record(s, mlirOperationGetOperand(op, 1), true, NULL);
  } else if (name_starts(op, "linalg.") && has_memref_operand(op)) {
    intptr_t inputs, inits;
    if (!dps_split(op, &inputs, &inits)) {
      s->unknown = true;
      return MlirWalkResultInterrupt;
    }
    for (intptr_t i = 0; i < inputs + inits; ++i)
      record(s, mlirOperationGetOperand(op, i), i >= inputs, NULL);
  } else if (tc_op_is(op, "func.call") || name_starts(op, "llvm.") ||
             tc_op_is(op, "memref.alloc") || tc_op_is(op, "memref.dealloc") ||
             tc_op_is(op, "vector.print") ||
             (has_memref_operand(op) && !is_pure(op) && !tc_op_is(op, "memref.alloca"))) {
    s->unknown = true;
    return MlirWalkResultInterrupt;
  }
  return s->unknown ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

static bool loop_bounds(MlirOperation loop, int64_t *lb, int64_t *ub, int64_t *step) {
  return tc_op_is(loop, "scf.for") && mlirOperationGetNumOperands(loop) == 3 &&
         mlirOperationGetNumResults(loop) == 0 &&
         mlirTypeIsAIndex(mlirValueGetType(mlirOperationGetOperand(loop, 0))) &&
         const_index(mlirOperationGetOperand(loop, 0), lb) &&
         const_index(mlirOperationGetOperand(loop, 1), ub) &&
         const_index(mlirOperationGetOperand(loop, 2), step) && *step > 0 && *ub > *lb;
}

/* Iterations are independent when every buffer the loop writes is reached,
 * by every access to it inside the loop, through a slice of the same
 * loop-invariant parent at the induction variable along the same dimension,
 * no wider than the step: iteration i then touches only [i, i + step) of
 * that dimension of the buffer, which no other iteration touches.  Buffers
 * are disjoint from one another: arguments are distinct bindings and scratch
 * views are distinct allocations.  Buffers that are only read may be read
 * anywhere. */
/* Collects the accesses of `loop` (constant bounds) into `s`; false when
 * an op's memory effects are unknown.  Free s->acc with tinyml__free. */
static bool scan_loop(MlirOperation loop, const tinyml_allocator_t *a, loop_scan_t *s) {
  int64_t lb, ub, step;
  *s = (loop_scan_t){.loop = loop, .a = a};
  if (!loop_bounds(loop, &lb, &ub, &step)) return false;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
  s->iv = mlirBlockGetArgument(body, 0);
  s->step = step;
  mlirOperationWalk(loop, scan_op, s, MlirWalkPreOrder);
  return !s->unknown;
}

/* Accesses x and y may be in different iterations (of one loop, or of two
 * loops with the same bounds run by the same workgroups) unless they
 * conflict: same buffer, one writes, and not both in the iteration's own
 * slice of it. */
static bool conflict(const access_t *x, const access_t *y) {
  if (!(x->write || y->write) || !mlirValueEqual(x->root, y->root)) return false;
  return !(x->sliced && y->sliced && mlirValueEqual(x->parent, y->parent) &&
           x->dim == y->dim);
}

static bool scans_conflict(const loop_scan_t *x, const loop_scan_t *y) {
  for (size_t i = 0; i < x->count; ++i)
    for (size_t j = 0; j < y->count; ++j)
      if (conflict(&x->acc[i], &y->acc[j])) return true;
  return false;
}

static bool loop_is_parallel(MlirOperation loop, const tinyml_allocator_t *a) {
  loop_scan_t s;
  bool ok = scan_loop(loop, a, &s) && !scans_conflict(&s, &s);
  tinyml__free(a, s.acc);
  return ok;
}

/* Two split top-level loops can share a phase, with no wait between them,
 * when they have the same bounds (so iteration i runs in the same
 * workgroup in both) and every buffer one writes and the other touches is
 * touched by both only in iteration i's own slice. */
static bool can_share_phase(MlirOperation x, MlirOperation y, const tinyml_allocator_t *a) {
  int64_t xl, xu, xs, yl, yu, ys;
  if (!loop_bounds(x, &xl, &xu, &xs) || !loop_bounds(y, &yl, &yu, &ys) || xl != yl ||
      xu != yu || xs != ys)
    return false;
  loop_scan_t sx, sy;
  bool ok = scan_loop(x, a, &sx) && scan_loop(y, a, &sy) && !scans_conflict(&sx, &sy);
  tinyml__free(a, sx.acc);
  tinyml__free(a, sy.acc);
  return ok;
}

static uint32_t trip_count(MlirOperation loop);

/* The loop of a strategy's nest to split: the outermost parallel one with
 * at least GOOD_TRIPS iterations, else the parallel one with the most,
 * looking inside loops whose body is one loop plus pure ops.  (A split
 * inner loop runs its outer loops in every workgroup, which is fine.) */
#define GOOD_TRIPS 8
static MlirOperation pick_loop(MlirOperation loop, const tinyml_allocator_t *a) {
  MlirOperation none = {NULL}, best = none;
  uint32_t best_trips = 1;
  while (!mlirOperationIsNull(loop)) {
    if (loop_is_parallel(loop, a)) {
      uint32_t trips = trip_count(loop);
      if (trips >= GOOD_TRIPS) return loop;
      if (trips > best_trips) {
        best = loop;
        best_trips = trips;
      }
    }
    if (mlirOperationGetNumRegions(loop) != 1) break;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
    MlirOperation inner = none;
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op)) {
      if (is_pure(op) || tc_op_is(op, "scf.yield")) continue;
      if (!mlirOperationIsNull(inner) || !tc_op_is(op, "scf.for")) {
        inner = none;
        break;
      }
      inner = op;
    }
    loop = inner;
  }
  return best;
}

/* ---- 3. phases and workgroups ---------------------------------------- */

typedef struct top_op {
  MlirOperation op;
  MlirOperation loop; /* the loop split over workgroups, or null */
  uint32_t workgroups;
  uint32_t phase;
} top_op_t;

static int64_t exact_trips(MlirOperation loop) {
  int64_t lb, ub, step;
  if (!loop_bounds(loop, &lb, &ub, &step)) return 1;
  return (ub - lb + step - 1) / step;
}

/* As a workgroup count (more than 65535 are not useful). */
static uint32_t trip_count(MlirOperation loop) {
  int64_t n = exact_trips(loop);
  return n > 0xffff ? 0xffff : (uint32_t)n;
}

static uint32_t phase_of(const top_op_t *ops, size_t n, MlirOperation user,
                         MlirOperation func) {
  for (MlirOperation p = mlirOperationGetParentOperation(user);
       !mlirOperationIsNull(p) && !mlirOperationEqual(p, func);
       p = mlirOperationGetParentOperation(p))
    user = p;
  for (size_t i = 0; i < n; ++i)
    if (mlirOperationEqual(ops[i].op, user)) return ops[i].phase;
  return UINT32_MAX; /* a pure op or the terminator */
}

static MlirValue build_index(MlirContext ctx, int64_t value, MlirOperation before) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirOperationState st =
      mlirOperationStateGet(tc_str("arith.constant"), mlirLocationUnknownGet(ctx));
  MlirNamedAttribute v = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("value")),
                                               mlirIntegerAttrGet(index, value));
  mlirOperationStateAddAttributes(&st, 1, &v);
  mlirOperationStateAddResults(&st, 1, &index);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}

/* A loop of n iterations, `for i = lb to ub step s`, becomes
 * `for i = lb + (wg*n/count)*s to lb + ((wg+1)*n/count)*s step s`: each
 * workgroup runs one contiguous block of iterations (neighbouring rows
 * share cache lines and stay on one thread), the blocks cover every
 * iteration once, and a workgroup past the n-th runs none. */
static void split_loop(MlirContext ctx, MlirOperation loop, MlirValue wg, MlirValue count) {
  MlirValue lb = mlirOperationGetOperand(loop, 0);
  MlirValue step = mlirOperationGetOperand(loop, 2);
  MlirValue n = build_index(ctx, exact_trips(loop), loop);
  MlirValue one = build_index(ctx, 1, loop);
  MlirValue k0 = build_binary(ctx, "arith.divui", build_binary(ctx, "arith.muli", wg, n, loop),
                              count, loop);
  MlirValue k1 = build_binary(
      ctx, "arith.divui",
      build_binary(ctx, "arith.muli", build_binary(ctx, "arith.addi", wg, one, loop), n, loop),
      count, loop);
  mlirOperationSetOperand(
      loop, 0, build_binary(ctx, "arith.addi", lb, build_binary(ctx, "arith.muli", k0, step, loop), loop));
  mlirOperationSetOperand(
      loop, 1, build_binary(ctx, "arith.addi", lb, build_binary(ctx, "arith.muli", k1, step, loop), loop));
}

static MlirOperation build_switch(MlirContext ctx, MlirValue phase, uint32_t phases,
                                  MlirOperation before) {
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  int64_t cases[TC_MAX_PHASES];
  MlirRegion regions[TC_MAX_PHASES + 1];
  for (uint32_t i = 0; i <= phases; ++i) {
    if (i < phases) cases[i] = i;
    regions[i] = mlirRegionCreate();
    MlirBlock b = mlirBlockCreate(0, NULL, NULL);
    mlirRegionAppendOwnedBlock(regions[i], b);
    MlirOperationState y = mlirOperationStateGet(tc_str("scf.yield"), loc);
    mlirBlockAppendOwnedOperation(b, mlirOperationCreate(&y));
  }
  MlirOperationState st = mlirOperationStateGet(tc_str("scf.index_switch"), loc);
  mlirOperationStateAddOperands(&st, 1, &phase);
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("cases")),
                                                  mlirDenseI64ArrayGet(ctx, phases, cases));
  mlirOperationStateAddAttributes(&st, 1, &attr);
  mlirOperationStateAddOwnedRegions(&st, phases + 1, regions); /* default first */
  MlirOperation sw = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, sw);
  return sw;
}

/* Decides the phases of one function and rewrites it.  `split`: whether
 * loops may be split at all (targets whose runtime has no threads keep
 * their code as it was). */
static void distribute_function(MlirContext ctx, MlirOperation func, tc_dispatch_t *d,
                                bool split, const tinyml_allocator_t *a) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  intptr_t nargs = mlirBlockGetNumArguments(body);
  append_index_args(ctx, func, body, 3);
  MlirValue phase = mlirBlockGetArgument(body, nargs);
  MlirValue wg = mlirBlockGetArgument(body, nargs + 1);
  MlirValue count = mlirBlockGetArgument(body, nargs + 2);
  d->phase_count = 1;
  d->workgroups[0] = 1;
  if (tc_distribute_ukernel(ctx, func, d, split)) return;

  top_op_t ops[MAX_TOP_OPS];
  size_t n = 0;
  MlirOperation term = mlirBlockGetTerminator(body);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    bool tiled = !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str("tinyml.wg")));
    if (tiled) mlirOperationRemoveAttributeByName(op, tc_str("tinyml.wg"));
    if (mlirOperationEqual(op, term) || is_pure(op)) continue;
    if (n == MAX_TOP_OPS) return;
    top_op_t t = {.op = op, .workgroups = 1};
    if (split && tc_op_is(op, "scf.for")) {
      MlirOperation loop = tiled ? op : pick_loop(op, a);
      uint32_t w = mlirOperationIsNull(loop) ? 1 : trip_count(loop);
      if (w > 1) {
        t.loop = loop;
        t.workgroups = w;
      }
    }
    ops[n++] = t;
  }
  /* Runs of unsplit ops share a phase, and so do runs of split top-level
   * loops that can_share_phase pairwise; any other op starts a phase. */
  uint32_t phases = 0;
  size_t start = 0; /* first op of the current phase */
  for (size_t i = 0; i < n; ++i) {
    bool joins = i > 0 && ops[i].workgroups == 1 && ops[i - 1].workgroups == 1;
    if (i > 0 && ops[i].workgroups > 1 && ops[i - 1].workgroups > 1) {
      joins = true;
      for (size_t j = start; joins && j < i; ++j)
        joins = mlirOperationEqual(ops[j].loop, ops[j].op) &&
                mlirOperationEqual(ops[i].loop, ops[i].op) &&
                can_share_phase(ops[j].op, ops[i].op, a);
    }
    if (!joins) start = i;
    ops[i].phase = joins ? phases - 1 : phases++;
  }
  if (phases > TC_MAX_PHASES) return;
  /* Values must not cross phases, and pure ops left in front of the phases
   * must not use what a phase computes. */
  for (size_t i = 0; i < n; ++i)
    for (intptr_t r = 0; r < mlirOperationGetNumResults(ops[i].op); ++r)
      for (MlirOpOperand u = mlirValueGetFirstUse(mlirOperationGetResult(ops[i].op, r));
           !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
        if (phase_of(ops, n, mlirOpOperandGetOwner(u), func) != ops[i].phase) return;
  for (size_t i = 0; i < n; ++i)
    if (!mlirOperationIsNull(ops[i].loop)) split_loop(ctx, ops[i].loop, wg, count);
  for (uint32_t p = 0; p < phases; ++p) d->workgroups[p] = 1;
  for (size_t i = 0; i < n; ++i)
    if (ops[i].workgroups > d->workgroups[ops[i].phase])
      d->workgroups[ops[i].phase] = ops[i].workgroups;
  d->phase_count = phases ? phases : 1;
  if (phases <= 1) return;
  MlirOperation sw = build_switch(ctx, phase, phases, term);
  for (size_t i = 0; i < n; ++i) {
    MlirRegion r = mlirOperationGetRegion(sw, 1 + ops[i].phase);
    mlirOperationMoveBefore(ops[i].op, mlirBlockGetTerminator(mlirRegionGetFirstBlock(r)));
  }
}

tinyml_status_t tc_distribute(MlirContext ctx, const tinyml_backend_t *be, tc_graph_t *g,
                              tc_diag_t *diag, const tinyml_allocator_t *a) {
  /* Runtimes without threads (bare metal) call each entry once: their
   * kernels stay as they are. */
  bool split = be->threads != 0;
  dist_t ds = {.ctx = ctx, .diag = diag, .a = a};
  MlirBlock mod = mlirModuleGetBody(g->dispatch_module);
  tinyml_status_t st = TINYML_OK;
  for (MlirOperation f = mlirBlockGetFirstOperation(mod); split && !st && !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func") || tc_dispatch_index(f, g->dispatch_count) < 0) continue;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !st && !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op))
      if (name_starts(op, "linalg.")) st = plan_tiling(&ds, op);
  }
  diag->len = 0;
  diag->text[0] = '\0';
  if (!st) st = apply_tiling(&ds, g->dispatch_module);
  tinyml__free(a, ds.groups);
  if (st) return st;
  for (MlirOperation f = mlirBlockGetFirstOperation(mod); !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    long idx = tc_op_is(f, "func.func") ? tc_dispatch_index(f, g->dispatch_count) : -1;
    if (idx >= 0) distribute_function(ctx, f, &g->dispatches[idx], split, a);
  }
  return TINYML_OK;
}
