/* Depthwise convs into the 1x1 conv kernel that reads them, after the
 * residual adds went into theirs (uk_residual.c).
 *
 * MobileNetV2's blocks are a 1x1 expansion, a depthwise conv and a 1x1
 * projection.  Apart, the depthwise result (up to 56x56x144 floats, more
 * than a core's L2) is written by one dispatch and read back by the next,
 * and on threads the two are two phases, each a barrier and a pass over
 * memory the other core may hold.  So
 *
 *   %d = "tinyml.uk"(%x, %dblob) {kind = "depthwise_f32"}
 *   %y = "tinyml.uk"(%d, %cblob[, %skip]) {kind = "conv_f32" | "conv_add_f32"}
 *
 * becomes "tinyml.uk"(%x, %blob[, %skip]) {kind = "dwpw_f32" |
 * "dwpw_add_f32"} when %y's conv is 1x1, stride 1, unpadded and %d has no
 * other use; %blob is the two blobs as uk_abi.h lays them out, and the
 * kernel computes the depthwise result a chunk of pixels at a time in its
 * scratch.
 *
 * Then, on images of at least TC_PWDWPW_ROWS rows, the block's expansion
 * goes in too: a conv_f32 that only the dwpw op reads (the block's 1x1
 * expansion, or a MobileNet's first conv, whose 112x112x32 result would
 * otherwise cross memory twice) becomes kind "pwdwpw_f32" |
 * "pwdwpw_add_f32" on the block's input, and the kernel keeps the conv
 * rows the depthwise conv's window needs in its scratch.  A band
 * recomputes the rows above its first output row that the band before
 * also had (two for a 3x3 conv), which is why small images are left as
 * they are (ukernel_lower.c gives these kernels bands of at least
 * TC_PWDWPW_ROWS / 2 rows), and so are windows that would recompute more
 * than MAX_REDO rows a band or need more than MAX_BLOCK_BYTES of scratch
 * (dilated ones). */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "uk_dwpw.h"

/* A chunk of the depthwise result: at most MID_PIXELS pixels (the
 * kernels' most per run, FB_MAX) and the tuning's chunk_bytes. */
enum { MID_PIXELS = TINYML_UK_F32_BLOCK };

/* A block's window may recompute at most MAX_REDO rows a band, and its
 * scratch (the window's rows and a chunk) needs at most the tuning's
 * window_bytes. */
enum { MAX_REDO = 4 };

/* Whether conv `c` is 1x1, stride 1, unpadded and reads its input rows
 * as they are (no im2col). */
static int direct_1x1(const tinyml_uk_params_t *c) {
  return tinyml_uk_direct_1x1(c) && c->dil_h == 1 && c->dil_w == 1 && c->scratch_bytes == 0;
}

/* Whether conv `c` reads depthwise `d`'s output as a direct 1x1 conv. */
static int pointwise_after(const tinyml_uk_params_t *c, const tinyml_uk_params_t *d) {
  return direct_1x1(c) && c->batch == d->batch && c->ih == d->oh && c->iw == d->ow &&
         c->ic == d->ic && c->k == d->ic;
}

/* Pixels of depthwise result a chunk holds: enough for the kernels'
 * largest register tile even when channels are many, at least `least`,
 * never more than the image. */
static int64_t mid_pixels(const tc_f32_tuning_t *t, const tinyml_uk_params_t *d,
                          int64_t least) {
  int64_t pixels = (int64_t)d->batch * d->oh * d->ow, tile = t->max_tile_rows;
  int64_t n = t->chunk_bytes / (4 * (int64_t)d->ic);
  n = n < tile ? tile : n > MID_PIXELS ? MID_PIXELS : n;
  n = n < least ? least : n;
  return n < pixels ? n : pixels;
}

static int64_t mid_bytes(const tc_f32_tuning_t *t, const tinyml_uk_params_t *d) {
  return mid_pixels(t, d, 1) * 4 * d->ic;
}

/* Input rows one output row of depthwise `d` reads. */
static int64_t window_rows(const tinyml_uk_params_t *d) {
  return (int64_t)(d->kh - 1) * d->dil_h + 1;
}

/* The pwdwpw kernel's scratch: the window of first conv rows its
 * depthwise conv `d` reads, then a chunk of whole output rows, then the
 * first conv `e`'s im2col columns, if it gathers any. */
