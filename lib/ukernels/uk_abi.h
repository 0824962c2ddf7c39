/* The contract between the compiler and the microkernels.
 *
 * The compiler (lib/compiler/tosa/uk_select.c) recognises quantised
 * convolutions, depthwise convolutions and fully-connected layers followed by
 * their per-channel rescale and clamp, and replaces each chain with one call
 * `tinyml_uk_<kind>(input, blob, output, scratch, wg, count)` (workgroups:
 * below).  The blob is a module constant: this header, then per-channel
 * bias/multiplier/shift, then the weights packed the way the target's
 * kernel wants them.  Each backend compiles its kernels
 * (backends/<name>/ukernels.c, or x86-64's units beside
 * ukernels_common.h, on top of uk_common.h) to LLVM bitcode that
 * the compiler links into every executable, in the spirit of IREE's
 * ukernels.
 *
 * The arithmetic is TFLite's reference arithmetic: an int32 sum of
 * (x - input_zp) * w plus the bias, TOSA apply_scale_32 with double rounding
 * (= gemmlowp's MultiplyByQuantizedMultiplier), the output zero point, then
 * the clamp.  Results are bit-exact with the Linalg path they replace.
 *
 * The f32 kinds (x86-64 only for now) replace a float conv2d,
 * depthwise_conv2d or matmul (constant weights, zero points 0; a
 * matmul's B may also come at run time: matmul_f32 below) and the
 * per-channel ops after it, each optional but in this order: a multiply,
 * an add (BatchNorm as the ONNX importer writes it, or a matmul's bias) and
 * a clamp (ReLU, ReLU6).  The kernel sums bias + x * w with FMAs, then
 * rounds the multiply, the add and the clamp one at a time as TOSA does.
 * Where every value stays finite, the compiler folds the multiply and the
 * add into the weights and the bias as it packs them (uk_pack.c,
 * fill_f32: w * s, fmaf(b, s, f)), as onnxruntime's ConvBNFusion does;
 * then scale is 1 and offset -0.0, and results differ from the Linalg
 * path by where those two round and by the order of summation.
 * The f32 max pool kind (lib/compiler/tosa/uk_pool.c) replaces a float
 * tosa.max_pool2d, bit for bit. */
#ifndef TINYML_UKERNELS_UK_ABI_H
#define TINYML_UKERNELS_UK_ABI_H

#include <stdint.h>

/* 7: the header's req_off; Armv7E-M depthwise blobs with int16 weights, a
 * padding row and in_zp * sum(w) in the bias (dw_wide); fully-connected
 * blocks of fc_oc_block channels.  8: depthwise blobs carry no req records. */
#define TINYML_UK_VERSION 8

/* Workgroups.  `tinyml_uk_<kind>(in, blob, out, scratch, int32_t wg,
 * int32_t count)` computes a band of the output pixels (n, oy, ox
 * flattened; total = batch * oh * ow): [lo(wg), lo(wg + 1)) with
 * lo(w) = w * (total / count) + min(w, total % count) (uk_band); an f32
 * conv with more output channels than pixels bands its channels instead,
 * in groups of TINYML_UK_F32_GROUP (total = ceil(oc_padded /
 * TINYML_UK_F32_GROUP)), on every pixel, so that each band reads only its
 * part of the weights.  Calls for wg = 0..count-1 may run on different
 * threads and together write every output once; wg >= count writes
 * nothing.  Each output element is computed by the same arithmetic in the
 * same order whatever the band, so results do not depend on count.
 * Workgroup wg uses scratch bytes [wg * stride, wg * stride +
 * scratch_bytes), stride = TINYML_UK_SCRATCH_STRIDE(scratch_bytes): the
 * compiler sizes the scratch argument for the most workgroups it gives the
 * call (its dispatch's useful workgroup count) and never passes a larger
 * count. */
#define TINYML_UK_SCRATCH_STRIDE(bytes) (((int64_t)(bytes) + 63) & ~(int64_t)63)

