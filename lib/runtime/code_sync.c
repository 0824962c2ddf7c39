/* See code_sync.h.  The M-profile sequence reaches the System Control
 * Block through SCB_READ, SCB_WRITE, DSB and ISB: the hardware's here, a
 * recording fake's in tests/runtime/test_code_sync.c, which includes this
 * file with TINYML_CODE_SYNC_FAKE set (no indirection in the firmware). */
#include "code_sync.h"

#ifndef TINYML_FREESTANDING
#define TINYML_FREESTANDING 0
#endif
#ifndef TINYML_CODE_SYNC_FAKE
#define TINYML_CODE_SYNC_FAKE 0
#endif

#if TINYML_FREESTANDING && !TINYML_CODE_SYNC_FAKE && TINYML_ARM_CACHES
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
#error "freestanding builds know the code-sync sequence of M-profile Arm only (code_sync.h)"
#endif
#define SCB_READ(reg) (*(volatile const uint32_t *)(uintptr_t)(reg))
#define SCB_WRITE(reg, value) (*(volatile uint32_t *)(uintptr_t)(reg) = (value))
#define DSB() __asm volatile("dsb" ::: "memory")
#define ISB() __asm volatile("isb" ::: "memory")
#define HAS_SCB 1
#else
#define HAS_SCB TINYML_CODE_SYNC_FAKE
#endif

#if HAS_SCB
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)

/* The M-profile sequence, as CMSIS's SCB_CleanDCache_by_Addr (to the
 * point of unification, which is enough for fetches) and
 * SCB_InvalidateICache. */
static void sync_scb(uintptr_t begin, size_t size) {
  const uint32_t ccr = SCB_READ(TINYML__SCB_CCR);
  if (size == 0 || !(ccr & (CCR_DC | CCR_IC))) return;
  if (ccr & CCR_DC) {
    /* The smallest data cache line; 32 bytes (every Cortex-M cache so
     * far) if CTR does not say. */
    uintptr_t line = (uintptr_t)4 << ((SCB_READ(TINYML__SCB_CTR) >> 16) & 0xfu);
    if (line < 16) line = 32;
    DSB(); /* the loader's stores are done before their cleans */
    for (uintptr_t a = begin & ~(line - 1); a < begin + size; a += line)
      SCB_WRITE(TINYML__SCB_DCCMVAU, (uint32_t)a);
    DSB();
  }
  if (ccr & CCR_IC) {
    SCB_WRITE(TINYML__SCB_ICIALLU, 0u);
    DSB();
  }
  ISB(); /* later fetches see the new code */
}
#endif

#if !TINYML_FREESTANDING
void tinyml__sync_code(void *begin, size_t size) {
  __builtin___clear_cache((char *)begin, (char *)begin + size);
}
#elif !TINYML_CODE_SYNC_FAKE && TINYML_ARM_CACHES
/* Handler mode, or thread mode with CONTROL.nPRIV clear. */
static int privileged(void) {
  uint32_t ipsr, control;
  __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  __asm volatile("mrs %0, control" : "=r"(control));
  return (ipsr & 0x1ffu) != 0 || (control & 1u) == 0;
}

void tinyml__sync_code(void *begin, size_t size) {
  if (privileged()) sync_scb((uintptr_t)begin, size);
}
#endif
