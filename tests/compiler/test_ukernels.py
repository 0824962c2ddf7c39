#!/usr/bin/env python3
"""The int8 microkernels against the Linalg path they replace, bit for bit.

Each case is a small TOSA function (a quantised conv2d, depthwise_conv2d or
fully-connected matmul, then its per-channel rescale and maybe a clamp) with
random weights and awkward shapes: channel counts that fill no register
tile, strides, dilations, asymmetric padding, batches, shifts on both sides
of 32, negative biases and zero points.  It is compiled twice for the host:
as usual, which must call a microkernel (the --emit c kernels object then
defines tinyml_uk_*), and with --features +fma, which leaves out +avx2 and
so keeps the Linalg path (no tinyml_uk_* symbol).  Both modules run on the
same random inputs and must agree byte for byte.  A case that the matcher
must refuse (a weight zero point) is checked to keep the Linalg path.  The
default module must have the AVX2 kernels (its object defines uk_tile_avx2 or
uk_dw_avx2); compiled a third time with the AVX-512 features, it must have
the AVX-512 ones (uk_tile_avx512, uk_dw_avx512) and, where the CPU has
AVX-512, give the same bytes too.  The conv and fully-connected cases are
compiled a fourth time with +avx512vnni as well, where the int8 conv may
sum 4 byte taps per instruction (backends/x86/conv_s8_vnni.c): their
blobs must set dot4 (the offset of their second bias; 0 without it, or for
--cpu skylake-avx512 and x86-64-v4, set for cascadelake and znver5), and
where the CPU has VNNI the module must give the same bytes.  Every build
also runs on 2, 3 and 4 threads: the *_bands cases are large enough that their call is
split into 4, 6 and 8 bands of output pixels (lib/ukernels/uk_abi.h; they are
below x86-64's split_min_work, so their kernel builds are compiled with
--split-min-work 1, and tinyml-run --info must show a split step),
bands that start mid-row and, with a batch, span two images; every split
must give the same bytes.

The f32 kernels and max pools: test_ukernels_f32.py; helpers both use:
uk_common.py.

usage: test_ukernels.py TINYML_COMPILE TINYML_RUN NM WORK_DIR [PART/PARTS]
"""
import os
import random
import shutil
import sys

from uk_common import (AVX512, c_int, check_split, const, dims, host_avx512, kernel_symbols,
                       out_size, run, scalar, split_extra, uk_blobs)


def rescale_chain(rng, acc, acc_shape, oc, per_channel, clamp, shifts=None, mults=None):
    n = oc if per_channel else 1
    mult = [rng.randrange(1 << 30, 1 << 31) for _ in range(n)]
    # chosen multipliers: powers of two make exact .5 ties common
    if mults:
        mult = [rng.choice(mults) for _ in range(n)]
    # shifts below, at and above 32: the kernels take different paths
    shift = [rng.choice(shifts or [20, 29, 31, 32, 33, 36, 38, 40]) for _ in range(n)]
    s = const("mult", mult, n, "i32") + const("shift", shift, n, "i8")
    s += scalar("rzp", 0, "i32") + scalar("ozp", rng.randrange(-128, 128), "i8")
    ty = dims(acc_shape)
    s += (f'    %r = "tosa.rescale"(%{acc}, %mult, %shift, %rzp, %ozp) <{{scale32 = true, '
          f'rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, per_channel = {str(per_channel).lower()}, '
          f'input_unsigned = false, output_unsigned = false}}> : (tensor<{ty}xi32>, tensor<{n}xi32>, '
          f'tensor<{n}xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<{ty}xi8>\n')
    if clamp:
        lo, hi = sorted(rng.sample(range(-128, 128), 2))
        s += (f'    %y = "tosa.clamp"(%r) <{{min_val = {lo} : i8, max_val = {hi} : i8}}> : '
              f'(tensor<{ty}xi8>) -> tensor<{ty}xi8>\n')
        return s, "y"
    return s, "r"


# Every shift in [33, 54], with powers of two for ties (rescale_chain's rq).
HIGH_SHIFTS = {"shifts": [33, 34, 37, 41, 47, 54], "mults": [1 << 30, (1 << 31) - 1, 1518500250]}


