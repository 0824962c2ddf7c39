/* Two models, one arena, on an MPS2 board under QEMU: loads two embedded
 * modules, creates a context for each on the SAME static arena, and invokes
 * them in turn (A, B, A, B), as a device that listens for a keyword and
 * watches a machine would.  The arena only holds what one invoke computes
 * (include/tinyml.h), so it needs the larger module's size, not the sum.
 *
 * tinyml-mcu-run --model2 builds this: fw_data.S embeds both modules, their
 * inputs and output directories, and -DFW_ARENA_BYTES / -DFW_ARENA_ALIGNMENT
 * size the arena from the two modules.  Each model's second-round outputs
 * (computed after the other model reused the arena) must equal its
 * first-round ones; they are written to the model's output directory. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fw_common.h"
#include "fw_pool.h"
#include "tinyml.h"

#ifndef FW_ARENA_BYTES
#error "FW_ARENA_BYTES (the larger of the two modules' arena sizes) must be defined"
#endif
#ifndef FW_ARENA_ALIGNMENT
#define FW_ARENA_ALIGNMENT 64
#endif
#define MAX_OUTPUTS 4
#define ROUNDS 2

typedef struct {
  const uint8_t *data;
  uint32_t size;
} blob_ref_t;

extern const uint8_t fw_model[], fw_model2[];
extern const uint32_t fw_model_size, fw_model2_size;
extern const blob_ref_t fw_inputs[], fw_inputs2[];
extern const uint32_t fw_input_count, fw_input_count2;
extern const char fw_output_dir[], fw_output_dir2[];

/* The one arena both contexts use (+1 so a module with no arena links). */
static uint8_t arena[FW_ARENA_BYTES + 1] __attribute__((aligned(FW_ARENA_ALIGNMENT)));

typedef struct {
  const char *output_dir;
  tinyml_module_t *module;
  tinyml_context_t *ctx;
  size_t output_count;
  void *outputs[ROUNDS][MAX_OUTPUTS]; /* one set per round, to compare them */
  size_t output_sizes[MAX_OUTPUTS];
  uint32_t first_ticks;
} model_t;

static int load(model_t *m, const uint8_t *bytes, uint32_t size) {
  tinyml_module_options_t mo;
  tinyml_module_options_init(&mo);
  mo.allocator = fw_pool_allocator();
  return fw_check(tinyml_module_load(bytes, size, &mo, &m->module), "load");
}

static int bind_inputs(model_t *m, const blob_ref_t *inputs, uint32_t count) {
  if (tinyml_module_input_count(m->module) != count) {
    printf("error: a model takes %u inputs, %u given\n",
           (unsigned)tinyml_module_input_count(m->module), (unsigned)count);
    return 1;
  }
  for (uint32_t i = 0; i < count; ++i)
    if (fw_check(tinyml_context_set_input(m->ctx, i, inputs[i].data, inputs[i].size), "input"))
      return 1;
  return 0;
}

static int alloc_outputs(model_t *m) {
  m->output_count = tinyml_module_output_count(m->module);
  if (m->output_count > MAX_OUTPUTS) return 1;
  for (size_t i = 0; i < m->output_count; ++i) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    if (fw_check(tinyml_module_output_info(m->module, i, &info), "output info")) return 1;
    m->output_sizes[i] = info.byte_size;
    for (int r = 0; r < ROUNDS; ++r)
      if (!(m->outputs[r][i] = fw_pool_alloc(NULL, info.byte_size, 16))) return 1;
  }
  return 0;
}

/* A context on the shared arena, with its inputs bound once: they are the
 * caller's buffers, not the arena's, so the other model cannot clobber them. */
static int create(model_t *m, const blob_ref_t *inputs, uint32_t count) {
  tinyml_context_options_t co;
  tinyml_context_options_init(&co);
  co.allocator = fw_pool_allocator();
  co.arena = arena;
  co.arena_size = FW_ARENA_BYTES;
  if (fw_check(tinyml_context_create(m->module, &co, &m->ctx), "context")) return 1;
  return bind_inputs(m, inputs, count) || alloc_outputs(m);
}

static int invoke(model_t *m, int round) {
  for (size_t i = 0; i < m->output_count; ++i)
    if (fw_check(tinyml_context_set_output(m->ctx, i, m->outputs[round][i], m->output_sizes[i]),
                 "output"))
      return 1;
  uint32_t t0 = timer_now();
  tinyml_status_t st = tinyml_context_invoke(m->ctx);
  if (round == 0) m->first_ticks = t0 - timer_now(); /* the timer counts down */
  return fw_check(st, "invoke");
}

/* Round 2 ran after the other model reused the arena: it must agree. */
static int check_and_write(const model_t *m) {
  for (size_t i = 0; i < m->output_count; ++i) {
    if (memcmp(m->outputs[0][i], m->outputs[ROUNDS - 1][i], m->output_sizes[i])) {
      printf("error: output %u differs after the other model used the arena\n", (unsigned)i);
      return 1;
    }
    if (write_output(m->output_dir, (unsigned)i, m->outputs[ROUNDS - 1][i], m->output_sizes[i]))
      return 1;
  }
  return 0;
}

static void report(const model_t *a, const model_t *b, uint32_t cal) {
  size_t need_a = tinyml_module_arena_size(a->module);
  size_t need_b = tinyml_module_arena_size(b->module);
  printf("calibration_loop_instructions=2000000\n");
  printf("calibration_ticks=%lu\n", (unsigned long)cal);
  printf("invoke_ticks=%lu\n", (unsigned long)a->first_ticks);
  printf("invoke2_ticks=%lu\n", (unsigned long)b->first_ticks);
  printf("arena=%u\n", (unsigned)FW_ARENA_BYTES);
  printf("arena1=%u\n", (unsigned)need_a);
  printf("arena2=%u\n", (unsigned)need_b);
  printf("pool_total=%u\n", (unsigned)fw_pool_used());
}

int main(void) {
  static model_t a = {.output_dir = fw_output_dir}, b = {.output_dir = fw_output_dir2};
  if (load(&a, fw_model, fw_model_size) || load(&b, fw_model2, fw_model2_size)) return 1;
  if (create(&a, fw_inputs, fw_input_count) || create(&b, fw_inputs2, fw_input_count2))
    return 1;
  uint32_t cal = calibration_ticks();
  for (int round = 0; round < ROUNDS; ++round)
    if (invoke(&a, round) || invoke(&b, round)) return 1;
  if (check_and_write(&a) || check_and_write(&b)) return 1;
  report(&a, &b, cal);
  tinyml_context_release(b.ctx);
  tinyml_context_release(a.ctx);
  tinyml_module_release(b.module);
  tinyml_module_release(a.module);
  return 0;
}
