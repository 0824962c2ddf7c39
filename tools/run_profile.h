/* tinyml-run --profile: per-step times through the public step hook
 * (tinyml_context_set_step_hook), reported against the whole invoke. */
#ifndef TINYML_TOOLS_RUN_PROFILE_H
#define TINYML_TOOLS_RUN_PROFILE_H

#include "tinyml.h"

typedef struct run_profile run_profile_t;

/* Starts recording every step of the next `runs` invokes of `context`;
 * NULL (after printing why) if out of memory or the hook is refused. */
run_profile_t *run_profile_start(tinyml_context_t *context, const tinyml_module_t *module,
                                 long runs);
/* Prints one row per step (index, median ms, share of `invoke_median_ms`,
 * the model's operators) and the rows' sum, removes the hook, frees. */
void run_profile_finish(run_profile_t *p, double invoke_median_ms);

#endif
