/* Sinking layout transposes through layout-agnostic TOSA ops.
 *
 * The ONNX importer computes in NCHW and wraps every window op (conv, pool)
 * in a transpose to NHWC and one back.  The canonicaliser cancels a pair
 * only when the two are adjacent, so the transposes around ops that work in
 * any layout stay: a residual add of two conv results, a ReLU after it, a
 * concat of two convs, a global pool's reductions.  Each costs a full copy
 * of the activation with a strided read, more than the add itself.
 *
 * Here an op whose tensor operands are all either the same transpose
 * (perms P) of something or a constant is rebuilt on the untransposed
 * operands, and P is applied once to its result instead.  Walking the block
 * in order moves each transpose down as far as such ops go; the next
 * window op's transpose back to NHWC then sits right after it and the
 * canonicaliser folds the pair, which is what removes the copies.  Axes
 * (concat, reductions) are renumbered through P.  A reshape that reads a
 * transpose which only moves unit dimensions reads its input instead: the
 * element order is the same. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "layout_sink.h"

#define MAX_RANK 6
#define MAX_OPERANDS 64

/* Ops where output element i depends only on operand elements i (same
 * rank, broadcast on unit dims), so any permutation commutes with them. */
static const char *const elementwise[] = {
    "tosa.add",      "tosa.sub",        "tosa.mul",      "tosa.maximum",
    "tosa.minimum",  "tosa.pow",        "tosa.clamp",    "tosa.sigmoid",
    "tosa.tanh",     "tosa.erf",        "tosa.exp",      "tosa.log",
    "tosa.abs",      "tosa.negate",     "tosa.reciprocal", "tosa.rsqrt",
    "tosa.floor",    "tosa.ceil",       "tosa.cast",     "tosa.select",
    "tosa.equal",    "tosa.greater",    "tosa.greater_equal", "arith.divf",
};

/* Ops with an `axis` attribute that names an operand dimension. */
static const char *const with_axis[] = {
    "tosa.concat", "tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min",
};

static int op_in(MlirOperation op, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (tc_op_is(op, names[i])) return 1;
  return 0;
}

static intptr_t rank_of(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t)) return -1;
  return mlirShapedTypeGetRank(t);
}

/* A transpose's perms; 0 unless it is a static one of `rank` dims. */
static int read_perms(MlirOperation tr, intptr_t rank, int32_t *perms) {
  MlirAttribute a = mlirOperationGetAttributeByName(tr, tc_str("perms"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI32Array(a) || rank > MAX_RANK ||
      mlirDenseArrayGetNumElements(a) != rank || rank_of(mlirOperationGetOperand(tr, 0)) != rank)
    return 0;
  for (intptr_t i = 0; i < rank; ++i) perms[i] = mlirDenseI32ArrayGetElement(a, i);
  return 1;
}

static MlirOperation transpose_of(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  return !mlirOperationIsNull(op) && tc_op_is(op, "tosa.transpose") ? op : (MlirOperation){NULL};
}

/* The tosa.const behind `v`, through reshapes (which keep element order). */
static MlirOperation const_of(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  while (!mlirOperationIsNull(op) && tc_op_is(op, "tosa.reshape"))
    op = tc_value_owner_op(mlirOperationGetOperand(op, 0));
  if (mlirOperationIsNull(op) || !tc_op_is(op, "tosa.const")) return (MlirOperation){NULL};
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str("values"));
  return !mlirAttributeIsNull(a) && mlirAttributeIsADenseElements(a) ? op : (MlirOperation){NULL};
}

/* `t` with its dims moved back through perms: out[perms[i]] = t[i]. */
static MlirType unpermuted(MlirType t, const int32_t *perms) {
  intptr_t r = mlirShapedTypeGetRank(t);
  int64_t d[MAX_RANK];
  for (intptr_t i = 0; i < r; ++i) d[perms[i]] = mlirShapedTypeGetDimSize(t, i);
  return mlirRankedTensorTypeGet(r, d, mlirShapedTypeGetElementType(t),
                                 mlirRankedTensorTypeGetEncoding(t));
}

/* At most one dimension > 1: permuting dims then keeps the element order. */
static int one_nonunit_dim(MlirType t) {
  int n = 0;
  for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); ++i) n += mlirShapedTypeGetDimSize(t, i) != 1;
  return n <= 1;
}

/* The dims of perms that are > 1 in the input stay in increasing order:
 * the transpose is then a reshape. */
static int moves_only_unit_dims(MlirOperation tr) {
  MlirValue x = mlirOperationGetOperand(tr, 0);
  intptr_t r = rank_of(x);
  int32_t perms[MAX_RANK];
  if (r < 0 || !read_perms(tr, r, perms)) return 0;
  int32_t last = -1;
  for (intptr_t i = 0; i < r; ++i) {
    if (mlirShapedTypeGetDimSize(mlirValueGetType(x), perms[i]) == 1) continue;
    if (perms[i] < last) return 0;
    last = perms[i];
  }
  return 1;
}

/* A copy of constant `v` in the unpermuted layout, inserted before `at`;
 * null unless the constant has at most one non-unit dim. */
static MlirValue unpermuted_const(MlirValue v, const int32_t *perms, MlirOperation at) {
  MlirOperation c = const_of(v);
  MlirType t = mlirValueGetType(v);
  if (mlirOperationIsNull(c) || !one_nonunit_dim(t)) return (MlirValue){NULL};
  MlirType nt = unpermuted(t, perms);
  MlirAttribute vals = mlirOperationGetAttributeByName(c, tc_str("values"));
  MlirOperation k = mlirOperationClone(c);
  mlirOperationSetAttributeByName(k, tc_str("values"), mlirDenseElementsAttrReshapeGet(vals, nt));
  mlirValueSetType(mlirOperationGetResult(k, 0), nt);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(at), at, k);
  return mlirOperationGetResult(k, 0);
}