typedef enum tinyml_uk_kind {
  TINYML_UK_CONV = 1,      /* NHWC input, OHWI weights, any stride/dilation/pad */
  TINYML_UK_DEPTHWISE = 2, /* NHWC input, HWC weights (channel multiplier 1) */
  TINYML_UK_CONV_F32 = 3,      /* float TINYML_UK_CONV; see "f32 kinds" below */
  TINYML_UK_DEPTHWISE_F32 = 4, /* float TINYML_UK_DEPTHWISE */
  TINYML_UK_MAXPOOL_F32 = 5,   /* float max_pool2d, NHWC; see "f32 kinds" */
  TINYML_UK_DWPW_F32 = 6,      /* a depthwise conv, then a 1x1 conv on its result */
  TINYML_UK_PWDWPW_F32 = 7,    /* a 1x1 conv, then TINYML_UK_DWPW_F32 on its result */
  TINYML_UK_CONVCAT_F32 = 8,   /* two f32 convs of one input, channels concatenated */
  TINYML_UK_CONVPOOL_F32 = 9,  /* an f32 conv, then TINYML_UK_MAXPOOL_F32 on its result */
  TINYML_UK_MATMUL_F32 = 10,   /* an f32 matmul whose B comes at run time; see "f32 kinds" */
} tinyml_uk_kind_t;

/* Every field is an int32 so the layout is the same on every target. */
typedef struct tinyml_uk_params {
  int32_t version, kind;
  int32_t batch, ih, iw, ic, oh, ow, oc;
  int32_t kh, kw, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t in_zp, out_zp, act_min, act_max;
  /* conv: k = kh*kw*ic taps, padded to k_padded (a multiple of k_block);
   * output channels padded to oc_padded (a multiple of oc_block). */
  int32_t k, k_padded, oc_padded, oc_block, k_block;
  /* Byte offsets from the start of the blob, each 16-byte aligned:
   * int32 bias[oc_padded], int32 mult[oc_padded], int32 shift[oc_padded],
   * int8 weights (conv: [oc_padded/oc_block][k_padded/k_block][oc_block][k_block],
   * depthwise: [kh][kw][ic]; Armv7E-M's depthwise with dw_wide: int16,
   * each group of 4 channels tap by tap as channels 0, 2, 1, 3, then an
   * ic-byte row of in_zp, docs/DESIGN.md). */
  int32_t bias_off, mult_off, shift_off, weights_off;
  int32_t scratch_bytes; /* what one workgroup may use of the scratch argument */
  /* int64 round[2][round_up(oc_padded, 16)]: apply_scale's rounding term
   * (1 << (shift - 1), +-2^30 when shift > 31) for v >= 0, then for v < 0. */
  int32_t round_off;
  /* tinyml_uk_chan_t[oc_padded]: the same per-channel numbers as one record
   * per channel, for scalar cores that requantise one output at a time. */
  int32_t chan_off;
  /* dwpw_f32, pwdwpw_f32, convcat_f32, convpool_f32: the byte offset of
   * the next kernel's blob (a multiple of 64); 0 otherwise. */
  int32_t next_off;
  /* conv_f32: 0 for the direct sum; otherwise the conv (3x3, stride 1,
   * dilation 1) runs as Winograd F(wino_m x wino_m, 3x3) in blocks of
   * this many tiles of wino_m x wino_m outputs ("f32 kinds" below). */
  int32_t wino_tiles;
  /* conv_f32 with wino_tiles > 0: outputs per tile side, 2 for F(2x2,
   * 3x3) or 4 for F(4x4, 3x3). */
  int32_t wino_m;
  /* conv (int8): 0, or where the module's CPU has 4-tap byte dot products
   * (x86: AVX512-VNNI), which the kernel may then use, the byte offset of
   * int32 bias4[round_up(oc_padded, 16)]: bias - (in_zp + 128) * the sum
   * of the channel's weights, modulo 2^32 (backends/x86/conv_s8_vnni.c). */
  int32_t dot4;
  /* int8 conv and depthwise, where the backend asks for them (backend.h,
   * req_records): 0, or when every channel's shift lies in [33, 54], the
   * byte offset of tinyml_uk_req_t[oc_padded]; a depthwise blob has no
   * records there (its kernel uses tinyml_uk_chan_t), only the promise
   * about the shifts. */
  int32_t req_off;
} tinyml_uk_params_t;

