/* Runs one embedded module on an MPS2 board under QEMU through the public
 * API of the freestanding runtime: load -> context -> invoke, all memory
 * from a static pool, outputs written to the host through semihosting.
 *
 * The module bytes, the inputs and the output directory come from
 * fw_data.S, which tinyml-mcu-run generates (.incbin of the files).
 *
 * Instructions per inference: QEMU runs with -icount shift=0, so the
 * virtual clock advances 1 ns per instruction, and the CMSDK APB timer 0
 * (25 MHz, off the virtual clock) ticks once every 40 instructions.  A loop
 * of known length calibrates the ratio at run time. */
#include <stdint.h>
#include <stdio.h>

#include <string.h>

#include "fw_common.h"
#include "fw_pool.h"
#include "tinyml.h"

typedef struct {
  const uint8_t *data;
  uint32_t size;
} blob_ref_t;

extern const uint8_t fw_model[];
extern const uint32_t fw_model_size;
extern const blob_ref_t fw_inputs[];
extern const uint32_t fw_input_count;
extern const char fw_output_dir[];

#ifdef FW_PROFILE
/* tinyml-mcu-run --profile: a second invoke with the public step hook,
 * timing each step on the same timer (its ticks between the hook's two
 * calls).  The first invoke, which gives instructions=, runs unhooked. */
typedef struct step_clock {
  uint32_t started;
  uint32_t *ticks; /* one per step */
} step_clock_t;

static void on_step(void *user, size_t step, int done) {
  step_clock_t *c = user;
  uint32_t now = timer_now(); /* counts down */
  if (!done) c->started = now;
  else c->ticks[step] = c->started - now;
}

static int profile_steps(tinyml_context_t *ctx, const tinyml_module_t *module) {
  size_t steps = tinyml_module_dispatch_count(module);
  step_clock_t clock = {0, fw_pool_alloc(NULL, steps * sizeof(uint32_t) + 4, 4)};
  if (!clock.ticks) return 1;
  if (fw_check(tinyml_context_set_step_hook(ctx, on_step, &clock), "profile")) return 1;
  if (fw_check(tinyml_context_invoke(ctx), "profiled invoke")) return 1;
  for (size_t s = 0; s < steps; ++s)
    printf("step %u ticks=%lu %s\n", (unsigned)s, (unsigned long)clock.ticks[s],
           tinyml_module_step_label(module, s));
  return 0;
}
#endif

int main(void) {
  tinyml_allocator_t alloc = fw_pool_allocator();
  tinyml_module_options_t mo;
  tinyml_module_options_init(&mo);
  mo.allocator = alloc;
  tinyml_module_t *module = NULL;
  if (fw_check(tinyml_module_load(fw_model, fw_model_size, &mo, &module), "load")) return 1;
  size_t after_load = fw_pool_used();

  tinyml_context_options_t co;
  tinyml_context_options_init(&co);
  co.allocator = alloc;
  tinyml_context_t *ctx = NULL;
  if (fw_check(tinyml_context_create(module, &co, &ctx), "context")) return 1;

  size_t n_in = tinyml_module_input_count(module);
  size_t n_out = tinyml_module_output_count(module);
  if (n_in != fw_input_count) {
    printf("error: the model takes %u inputs, %u given\n", (unsigned)n_in,
           (unsigned)fw_input_count);
    return 1;
  }
  for (size_t i = 0; i < n_in; ++i)
    if (fw_check(tinyml_context_set_input(ctx, i, fw_inputs[i].data, fw_inputs[i].size),
              "input"))
      return 1;
  void *outs[16];
  size_t out_sizes[16];
  if (n_out > 16) return 1;
  for (size_t i = 0; i < n_out; ++i) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    if (fw_check(tinyml_module_output_info(module, i, &info), "output info")) return 1;
    out_sizes[i] = info.byte_size;
    outs[i] = fw_pool_alloc(NULL, info.byte_size, 16);
    if (!outs[i]) return 1;
    if (fw_check(tinyml_context_set_output(ctx, i, outs[i], info.byte_size), "output")) return 1;
  }

  uint32_t cal = calibration_ticks();
  uint32_t t0 = timer_now();
  tinyml_status_t st = tinyml_context_invoke(ctx);
  uint32_t t1 = timer_now();
  if (fw_check(st, "invoke")) return 1;

  for (size_t i = 0; i < n_out; ++i)
    if (write_output(fw_output_dir, (unsigned)i, outs[i], out_sizes[i])) return 1;
#ifdef FW_PROFILE
  if (profile_steps(ctx, module)) return 1;
#endif
  printf("calibration_loop_instructions=2000000\n");
  printf("calibration_ticks=%lu\n", (unsigned long)cal);
  printf("invoke_ticks=%lu\n", (unsigned long)(t0 - t1));
  printf("arena=%u\n", (unsigned)tinyml_module_arena_size(module));
  printf("pool_load=%u\n", (unsigned)after_load);
  printf("pool_total=%u\n", (unsigned)fw_pool_used());
  tinyml_context_release(ctx);
  tinyml_module_release(module);
  return 0;
}
