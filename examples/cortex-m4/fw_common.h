/* What both firmware mains share: the instruction counter (CMSDK APB timer
 * 0 under QEMU -icount shift=0, calibrated by a loop of known length) and
 * writing outputs to the host through semihosting. */
#ifndef FW_COMMON_H
#define FW_COMMON_H

#include <stdint.h>
#include <stdio.h>

#define TIMER0 ((volatile uint32_t *)0x40000000u) /* CTRL, VALUE, RELOAD */
static void timer_start(void) {
  TIMER0[0] = 0;
  TIMER0[2] = 0xFFFFFFFFu;
  TIMER0[1] = 0xFFFFFFFFu;
  TIMER0[0] = 1; /* enable, internal clock */
}
static uint32_t timer_now(void) { return TIMER0[1]; /* counts down */ }

/* 2 instructions per iteration (subs, bne). */
static void known_loop(uint32_t n) {
  __asm volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
}

/* Ticks of a 2,000,000-instruction loop, for tinyml-mcu-run's calibration. */
static uint32_t calibration_ticks(void) {
  timer_start();
  uint32_t c0 = timer_now();
  known_loop(1000000);
  return c0 - timer_now();
}

/* Writes output `i` to <dir>/output_<i>.bin; 0 on success. */
static int write_output(const char *dir, unsigned i, const void *data, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/output_%u.bin", dir, i);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size) {
    printf("error: cannot write %s\n", path);
    return 1;
  }
  fclose(f);
  return 0;
}

#endif