/* tosa.mul's third operand is its shift, not a tensor in the layout. */
static intptr_t layout_operands(MlirOperation op) {
  intptr_t n = mlirOperationGetNumOperands(op);
  return tc_op_is(op, "tosa.mul") ? n - 1 : n;
}

/* Finds P: the perms of the first transposed operand, which every other
 * operand must share or be a small constant.  Returns that transpose. */
static MlirOperation common_transpose(MlirOperation op, intptr_t rank, int32_t *perms) {
  MlirOperation first = {NULL};
  intptr_t n = layout_operands(op);
  if (n < 1 || n > MAX_OPERANDS) return first;
  for (intptr_t i = 0; i < n; ++i) {
    MlirValue v = mlirOperationGetOperand(op, i);
    MlirOperation tr = transpose_of(v);
    int32_t p[MAX_RANK];
    if (rank_of(v) != rank) return (MlirOperation){NULL};
    if (mlirOperationIsNull(tr)) continue;
    if (!read_perms(tr, rank, p)) return (MlirOperation){NULL};
    if (mlirOperationIsNull(first)) {
      first = tr;
      memcpy(perms, p, sizeof(int32_t) * (size_t)rank);
    } else if (memcmp(perms, p, sizeof(int32_t) * (size_t)rank) != 0) {
      return (MlirOperation){NULL};
    }
  }
  return first;
}

/* The untransposed operands of `op`; 0 when one cannot be had. */
static int new_operands(MlirOperation op, const int32_t *perms, MlirValue *out) {
  for (intptr_t i = 0; i < layout_operands(op); ++i) {
    MlirValue v = mlirOperationGetOperand(op, i);
    MlirOperation tr = transpose_of(v);
    out[i] = mlirOperationIsNull(tr) ? unpermuted_const(v, perms, op)
                                     : mlirOperationGetOperand(tr, 0);
    if (mlirValueIsNull(out[i])) return 0;
  }
  return 1;
}

static int renumber_axis(MlirOperation op, const int32_t *perms, intptr_t rank) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str("axis"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a)) return 0;
  int64_t axis = mlirIntegerAttrGetValueInt(a);
  if (axis < 0 || axis >= rank) return 0;
  mlirOperationSetAttributeByName(
      op, tc_str("axis"), mlirIntegerAttrGet(mlirAttributeGetType(a), perms[axis]));
  return 1;
}

/* Rebuilds `op` on untransposed operands with one transpose after it. */
static int sink(MlirOperation op) {
  if (mlirOperationGetNumResults(op) != 1) return 0;
  int axis = op_in(op, with_axis, sizeof with_axis / sizeof *with_axis);
  if (!axis && !op_in(op, elementwise, sizeof elementwise / sizeof *elementwise)) return 0;
  MlirValue res = mlirOperationGetResult(op, 0);
  intptr_t rank = rank_of(res);
  int32_t perms[MAX_RANK];
  MlirValue ops[MAX_OPERANDS];
  if (rank < 1 || rank > MAX_RANK) return 0;
  MlirOperation tr = common_transpose(op, rank, perms);
  if (mlirOperationIsNull(tr)) return 0;
  /* Constants are checked before anything is built, so a refusal leaves
   * the IR as it was (apart from unused constant copies). */
  if (!new_operands(op, perms, ops)) return 0;
  MlirOperation moved = mlirOperationClone(op);
  for (intptr_t i = 0; i < layout_operands(op); ++i) mlirOperationSetOperand(moved, i, ops[i]);
  if (axis && !renumber_axis(moved, perms, rank)) {
    mlirOperationDestroy(moved);
    return 0;
  }
  mlirValueSetType(mlirOperationGetResult(moved, 0), unpermuted(mlirValueGetType(res), perms));
  MlirBlock b = mlirOperationGetBlock(op);
  mlirBlockInsertOwnedOperationBefore(b, op, moved);
  MlirOperation after = mlirOperationClone(tr);
  mlirOperationSetOperand(after, 0, mlirOperationGetResult(moved, 0));
  mlirValueSetType(mlirOperationGetResult(after, 0), mlirValueGetType(res));
  mlirBlockInsertOwnedOperationBefore(b, op, after);
  mlirValueReplaceAllUsesOfWith(res, mlirOperationGetResult(after, 0));
  mlirOperationDestroy(op);
  return 1;
}

static void bypass_unit_transpose(MlirOperation op) {
  if (!tc_op_is(op, "tosa.reshape")) return;
  MlirOperation tr = transpose_of(mlirOperationGetOperand(op, 0));
  if (!mlirOperationIsNull(tr) && moves_only_unit_dims(tr))
    mlirOperationSetOperand(op, 0, mlirOperationGetOperand(tr, 0));
}

static unsigned sink_block(MlirBlock b) {
  unsigned n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op);) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    bypass_unit_transpose(op);
    n += (unsigned)sink(op);
    op = next;
  }
  return n;
}

unsigned tc_layout_sink(MlirModule m) {
  unsigned n = 0;
  MlirBlock body = mlirModuleGetBody(m);
  for (MlirOperation f = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func") || mlirOperationGetNumRegions(f) != 1) continue;
    MlirRegion r = mlirOperationGetRegion(f, 0);
    for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
      n += sink_block(b);
  }
  return n;
}
