/* Multi-versioned modules: a compile that pins no CPU builds the
 * backend's executables once more for each microkernel build that names a
 * variant CPU (backend.h), and the runtime runs the best its CPU has
 * (tmod_variant_t).  Import, TOSA, partitioning and the memory plan are
 * done once: the int8 blobs are packed for every build at once (the most
 * scratch any wants, and the dot4 block when one uses it), and only code
 * generation runs per variant.  A variant whose dispatches would need
 * other scratch or buffer sharing than the baseline's is left out, with a
 * note, since the schedule is shared.
 * Thread-safety: one compile's state. */
#ifndef TINYML_COMPILER_DRIVER_VARIANTS_H
#define TINYML_COMPILER_DRIVER_VARIANTS_H

#include <mlir-c/IR.h>

#include "../../module/module.h"
#include "../compiler.h"
#include "../linalg/graph.h"
#include "../target/target.h"

typedef struct tc_variant {
  const tc_ukernel_build_t *build;
  unsigned index; /* build's in the backend's list (tc_variants_begin's mask) */
  tc_target_t target;
  uint8_t *so; /* its linked executable */
  size_t so_size;
  /* Per dispatch, what its lowering decided that the shared schedule
   * depends on: scratch bytes, then reuse_in and reuse_out. */
  uint64_t *shape;
} tc_variant_t;

typedef struct tc_variants {
  const tc_ukernel_build_t *base; /* the baseline's own build */
  tc_ukernel_build_t pack;        /* what the blobs are packed for */
  unsigned dot4_blobs;
  unsigned conv_blobs; /* all int8 conv blobs, which the pack sizes */
  unsigned count;
  tc_variant_t v[TMOD_MAX_VARIANTS];
} tc_variants_t;

/* Zeroes vs; when `req` asks for a module with no CPU or features and the
 * backend has variant builds, lists those whose bit (1 << index in the
 * backend's list) is set in `builds` and points baseline's microkernel
 * build at vs->pack for selection on TOSA (until tc_variants_generate).
 * Returns the number of candidate variants (0: a single-variant module). */
unsigned tc_variants_begin(tc_variants_t *vs, tc_target_t *baseline,
                           const tinyml__compile_request_t *req, unsigned builds);

/* After tc_variants_check: 1 when int8 conv blobs were packed for more
 * than the baseline and the variants left need (more scratch, or a dot4
 * block no kernel reads: a variant was left out after packing), with
 * *out_builds the mask of those left, to compile again with; else 0. */
int tc_variants_overpacked(const tc_variants_t *vs, unsigned *out_builds);

/* After partitioning, before the baseline's code generation: restores the
 * baseline's build, drops variants the blobs cannot serve (a build whose
 * kernels call dot4 functions its features lack, once a blob has dot4),
 * and generates each remaining variant's executable on a copy of the
 * dispatch module; g's dispatches are left as they were. */
tinyml_status_t tc_variants_generate(tc_variants_t *vs, tc_target_t *baseline, MlirContext ctx,
                                     tc_graph_t *g, tc_diag_t *diag,
                                     const tinyml__compile_request_t *req,
                                     const tinyml_allocator_t *a);

/* After the baseline's code generation: drops each variant whose
 * dispatches differ from g's in what the schedule depends on, with a note
 * through req's note callback naming the dispatch and what differed. */
void tc_variants_check(tc_variants_t *vs, const tc_graph_t *g,
                       const tinyml__compile_request_t *req, const tinyml_allocator_t *a);

/* The module's variants (at most TMOD_MAX_VARIANTS) into out and exes
 * (one executable each); returns how many. */
uint32_t tc_variants_describe(const tc_variants_t *vs, tmod_variant_t *out,
                              tmod_executable_t *exes);

void tc_variants_free(tc_variants_t *vs, const tinyml_allocator_t *a);

#endif
