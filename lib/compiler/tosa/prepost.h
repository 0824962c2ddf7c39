/* Pre- and post-processing compiled into the model (issue 6).
 *
 * The stages are a graph transformation on the imported TOSA module, before
 * any lowering: a new public function takes the raw input, applies the
 * pre-processing, calls the model's function, applies the post-processing
 * and returns.  The model's function becomes private and is inlined, so the
 * normal pipeline (TOSA -> Linalg, elementwise fusion, dispatch formation)
 * sees one graph and fuses the stages with the model's ops like any others.
 * docs/PREPOST.md has the arithmetic. */
#ifndef TINYML_COMPILER_TOSA_PREPOST_H
#define TINYML_COMPILER_TOSA_PREPOST_H

#include <mlir-c/IR.h>

#include "../mlir_util.h"
#include "tinyml.h"

/* Rewrites `module` (TOSA, one public function) so its public function has
 * the stages of `pre` and `post` (either may be NULL; both complete structs,
 * see compiler.h).  Options that do not fit the model are INVALID_ARGUMENT
 * naming the problem.  `dump`, when not NULL, receives the wrapper text. */
tinyml_status_t tc_prepost_apply(MlirContext ctx, MlirModule module,
                                 const tinyml_preprocess_t *pre,
                                 const tinyml_postprocess_t *post, tc_diag_t *diag,
                                 const tinyml_allocator_t *a,
                                 void (*dump)(void *user, const char *text, size_t length),
                                 void *dump_user);

#endif
