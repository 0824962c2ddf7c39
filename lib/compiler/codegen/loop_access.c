/* Which loops of a strategy's nest may be split over workgroups
 * (loop_access.h): a loop is parallel when every buffer it writes is
 * reached, by every access inside it, through a slice of one
 * loop-invariant view at the induction variable along one dimension, no
 * wider than the step (subviews, or the indices of vector transfers and
 * loads/stores).  Buffers are disjoint from each other (bindings are
 * distinct, scratch allocations too).  A stack buffer each iteration
 * writes whole before reading it is the iteration's own. */
#include "loop_access.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../mlir_util.h"

#define MAX_RANK 12

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

/* No memory effects and no regions: safe to run in every phase.  A
 * memref.alloca counts: each call gets its own stack buffer. */
bool tc_op_is_pure(MlirOperation op) {
  if (mlirOperationGetNumRegions(op) != 0) return false;
  if (tc_is_memref_view(op) || tc_op_is(op, "memref.get_global") || tc_op_is(op, "memref.dim") ||
      tc_op_is(op, "memref.alloca") ||
      tc_op_is(op, "memref.extract_strided_metadata"))
    return true;
  if (tc_op_name_starts(op, "arith.") || tc_op_name_starts(op, "math.") || tc_op_name_starts(op, "index.") ||
      tc_op_name_starts(op, "ub.") || tc_op_is(op, "affine.apply") || tc_op_is(op, "affine.min") ||
      tc_op_is(op, "affine.max"))
    return true;
  return tc_op_name_starts(op, "vector.") && !tc_op_is(op, "vector.print") &&
         !tc_has_memref_operand(op);
}

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

/* ---- Stack buffers written whole before they are read ----
 *
 * A stack buffer (memref.alloca) is private to the call, and each
 * workgroup's call runs its own block of iterations: an iteration may use
 * one only if it writes all of it before reading any of it, so that no
 * value flows from an earlier iteration (which another workgroup ran).
 * x86-64's packed panels of B are such buffers: in each k block the row
 * loop of the copy writes the whole panel, then the register tiles read
 * it.  alloca_fresh checks exactly that shape; anything else is recorded
 * as an access to a shared buffer like any other. */

#define MAX_ALLOCA_ACCESSES 256

typedef struct alloca_accesses {
  MlirOperation alloca, loop;
  MlirOperation op[MAX_ALLOCA_ACCESSES];
  size_t n;
  bool overflow;
} alloca_accesses_t;

/* The memref.alloca at the root of `v`'s chain of views, or null. */
static MlirOperation alloca_of(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  while (!mlirOperationIsNull(op) && tc_is_memref_view(op))
    op = tc_value_owner_op(mlirOperationGetOperand(op, 0));
  MlirOperation none = {NULL};
  return !mlirOperationIsNull(op) && tc_op_is(op, "memref.alloca") ? op : none;
}

static MlirWalkResult note_alloca_access(MlirOperation op, void *user) {
  alloca_accesses_t *u = user;
  if (mlirOperationEqual(op, u->loop) || tc_is_memref_view(op)) return MlirWalkResultAdvance;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i) {
    MlirOperation root = alloca_of(mlirOperationGetOperand(op, i));
    if (mlirOperationIsNull(root) || !mlirOperationEqual(root, u->alloca)) continue;
    if (u->n == MAX_ALLOCA_ACCESSES) {
      u->overflow = true;
      return MlirWalkResultInterrupt;
    }
    u->op[u->n++] = op;
    break;
  }
  return MlirWalkResultAdvance;
}

/* Index `v` is the constant 0. */
static bool is_zero(MlirValue v) {
  int64_t c;
  return const_index(v, &c) && c == 0;
}

/* Whether offset `off` (null: the static `soff`) and extent `size` cover
 * all `dim` elements of a dimension, each time `w` runs inside `loop`: an
 * offset 0 and the full size, or the induction variable of a loop between
 * them from 0 to dim with a step of size, which goes into *used (and
 * into *cover if it is the outermost so far). */
