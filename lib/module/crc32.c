/* CRC-32 as zlib's crc32(): reflected polynomial 0xEDB88320, initial value
 * and final xor 0xFFFFFFFF. */
#include "module.h"

/* The byte table is rebuilt on the stack per call rather than kept in a
 * mutable global (the library has no global state); building it costs 2048
 * shifts, noise next to checksumming a module. */
static void make_table(uint32_t table[256]) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
}

uint32_t tmod_crc32(const void *data, size_t size) {
  uint32_t table[256];
  make_table(table);
  const uint8_t *p = data;
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; i++) crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}
