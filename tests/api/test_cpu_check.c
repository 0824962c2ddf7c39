/* A module compiled for CPU features this CPU lacks is refused on load with
 * a status that names the feature, instead of dying on an illegal
 * instruction when it runs; one compiled for this machine (--cpu host) loads
 * and runs.  x86-64 hosts only (lib/runtime/elf/cpu_check_x86_64.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "api_test_util.h"

/* Compiles conv2d.mlir (a microkernel conv) for `cpu` and `features`. */
static tinyml_blob_t *compile_for(const char *cpu, const char *features) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.cpu = cpu;
  o.features = features;
  return api_compile_model("conv2d", &o);
}

static tinyml_status_t load(const tinyml_blob_t *blob, tinyml_module_t **out) {
  return tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, out);
}

/* XOP was AMD's (Bulldozer to Excavator) and no CPU with AVX-512 has it. */
static void test_missing_feature_refused(void **state) {
  (void)state;
  if (__builtin_cpu_supports("xop")) {
    print_message("skipped: this CPU has XOP, so no module can lack a feature it has\n");
    skip();
  }
  tinyml_blob_t *blob = compile_for(NULL, "+avx2,+fma,+xop");
  tinyml_module_t *m = NULL;
  api_expect_error(load(blob, &m), TINYML_STATUS_UNSUPPORTED, "'xop'", "lacks");
  assert_null(m);
  tinyml_blob_release(blob);
}

/* The CPU name counts too: it implies an x86-64 level (x86-64-v4 has
 * AVX-512), refused where the CPU is below it. */
static void test_cpu_level(void **state) {
  (void)state;
  if (__builtin_cpu_supports("x86-64-v4")) {
    /* This machine has every level: the check must let v4 through. */
    tinyml_blob_t *blob = compile_for("x86-64-v4", NULL);
    tinyml_module_t *m = NULL;
    api_assert_ok(load(blob, &m), "load x86-64-v4");
    tinyml_module_release(m);
    tinyml_blob_release(blob);
    return;
  }
  tinyml_blob_t *blob = compile_for("x86-64-v4", NULL);
  tinyml_module_t *m = NULL;
  api_expect_error(load(blob, &m), TINYML_STATUS_UNSUPPORTED, "x86-64-v4", "not");
  tinyml_blob_release(blob);
}

/* A named CPU implies features beyond its level: cascadelake has VNNI
 * (which skylake-avx512 lacks), sapphirerapids has AVX512-FP16 (which no AMD
 * CPU has).  Each loads where this CPU has them and is refused, naming the
 * missing one, where it does not. */
static void expect_named_cpu(const char *cpu, const char *feature, int has) {
  tinyml_blob_t *blob = compile_for(cpu, NULL);
  tinyml_module_t *m = NULL;
  if (has) {
    api_assert_ok(load(blob, &m), cpu);
    tinyml_module_release(m);
  } else {
    api_expect_error(load(blob, &m), TINYML_STATUS_UNSUPPORTED, cpu, feature);
    assert_null(m);
  }
  tinyml_blob_release(blob);
}

/* Below the level a CPU's extras are checked too: XOP for AMD's Bulldozer. */
static void test_cpu_extra_below_v3(void **state) {
  (void)state;
  expect_named_cpu("bdver1", "lacks",
                   __builtin_cpu_supports("avx") && __builtin_cpu_supports("xop") &&
                       __builtin_cpu_supports("fma4"));
}

/* diamondrapids' APX cannot be tested here: refused as unknown, by name. */
static void test_cpu_unknown_refused(void **state) {
  (void)state;
  expect_named_cpu("diamondrapids", "cannot check", 0);
}

static void test_cpu_extra_features(void **state) {
  (void)state;
  if (!__builtin_cpu_supports("x86-64-v4")) {
    print_message("skipped: below x86-64-v4 the level check refuses these first\n");
    skip();
  }
  expect_named_cpu("cascadelake", "avx512vnni", __builtin_cpu_supports("avx512vnni"));
  /* Its first feature this CPU lacks is named: only "lacks" is certain. */
  expect_named_cpu("sapphirerapids", "lacks",
                   __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512bf16") &&
                       __builtin_cpu_supports("avxvnni") && __builtin_cpu_supports("avx512vbmi2"));
}

static void test_host_loads_and_runs(void **state) {
  (void)state;
  tinyml_blob_t *blob = compile_for("host", NULL);
  tinyml_module_t *m = NULL;
  api_assert_ok(load(blob, &m), "load --cpu host");
  api_io_t io;
  assert_true(api_io_alloc(m, 1 << 24, 1, &io));
  api_assert_ok(api_run(m, NULL, &io, 1), "run --cpu host");
  api_io_free(&io);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_feature_refused),
      cmocka_unit_test(test_cpu_level),
      cmocka_unit_test(test_cpu_extra_features),
      cmocka_unit_test(test_cpu_extra_below_v3),
      cmocka_unit_test(test_cpu_unknown_refused),
      cmocka_unit_test(test_host_loads_and_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