static bool dim_covered(MlirValue off, int64_t soff, int64_t size, int64_t dim, MlirOperation w,
                        MlirOperation loop, MlirOperation *used, MlirOperation *cover) {
  if (mlirValueIsNull(off)) return soff == 0 && size == dim;
  if (is_zero(off)) return size == dim;
  if (!mlirValueIsABlockArgument(off)) return false;
  MlirOperation l = defining_scope(off);
  int64_t lb, ub, step;
  if (mlirOperationEqual(l, loop) || !is_within(l, loop) || !is_within(w, l) ||
      !tc_loop_bounds(l, &lb, &ub, &step) || lb != 0 || ub != dim || step != size)
    return false;
  *used = l;
  if (mlirOperationIsNull(*cover) || is_within(*cover, l)) *cover = l;
  return true;
}

/* Whether `w` writes all of `alloca` (static shape) each time the op
 * returned in *cover runs: a linalg.copy or linalg.fill into the buffer
 * itself, or an unmasked vector.transfer_write into it or into one
 * subview of it with unit strides, at indices 0 of that subview. */
static bool writes_whole(MlirOperation w, MlirOperation alloca, MlirOperation loop,
                         MlirOperation *cover) {
  MlirValue buf = mlirOperationGetResult(alloca, 0);
  MlirType bt = mlirValueGetType(buf);
  *cover = w;
  if (!mlirShapedTypeHasStaticShape(bt)) return false;
  intptr_t n = mlirOperationGetNumOperands(w);
  if (tc_op_is(w, "linalg.copy") || tc_op_is(w, "linalg.fill"))
    return mlirValueEqual(mlirOperationGetOperand(w, n - 1), buf) &&
           (tc_op_is(w, "linalg.fill") || !mlirValueEqual(mlirOperationGetOperand(w, 0), buf));
  if (!tc_op_is(w, "vector.transfer_write")) return false;
  MlirValue m = mlirOperationGetOperand(w, 1);
  int64_t extent[MAX_RANK];
  intptr_t rank;
  MlirAttribute perm = mlirOperationGetAttributeByName(w, tc_str("permutation_map"));
  if (!vector_extents(m, mlirValueGetType(mlirOperationGetOperand(w, 0)), perm, extent, &rank) ||
      n != 2 + rank || rank != mlirShapedTypeGetRank(bt))
    return false;
  MlirOperation sv = tc_value_owner_op(m), none = {NULL};
  bool direct = mlirValueEqual(m, buf);
  if (!direct && (mlirOperationIsNull(sv) || !tc_op_is(sv, "memref.subview") ||
                  !mlirValueEqual(mlirOperationGetOperand(sv, 0), buf)))
    return false;
  MlirOperation c = none, used[MAX_RANK];
  intptr_t dynamic = 0;
  for (intptr_t j = 0; j < rank; ++j) {
    used[j] = none;
    MlirValue idx = mlirOperationGetOperand(w, 2 + j), off = idx;
    int64_t soff = 0, size = extent[j];
    if (!direct) {
      MlirAttribute offs = mlirOperationGetAttributeByName(sv, tc_str("static_offsets"));
      MlirAttribute sizes = mlirOperationGetAttributeByName(sv, tc_str("static_sizes"));
      MlirAttribute strides = mlirOperationGetAttributeByName(sv, tc_str("static_strides"));
      if (mlirDenseArrayGetNumElements(offs) != rank || !is_zero(idx) ||
          mlirDenseI64ArrayGetElement(strides, j) != 1 ||
          mlirDenseI64ArrayGetElement(sizes, j) != extent[j])
        return false;
      soff = mlirDenseI64ArrayGetElement(offs, j);
      off = (MlirValue){NULL};
      if (soff == mlirShapedTypeGetDynamicStrideOrOffset())
        off = mlirOperationGetOperand(sv, 1 + dynamic++);
    }
    if (!dim_covered(off, soff, size, mlirShapedTypeGetDimSize(bt, j), w, loop, &used[j], &c))
      return false;
    for (intptr_t k = 0; k < j; ++k) /* one loop for two dimensions: a diagonal */
      if (!mlirOperationIsNull(used[j]) && mlirOperationEqual(used[k], used[j])) return false;
  }
  if (!mlirOperationIsNull(c)) *cover = c;
  /* Only loops of constant bounds (at least one trip) between w and it. */
  for (MlirOperation p = mlirOperationGetParentOperation(w); !mlirOperationEqual(w, *cover);
       p = mlirOperationGetParentOperation(p)) {
    int64_t lb, ub, step;
    if (!tc_loop_bounds(p, &lb, &ub, &step)) return false;
    if (mlirOperationEqual(p, *cover)) break;
  }
  return true;
}