static int64_t block_bytes(const tc_f32_tuning_t *t, const tinyml_uk_params_t *e,
                           const tinyml_uk_params_t *d) {
  return (window_rows(d) * d->iw + mid_pixels(t, d, d->ow)) * 4 * d->ic +
         (int64_t)tinyml_uk_window_cols(e) * e->k * 4;
}

static int fuse_depthwise(const tc_uk_pass_t *ps, MlirOperation dw) {
  MlirContext ctx = ps->ctx;
  const tinyml_allocator_t *al = ps->a;
  tinyml_uk_params_t d, c;
  MlirAttribute da, ca;
  MlirValue mid = mlirOperationGetResult(dw, 0);
  MlirOperation pw = tc_sole_user(mid);
  if (mlirOperationGetNumOperands(dw) != 2 || mlirOperationIsNull(pw)) return 0;
  const int add = tc_uk_kind_is(pw, "conv_add_f32");
  if ((!add && !tc_uk_kind_is(pw, "conv_f32")) ||
      !mlirValueEqual(mlirOperationGetOperand(pw, 0), mid) ||
      !tc_uk_blob_params(mlirOperationGetOperand(dw, 1), &d, &da) ||
      d.kind != TINYML_UK_DEPTHWISE_F32 ||
      !tc_uk_blob_params(mlirOperationGetOperand(pw, 1), &c, &ca) ||
      c.kind != TINYML_UK_CONV_F32 || !pointwise_after(&c, &d))
    return 0;
  const int64_t scratch = mid_bytes(ps->tuning, &d);
  MlirValue blob = tc_uk_fused_blob(ctx, da, ca, TINYML_UK_DWPW_F32, scratch, pw, al);
  if (mlirValueIsNull(blob)) return 0;
  tc_uk_retarget(ctx, pw, dw, blob, add ? "dwpw_add_f32" : "dwpw_f32", scratch);
  return 1;
}

/* Whether conv `e` (a 1x1 expansion, or any other direct-sum conv, such
 * as a MobileNet's first) is one whose whole output depthwise `d` reads,
 * on an image and with a window worth the fusion. */
static int expansion_of(const tc_f32_tuning_t *t, const tinyml_uk_params_t *e,
                        const tinyml_uk_params_t *d) {
  return e->wino_tiles == 0 && e->batch == d->batch && e->oh == d->ih && e->ow == d->iw &&
         e->oc == d->ic && d->ih >= TC_PWDWPW_ROWS && window_rows(d) - d->stride_h <= MAX_REDO &&
         block_bytes(t, e, d) <= t->window_bytes;
}

static int fuse_expansion(const tc_uk_pass_t *ps, MlirOperation dwpw) {
  MlirContext ctx = ps->ctx;
  const tinyml_allocator_t *al = ps->a;
  tinyml_uk_params_t e, d;
  MlirAttribute ea, da;
  MlirValue x = mlirOperationGetOperand(dwpw, 0);
  MlirOperation ex = tc_value_owner_op(x);
  const int add = tc_uk_kind_is(dwpw, "dwpw_add_f32");
  if (mlirOperationIsNull(ex) || !tc_uk_kind_is(ex, "conv_f32") ||
      mlirOperationGetNumOperands(ex) != 2 || !mlirOperationEqual(tc_sole_user(x), dwpw) ||
      !tc_uk_blob_params(mlirOperationGetOperand(ex, 1), &e, &ea) ||
      e.kind != TINYML_UK_CONV_F32 ||
      !tc_uk_blob_params(mlirOperationGetOperand(dwpw, 1), &d, &da) ||
      d.kind != TINYML_UK_DWPW_F32 || !expansion_of(ps->tuning, &e, &d))
    return 0;
  const int64_t scratch = block_bytes(ps->tuning, &e, &d);
  MlirValue blob = tc_uk_fused_blob(ctx, ea, da, TINYML_UK_PWDWPW_F32, scratch, dwpw, al);
  if (mlirValueIsNull(blob)) return 0;
  tc_uk_retarget(ctx, dwpw, ex, blob, add ? "pwdwpw_add_f32" : "pwdwpw_f32", scratch);
  return 1;
}

unsigned tc_ukernels_fuse_dwpw(const tc_uk_pass_t *pass, MlirModule m) {
  unsigned n = tc_uk_fuse_all(pass, m, "depthwise_f32", NULL, fuse_depthwise);
  return n + tc_uk_fuse_all(pass, m, "dwpw_f32", "dwpw_add_f32", fuse_expansion);
}