/* f32 kinds.  The header stays all-int32; the fields mean:
 * - act_min, act_max: the bits of the float clamp bounds (-inf and +inf
 *   when there is no clamp);
 * - bias_off, mult_off, shift_off: float bias[], scale[] (the multiply; 1
 *   when none or folded into the weights) and offset[] (the add; -0.0 when
 *   none or folded into the bias, which adds exactly nothing), each
 *   round_up(oc_padded, 16) long; in_zp, out_zp, round_off
 *   and chan_off are 0;
 * - conv: k_padded = k, k_block = 1, oc_block = 16, oc_padded =
 *   round_up(oc, 8); weights_off holds float panels of 16 channels (the
 *   last one 8 when oc_padded is not a multiple of 16), cut into chunks
 *   of TINYML_UK_F32_KC taps: chunk [k0, k0 + kc) holds every panel's kc
 *   rows, panel after panel, so the panel of channels [o0, o0 + n) has
 *   its rows [k0, k0 + kc) as [kc][n] at element k0 * oc_padded + o0 * kc.
 *   The kernels walk chunk by chunk, panel by panel, so the weights are
 *   one forward stream that the hardware prefetcher follows;
 * - conv: scratch_bytes / (4 * k) pixels' im2col columns at a time (float,
 *   k per pixel); 0 means the input rows are the columns (1x1, stride 1,
 *   no padding: also matmuls, as 1x1 convs over M pixels);
 * - conv with wino_tiles > 0 (Winograd F(m x m, 3x3), m = wino_m,
 *   backends/x86/wino_f32.c): weights_off holds U = G g G^T, nn =
 *   (m + 2)^2 matrices of ic taps x oc channels, position xi (row-major
 *   in the (m + 2)^2 patch) at element xi * ic * oc_padded, each packed
 *   as a conv's weights with k = ic; the scratch holds 3 *
 *   round_up(oc_padded, 16) floats, then V [nn][tiles][round_up(ic, 8)]
 *   and M [nn][tiles][oc_padded], each position's matrix
 *   tinyml_uk_wino_stride(tiles * its channels) floats from the last.
 *   Workgroups take bands of the batch * ceil(oh / m) * ceil(ow / m)
 *   tiles (uk_split) instead of pixels.  Results differ from the direct
 *   sum by rounding; the compile option no_winograd keeps the direct sum;
 * - depthwise: float weights [kh][kw][ic] (channel multiplier 1);
 * - max pool (tosa.max_pool2d, NaN propagating): the blob is this header
 *   alone; oc = ic, dil_h = dil_w = 1, the rest 0.  Windows are clipped to
 *   the image, which is TOSA's padding with the lowest float, and each
 *   output is the Linalg path's max bit for bit, starting from that lowest
 *   float (so a window of -inf gives -FLT_MAX) and propagating the same
 *   NaN (pool_f32.c in backends/x86 says which).
 *
 * `tinyml_uk_conv_add_f32(in, blob, out, scratch, wg, count, res)` is the
 * f32 conv with one more step: res, a tensor of the output's shape and
 * layout, is added after the offset and before the clamp, as a residual
 * add (and the ReLU after it) would in TOSA (lib/compiler/
 * tosa/uk_residual.c).  Same blob; its clamp is the one after the add.
 *
 * `tinyml_uk_dwpw_f32(in, blob, out, scratch, wg, count)` (and
 * `tinyml_uk_dwpw_add_f32(..., res)`) is a depthwise conv and the 1x1
 * conv (stride 1, no padding) that reads its result, in one call, so that
 * the depthwise result never goes to memory (lib/compiler/
 * tosa/uk_dwpw.c): the blob is the depthwise blob, with kind
 * TINYML_UK_DWPW_F32, next_off and scratch_bytes (room for some pixels
 * of its result, ic floats each), then at next_off the conv's blob as
 * tinyml_uk_conv_f32 (or _add_f32) takes it.  Bands are of the
 * depthwise's output pixels, which are the conv's; every value is the one
 * the two kernels give apart.
 *
 * `tinyml_uk_pwdwpw_f32` (and `_add_f32`) puts a conv before that: the
 * 1x1 expansion of MobileNetV2's block, from the block's input, or a
 * network's first conv (3x3, stride 2, before a depthwise and a 1x1
 * conv in MobileNets), from the image; not Winograd.  The blob is that
 * conv's, with kind TINYML_UK_PWDWPW_F32, next_off (a dwpw_f32 blob
 * follows there) and scratch_bytes: a window of the conv's output rows,
 * (kh - 1) * dil_h + 1 of them (iw * ic floats each: the depthwise's iw
 * and ic), then room for at least one row of depthwise result (ow * ic
 * floats), then tinyml_uk_window_cols(blob) im2col columns of the conv's
 * k floats.  Bands are again of the depthwise's output pixels; each
 * computes the conv rows its window needs.
 *
 * `tinyml_uk_convpool_f32(in, blob, out, scratch, wg, count)` is an f32
 * conv (not Winograd) and the max pool that alone reads its result
 * (SqueezeNet's and ResNet's first conv and pool): the blob is the conv's,
 * with kind TINYML_UK_CONVPOOL_F32, next_off (the pool's blob follows
 * there) and scratch_bytes: a window of the conv's output rows, the
 * pool's kh of them (iw * ic floats each: the pool's iw and ic), then
 * tinyml_uk_window_cols(blob) im2col columns of the conv's k floats.
 * Bands are of the pool's output pixels; each computes the conv rows its
 * windows need, so the conv's result never goes to memory.
 *
 * `tinyml_uk_matmul_f32(a, blob, out, scratch, wg, count, b)` is a
 * float tosa.matmul [1, M, K] x [1, K, N] whose B is not a constant
 * (lib/compiler/tosa/uk_matmul.c), with the per-channel ops after it as
 * for a conv: the blob is a conv's header (kind TINYML_UK_MATMUL_F32,
 * batch = ih = oh = 1, iw = ow = M, ic = k = K, oc = N, 1x1 window) and
 * its bias, scale and offset, with no weights (weights_off is the blob's
 * end).  Workgroups take bands of TINYML_UK_F32_GROUP-column groups of
 * B (total = ceil(oc_padded / TINYML_UK_F32_GROUP), as an f32 conv's
 * channel bands) on every row of A; scratch_bytes = 4 * K *
 * TINYML_UK_F32_GROUP: one group of B at a time, packed there at
 * run time as a conv's weights with oc_padded = the group's padded width
 * (backends/x86/matmul_f32.c).  Each output is the bias, then the FMAs in
 * k order with exact partial sums between tap chunks, whatever the band.
 *
 * `tinyml_uk_convcat_f32(in, blob, out, scratch, wg, count)` is two f32
 * convs of the same input whose results a concat on channels joins
 * (SqueezeNet's fire modules; lib/compiler/tosa/uk_concat.c): the blob is
 * a header alone (kind TINYML_UK_CONVCAT_F32, scratch_bytes the larger
 * of the two convs', next_off), then at next_off the first conv's blob,
 * whose next_off gives the second's.  Each conv writes its oc channels
 * of every output pixel of oc_first + oc_second, and bands each as
 * tinyml_uk_conv_f32 would. */

