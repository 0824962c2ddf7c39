/* Matching an f32 chain (uk_match_f32.h): a float conv2d,
 * depthwise_conv2d or matmul with constant weights (a matmul's may come
 * at run time) and zero points 0, and
 * the per-channel ops after it that the kernel applies as it stores
 * (uk_abi.h, "f32 kinds"): a multiply, an add, a clamp, each optional, in
 * that order.  The ONNX importer puts a transpose to NCHW between the conv
 * and those ops; it is moved after the kernel, where the canonicaliser
 * cancels it against the transpose back to NHWC that the next conv reads
 * through. */
#include "uk_match_f32.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "uk_read.h"

static int const_f32_zero(MlirValue v) {
  MlirAttribute a = tc_uk_const_attr(v);
  return !mlirAttributeIsNull(a) && tc_uk_is_f32(v) && tc_uk_numel(a) == 1 &&
         tc_uk_f32_at(a, 0) == 0.0f;
}

static int match_conv_f32(tc_uk_chain_t *c) {
  MlirOperation op = c->conv;
  int depthwise = tc_op_is(op, "tosa.depthwise_conv2d");
  if ((!depthwise && !tc_op_is(op, "tosa.conv2d")) || mlirOperationGetNumOperands(op) != 5)
    return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue b = mlirOperationGetOperand(op, 2), y = mlirOperationGetResult(op, 0);
  c->weights = tc_uk_const_attr(w);
  c->bias = tc_uk_const_attr(b);
  if (!tc_uk_is_f32(x) || !tc_uk_is_f32(w) || !tc_uk_is_f32(b) || !tc_uk_is_f32(y) ||
      tc_uk_rank(x) != 4 || mlirAttributeIsNull(c->weights) || mlirAttributeIsNull(c->bias) ||
      !mlirAttributeIsNull(tc_uk_const_attr(x)) ||
      !const_f32_zero(mlirOperationGetOperand(op, 3)) ||
      !const_f32_zero(mlirOperationGetOperand(op, 4)) || !tc_attr_text_has(op, "acc_type", "f32"))
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = depthwise ? TINYML_UK_DEPTHWISE_F32 : TINYML_UK_CONV_F32;
  c->input = tc_uk_unsliced(x, op);
  if (!tc_uk_read_window(p, op, c->input, w, y, depthwise)) return 0;
  if (depthwise ? tc_uk_dim(w, 2) != p->ic || tc_uk_dim(w, 3) != 1 || p->oc != p->ic
                : tc_uk_dim(w, 3) != p->ic || tc_uk_dim(w, 0) != p->oc)
    return 0;
  int64_t nb = tc_uk_numel(c->bias);
  if (nb != 1 && nb != p->oc) return 0;
  c->acc = y;
  c->chan_axis = 3;
  return 1;
}

/* The fewest rows of A for which a run-time B goes to the kernel: its
 * pack reads and writes all of B once a call, which the tile repays only
 * over enough rows.  K = N = 512, `taskset -c 1 tinyml-run --bench`
 * against the Linalg path: M 1-128 0.6-40% slower, 256 level, 384 1-4%
 * faster, 512 5%, 1024 20% (docs/PERF.md, "The 512^3 matmul on Intel"). */
enum { MM_MIN_ROWS = 384 };

/* matmul [1,M,K] x [1,K,N]: a 1x1 conv over M pixels.  With B a
 * constant, its weights are packed now (TINYML_UK_CONV_F32); otherwise
 * the kernel packs B at run time (TINYML_UK_MATMUL_F32, uk_abi.h), which
 * needs static shapes and MM_MIN_ROWS rows. */
static int match_matmul_f32(tc_uk_chain_t *c) {
  MlirOperation op = c->conv;
  if (!tc_op_is(op, "tosa.matmul") || mlirOperationGetNumOperands(op) != 4) return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue y = mlirOperationGetResult(op, 0);
  c->weights = tc_uk_const_attr(w);
  if (mlirAttributeIsNull(c->weights) && tc_uk_dim(x, 1) < MM_MIN_ROWS) return 0;
  if (!tc_uk_is_f32(x) || !tc_uk_is_f32(w) || !tc_uk_is_f32(y) ||
      !mlirAttributeIsNull(tc_uk_const_attr(x)) || tc_uk_dim(x, 0) != 1 || tc_uk_dim(w, 0) != 1 ||
      !const_f32_zero(mlirOperationGetOperand(op, 2)) ||
      !const_f32_zero(mlirOperationGetOperand(op, 3)))
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = mlirAttributeIsNull(c->weights) ? TINYML_UK_MATMUL_F32 : TINYML_UK_CONV_F32;
  p->batch = p->ih = p->oh = 1;
  p->iw = p->ow = (int32_t)tc_uk_dim(x, 1);
  p->ic = (int32_t)tc_uk_dim(x, 2);
  p->oc = (int32_t)tc_uk_dim(w, 2);
  p->kh = p->kw = p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
  c->w_transposed = 1;
  c->acc = y;
  c->chan_axis = 2;
  return tc_uk_dim(w, 1) == p->ic && tc_uk_dim(y, 1) == p->iw && tc_uk_dim(y, 2) == p->oc &&
         p->iw > 0 && p->ic > 0 && p->oc > 0;
}

/* A constant operand of a per-channel op on `like`: its shape is like's
 * tc_uk_rank, all 1 but `axis`, which is 1 or oc. */
