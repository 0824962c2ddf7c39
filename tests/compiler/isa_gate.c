/* main() for the white-box tests whose own file is built for AVX-512 and
 * VNNI (test_rescale_x86.c, test_uk_paths.c): the CPU is checked here, in
 * a file built for the baseline ISA, because the compiler may use AVX-512
 * anywhere in the other file, main's set-up of its test table included.
 * Without the ISA it says why and exits 77, meson's skip (a cmocka skip
 * exits 0, which meson would count as a pass). */
#include <stdio.h>

/* The test file's cmocka group; called only where the CPU runs its code. */
int isa_tests(void);

static int have_isa(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}

int main(void) {
  if (have_isa()) return isa_tests();
  printf("skipped: this CPU lacks AVX-512 (F, BW, VL, DQ, VNNI), which this test's build "
         "needs\n");
  return 77;
}
