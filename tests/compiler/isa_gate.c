/* main() for the white-box tests whose own file is built for AVX-512 and
 * VNNI (test_rescale_x86.c, test_uk_paths.c): the CPU is checked here, in
 * a file built for the baseline ISA, because the compiler may use AVX-512
 * anywhere in the other file, main's set-up of its test table included.
 * Without the ISA one case says why and skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* The test file's cmocka group; called only where the CPU runs its code. */
int isa_tests(void);

static int have_isa(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}

static void no_isa(void **state) {
  (void)state;
  print_message("skipped: this CPU lacks AVX-512 (F, BW, VL, DQ, VNNI), which this "
                "test's build needs\n");
  skip();
}

int main(void) {
  if (have_isa()) return isa_tests();
  const struct CMUnitTest tests[] = {cmocka_unit_test(no_isa)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