static MlirAttribute channel_const(const tc_uk_chain_t *c, MlirValue v, MlirValue like, int axis) {
  MlirAttribute none = {NULL}, a = tc_uk_const_attr(v);
  if (mlirAttributeIsNull(a) || !tc_uk_is_f32(v) || tc_uk_rank(v) != tc_uk_rank(like)) return none;
  for (intptr_t i = 0; i < tc_uk_rank(v); ++i) {
    int64_t d = tc_uk_dim(v, i);
    if (i == axis ? d != 1 && d != c->p.oc : d != 1) return none;
  }
  return tc_uk_numel(a) == 1 || tc_uk_numel(a) == c->p.oc ? a : none;
}

/* The operand of a binary op that is not `cur` (which must be exactly one). */
static int other_operand(MlirOperation op, MlirValue cur, MlirValue *other) {
  MlirValue a0 = mlirOperationGetOperand(op, 0), a1 = mlirOperationGetOperand(op, 1);
  int e0 = mlirValueEqual(a0, cur), e1 = mlirValueEqual(a1, cur);
  if (e0 == e1) return 0;
  *other = e0 ? a1 : a0;
  return 1;
}

/* A float attribute as float; 0 when absent or not a float. */
static int float_attr(MlirOperation op, const char *name, float *out) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAFloat(a)) return 0;
  *out = (float)mlirFloatAttrGetValueDouble(a);
  return 1;
}

/* Collects the ops after the conv that the kernel can apply (tc_uk_chain_t.epi).
 * Layout ops (a transpose right after the conv, or reshapes that keep the
 * channels last) join only when a per-channel op follows them. */
static void match_epilogue_f32(tc_uk_chain_t *c) {
  MlirOperation ops[8];
  MlirValue cur = c->acc;
  int axis = c->chan_axis, stage = 0, n = 0, kept = 0, transposed = 0;
  c->lo = -__builtin_inff();
  c->hi = __builtin_inff();
  while (n < 8) {
    MlirOperation u = tc_sole_user(cur);
    if (mlirOperationIsNull(u) || mlirOperationGetNumResults(u) != 1) break;
    MlirValue r = mlirOperationGetResult(u, 0);
    int same = mlirTypeEqual(mlirValueGetType(r), mlirValueGetType(cur));
    MlirValue other;
    if (!tc_uk_is_f32(r)) break;
    if (tc_op_is(u, "tosa.transpose")) {
      MlirAttribute perms = mlirOperationGetAttributeByName(u, tc_str("perms"));
      if (n != 0 || mlirAttributeIsNull(perms) || !mlirAttributeIsADenseI32Array(perms) ||
          mlirDenseArrayGetNumElements(perms) != tc_uk_rank(cur))
        break;
      int to = -1;
      for (intptr_t i = 0; i < tc_uk_rank(cur); ++i)
        if (mlirDenseI32ArrayGetElement(perms, i) == axis) to = (int)i;
      if (to < 0) break;
      axis = to;
      transposed = 1;
    } else if (tc_op_is(u, "tosa.reshape")) {
      if (transposed || axis != tc_uk_rank(cur) - 1 || tc_uk_rank(r) < 1 ||
          tc_uk_dim(r, tc_uk_rank(r) - 1) != c->p.oc)
        break;
      axis = (int)tc_uk_rank(r) - 1;
    } else if (tc_op_is(u, "tosa.mul") && stage < 1) {
      int64_t shift;
      MlirAttribute k;
      if (!same || mlirOperationGetNumOperands(u) != 3 || !other_operand(u, cur, &other) ||
          !tc_uk_const_int(mlirOperationGetOperand(u, 2), 8, &shift) || shift != 0 ||
          mlirAttributeIsNull(k = channel_const(c, other, cur, axis)))
        break;
      c->scale = k;
      stage = 1;
    } else if (tc_op_is(u, "tosa.add") && stage < 2) {
      MlirAttribute k;
      if (!same || mlirOperationGetNumOperands(u) != 2 || !other_operand(u, cur, &other) ||
          mlirAttributeIsNull(k = channel_const(c, other, cur, axis)))
        break;
      c->offset = k;
      stage = 2;
    } else if (tc_op_is(u, "tosa.clamp") && stage < 3) {
      float lo, hi;
      if (!same || mlirOperationGetNumOperands(u) != 1 || !float_attr(u, "min_val", &lo) ||
          !float_attr(u, "max_val", &hi) || !(lo <= hi) ||
          tc_attr_text_has(u, "nan_mode", "IGNORE"))
        break;
      c->lo = lo;
      c->hi = hi;
      stage = 3;
    } else {
      break;
    }
    ops[n++] = u;
    cur = r;
    if (!tc_op_is(u, "tosa.transpose") && !tc_op_is(u, "tosa.reshape")) kept = n;
  }
  c->n_epi = kept;
  for (int i = 0; i < kept; ++i) c->epi[i] = ops[i];
  c->transpose = kept && tc_op_is(ops[0], "tosa.transpose") ? ops[0] : (MlirOperation){NULL};
  c->last = kept ? ops[kept - 1] : c->conv;
}

int tc_uk_match_f32(tc_uk_chain_t *c) {
  if (!match_conv_f32(c) && !match_matmul_f32(c)) return 0;
  match_epilogue_f32(c);
  return 1;
}