# [32, 62]: the 1x1 kernel's range (conv_s8_pw.c), with small multipliers
# too so that shifts near 62 give outputs other than out_zp.
WIDE_SHIFTS = {"shifts": [32, 33, 54, 55, 58, 62],
               "mults": [1 << 30, (1 << 31) - 1, 1518500250, 3, 1]}


# 31 (TOSA's single rounding: the 1x1 kernel's pw_conv31) among others,
# with powers of two for ties and multipliers that keep outputs in range.
SHIFT31 = {"shifts": [31, 31, 32, 40, 58],
           "mults": [1 << 30, 1 << 20, 1 << 12, 1518500250, 123457]}


def conv_case(rng, name, n, h, w, ic, oc, kh, kw, stride, dil, pad, depthwise=False, mult=1,
              w_zp=0, clamp=True, rq=None):
    oh = out_size(h, kh, stride[0], dil[0], pad[0], pad[1])
    ow = out_size(w, kw, stride[1], dil[1], pad[2], pad[3])
    # TOSA wants the trailing pad to make the output size exact
    pad = [pad[0], (oh - 1) * stride[0] + (kh - 1) * dil[0] + 1 - h - pad[0],
           pad[2], (ow - 1) * stride[1] + (kw - 1) * dil[1] + 1 - w - pad[2]]
    oc = ic * mult if depthwise else oc
    x, y = [n, h, w, ic], [n, oh, ow, oc]
    wshape = [kh, kw, ic, mult] if depthwise else [oc, kh, kw, ic]
    nw = kh * kw * ic * (mult if depthwise else oc)
    body = const("w", [rng.randrange(-128, 128) for _ in range(nw)], dims(wshape), "i8")
    body += const("b", [rng.randrange(-40000, 40000) for _ in range(oc)], oc, "i32")
    body += scalar("izp", rng.randrange(-128, 128), "i8") + scalar("wzp", w_zp, "i8")
    op = "tosa.depthwise_conv2d" if depthwise else "tosa.conv2d"
    body += (f'    %acc = "{op}"(%x, %w, %b, %izp, %wzp) <{{acc_type = i32, '
             f'dilation = array<i64: {dil[0]}, {dil[1]}>, pad = array<i64: {", ".join(map(str, pad))}>, '
             f'stride = array<i64: {stride[0]}, {stride[1]}>}}> : (tensor<{dims(x)}xi8>, '
             f'tensor<{dims(wshape)}xi8>, tensor<{oc}xi32>, tensor<1xi8>, tensor<1xi8>) -> '
             f'tensor<{dims(y)}xi32>\n')
    chain, res = rescale_chain(rng, "acc", y, oc, True, clamp, **(rq or {}))
    return name, x, y, body + chain, res


def fc_case(rng, name, m, k, n, bias, per_channel):
    body = const("w", [rng.randrange(-128, 128) for _ in range(k * n)], f"1x{k}x{n}", "i8")
    body += scalar("izp", rng.randrange(-128, 128), "i8") + scalar("wzp", 0, "i8")
    body += (f'    %mm = "tosa.matmul"(%x, %w, %izp, %wzp) : (tensor<1x{m}x{k}xi8>, '
             f'tensor<1x{k}x{n}xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x{m}x{n}xi32>\n')
    acc = "mm"
    if bias:
        body += const("b", [rng.randrange(-40000, 40000) for _ in range(n)], f"1x1x{n}", "i32")
        body += (f'    %acc = "tosa.add"(%mm, %b) : (tensor<1x{m}x{n}xi32>, tensor<1x1x{n}xi32>) '
                 f'-> tensor<1x{m}x{n}xi32>\n')
        acc = "acc"
    chain, res = rescale_chain(rng, acc, [1, m, n], n, per_channel, False)
    return name, [1, m, k], [1, m, n], body + chain, res


def module_text(case):
    name, x, y, body, res = case
    return (f"func.func @main(%x: tensor<{dims(x)}xi8>) -> tensor<{dims(y)}xi8> {{\n{body}"
            f"    return %{res} : tensor<{dims(y)}xi8>\n}}\n")