/* Taps per chunk of the f32 conv weights ("f32 kinds" above), and how
 * many the chunk from tap k0 of k holds: the packer and the kernels both
 * place weights by it. */
enum { TINYML_UK_F32_KC = 512 };
static inline int32_t tinyml_uk_f32_chunk(int32_t k, int32_t k0) {
  return k - k0 < TINYML_UK_F32_KC ? k - k0 : TINYML_UK_F32_KC;
}

/* Channels per group of an f32 conv's channel bands, and columns of B per
 * group of the run-time-B matmul (workgroups above): a workgroup takes
 * whole groups, the last one cut at oc_padded.  The compiler counts a
 * call's useful bands and sizes the matmul's scratch by it, and the
 * kernels band by it, so all must agree.  32 is one AVX-512 register
 * tile's two 16-channel panels (two AVX2 tiles). */
enum { TINYML_UK_F32_GROUP = 32 };

/* Whether conv `p` reads its input rows as its im2col columns (1x1,
 * stride 1, no padding); such a conv has no scratch of its own. */
static inline int tinyml_uk_direct_1x1(const tinyml_uk_params_t *p) {
  return p->kh == 1 && p->kw == 1 && p->stride_h == 1 && p->stride_w == 1 &&
         p->pad_top == 0 && p->pad_left == 0 && p->ih == p->oh && p->iw == p->ow;
}

