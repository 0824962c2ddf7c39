/* Tests of lib/runtime/code_sync.c: the M-profile cache maintenance the
 * bare-metal loader runs after writing code, against a fake System
 * Control Block that records every register access and barrier.  QEMU's
 * Cortex-M7 models no caches (CCR's IC and DC bits read as zero), so this
 * is where the sequence itself is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/runtime/code_sync.h"

enum { EV_MAX = 64 };
typedef enum { EV_READ, EV_WRITE, EV_DSB, EV_ISB } ev_kind_t;
typedef struct {
  ev_kind_t kind;
  uint32_t reg, value;
} ev_t;

typedef struct {
  uint32_t ccr, ctr;
  ev_t ev[EV_MAX];
  int n;
} fake_scb_t;

static fake_scb_t *fake; /* the test's System Control Block */

static void record(ev_kind_t kind, uint32_t reg, uint32_t value) {
  assert_true(fake->n < EV_MAX);
  fake->ev[fake->n++] = (ev_t){kind, reg, value};
}

static uint32_t fake_read(uint32_t reg) {
  record(EV_READ, reg, 0);
  if (reg == TINYML__SCB_CCR) return fake->ccr;
  if (reg == TINYML__SCB_CTR) return fake->ctr;
  fail_msg("read of an unexpected register 0x%08x", (unsigned)reg);
  return 0;
}

#define TINYML_CODE_SYNC_FAKE 1
#define SCB_READ(reg) fake_read(reg)
#define SCB_WRITE(reg, value) record(EV_WRITE, (reg), (value))
#define DSB() record(EV_DSB, 0, 0)
#define ISB() record(EV_ISB, 0, 0)
#include "../../lib/runtime/code_sync.c"

static void sync(fake_scb_t *f, uintptr_t begin, size_t size) {
  fake = f;
  sync_scb(begin, size);
}

/* The events after the CCR (and CTR) reads. */
static const ev_t *after_reads(const fake_scb_t *f, int *n) {
  int i = 0;
  while (i < f->n && f->ev[i].kind == EV_READ) i++;
  *n = f->n - i;
  return f->ev + i;
}

/* CCR_DC and CCR_IC come from code_sync.c. */
#define CTR_M7 0x8303c003u /* Cortex-M7: DminLine 3 (8 words, 32 bytes) */

/* Caches off (or none): nothing but the CCR read. */
static void test_no_caches_touches_nothing(void **state) {
  (void)state;
  fake_scb_t f = {.ccr = 0x200, .ctr = 0};
  sync(&f, 0x20001000u, 4096);
  assert_int_equal(f.n, 1);
  assert_int_equal(f.ev[0].kind, EV_READ);
  assert_int_equal(f.ev[0].reg, TINYML__SCB_CCR);
}

/* Both caches on: every 32-byte line the range touches is cleaned (the
 * first from below `begin`, the last holding only its final byte),
 * between barriers, then the I-cache is invalidated, then DSB and ISB. */
static void test_both_caches_cleans_every_line_then_invalidates(void **state) {
  (void)state;
  fake_scb_t f = {.ccr = 0x200 | CCR_DC | CCR_IC, .ctr = CTR_M7};
  sync(&f, 0x20001004u, 93); /* bytes 0x...1004 to 0x...1060: 4 lines */
  int n;
  const ev_t *e = after_reads(&f, &n);
  const ev_t want[] = {
      {EV_DSB, 0, 0},
      {EV_WRITE, TINYML__SCB_DCCMVAU, 0x20001000u},
      {EV_WRITE, TINYML__SCB_DCCMVAU, 0x20001020u},
      {EV_WRITE, TINYML__SCB_DCCMVAU, 0x20001040u},
      {EV_WRITE, TINYML__SCB_DCCMVAU, 0x20001060u},
      {EV_DSB, 0, 0},
      {EV_WRITE, TINYML__SCB_ICIALLU, 0},
      {EV_DSB, 0, 0},
      {EV_ISB, 0, 0},
  };
  assert_int_equal(n, (int)(sizeof want / sizeof want[0]));
  for (int i = 0; i < n; i++) {
    assert_int_equal(e[i].kind, want[i].kind);
    assert_int_equal(e[i].reg, want[i].reg);
    assert_int_equal(e[i].value, want[i].value);
  }
}

/* A line size from CTR other than 32 bytes is followed (64: two lines). */
static void test_line_size_comes_from_ctr(void **state) {
  (void)state;
  fake_scb_t f = {.ccr = CCR_DC, .ctr = 4u << 16};
  sync(&f, 0x20000040u, 128);
  int n, cleans = 0;
  const ev_t *e = after_reads(&f, &n);
  for (int i = 0; i < n; i++)
    if (e[i].kind == EV_WRITE) {
      assert_int_equal(e[i].reg, TINYML__SCB_DCCMVAU);
      assert_int_equal(e[i].value, 0x20000040u + 64u * (uint32_t)cleans++);
    }
  assert_int_equal(cleans, 2);
  assert_int_equal(e[n - 1].kind, EV_ISB);
}

/* Only the I-cache on: nothing to clean, but it is still invalidated. */
static void test_icache_only_invalidates(void **state) {
  (void)state;
  fake_scb_t f = {.ccr = CCR_IC, .ctr = CTR_M7};
  sync(&f, 0x20000000u, 256);
  int n;
  const ev_t *e = after_reads(&f, &n);
  assert_int_equal(n, 3);
  assert_int_equal(e[0].kind, EV_WRITE);
  assert_int_equal(e[0].reg, TINYML__SCB_ICIALLU);
  assert_int_equal(e[1].kind, EV_DSB);
  assert_int_equal(e[2].kind, EV_ISB);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_caches_touches_nothing),
      cmocka_unit_test(test_both_caches_cleans_every_line_then_invalidates),
      cmocka_unit_test(test_line_size_comes_from_ctr),
      cmocka_unit_test(test_icache_only_invalidates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
