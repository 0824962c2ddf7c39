/* Microkernels: whether the target can run them (ukernel_target.c),
 * selecting them on TOSA (ukernel_match.c; max pools in ukernel_pool.c), turning their
 * dispatches into calls (ukernel_lower.c), and linking their bitcode
 * (codegen.c).  The kernels themselves live in backends/<name>/ukernels.c
 * on top of lib/ukernels/. */
#ifndef TINYML_COMPILER_UKERNEL_H
#define TINYML_COMPILER_UKERNEL_H

#include <mlir-c/IR.h>
#include <stdint.h>

#include "../../ukernels/uk_abi.h"
#include "../backend.h"
#include "../mlir_util.h"
#include "../target/target.h"

/* The op that stands for a microkernel call between selection and
 * lowering.  It is unregistered: nothing but partitioning and
 * ukernel_lower.c ever sees it. */
#define TC_UKERNEL_OP "tinyml.uk"

/* On the call that replaces it: how many workgroups (bands of output
 * pixels) the call is worth splitting into; see ukernel_lower.c. */
#define TC_UKERNEL_WORKGROUPS "tinyml.workgroups"

/* Rewrites every matching chain in `m` into TC_UKERNEL_OP for the
 * target's microkernels (it must have some); *out_count gets how many.
 * `winograd`: whether f32 convs may take Winograd (ukernel_wino.c). */
tinyml_status_t tc_ukernels_select(MlirContext ctx, MlirModule m, const tc_target_t *target,
                                   int winograd, const tinyml_allocator_t *a,
                                   unsigned *out_count);

/* The f32 max pools of `m` (ukernel_pool.c): called by tc_ukernels_select
 * for backends with the f32 kernels; returns how many it rewrote. */
unsigned tc_ukernels_select_pools(MlirContext ctx, MlirModule m, const tinyml_allocator_t *a);

/* A tosa.const of `size` bytes inserted before `before`, for a kernel's
 * blob; frees `blob`. */
MlirValue tc_uk_blob_const(MlirContext ctx, uint8_t *blob, size_t size,
                           const tinyml_allocator_t *a, MlirOperation before);

/* A new TC_UKERNEL_OP {kind, scratch} on (x, blob) of type t, not yet in
 * any block. */
MlirOperation tc_uk_op_create(MlirContext ctx, MlirLocation loc, MlirValue x, MlirValue blob,
                              MlirType t, const char *kind, int64_t scratch);

/* Winograd F(2x2, 3x3) and F(4x4, 3x3) for an f32 conv (ukernel_wino.c):
 * the blob's wino_m (0: the direct sum), then, for that wino_m, its
 * wino_tiles and the scratch it needs, and the filter transform of one
 * 3x3 kernel (row-major) into its (m + 2)^2 positions, row-major. */
int32_t tc_wino_m(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p);
int32_t tc_wino_tiles(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p);
int64_t tc_wino_scratch(const tinyml_uk_params_t *p);
void tc_wino_filter(const float g[9], int32_t m, float *u);

/* What the fusions after the layout sink share: the context, the
 * allocator and the backend's f32 tuning. */
typedef struct tc_uk_pass {
  MlirContext ctx;
  const tinyml_allocator_t *a;
  const tc_f32_tuning_t *tuning;
} tc_uk_pass_t;

/* After the layout sink: moves a residual add (and the clamp after it)
 * into the f32 conv kernel that feeds it (ukernel_residual.c); returns how
 * many. */
unsigned tc_ukernels_fuse_residual(const tc_uk_pass_t *pass, MlirModule m);

struct tc_graph;

/* Replaces the body of each dispatch function of g's dispatch module
 * holding TC_UKERNEL_OP with a call to tinyml_uk_<kind>(input, blob,
 * output, scratch, 0, 1) on its arguments, marked with
 * TC_UKERNEL_WORKGROUPS, and notes in the dispatch when its output may
 * take its residual's place (tc_dispatch_t.reuse_in). */
tinyml_status_t tc_ukernels_lower(MlirContext ctx, struct tc_graph *g, tc_diag_t *diag,
                                  const tinyml_allocator_t *a);

/* ... and then moves each f32 depthwise conv into the 1x1 conv kernel
 * that reads it, and on images of TC_PWDWPW_ROWS rows or more the 1x1
 * expansion before it too (ukernel_dwpw.c); returns how many. */
#define TC_PWDWPW_ROWS 28
unsigned tc_ukernels_fuse_dwpw(const tc_uk_pass_t *pass, MlirModule m);

/* Runs `fuse` on every TC_UKERNEL_OP of kind `kind` (or `kind2`, when
 * not null) at the top level of each function, what selection and the
 * layout sink leave, until none fuses; returns how many did.  `fuse`
 * returns whether it rewrote, and may erase ops around its own. */
typedef int (*tc_uk_fuse_fn)(const tc_uk_pass_t *pass, MlirOperation op);
unsigned tc_uk_fuse_all(const tc_uk_pass_t *pass, MlirModule m, const char *kind,
                        const char *kind2, tc_uk_fuse_fn fuse);

/* ... and two f32 conv kernels of one input into the channel concat
 * that joins them (ukernel_concat.c); returns how many. */
unsigned tc_ukernels_fuse_concat(const tc_uk_pass_t *pass, MlirModule m);

/* Blob `da` retagged (kind, scratch_bytes, next_off), then blob `ca` at
 * a 64-byte boundary, as a constant before `before`; null when too large
 * or out of memory (ukernel_dwpw.c). */
MlirValue tc_uk_fused_blob(MlirContext ctx, MlirAttribute da, MlirAttribute ca, int32_t kind,
                           int64_t scratch, MlirOperation before, const tinyml_allocator_t *al);

/* `into` (which keeps its result and any residual operand) takes over
 * `from`, the kernel whose result was its input: from's input, `blob`,
 * `kind` and `scratch`; from and both old blobs go. */
void tc_uk_retarget(MlirContext ctx, MlirOperation into, MlirOperation from, MlirValue blob,
                    const char *kind, int64_t scratch);

/* ... and each f32 conv into the max pool that alone reads its result, on
 * images of TC_PWDWPW_ROWS rows or more (ukernel_pool.c); returns how
 * many. */
unsigned tc_ukernels_fuse_pool(const tc_uk_pass_t *pass, MlirModule m);

/* Erases the op that defines `v` (a kernel's blob) once nothing uses it. */
void tc_uk_drop_if_unused(MlirValue v);

/* Whether `op` is TC_UKERNEL_OP of this kind. */
int tc_uk_kind_is(MlirOperation op, const char *kind);

/* Whether `v` is a constant kernel blob of this TINYML_UK_VERSION: its
 * header in *p, its elements in *out. */
int tc_uk_blob_params(MlirValue v, tinyml_uk_params_t *p, MlirAttribute *out);

#endif
