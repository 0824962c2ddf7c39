/* Internal to the TFLite importer: resource variables (VAR_HANDLE,
 * READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE) as model state.
 *
 * Each variable (a container and shared_name pair, as TFLite Micro tells
 * them apart) that a live operator reads or assigns becomes one more state
 * argument, its value when an invoke starts, and one more state result,
 * its value after the invoke's last ASSIGN_VARIABLE (the argument if none).
 * They come after the variable tensors' states.  The initial value is what
 * the CALL_ONCE initialiser subgraph assigns, folded at compile time into
 * `tinyml.state_init`; a variable it does not set starts as TFLite Micro's
 * default, every byte its int8 zero point (`tinyml.state_fill`), else 0. */
#ifndef TINYML_IMPORTERS_TFL_VARIABLES_H
#define TINYML_IMPORTERS_TFL_VARIABLES_H

#include "tfl_lower.h"

/* ASSIGN_VARIABLE changes state that outlives the invoke: it is live even
 * though no output depends on it. */
int tfl_has_side_effect(const tfl_operator_t *op);

/* Finds the variables of the live operators, checks every use agrees on
 * the type and folds the CALL_ONCE initialisers.  Before the signature. */
tinyml_status_t tfl_vars_find(tfl_ctx_t *c, const uint8_t *live);
uint32_t tfl_vars_count(const tfl_ctx_t *c);
/* Writes each variable's argument (binding its value) or result, after
 * the others when `after` is set. */
tinyml_status_t tfl_vars_write_args(tfl_ctx_t *c, int after);
tinyml_status_t tfl_vars_write_results(tfl_ctx_t *c, int after);
/* Variable k's value now (at the end: what the next invoke reads). */
te_value_t tfl_vars_value(const tfl_ctx_t *c, uint32_t k);
void tfl_vars_free(tfl_ctx_t *c);

#endif