def uses_ukernel(compile_exe, nm, src, work, extra):
    return "tinyml_uk_" in kernel_symbols(compile_exe, nm, src, work, extra)


def int8_isa(compile_exe, nm, src, work, extra):
    """Which int8 kernels the module got: 'avx512', 'avx2' or None."""
    syms = kernel_symbols(compile_exe, nm, src, work, extra)
    got = {isa for isa in ("avx512", "avx2")
           if f"uk_tile_{isa}" in syms or f"uk_dw_{isa}" in syms}
    if len(got) > 1:
        raise RuntimeError(f"both AVX2 and AVX-512 int8 kernels in:\n{syms}")
    return got.pop() if got else None


def dot4_flags(mod):
    """The dot4 field of every int8 conv blob in a module's constants
    (uk_blobs), found by its k = kh * kw * ic and the x86 packing (8 x 2)."""
    flags = []
    for _, p in uk_blobs(open(mod, "rb").read(), [c_int("TINYML_UK_CONV")]):
        # dot4: 0, or the offset of the second bias, just before the
        # weights (round_up(oc_padded, 16) int32s).
        if (p.k == p.kh * p.kw * p.ic and (p.oc_block, p.k_block) == (8, 2)
                and p.dot4 in (0, p.weights_off - 4 * (-(-p.oc_padded // 16) * 16))):
            flags.append(1 if p.dot4 else 0)
    return flags


def check_dot4(compile_exe, src, work, extra, want):
    """The module compiled with `extra` has int8 conv blobs, all with dot4
    = want."""
    m = os.path.join(work, "dot4.tmlm")
    run([compile_exe, src, "-o", m, *extra])
    got = dot4_flags(m)
    if not got or set(got) != {want}:
        raise RuntimeError(f"{' '.join(extra)}: conv blobs' dot4 {got}, want all {want}")


AVX512_VNNI = AVX512 + ",+avx512vnni"


# CPUs that take the 4-tap dot products (1) and AVX-512 ones that do not
DOT4_CPUS = [("cascadelake", 1), ("znver5", 1), ("skylake-avx512", 0), ("x86-64-v4", 0)]


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    # PART/PARTS: every PARTS-th case from the PART-th, so that meson runs
    # the parts side by side (the refused case and the CPU checks in part 1)
    part, parts = (int(x) for x in (sys.argv[5] if len(sys.argv) > 5 else "1/1").split("/"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    have_avx512, have_vnni = host_avx512()
    rng = random.Random(7)
    cases = [
        conv_case(rng, "conv3x3_tails", 1, 9, 7, 5, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
        conv_case(rng, "conv_stride_dilation_batch", 2, 11, 10, 6, 17, 3, 2, (2, 1), (2, 3),
                  (2, 0, 1, 0)),
        conv_case(rng, "conv1x1", 1, 5, 6, 24, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), clamp=False),
        conv_case(rng, "conv_wide_k", 1, 6, 5, 33, 9, 5, 4, (1, 2), (1, 1), (2, 2, 1, 2)),
        conv_case(rng, "depthwise", 1, 9, 8, 19, 0, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
                  depthwise=True),
        conv_case(rng, "depthwise_big_window", 1, 6, 5, 12, 0, 6, 5, (1, 1), (1, 1),
                  (0, 0, 0, 0), depthwise=True),
        conv_case(rng, "depthwise_one_channel_x6", 1, 10, 9, 1, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True, mult=6),
        fc_case(rng, "fc_bias_per_tensor", 1, 37, 10, True, False),
        fc_case(rng, "fc_rows_no_bias", 5, 20, 23, False, True),
        conv_case(rng, "conv_bands_batch", 3, 9, 7, 32, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
        conv_case(rng, "depthwise_bands_batch", 2, 16, 13, 40, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True),
        fc_case(rng, "fc_bands", 64, 96, 20, True, True),
        # 8 channels (vww's first), dilation and stride, batch 2: interior
        # pixels share one tap list, border pixels build their own
        conv_case(rng, "depthwise_dilated_batch", 2, 13, 12, 8, 0, 3, 3, (1, 2), (2, 2),
                  (2, 1, 2, 1), depthwise=True),
        # 8 channels at stride 1, odd rows: interior pixels go in pairs,
        # the last of a row alone
        conv_case(rng, "depthwise8_pairs_batch", 2, 6, 9, 8, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True),
        # 4-tap dot products: border taps over 64 bytes long, and 2100
        # channels (the compiler's second bias, bands of a 1x1 conv's rows)
        conv_case(rng, "conv_pad_wide_taps", 1, 5, 6, 70, 20, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1)),
        conv_case(rng, "conv1x1_many_channels", 1, 3, 4, 8, 2100, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False),
        # shifts all in [33, 54]: the AVX-512 rescale of 16 lanes from the
        # high words (ukernels_common.h, rq16); 8-channel panels two pixels
        # per rescale, odd pixel counts, channel tails of 4 and 12
        conv_case(rng, "conv_rq16_first3", 1, 9, 11, 3, 8, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_rq16_first1", 1, 7, 9, 1, 20, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_rq16_first4", 2, 8, 7, 4, 12, 3, 3, (2, 2), (1, 1), (0, 1, 0, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv1x1_rq16", 1, 5, 7, 8, 36, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        # Few input channels with dot4: lanes as pixels (conv_s8_lanes.c),
        # padded bands of rows, 4-tap groups per kernel row.  kws's 10x4
        # on one channel, 64 channels in 4 blocks; vww's 3x3 stride 2 on 3
        # channels, rows over 16 pixels, odd widths, batch 2; a band
        # rebuilt down a tall image; 1x7; ic 2 and 4 at stride 1 and 2;
        # pixel steps too wide for 16 a window (stride 3); 12 channels
        conv_case(rng, "conv_lanes_kws", 1, 17, 10, 1, 64, 10, 4, (2, 2), (1, 1),
                  (4, 5, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_vww_batch", 2, 11, 37, 3, 8, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_band", 1, 70, 96, 3, 8, 3, 3, (2, 2), (1, 1), (0, 1, 0, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_1x7", 1, 5, 21, 2, 12, 1, 7, (1, 1), (1, 1), (0, 0, 3, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_ic4_batch", 2, 7, 19, 4, 16, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_ic1_s2", 1, 9, 23, 1, 12, 3, 3, (2, 2), (1, 1), (2, 2, 2, 2),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_s3", 1, 13, 40, 4, 20, 3, 3, (3, 3), (1, 1),
                  (2, 2, 2, 2), rq=HIGH_SHIFTS),
        # odd pixel steps (resnet8's 3 channels at stride 1) from the band
        # one byte on; kws's shape at stride 1
        conv_case(rng, "conv_lanes_odd_step", 1, 8, 17, 3, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_odd_kws", 2, 12, 10, 1, 24, 10, 4, (1, 1), (1, 1),
                  (4, 5, 1, 2), rq=HIGH_SHIFTS),
        # the packed stores (ln_out): 8 or 16 channels, all of oc, as one
        # run of bytes with short chunks at odd widths (ic 2 and 3, pads,
        # batch 2); 64 and 24 channels pixel by pixel, whole and masked
        conv_case(rng, "conv_lanes_oc16_s2", 1, 11, 29, 3, 16, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_oc8_ic2_batch", 2, 9, 13, 2, 8, 3, 3, (1, 1), (1, 1),
                  (0, 1, 2, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_oc16_ic1_batch", 2, 8, 21, 1, 16, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_oc64_s2", 1, 7, 21, 3, 64, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_oc24", 1, 6, 19, 4, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  rq=HIGH_SHIFTS),
        # 4-tap groups over the end of a kernel row (30 taps in 8 groups);
        # one tap a row (5x1 on one channel): a group per row
        conv_case(rng, "conv_lanes_5x3_ic2", 1, 10, 15, 2, 8, 5, 3, (1, 2), (1, 1),
                  (2, 2, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_lanes_5x1_ic1", 1, 11, 19, 1, 16, 5, 1, (2, 1), (1, 1),
                  (2, 2, 0, 0), rq=HIGH_SHIFTS),
        # ... and the shifts rq16 does not take: dot4_conv's columns
        conv_case(rng, "conv_lanes_low_shifts", 1, 9, 21, 3, 16, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1)),
        conv_case(rng, "depthwise8_rq16", 2, 7, 9, 8, 0, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise_rq16", 1, 9, 8, 21, 0, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
                  depthwise=True, rq=HIGH_SHIFTS),
        # The AVX-512 row kernels (depthwise_s8_avx512.c): weights in
        # registers, in_zp in the bias, several pixels in flight; border
        # pixels through a band padded with in_zp; 8 channels two pixels a
        # vector (one load at stride 1, two at stride 2)
        conv_case(rng, "depthwise16_rows_rq16", 1, 9, 21, 16, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise24_stride2_batch_rq16", 2, 11, 19, 24, 0, 3, 3, (2, 2), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise64_short_rows_rq16", 1, 25, 5, 64, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise72_dilated_rq16", 1, 10, 14, 72, 0, 3, 3, (1, 1), (2, 2),
                  (2, 2, 2, 2), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise40_pads_rq16", 2, 9, 12, 40, 0, 3, 3, (1, 2), (1, 1),
                  (2, 0, 0, 2), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_long_rows_rq16", 1, 6, 23, 8, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_stride2_batch_rq16", 2, 13, 17, 8, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_dilated_rq16", 1, 11, 20, 8, 0, 3, 3, (1, 1), (1, 3),
                  (1, 1, 3, 3), depthwise=True, rq=HIGH_SHIFTS),
        # rows shorter than the pixels in flight; fewer taps than registers
        conv_case(rng, "depthwise16_tiny_rq16", 1, 4, 3, 16, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_tiny_rq16", 2, 5, 2, 8, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise32_2x2_rq16", 1, 7, 9, 32, 0, 2, 2, (1, 1), (1, 1),
                  (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise16_1x5_rq16", 1, 6, 15, 16, 0, 1, 5, (1, 1), (1, 1),
                  (0, 0, 2, 2), depthwise=True, rq=HIGH_SHIFTS),
        # vww's 6x6 and 3x3 maps, all border, at strides 1 and 2, a batch
        # of 2: the row kernels up to 128 channels ...
        conv_case(rng, "depthwise128_6x6_batch_rq16", 2, 6, 6, 128, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise128_6x6_stride2_rq16", 1, 6, 6, 128, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise112_3x3_batch_rq16", 2, 3, 3, 112, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        # The padded map (uk_dw_map_avx512): vww's layers, every pixel
        # interior after one copy of a chunk of rows, whole rows a call;
        # 48x48x8 and 48x48x16 at stride 2 take two and three chunks; split
        # into bands that start mid-row and span both images
        conv_case(rng, "depthwise128_6x6_map_batch_bands", 2, 6, 6, 128, 0, 3, 3, (1, 1),
                  (1, 1), (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise64_6x6_stride2_map_bands", 2, 12, 12, 64, 0, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_48x48_map_chunks_bands", 1, 48, 48, 8, 0, 3, 3, (1, 1),
                  (1, 1), (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise16_48x48_stride2_map_chunks", 1, 48, 48, 16, 0, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise32_24x24_map_batch_bands", 2, 24, 24, 32, 0, 3, 3, (1, 1),
                  (1, 1), (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise120_3x3_stride2_map", 1, 6, 6, 120, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        # the row kernels' rescale with no clamp beyond int8 (act_min -128,
        # act_max 127, as vww's and kws' layers): the saturating narrowing
        # alone, at 8, 64 and 128 channels, strides 1 and 2
        conv_case(rng, "depthwise128_6x6_map_noclamp", 2, 6, 6, 128, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, clamp=False, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise64_12x12_stride2_map_noclamp", 1, 12, 12, 64, 0, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), depthwise=True, clamp=False, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_24x24_map_noclamp", 1, 24, 24, 8, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, clamp=False, rq=HIGH_SHIFTS),
        # ... and the bands where 3 padded rows do not fit the map's 16 KB
        conv_case(rng, "depthwise128_wide_band_rq16", 1, 5, 46, 128, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise16_wide_stride2_band_rq16", 1, 7, 400, 16, 0, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise8_wide_band_rq16", 1, 3, 690, 8, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        # ... the pixel kernels beyond: more channels than the row kernels'
        # constants, and shifts below rq16's range
        conv_case(rng, "depthwise136_rq16", 1, 5, 6, 136, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise256_3x3_batch_rq16", 2, 3, 3, 256, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq=HIGH_SHIFTS),
        conv_case(rng, "depthwise16_low_shifts", 1, 8, 11, 16, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True, rq={"shifts": [20, 29, 31, 32]}),
        # 1x1 convs with pixels streamed (conv_s8_pw.c): 16, 32 and 64k
        # channels (4-16 pixels a block), K 8 to 256, odd pixel counts
        # (partial blocks), stride 2 without padding (resnet8's shortcuts)
        conv_case(rng, "conv_pw_k8_oc16", 1, 13, 11, 8, 16, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k16_oc32_batch", 2, 7, 9, 16, 32, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k32_oc64", 1, 5, 7, 32, 64, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  clamp=False, rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k64_oc128", 1, 6, 6, 64, 128, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k128_oc256", 1, 3, 3, 128, 256, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k256_oc256_batch", 2, 3, 3, 256, 256, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k256_oc16", 1, 5, 5, 256, 16, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_s2_batch", 2, 9, 11, 16, 32, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_bands_batch", 2, 13, 10, 24, 64, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        # the widest layer it takes (512 channels, weights too many to
        # rearrange at K 96), and resnet8's stride-2 shortcut's 64 channels
        conv_case(rng, "conv_pw_k96_oc512", 1, 3, 5, 96, 512, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_s2_oc64_batch", 2, 9, 7, 32, 64, 1, 1, (2, 2), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        # shifts beyond rq16's range, as vww's deep layers have (32 and
        # 55-62: out_zp added after the shift)
        conv_case(rng, "conv_pw_wide_shifts", 1, 5, 7, 32, 64, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=WIDE_SHIFTS),
        conv_case(rng, "conv_pw_wide_shifts_k8", 1, 9, 7, 8, 16, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False, rq=WIDE_SHIFTS),
        # ... and the 1x1 convs it leaves to dot4_conv: 12 or 48 channels,
        # K not a multiple of 4, more than 16 x 256 bytes of rows, padding,
        # shifts outside rq16's range
        conv_case(rng, "conv_pw_oc12", 1, 6, 7, 8, 12, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_oc48", 1, 5, 5, 16, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k6", 1, 5, 6, 6, 16, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_k264_oc16", 1, 3, 4, 264, 16, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_padded", 1, 4, 5, 16, 32, 1, 1, (1, 1), (1, 1), (1, 0, 0, 1),
                  rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw_low_shifts", 1, 7, 6, 32, 64, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0)),
        conv_case(rng, "conv_pw_shift31", 1, 7, 6, 32, 64, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq={"shifts": [31, 40, 58]}),
        # pw_conv31 (shifts of 31, as vww's 128 -> 128 and 128 -> 256 convs
        # have): 6 pixels x 64 channels a block (24 accumulators), whole and
        # partial blocks (36, 9, 7, 13 pixels), batches, K 8-256, 16-512
        # channels, the weights rearranged per call and (512 x 96) per block
        conv_case(rng, "conv_pw_k128_oc128_shift31", 1, 6, 6, 128, 128, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k128_oc256_shift31_batch", 2, 3, 3, 128, 256, 1, 1, (1, 1),
                  (1, 1), (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k256_oc256_shift31", 1, 3, 3, 256, 256, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False, rq=SHIFT31),
        conv_case(rng, "conv_pw_k64_oc64_7px_shift31", 1, 7, 1, 64, 64, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k128_oc128_13px_shift31_batch", 2, 13, 1, 128, 128, 1, 1,
                  (1, 1), (1, 1), (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k96_oc512_shift31", 1, 3, 5, 96, 512, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k8_oc16_shift31", 1, 13, 11, 8, 16, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw_k16_oc32_shift31_batch", 2, 7, 9, 16, 32, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=SHIFT31),
        # pw9_conv (7-9 pixels an image, 64 channels or more): 9 pixels x
        # 32 channels a block, shifts with and without 31, out_zp after
        # the shift (WIDE_SHIFTS), batches, stride 2, bands split across
        # workgroups (blocks starting mid-image)
        conv_case(rng, "conv_pw9_k256_oc256", 1, 3, 3, 256, 256, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pw9_k128_oc256_wide_batch_bands", 2, 3, 3, 128, 256, 1, 1, (1, 1),
                  (1, 1), (0, 0, 0, 0), rq=WIDE_SHIFTS),
        conv_case(rng, "conv_pw9_k128_oc128_7px_shift31_batch_bands", 2, 7, 1, 128, 128, 1, 1,
                  (1, 1), (1, 1), (0, 0, 0, 0), rq=SHIFT31),
        conv_case(rng, "conv_pw9_k64_oc512_8px", 1, 2, 4, 64, 512, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False, rq=SHIFT31),
        conv_case(rng, "conv_pw9_k64_oc128_s2_batch", 3, 5, 5, 64, 128, 1, 1, (2, 2), (1, 1),
                  (0, 0, 0, 0), rq=HIGH_SHIFTS),
        # pwk_conv (conv_s8_pw.c): resnet8's 3x3 convs on 16-64 channels,
        # read in place from a padded band of flipped rows (blocks of one
        # row; blocks over a row's end, 35 pixels a row, by columns),
        # stride 2 (TFLite's SAME: no top or left padding), batches and
        # bands (bands mid-row, blocks over two images), out_zp after the
        # shift; and by columns only: dilation, 6 input channels (groups
        # over kernel rows), an image beyond the band (20 KB)
        conv_case(rng, "conv_pwk_3x3_oc16_35w", 1, 9, 35, 16, 16, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_s2_oc32_batch_bands", 2, 16, 16, 16, 32, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), rq=HIGH_SHIFTS),
        # stride 2 with two band blocks a row: the second starts at column
        # 16, 32 input columns in (resnet8's 16 -> 32 conv reads so)
        conv_case(rng, "conv_pwk_3x3_s2_oc16_two_blocks_a_row", 1, 8, 64, 16, 16, 3, 3, (2, 2),
                  (1, 1), (0, 1, 0, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_oc32_batch_bands", 2, 10, 13, 32, 32, 3, 3, (1, 1),
                  (1, 1), (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_oc64_batch_bands", 2, 8, 8, 64, 64, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_s2_oc64", 1, 9, 9, 32, 64, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), clamp=False, rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_oc16_wide", 1, 7, 10, 8, 16, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), clamp=False, rq=WIDE_SHIFTS),
        conv_case(rng, "conv_pwk_5x3_oc32_wide_batch", 2, 9, 7, 4, 32, 5, 3, (1, 1), (1, 1),
                  (2, 2, 1, 1), rq=WIDE_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_dil2_oc16", 1, 9, 9, 8, 16, 3, 3, (1, 1), (2, 2),
                  (2, 2, 2, 2), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_ic6_oc32", 1, 7, 9, 6, 32, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_oc16_over_band", 1, 40, 40, 16, 16, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), rq=HIGH_SHIFTS),
        # columns beyond pwk_conv's 4 KB on the stack, in the conv's scratch
        # (uk_pwk_cols): 16 pixels of 288 taps on the band (19 a row: blocks
        # over a row's end; threads: each workgroup's own scratch), 8 of 576
        # off the band (32 KB of rows)
        conv_case(rng, "conv_pwk_3x3_ic32_oc16_scratch_batch_bands", 2, 8, 19, 32, 16, 3, 3,
                  (1, 1), (1, 1), (1, 1, 1, 1), rq=HIGH_SHIFTS),
        conv_case(rng, "conv_pwk_3x3_ic64_oc32_scratch_over_band", 1, 14, 30, 64, 32, 3, 3,
                  (1, 1), (1, 1), (1, 1, 1, 1), rq=WIDE_SHIFTS),
    ]
    refused = conv_case(rng, "weight_zero_point_refused", 1, 5, 5, 4, 8, 3, 3, (1, 1), (1, 1),
                        (1, 1, 1, 1), w_zp=3)
    failures = 0
    mine = [c for i, c in enumerate(cases) if i % parts == part - 1]
    for case in mine + ([refused] if part == 1 else []):
        name, x = case[0], case[1]
        src = os.path.join(work, name + ".mlir")
        with open(src, "w") as f:
            f.write(module_text(case))
        try:
            want_uk = case is not refused
            if uses_ukernel(compile_exe, nm, src, work, []) != want_uk:
                raise RuntimeError("microkernel %s" % ("not used" if want_uk else "used"))
            if uses_ukernel(compile_exe, nm, src, work, ["--features", "+fma"]):
                raise RuntimeError("--features +fma still uses a microkernel")
            builds = [("uk", []), ("linalg", ["--features", "+fma"])]
            if want_uk:
                if int8_isa(compile_exe, nm, src, work, []) != "avx2":
                    raise RuntimeError("the default CPU does not get the AVX2 kernels")
                if int8_isa(compile_exe, nm, src, work, ["--features", AVX512]) != "avx512":
                    raise RuntimeError(f"--features {AVX512} does not get the AVX-512 kernels")
                if have_avx512:
                    builds.append(("uk512", ["--features", AVX512]))
                if case[0].startswith(("conv", "fc")):
                    check_dot4(compile_exe, src, work, ["--features", AVX512], 0)
                    check_dot4(compile_exe, src, work, ["--features", AVX512_VNNI], 1)
                    for cpu, want in DOT4_CPUS if case is cases[0] else ():
                        check_dot4(compile_exe, src, work, ["--cpu", cpu], want)
                    if have_vnni:
                        builds.append(("dot4", ["--features", AVX512_VNNI]))
                elif have_vnni:  # the depthwise row kernels' vpdpwssd
                    builds.append(("vnni", ["--features", AVX512_VNNI]))
            mods = []
            for tag, extra in builds:
                m = os.path.join(work, f"{name}.{tag}.tmlm")
                uk = tag != "linalg"
                run([compile_exe, src, "-o", m, *extra, *(split_extra(name) if uk else [])])
                if uk and split_extra(name):
                    check_split(run_exe, m)
                mods.append(m)
            size = 1
            for d in x:
                size *= d
            for trial in range(3):
                inp = os.path.join(work, "in.bin")
                with open(inp, "wb") as f:
                    f.write(bytes(rng.randrange(256) for _ in range(size)))
                outs, names = [], [tag for tag, _ in builds]
                for m in mods:
                    od = m + ".out"
                    run([run_exe, m, "--input", inp, "--output-dir", od])
                    outs.append(open(os.path.join(od, "output_0.bin"), "rb").read())
                # Every build split into bands, so each kernel path (the
                # VNNI one too) starts bands mid-row and mid-image.
                for (tag, _), m in zip(builds, mods) if trial == 0 else ():
                    for threads in (2, 3, 4):
                        od = f"{m}.t{threads}.out"
                        run([run_exe, m, "--input", inp, "--output-dir", od,
                             "--threads", str(threads)])
                        outs.append(open(os.path.join(od, "output_0.bin"), "rb").read())
                        names.append(f"{tag} on {threads} threads")
                for name_, got in zip(names[1:], outs[1:]):
                    if got != outs[0]:
                        diff = sum(a != b for a, b in zip(outs[0], got))
                        raise RuntimeError(f"trial {trial}: {name_}: {diff} of {len(got)} "
                                           "bytes differ")
            not_run = ("" if have_avx512 or not want_uk else " (AVX-512 not run: no avx512f)")
            if want_uk and have_avx512 and not have_vnni and case[0].startswith(("conv", "fc")):
                not_run = " (VNNI kernels not run: no avx512_vnni; their flag checked)"
            print(f"PASS {name}{not_run}")
        except RuntimeError as e:
            failures += 1
            print(f"FAIL {name}: {e}")
    print(f"ukernels: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
