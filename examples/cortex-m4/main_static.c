/* The same measurement as main.c for a model deployed as a static library
 * (tinyml-compile --emit static-lib --name model): no module, no loader, no
 * libtinyml; model_invoke() runs the dispatches on a static arena.  A model
 * with state (LSTM, SVDF) also gets a static state buffer, set to the
 * model's initial value by model_reset_state() before the invoke.
 *
 * tinyml-mcu-run generates fw_data.S (the inputs) and fw_static.h (the
 * size tables from model.h). */
#include <stdint.h>
#include <stdio.h>

#include "fw_common.h"

#include "fw_static.h"
#include "model.h"

typedef struct {
  const uint8_t *data;
  uint32_t size;
} blob_ref_t;

extern const blob_ref_t fw_inputs[];
extern const uint32_t fw_input_count;
extern const char fw_output_dir[];

static uint8_t arena[MODEL_ARENA_SIZE + 1] __attribute__((aligned(MODEL_ARENA_ALIGNMENT)));
static uint8_t outputs[FW_OUTPUT_BYTES] __attribute__((aligned(64)));
#if MODEL_STATE_SIZE
static uint8_t state[MODEL_STATE_SIZE] __attribute__((aligned(MODEL_STATE_ALIGNMENT)));
#define STATE_ARG state,
#else
#define STATE_ARG
#endif

int main(void) {
  if (fw_input_count != MODEL_INPUT_COUNT) {
    printf("error: the model takes %u inputs, %u given\n", (unsigned)MODEL_INPUT_COUNT,
           (unsigned)fw_input_count);
    return 1;
  }
  const void *ins[MODEL_INPUT_COUNT];
  for (uint32_t i = 0; i < MODEL_INPUT_COUNT; ++i) {
    if (fw_inputs[i].size != fw_input_sizes[i]) {
      printf("error: input %u has %u bytes; the model takes %u\n", (unsigned)i,
             (unsigned)fw_inputs[i].size, (unsigned)fw_input_sizes[i]);
      return 1;
    }
    ins[i] = fw_inputs[i].data;
  }
  void *outs[MODEL_OUTPUT_COUNT];
  for (uint32_t i = 0, at = 0; i < MODEL_OUTPUT_COUNT; at += (fw_output_sizes[i++] + 63) & ~63u)
    outs[i] = outputs + at;

#if MODEL_STATE_SIZE
  model_reset_state(state);
#endif
  uint32_t cal = calibration_ticks();
  uint32_t t0 = timer_now();
  int rc = model_invoke(arena, STATE_ARG ins, outs);
  uint32_t t1 = timer_now();
  if (rc != 0) {
    printf("error: invoke: model_invoke returned %d\n", rc);
    return 1;
  }
  for (uint32_t i = 0; i < MODEL_OUTPUT_COUNT; ++i)
    if (write_output(fw_output_dir, (unsigned)i, outs[i], fw_output_sizes[i])) return 1;
  printf("calibration_loop_instructions=2000000\n");
  printf("calibration_ticks=%lu\n", (unsigned long)cal);
  printf("invoke_ticks=%lu\n", (unsigned long)(t0 - t1));
  printf("arena=%u\n", (unsigned)MODEL_ARENA_SIZE);
  printf("state=%u\n", (unsigned)MODEL_STATE_SIZE);
  printf("pool_total=0\n");
  return 0;
}
