/* int8 microkernels for RISC-V, compiled to LLVM bitcode at build time and
 * linked into every executable (lib/ukernels/uk_abi.h).  Portable C: the
 * weights are packed 16 output channels per tap, so the inner loop runs
 * over contiguous channels and LLVM's loop vectoriser turns it into
 * widening multiply-adds for whatever vector length the target has. */
#include "../../lib/ukernels/uk_common.h"

static void conv_pixel(const uk_ctx_t *c, const int16_t *col, int8_t *out) {
  uk_conv_pixel_generic(c, col, out);
}

void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  uk_ctx_t c = uk_ctx(blob);
  UK_CONV_DRIVER(&c, in, out, scratch, conv_pixel);
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  uk_depthwise_generic(&c, in, out);
}