/* Winograd convs: floats from one position's V (or M) to the next's, for
 * `floats` = tiles * channels.  An odd number of 64-byte lines, so that
 * the (m + 2)^2 positions of a tile, written or read one after another,
 * fall into different cache sets: with a multiple of 4 KB they all fell
 * into one, and a 56x56 F(4x4, 3x3) conv ran 1.7x slower. */
static inline int64_t tinyml_uk_wino_stride(int64_t floats) {
  int64_t lines = (floats + 15) / 16;
  return 16 * (lines | 1);
}

/* The most pixels the f32 kernels take as one block: a gathered im2col
 * block, a run of output pointers, a depthwise chunk. */
enum { TINYML_UK_F32_BLOCK = 120 };

/* pwdwpw_f32, convpool_f32: the im2col columns at the end of the
 * scratch for the conv whose rows they compute into a window, when it
 * gathers them: an output row's worth, at most a block. */
static inline int32_t tinyml_uk_window_cols(const tinyml_uk_params_t *first) {
  if (tinyml_uk_direct_1x1(first)) return 0;
  return first->ow < TINYML_UK_F32_BLOCK ? first->ow : TINYML_UK_F32_BLOCK;
}

/* A backend whose tc_ukernels_t sets zp_in_bias (armv7em) gets int8 conv
 * blobs whose bias[] and chan[].bias are bias - in_zp * the sum of the
 * channel's weights, modulo 2^32: its kernel sums x * w on raw inputs. */
/* A depthwise blob with backend.h's dw_wide weights (armv7em) has
 * chan[].bias = bias - zp_sum, modulo 2^32: its kernel sums x * w with
 * in_zp on taps outside the image. */
typedef struct tinyml_uk_chan {
  int32_t bias, mult, shift;
  int32_t zp_sum; /* depthwise: in_zp * the sum of the channel's weights */
  int64_t round_pos, round_neg;
} tinyml_uk_chan_t;

/* One channel's requantisation with its shift s in [33, 54] (req_off):
 * hz = 2^(s-33) + out_zp * 2^(s-32) and sh = s - 32.  Starting from
 * hi:lo = (hz + (v >> 31)) * 2^32 + ((v & 2^31) | 2^30), which is the
 * rounding term for v's sign plus out_zp * 2^s, hi:lo += v * mult leaves
 * the output, before its clamp, in hi >> sh: no select, no 64-bit shift,
 * no zero point add.  bias: no kernel reads it (the sums start from
 * bias[]); it is chan[].bias before a dw_wide blob's zero-point fold. */
typedef struct tinyml_uk_req {
  int32_t bias, mult, hz, sh;
} tinyml_uk_req_t;

/* How a backend wants conv weights packed, and how much scratch its conv
 * kernel needs (bytes = scratch_per_k * k_padded + scratch_fixed). */
typedef struct tinyml_uk_layout {
  int32_t oc_block, k_block;
  int32_t scratch_per_k, scratch_fixed;
} tinyml_uk_layout_t;

#endif