/* The ancestor of `op` (or op) in `block`; null when op is not in it. */
static MlirOperation ancestor_in(MlirOperation op, MlirBlock block) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
    if (mlirBlockEqual(mlirOperationGetBlock(op), block)) return op;
  return op;
}

static bool comes_after(MlirOperation first, MlirOperation op) {
  for (MlirOperation o = mlirOperationGetNextInBlock(first); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    if (mlirOperationEqual(o, op)) return true;
  return false;
}

/* Whether each iteration of `loop` writes all of `alloca` before any of
 * its other accesses to it: the first access (in program order) writes
 * it whole (writes_whole), and every other one follows the covering op
 * in that op's block, outside it. */
static bool alloca_fresh(MlirOperation loop, MlirOperation alloca) {
  alloca_accesses_t u = {.alloca = alloca, .loop = loop};
  mlirOperationWalk(loop, note_alloca_access, &u, MlirWalkPreOrder);
  if (u.overflow) return false;
  if (u.n == 0) return true;
  MlirOperation cover;
  if (!writes_whole(u.op[0], alloca, loop, &cover)) return false;
  MlirBlock b = mlirOperationGetBlock(cover);
  for (size_t i = 1; i < u.n; ++i) {
    MlirOperation a = ancestor_in(u.op[i], b);
    if (mlirOperationIsNull(a) || !comes_after(cover, a)) return false;
  }
  return true;
}

/* Records an access to `v`; `direct` (when not null) is `v` sliced by the
 * accessing op's own indices. */
static void record(loop_scan_t *s, MlirValue v, bool write, const access_t *direct) {
  if (!tc_is_memref(v)) return;
  access_t acc = {.write = write};
  for (;;) {
    MlirOperation op = tc_value_owner_op(v);
    if (mlirOperationIsNull(op) || !tc_is_memref_view(op) || tc_op_is(op, "memref.view")) break;
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
  /* A stack buffer that each iteration writes whole before reading it is
   * private to that iteration (alloca_fresh); any other is shared. */
  if (tc_op_is(defining_scope(v), "memref.alloca") && alloca_fresh(s->loop, defining_scope(v)))
    return;
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
  } else if (tc_op_name_starts(op, "linalg.") && tc_has_memref_operand(op)) {
    intptr_t inputs, inits;
    if (!tc_dps_split(op, &inputs, &inits)) {
      s->unknown = true;
      return MlirWalkResultInterrupt;
    }
    for (intptr_t i = 0; i < inputs + inits; ++i)
      record(s, mlirOperationGetOperand(op, i), i >= inputs, NULL);
  } else if (tc_op_is(op, "func.call") || tc_op_name_starts(op, "llvm.") ||
             tc_op_is(op, "memref.alloc") || tc_op_is(op, "memref.dealloc") ||
             tc_op_is(op, "vector.print") ||
             (tc_has_memref_operand(op) && !tc_op_is_pure(op) && !tc_op_is(op, "memref.alloca"))) {
    s->unknown = true;
    return MlirWalkResultInterrupt;
  }
  return s->unknown ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

static bool const_range(MlirOperation loop, int64_t *lb, int64_t *ub, int64_t *step) {
  return tc_op_is(loop, "scf.for") && mlirOperationGetNumOperands(loop) >= 3 &&
         mlirTypeIsAIndex(mlirValueGetType(mlirOperationGetOperand(loop, 0))) &&
         const_index(mlirOperationGetOperand(loop, 0), lb) &&
         const_index(mlirOperationGetOperand(loop, 1), ub) &&
         const_index(mlirOperationGetOperand(loop, 2), step) && *step > 0;
}

bool tc_loop_bounds(MlirOperation loop, int64_t *lb, int64_t *ub, int64_t *step) {
  return mlirOperationGetNumOperands(loop) == 3 && mlirOperationGetNumResults(loop) == 0 &&
         const_range(loop, lb, ub, step) && *ub > *lb;
}

int64_t tc_loop_const_trips(MlirOperation loop) {
  int64_t lb, ub, step;
  if (!const_range(loop, &lb, &ub, &step)) return -1;
  return ub > lb ? (ub - lb - 1) / step + 1 : 0; /* no overflow near INT64_MAX */
}

/* Collects the accesses of `loop` (constant bounds) into `s`; false when
 * an op's memory effects are unknown.  Free s->acc with tinyml__free. */
static bool scan_loop(MlirOperation loop, const tinyml_allocator_t *a, loop_scan_t *s) {
  int64_t lb, ub, step;
  *s = (loop_scan_t){.loop = loop, .a = a};
  if (!tc_loop_bounds(loop, &lb, &ub, &step)) return false;
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

bool tc_loop_is_parallel(MlirOperation loop, const tinyml_allocator_t *a) {
  loop_scan_t s;
  bool ok = scan_loop(loop, a, &s) && !scans_conflict(&s, &s);
  tinyml__free(a, s.acc);
  return ok;
}

/* Two split top-level loops can share a phase, with no wait between them,
 * when they have the same bounds (so iteration i runs in the same
 * workgroup in both) and every buffer one writes and the other touches is
 * touched by both only in iteration i's own slice. */
bool tc_loops_share_phase(MlirOperation x, MlirOperation y, const tinyml_allocator_t *a) {
  int64_t xl, xu, xs, yl, yu, ys;
  if (!tc_loop_bounds(x, &xl, &xu, &xs) || !tc_loop_bounds(y, &yl, &yu, &ys) || xl != yl ||
      xu != yu || xs != ys)
    return false;
  loop_scan_t sx, sy;
  bool ok = scan_loop(x, a, &sx) && scan_loop(y, a, &sy) && !scans_conflict(&sx, &sy);
  tinyml__free(a, sx.acc);
  tinyml__free(a, sy.acc);
  return ok;
}

int64_t tc_loop_exact_trips(MlirOperation loop) {
  int64_t lb, ub, step;
  return tc_loop_bounds(loop, &lb, &ub, &step) ? tc_loop_const_trips(loop) : 1;
}

/* As a workgroup count (more than 65535 are not useful). */
uint32_t tc_loop_trip_count(MlirOperation loop) {
  int64_t n = tc_loop_exact_trips(loop);
  return n > 0xffff ? 0xffff : (uint32_t)n;
}

/* The loop of a strategy's nest to split: the outermost parallel one with
 * at least GOOD_TRIPS iterations, else the parallel one with the most,
 * looking inside loops whose body is one loop plus pure ops.  (A split
 * inner loop runs its outer loops in every workgroup, which is fine.) */
#define GOOD_TRIPS 8

MlirOperation tc_pick_loop(MlirOperation loop, const tinyml_allocator_t *a) {
  MlirOperation none = {NULL}, best = none;
  uint32_t best_trips = 1;
  while (!mlirOperationIsNull(loop)) {
    if (tc_loop_is_parallel(loop, a)) {
      uint32_t trips = tc_loop_trip_count(loop);
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
      if (tc_op_is_pure(op) || tc_op_is(op, "scf.yield")) continue;
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
