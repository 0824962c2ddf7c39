/* Tiling the linalg ops at the top of each dispatch function for the
 * runtime's threads (tiling.h): each op that does enough work becomes a loop
 * (the transform dialect's tile_using_for) whose iterations write disjoint
 * slices of its outputs, marked tinyml.wg for distribute.c. */
#include "tiling.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
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
} tiling_t;

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
    if (mlirOperationIsNull(op) || !tc_is_memref_view(op) || tc_op_is(op, "memref.view")) return v;
    v = mlirOperationGetOperand(op, 0);
  }
}

static bool is_heavy_named(MlirOperation op) {
  return tc_op_name_starts(op, "linalg.conv_") || tc_op_name_starts(op, "linalg.depthwise_conv_") ||
         tc_op_name_starts(op, "linalg.pooling_") || tc_op_name_starts(op, "linalg.matmul") ||
         tc_op_name_starts(op, "linalg.batch_matmul");
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
    d->parallel[i] = tc_attr_prints_with(mlirArrayAttrGetElement(iters, i), "parallel");
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
    if (!tc_is_memref(in)) continue;
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

static int group_of(tiling_t *ds, const tile_group_t *t) {
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
static tinyml_status_t plan_tiling(tiling_t *ds, MlirOperation op) {
  intptr_t inputs, inits;
  domain_t d;
  int64_t work;
  if (!tc_dps_split(op, &inputs, &inits) || !linalg_domain(op, inputs, &d, &work) ||
      work < MIN_WORK || !inputs_safe(op, inputs))
    return TINYML_OK;
  for (intptr_t k = inputs; k < inputs + inits; ++k)
    if (!tc_is_memref(mlirOperationGetOperand(op, k))) return TINYML_OK;
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

static MlirWalkResult strip_tile_attr(MlirOperation op, void *user) {
  (void)user;
  mlirOperationRemoveAttributeByName(op, tc_str("tinyml.tile"));
  return MlirWalkResultAdvance;
}

/* One tile_using_for per distinct tile-size list; each loop it makes is
 * marked tinyml.wg (parallel by construction). */
static tinyml_status_t apply_tiling(tiling_t *ds, MlirModule module) {
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
      mlirModuleGetOperation(module), tc_transform_main(lib), mlirModuleGetOperation(lib), opts);
  mlirTransformOptionsDestroy(opts);
  mlirModuleDestroy(lib);
  mlirOperationWalk(mlirModuleGetOperation(module), strip_tile_attr, NULL, MlirWalkPreOrder);
  if (mlirLogicalResultIsFailure(r))
    return tinyml__status_make(ds->a, TINYML_STATUS_INTERNAL,
                               "compiler: workgroup tiling: %s", ds->diag->text);
  return TINYML_OK;
}

tinyml_status_t tc_tile_large_ops(MlirContext ctx, tc_graph_t *g, tc_diag_t *diag,
                                  const tinyml_allocator_t *a) {
  tiling_t ds = {.ctx = ctx, .diag = diag, .a = a};
  MlirBlock mod = mlirModuleGetBody(g->dispatch_module);
  tinyml_status_t st = TINYML_OK;
  for (MlirOperation f = mlirBlockGetFirstOperation(mod); !st && !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func") || tc_dispatch_index(f, g->dispatch_count) < 0) continue;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    for (MlirOperation op = mlirBlockGetFirstOperation(body); !st && !mlirOperationIsNull(op);
         op = mlirOperationGetNextInBlock(op))
      if (tc_op_name_starts(op, "linalg.")) st = plan_tiling(&ds, op);
  }
  diag->len = 0;
  diag->text[0] = '\0';
  if (!st) st = apply_tiling(&ds, g->dispatch_module);
  tinyml__free(a, ds.groups);
  return st;
}

static int64_t mul_sat(int64_t x, int64_t y) {
  int64_t r;
  return __builtin_mul_overflow(x, y, &r) ? INT64_MAX : r;
}

/* What each output point of a named conv or pool sums: the product of its
 * filter's (a pool's window's) dimensions other than the output channels,
 * read from the layout at the end of the op's name (conv_2d_nhwc_fhwc_q:
 * f h w c, f the outputs; depthwise_conv_2d_nhwc_hwcm: h w, c and m name
 * outputs too); a name without one (conv_2d) sums every filter element.
 * 0 when the filter's shape is not static. */
static int64_t window_work(MlirOperation op, intptr_t inputs) {
  int64_t dims[MAX_RANK];
  int rank = 0;
  if (inputs < 2 || !shape_of(mlirOperationGetOperand(op, 1), dims, &rank)) return 0;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  size_t end = name.length;
  if (end > 2 && memcmp(name.data + end - 2, "_q", 2) == 0) end -= 2;
  size_t start = end;
  while (start > 0 && name.data[start - 1] != '_') --start;
  const char *layout = name.data + start;
  bool named = end - start == (size_t)rank;
  for (size_t i = 0; named && i < end - start; ++i) named = strchr("fghwdcm", layout[i]) != NULL;
  bool depthwise = tc_op_name_starts(op, "linalg.depthwise_conv_");
  bool pool = tc_op_name_starts(op, "linalg.pooling_");
  int64_t w = 1;
  for (int i = 0; i < rank; ++i) {
    char l = named && !pool ? layout[i] : 'h';
    if (l != 'f' && l != 'g' && l != 'm' && !(depthwise && l == 'c')) w = mul_sat(w, dims[i]);
  }
  return w;
}

/* Output elements times K of a quantized (batch) matmul, which the tiling
 * leaves whole; 0 when a shape is not static. */
static int64_t quantized_matmul_work(MlirOperation op, intptr_t inputs) {
  int64_t a[MAX_RANK], c[MAX_RANK], w = 1;
  int ra = 0, rc = 0;
  if (inputs < 2 || mlirOperationGetNumOperands(op) <= inputs ||
      !shape_of(mlirOperationGetOperand(op, 0), a, &ra) ||
      !shape_of(mlirOperationGetOperand(op, inputs), c, &rc) || ra == 0)
    return 0;
  for (int i = 0; i < rc; ++i) w = mul_sat(w, c[i]);
  return mul_sat(w, a[ra - 1]);
}

int64_t tc_linalg_work(MlirOperation op) {
  intptr_t inputs, inits;
  domain_t d;
  int64_t work;
  if (!tc_dps_split(op, &inputs, &inits)) return 0;
  if (tc_op_is(op, "linalg.quantized_matmul") || tc_op_is(op, "linalg.quantized_batch_matmul"))
    return quantized_matmul_work(op, inputs);
  if (!linalg_domain(op, inputs, &d, &work)) return 0;
  /* A matmul's points are its output's; each does K multiply-adds. */
  int64_t dims[MAX_RANK];
  int rank = 0;
  if ((tc_op_name_starts(op, "linalg.matmul") || tc_op_name_starts(op, "linalg.batch_matmul")) &&
      inputs > 0 && shape_of(mlirOperationGetOperand(op, 0), dims, &rank) && rank > 0)
    return mul_sat(work / 8, dims[rank - 1]);
  /* A conv's or pool's points are its output's; each sums its window. */
  int64_t window = is_heavy_named(op) ? window_work(op, inputs) : 0;
  return window > 0 ? mul_sat(work / 8, window) : work;
}
