/* Making code that the loader wrote through the data side safe to run.
 *
 * A core with separate instruction and data caches can fetch stale
 * instructions from memory that was just written: the new bytes may still
 * sit in the data cache (write-back), and the instruction cache may hold
 * what was there before.  Hosted builds leave this to the compiler's
 * __builtin___clear_cache (nothing on x86; the kernel or the ISA's
 * maintenance on Arm and RISC-V).  Bare-metal M-profile builds (Cortex-M7,
 * M55, M85 with their caches on) have no kernel to ask: tinyml__sync_code
 * cleans the data cache to the point of unification line by line and
 * invalidates the instruction cache through the System Control Block, as
 * CMSIS's SCB_CleanDCache_by_Addr and SCB_InvalidateICache do, when
 * CCR's cache-enable bits say the caches are on.  A Cortex-M4 has none,
 * and its build leaves the sequence out (TINYML_ARM_CACHES). */
#ifndef TINYML_RUNTIME_CODE_SYNC_H
#define TINYML_RUNTIME_CODE_SYNC_H

#include <stddef.h>
#include <stdint.h>

/* Whether an M-profile core may have caches (Cortex-M7, M55, M85).
 * cross/cortex-m4.txt sets 0: a Cortex-M4 has none, and without the
 * sequence its firmware's runtime stays within 8 KiB of .text. */
#ifndef TINYML_ARM_CACHES
#define TINYML_ARM_CACHES 1
#endif

/* After writing [begin, begin + size) and before running any of it.
 * On bare metal it needs privileged execution (the System Control Block
 * is not accessible otherwise): an unprivileged caller is skipped, and
 * must clean and invalidate the caches itself if they are on. */
#if defined(TINYML_FREESTANDING) && TINYML_FREESTANDING && !TINYML_ARM_CACHES
static inline void tinyml__sync_code(void *begin, size_t size) {
  (void)begin;
  (void)size;
}
#else
void tinyml__sync_code(void *begin, size_t size);
#endif

/* The System Control Block registers the M-profile sequence uses (ARMv7-M
 * and ARMv8-M). */
#define TINYML__SCB_CCR 0xE000ED14u     /* bit 16 DC, bit 17 IC: caches on */
#define TINYML__SCB_CTR 0xE000ED7Cu     /* bits 19:16 DminLine: log2 words */
#define TINYML__SCB_ICIALLU 0xE000EF50u /* invalidate the I-cache */
#define TINYML__SCB_DCCMVAU 0xE000EF64u /* clean a D-cache line to PoU */

#endif
