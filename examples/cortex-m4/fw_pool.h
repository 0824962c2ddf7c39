/* A static-pool allocator for firmware (bump allocation, free is a no-op:
 * everything lives until reset) and the status check that prints an error.
 * main.c and main_two_models.c use it. */
#ifndef FW_POOL_H
#define FW_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tinyml.h"

#ifndef POOL_BYTES
#define POOL_BYTES (3u << 20)
#endif
static uint8_t fw_pool[POOL_BYTES] __attribute__((aligned(64)));
static size_t fw_pool_bytes_used;

static void *fw_pool_alloc(void *self, size_t size, size_t alignment) {
  (void)self;
  /* Align the address, not the offset: the pool itself is only 64-aligned
   * and the ELF loader asks for its image's p_align (4 KiB). */
  uintptr_t base = (uintptr_t)fw_pool;
  uintptr_t end = base + fw_pool_bytes_used;
  size_t at = (size_t)(((end + alignment - 1) & ~(uintptr_t)(alignment - 1)) - base);
  if (at > POOL_BYTES || size > POOL_BYTES - at) return NULL;
  fw_pool_bytes_used = at + size;
  return fw_pool + at;
}

static void fw_pool_free(void *self, void *ptr) {
  (void)self;
  (void)ptr;
}

static tinyml_allocator_t fw_pool_allocator(void) {
  tinyml_allocator_t a = {NULL, fw_pool_alloc, fw_pool_free};
  return a;
}

static size_t fw_pool_used(void) { return fw_pool_bytes_used; }

/* 0 for OK; otherwise prints "error: <what>: <message>" and returns 1. */
static int fw_check(tinyml_status_t st, const char *what) {
  if (!st) return 0;
  printf("error: %s: %s\n", what, tinyml_status_message(st));
  tinyml_status_free(st);
  return 1;
}

#endif
