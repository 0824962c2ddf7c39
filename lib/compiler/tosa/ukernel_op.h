/* The "tinyml.uk" op: one microkernel call on TOSA, from selection
 * (uk_select.h) through the fusions after the layout sink to partitioning
 * and lowering (codegen/ukernel_lower.h).  The toolkit every pass that
 * makes, reads or merges these ops shares. */
#ifndef TINYML_COMPILER_TOSA_UKERNEL_OP_H
#define TINYML_COMPILER_TOSA_UKERNEL_OP_H

#include <mlir-c/IR.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernels/uk_abi.h"
#include "../backend.h"
#include "../mlir_util.h"

/* The op that stands for a microkernel call between selection and
 * lowering:
 *
 *   %y = "tinyml.uk"(%x, %blob[, %skip]) {kind = "conv_s8", scratch = N}
 *
 * %blob is a constant holding the kernel's parameters and packed weights
 * (uk_abi.h).  It is unregistered: nothing but the microkernel passes,
 * partitioning and lowering ever sees it. */
#define TC_UKERNEL_OP "tinyml.uk"

/* A new TC_UKERNEL_OP {kind, scratch} on (x, blob) of type t, not yet in
 * any block. */
MlirOperation tc_uk_op_create(MlirContext ctx, MlirLocation loc, MlirValue x, MlirValue blob,
                              MlirType t, const char *kind, int64_t scratch);

/* `into` is also located where `from` is, before its own location(s), so
 * a kernel that absorbs ops keeps naming the model's operators it computes
 * (linalg/labels.h).  Call it before erasing `from`. */
void tc_uk_take_loc(MlirOperation into, MlirOperation from);

/* Whether `op` is TC_UKERNEL_OP of this kind. */
int tc_uk_kind_is(MlirOperation op, const char *kind);

/* A tosa.const of `size` bytes inserted before `before`, for a kernel's
 * blob; frees `blob`. */
MlirValue tc_uk_blob_const(MlirContext ctx, uint8_t *blob, size_t size,
                           const tinyml_allocator_t *a, MlirOperation before);

/* Whether `v` is a constant kernel blob of this TINYML_UK_VERSION: its
 * header in *p, its elements in *out. */
int tc_uk_blob_params(MlirValue v, tinyml_uk_params_t *p, MlirAttribute *out);

/* Erases the op that defines `v` (a kernel's blob) once nothing uses it. */
void tc_uk_drop_if_unused(MlirValue v);

/* What the fusions after the layout sink share: the context, the
 * allocator and the backend's f32 tuning. */
typedef struct tc_uk_pass {
  MlirContext ctx;
  const tinyml_allocator_t *a;
  const tc_f32_tuning_t *tuning;
} tc_uk_pass_t;

/* Runs `fuse` on every TC_UKERNEL_OP of kind `kind` (or `kind2`, when
 * not null) at the top level of each function, what selection and the
 * layout sink leave, until none fuses; returns how many did.  `fuse`
 * returns whether it rewrote, and may erase ops around its own. */
typedef int (*tc_uk_fuse_fn)(const tc_uk_pass_t *pass, MlirOperation op);
unsigned tc_uk_fuse_all(const tc_uk_pass_t *pass, MlirModule m, const char *kind,
                        const char *kind2, tc_uk_fuse_fn fuse);

/* Erases every TC_UKERNEL_OP at the top level of each function whose
 * result nothing uses, and returns how many.  The op is unregistered, so
 * the canonicaliser keeps it as if it had side effects, and a kernel with
 * no output has nothing to lower to (ukernel_lower.c).  Importers make
 * such ops: a QDQ ONNX model's Gemm leaves a dequantized float matmul
 * beside the int8 conv that computes the result.  Their operands' own
 * producers go at the next canonicalisation. */
unsigned tc_uk_erase_dead(MlirModule m);

/* Blob `da` retagged (kind, scratch_bytes, next_off), then blob `ca` at
 * a 64-byte boundary, as a constant before `before`; null when too large
 * or out of memory. */
MlirValue tc_uk_fused_blob(MlirContext ctx, MlirAttribute da, MlirAttribute ca, int32_t kind,
                           int64_t scratch, MlirOperation before, const tinyml_allocator_t *al);

/* `into` (which keeps its result and any residual operand) takes over
 * `from`, the kernel whose result was its input: from's input, `blob`,
 * `kind` and `scratch`; from and both old blobs go. */
void tc_uk_retarget(MlirContext ctx, MlirOperation into, MlirOperation from, MlirValue blob,
                    const char *kind, int64_t scratch);

/* Keeps the ops[0..count) that sit directly in a function, in order, and
 * returns how many: an op inside a run-time loop (WHILE's tosa.while_loop)
 * stays Linalg in the loop's dispatch, as a microkernel is all of its own. */
unsigned tc_uk_drop_nested(MlirOperation *ops, unsigned count);

#endif
