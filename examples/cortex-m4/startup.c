/* Cortex-M4/M7 startup for the MPS2 boards under QEMU (mps2-an386,
 * mps2-an500): a minimal vector table, and a reset handler that copies
 * .data, enables the FPU and enters newlib's _start (rdimon.specs), which
 * sets up semihosting, clears .bss and calls main. */
#include <stdint.h>

extern uint32_t __data_load__, __data_start__, __data_end__, __stack_top__;
extern void _start(void);

void Reset_Handler(void);
void Default_Handler(void);

__attribute__((noreturn)) void Reset_Handler(void) {
  const uint32_t *src = &__data_load__;
  for (uint32_t *dst = &__data_start__; dst < &__data_end__;) *dst++ = *src++;
  /* CPACR: full access to CP10 and CP11 (the FPU). */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm volatile("dsb\n\tisb" ::: "memory");
  _start();
  for (;;) {
  }
}

void Default_Handler(void) {
  for (;;) {
  }
}

/* Initial SP, reset, then NMI..SysTick; no peripheral interrupts used. */
__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top__, Reset_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0,
    Default_Handler, Default_Handler};
