/* A chain of TOSA ops that one microkernel call replaces, as the
 * selection reads it (uk_match_s8.h, uk_match_f32.h) and packs it
 * (uk_pack.h).  Internal to microkernel selection. */
#ifndef TINYML_COMPILER_TOSA_UK_CHAIN_H
#define TINYML_COMPILER_TOSA_UK_CHAIN_H

#include <mlir-c/IR.h>

#include "../../ukernels/uk_abi.h"
#include "../backend.h"

typedef struct tc_uk_chain {
  MlirOperation conv, add, rescale, clamp, last;
  MlirValue input;     /* what the kernel reads; null: the conv's input */
  MlirValue acc;       /* the int32 sum the rescale reads */
  int w_transposed;    /* matmul weights are [K][N], not [N][K] */
  tinyml_uk_params_t p;
  MlirAttribute weights, bias, mult, shift;
  /* f32: the ops after the conv that the kernel absorbs, in order; the
   * first may be a transpose, which moves after the kernel instead. */
  MlirOperation epi[8];
  int n_epi, chan_axis;
  MlirOperation transpose;
  MlirAttribute scale, offset; /* per-channel multiply and add, or null */
  float lo, hi;                /* the clamp */
  /* f32: the backend's tuning, and Winograd's when allowed (uk_wino.h) */
  const tc_f32_tuning_t *tuning;
  const tc_wino_tuning_t *winograd;
} tc_uk_chain_t;

#endif
