#!/usr/bin/env python3
"""The f32 microkernels against the Linalg path they replace, within a float
tolerance, and the f32 max pools bit for bit (the int8 ones:
test_ukernels.py; helpers both use: uk_common.py).

The f32 cases (conv2d, depthwise_conv2d and fully-connected matmul, with
BatchNorm-style multiply/add and ReLU6 where given) are compiled three
times: --features +avx2,+fma,+avx512f,+avx512bw,+avx512vl,+avx512dq (the
AVX-512 kernels: the object defines ukf_tile_avx512 or ukf_dw_avx512),
+avx2,+fma (the AVX2 ones) and
+fma (the Linalg path).  The AVX2 kernels must agree with Linalg to a float
tolerance (the summation order differs), and the AVX-512 ones with the AVX2
ones bit for bit: both sum each channel as bias + x * w in tap order, and
a tap chunk's partial sums round-trip through the output exactly.  Both
kernel modules also run on 3 threads (bands of pixels, or of 32 channels
when there are more channels than pixels) and must give the same bits.
f32_fc_weight_bound has fewer multiply-adds than x86-64's split_min_work
but more bytes of weights, which count as its work: its kernel builds,
compiled with the defaults, must show a split step; so must
maxpool_3x3s2_c128_memory_bound's, whose bytes moved count as its work.
The AVX-512 modules run only where the CPU has AVX-512.

3x3 stride-1 convs may run as Winograd F(2x2, 3x3) or F(4x4, 3x3)
(backends/x86/wino_f32.c).  Cases that test the direct sum's driver (row batches,
tap chunks, channel bands) compile their kernel builds with
--no-winograd.  The wino_* cases must take Winograd: their AVX2 module
must give other bits than the same build with --no-winograd (the
summation differs), and otherwise pass every check above, bit-identical
AVX-512 and AVX2 and 3 threads included.  The wino4_* cases must take
F(4x4, 3x3) and the other wino_* ones F(2x2, 3x3), as the module's
constant size tells.

The f32 max pools (tosa.max_pool2d; padded, strided, channel tails,
batches, a window too large for the tap lists) are compiled the same three
ways and must give the Linalg path's bits exactly on every input: plain
values, zeros of both signs, NaNs of both signs and several payloads,
infinities, and all -inf; the kernel modules on 1-4 threads.  A max pool
that ignores NaN must keep the Linalg path.

The depthwise convs' and max pools' kernel modules also run with their
buffers at each of OFFSETS bytes past a 64-byte line (tinyml-run
--offset, inputs and outputs together or apart) and must give the same
bits as where malloc puts them: with the input off a line, the kernels
shift their channel blocks onto it (a masked head; AVX-512 when 16 |
channels, the AVX2 depthwise when 8 | channels), which a broken head or
tail would show.

usage: test_ukernels_f32.py TINYML_COMPILE TINYML_RUN NM WORK_DIR [convs|maxpools]
(meson runs the convs and the max pools as two tests, each within its timeout)
"""
import math
import os
import random
import shutil
import struct
import subprocess
import sys

from uk_common import (AVX512, check_split, const, dims, host_avx512, kernel_symbols, out_size,
                       run, run_cases, scalar, split_extra)


def fvals(rng, n):
    return [rng.uniform(-1, 1) for _ in range(n)]


def f32_epilogue(rng, acc, shape, oc, bn, relu6, tag="", relu=False):
    """BatchNorm as the ONNX importer writes it (multiply, add), then ReLU6,
    or ReLU as it writes it (clamp 0..+inf: 0x7F800000); value names end in
    tag."""
    ty, s, res = dims(shape), "", acc
    cshape = "x".join(["1"] * (len(shape) - 1) + [str(oc)])
    if bn:
        s += const("sc" + tag, fvals(rng, oc), cshape, "f32")
        s += const("of" + tag, fvals(rng, oc), cshape, "f32")
        s += scalar("sh" + tag, 0, "i8")
        s += (f'    %m{tag} = "tosa.mul"(%{res}, %sc{tag}, %sh{tag}) : (tensor<{ty}xf32>, '
              f'tensor<{cshape}xf32>, tensor<1xi8>) -> tensor<{ty}xf32>\n')
        s += (f'    %a{tag} = "tosa.add"(%m{tag}, %of{tag}) : (tensor<{ty}xf32>, '
              f'tensor<{cshape}xf32>) -> tensor<{ty}xf32>\n')
        res = "a" + tag
    if relu6 or relu:
        hi = "6.0" if relu6 else "0x7F800000"
        s += (f'    %y{tag} = "tosa.clamp"(%{res}) <{{min_val = 0.0 : f32, max_val = {hi} : f32}}> : '
              f'(tensor<{ty}xf32>) -> tensor<{ty}xf32>\n')
        res = "y" + tag
    return s, res


def f32_conv_op(res, op, w, b, x, wshape, y, pad, stride, dil=(1, 1), src="x"):
    """%res = op(%src, %w, %b) with f32 zero points %z, NHWC tensors x -> y."""
    oc = y[3]
    return (f'    %{res} = "{op}"(%{src}, %{w}, %{b}, %z, %z) <{{acc_type = f32, '
            f'dilation = array<i64: {dil[0]}, {dil[1]}>, pad = array<i64: {", ".join(map(str, pad))}>, '
            f'stride = array<i64: {stride[0]}, {stride[1]}>}}> : (tensor<{dims(x)}xf32>, '
            f'tensor<{dims(wshape)}xf32>, tensor<{oc}xf32>, tensor<1xf32>, tensor<1xf32>) -> '
            f'tensor<{dims(y)}xf32>\n')


def f32_conv_case(rng, name, n, h, w, ic, oc, kh, kw, stride, dil, pad, depthwise=False,
                  bn=False, relu6=False, relu=False):
    oh = out_size(h, kh, stride[0], dil[0], pad[0], pad[1])
    ow = out_size(w, kw, stride[1], dil[1], pad[2], pad[3])
    pad = [pad[0], (oh - 1) * stride[0] + (kh - 1) * dil[0] + 1 - h - pad[0],
           pad[2], (ow - 1) * stride[1] + (kw - 1) * dil[1] + 1 - w - pad[2]]
    oc = ic if depthwise else oc
    x, y = [n, h, w, ic], [n, oh, ow, oc]
    wshape = [kh, kw, ic, 1] if depthwise else [oc, kh, kw, ic]
    body = const("w", fvals(rng, kh * kw * ic * (1 if depthwise else oc)), dims(wshape), "f32")
    body += const("b", fvals(rng, oc), oc, "f32") + scalar("z", "0.0", "f32")
    op = "tosa.depthwise_conv2d" if depthwise else "tosa.conv2d"
    body += f32_conv_op("acc", op, "w", "b", x, wshape, y, pad, stride, dil)
    chain, res = f32_epilogue(rng, "acc", y, oc, bn, relu6, relu=relu)
    return name, x, y, body + chain, res, "dw" if depthwise else "tile"


def f32_fc_case(rng, name, m, k, n, bias):
    body = const("w", fvals(rng, k * n), f"1x{k}x{n}", "f32") + scalar("z", "0.0", "f32")
    body += (f'    %acc = "tosa.matmul"(%x, %w, %z, %z) : (tensor<1x{m}x{k}xf32>, '
             f'tensor<1x{k}x{n}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{m}x{n}xf32>\n')
    res = "acc"
    if bias:
        body += const("b", fvals(rng, n), f"1x1x{n}", "f32")
        body += (f'    %r = "tosa.add"(%acc, %b) : (tensor<1x{m}x{n}xf32>, tensor<1x1x{n}xf32>) '
                 f'-> tensor<1x{m}x{n}xf32>\n')
        res = "r"
    return name, [1, m, k], [1, m, n], body, res, "tile"


def f32_residual_case(rng, name, n, hw, c, stride, skip_conv, relu_before=False,
                      nan_ignore=False, skip_first=False):
    """A ResNet block's end: add(conv(x) with BatchNorm, skip), then ReLU.
    The skip is x itself, or a 1x1 conv of x (a downsampling block, both
    convs kernels: the add joins the one the other is computed before).
    With relu_before the conv's chain clamps before the add, which the
    kernel then must not take (TOSA clamps the sum).  A final clamp that
    ignores NaN stays a dispatch of its own (the kernel's clamp lets NaN
    through), after a kernel that still takes the add.  skip_first computes
    the 1x1 conv first, so that the add joins the 3x3 one."""
    oc = c * 2 if skip_conv else c
    h = out_size(hw, 3, stride, 1, 1, 1)
    x, y = [n, hw, hw, c], [n, h, h, oc]
    body = const("w", fvals(rng, 9 * c * oc), dims([oc, 3, 3, c]), "f32")
    body += const("b", fvals(rng, oc), oc, "f32") + scalar("z", "0.0", "f32")
    main = f32_conv_op("acc", "tosa.conv2d", "w", "b", x, [oc, 3, 3, c], y, [1, 1, 1, 1],
                       (stride, stride))
    chain, res = f32_epilogue(rng, "acc", y, oc, True, relu_before)
    main += chain
    skip, side = "x", ""
    if skip_conv:
        side = const("w2", fvals(rng, c * oc), dims([oc, 1, 1, c]), "f32")
        side += const("b2", fvals(rng, oc), oc, "f32")
        side += f32_conv_op("s", "tosa.conv2d", "w2", "b2", x, [oc, 1, 1, c], y, [0, 0, 0, 0],
                            (stride, stride))
        skip = "s"
    body += side + main if skip_first else main + side
    ty = dims(y)
    body += (f'    %sum = "tosa.add"(%{res}, %{skip}) : (tensor<{ty}xf32>, tensor<{ty}xf32>) -> '
             f'tensor<{ty}xf32>\n')
    nan = ", nan_mode = #tosa.nan_mode<IGNORE>" if nan_ignore else ""
    body += (f'    %out = "tosa.clamp"(%sum) <{{min_val = 0.0 : f32, max_val = 3.0e38 : f32{nan}}}> : '
             f'(tensor<{ty}xf32>) -> tensor<{ty}xf32>\n')
    entries = (3 if skip_conv else 2) if nan_ignore else None
    return name, x, y, body, "out", "tile", not relu_before, entries


def add_input(y, res):
    """%sum = %res + %x, a block's skip connection."""
    ty = dims(y)
    return (f'    %sum = "tosa.add"(%{res}, %x) : (tensor<{ty}xf32>, tensor<{ty}xf32>) -> '
            f'tensor<{ty}xf32>\n')


def f32_dwpw_case(rng, name, n, hw, c, oc, stride, skip, dil=1):
    """MobileNetV2's block end: a 3x3 depthwise conv (padded by its
    dilation) with BatchNorm and ReLU6, a 1x1 conv with BatchNorm, then
    (skip) the block's input added.  One kernel call must do it all
    (tinyml_uk_dwpw_f32 or _add_f32)."""
    h, w = hw
    oh, ow = out_size(h, 3, stride, dil, dil, dil), out_size(w, 3, stride, dil, dil, dil)
    span = 2 * dil + 1
    pad = [dil, (oh - 1) * stride + span - h - dil, dil, (ow - 1) * stride + span - w - dil]
    x, mid, y = [n, h, w, c], [n, oh, ow, c], [n, oh, ow, oc]
    body = const("w", fvals(rng, 9 * c), dims([3, 3, c, 1]), "f32")
    body += const("b", fvals(rng, c), c, "f32") + scalar("z", "0.0", "f32")
    body += f32_conv_op("acc", "tosa.depthwise_conv2d", "w", "b", x, [3, 3, c, 1], mid, pad,
                        (stride, stride), (dil, dil))
    chain, res = f32_epilogue(rng, "acc", mid, c, True, True)
    body += chain
    body += const("w2", fvals(rng, c * oc), dims([oc, 1, 1, c]), "f32")
    body += const("b2", fvals(rng, oc), oc, "f32")
    body += f32_conv_op("acc2", "tosa.conv2d", "w2", "b2", mid, [oc, 1, 1, c], y, [0, 0, 0, 0],
                        (1, 1), src=res)
    chain, res = f32_epilogue(rng, "acc2", y, oc, True, False, tag="2")
    body += chain
    if skip:
        body, res = body + add_input(y, res), "sum"
    kernel = "tinyml_uk_dwpw_add_f32" if skip else "tinyml_uk_dwpw_f32"
    return name, x, y, body, res, "tile", None, 1, kernel


def f32_block_case(rng, name, n, hw, k, c, oc, stride, skip, dil=1):
    """MobileNetV2's whole block: a 1x1 expansion (BatchNorm, ReLU6), then
    f32_dwpw_case's depthwise conv and 1x1 projection, from the block's
    input.  One kernel call must do it all (tinyml_uk_pwdwpw_f32 or
    _add_f32: images of 28 rows or more)."""
    h, w = hw
    x, e = [n, h, w, k], [n, h, w, c]
    body = const("we", fvals(rng, k * c), dims([c, 1, 1, k]), "f32")
    body += const("be", fvals(rng, c), c, "f32") + scalar("z", "0.0", "f32")
    body += f32_conv_op("acce", "tosa.conv2d", "we", "be", x, [c, 1, 1, k], e, [0, 0, 0, 0],
                        (1, 1))
    chain, res = f32_epilogue(rng, "acce", e, c, True, True, tag="e")
    name_, _, y, rest, out = f32_dwpw_case(rng, name, n, hw, c, oc, stride, False, dil)[:5]
    rest = rest.replace("%x,", f"%{res},").replace("%x)", f"%{res})")
    rest = rest.replace(scalar("z", "0.0", "f32"), "")
    body += chain + rest
    if skip:
        body, out = body + add_input(y, out), "sum"
    kernel = "tinyml_uk_pwdwpw_add_f32" if skip else "tinyml_uk_pwdwpw_f32"
    return name, x, y, body, out, "tile", None, 1, kernel


def f32_first_block_case(rng, name, n, hw, k, c, oc, kh, stride, pad, dw_stride):
    """A MobileNet's start: its first conv (kh x kh, `stride`, `pad`;
    BatchNorm, ReLU6) from the image, then f32_dwpw_case's depthwise conv
    and 1x1 projection.  One kernel call must do it all
    (tinyml_uk_pwdwpw_f32, the first conv's rows gathered or read in place
    into its window)."""
    h, w = hw
    eh = out_size(h, kh, stride, 1, pad[0], pad[1])
    ew = out_size(w, kh, stride, 1, pad[2], pad[3])
    x, e = [n, h, w, k], [n, eh, ew, c]
    body = const("we", fvals(rng, kh * kh * k * c), dims([c, kh, kh, k]), "f32")
    body += const("be", fvals(rng, c), c, "f32") + scalar("z", "0.0", "f32")
    body += f32_conv_op("acce", "tosa.conv2d", "we", "be", x, [c, kh, kh, k], e, list(pad),
                        (stride, stride))
    chain, res = f32_epilogue(rng, "acce", e, c, True, True, tag="e")
    y, rest, out = f32_dwpw_case(rng, name, n, (eh, ew), c, oc, dw_stride, False)[2:5]
    rest = rest.replace("%x,", f"%{res},").replace("%x)", f"%{res})")
    rest = rest.replace(scalar("z", "0.0", "f32"), "")
    return name, x, y, body + chain + rest, out, "tile", None, 1, "tinyml_uk_pwdwpw_f32"


def f32_convpool_case(rng, name, n, hw, k, c, kh, stride, pad, pk, ps, ppad):
    """SqueezeNet's and ResNet's start: a conv (kh x kh, `stride`, `pad`;
    BatchNorm, ReLU) and a max pool (pk x pk, stride ps, pad ppad) on its
    result.  One kernel call must do both (tinyml_uk_convpool_f32, the conv
    rows into the pool's window)."""
    h, w = hw
    eh = out_size(h, kh, stride, 1, pad[0], pad[1])
    ew = out_size(w, kh, stride, 1, pad[2], pad[3])
    oh = (eh + ppad[0] + ppad[1] - pk) // ps + 1
    ow = (ew + ppad[2] + ppad[3] - pk) // ps + 1
    x, e, y = [n, h, w, k], [n, eh, ew, c], [n, oh, ow, c]
    body = const("we", fvals(rng, kh * kh * k * c), dims([c, kh, kh, k]), "f32")
    body += const("be", fvals(rng, c), c, "f32") + scalar("z", "0.0", "f32")
    body += f32_conv_op("acce", "tosa.conv2d", "we", "be", x, [c, kh, kh, k], e, list(pad),
                        (stride, stride))
    chain, res = f32_epilogue(rng, "acce", e, c, True, False, tag="e")
    body += chain + (f'    %y = "tosa.max_pool2d"(%{res}) <{{kernel = array<i64: {pk}, {pk}>, '
                     f'pad = array<i64: {", ".join(map(str, ppad))}>, '
                     f'stride = array<i64: {ps}, {ps}>}}> : (tensor<{dims(e)}xf32>) -> '
                     f'tensor<{dims(y)}xf32>\n')
    return name, x, y, body, "y", "tile", None, 1, "tinyml_uk_convpool_f32"


def f32_concat_case(rng, name, n, hw, k, oa, ob):
    """SqueezeNet's fire module end: a 1x1 and a 3x3 conv of one input,
    each with its ReLU6, joined by a concat on channels.  One kernel call
    must do it all (tinyml_uk_convcat_f32)."""
    h, w = hw
    x, ya, yb, y = [n, h, w, k], [n, h, w, oa], [n, h, w, ob], [n, h, w, oa + ob]
    body = scalar("z", "0.0", "f32")
    body += const("wa", fvals(rng, k * oa), dims([oa, 1, 1, k]), "f32")
    body += const("ba", fvals(rng, oa), oa, "f32")
    body += f32_conv_op("acca", "tosa.conv2d", "wa", "ba", x, [oa, 1, 1, k], ya, [0, 0, 0, 0],
                        (1, 1))
    chain, ra = f32_epilogue(rng, "acca", ya, oa, False, True, tag="a")
    body += chain + const("wb", fvals(rng, 9 * k * ob), dims([ob, 3, 3, k]), "f32")
    body += const("bb", fvals(rng, ob), ob, "f32")
    body += f32_conv_op("accb", "tosa.conv2d", "wb", "bb", x, [ob, 3, 3, k], yb, [1, 1, 1, 1],
                        (1, 1))
    chain, rb = f32_epilogue(rng, "accb", yb, ob, False, True, tag="b")
    body += chain
    body += (f'    %cat = "tosa.concat"(%{ra}, %{rb}) <{{axis = 3 : i32}}> : (tensor<{dims(ya)}xf32>, '
             f'tensor<{dims(yb)}xf32>) -> tensor<{dims(y)}xf32>\n')
    return name, x, y, body, "cat", "tile", None, 1, "tinyml_uk_convcat_f32"


def pad_case(case, n=9):
    return tuple(case) + (None,) * (n - len(case))


def direct(case):
    """A case for the direct sum's driver: its kernels without Winograd."""
    return pad_case(case) + ("direct",)


def wino(case):
    """A case that must take Winograd F(2x2, 3x3)."""
    return pad_case(case) + ("wino",)


def wino4(case):
    """A case that must take Winograd F(4x4, 3x3)."""
    return pad_case(case) + ("wino4",)


def apart(case):
    """A block case whose expansion must stay a kernel call of its own."""
    skip = case[8].startswith("tinyml_uk_pwdwpw_add")
    return case[:7] + (2, "tinyml_uk_dwpw_add_f32" if skip else "tinyml_uk_dwpw_f32")


def f32_cases(rng):
    c, d = f32_conv_case, True
    return [
        # one 16-channel panel, 13 valid; 63 pixels leave a 3-pixel tile
        c(rng, "f32_conv3x3_tails", 1, 9, 7, 5, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), bn=True),
        # panels 16+16 and a last one 8 wide; strides, dilation, batch
        c(rng, "f32_conv_panels_16_16_8", 2, 11, 10, 6, 40, 3, 2, (2, 1), (2, 3), (2, 0, 1, 0),
          relu6=True),
        # a 32-channel tile of panels 16+8, and k = 585: two tap chunks (512 + 73)
        direct(c(rng, "f32_conv_k585_oc24", 1, 7, 6, 65, 24, 3, 3, (1, 1), (1, 1),
                 (1, 1, 1, 1), bn=True, relu6=True)),
        # k = 576: two tap chunks (512 + 64) for both tile sizes; 70 channels
        c(rng, "f32_conv_k576", 1, 6, 5, 64, 70, 3, 3, (1, 2), (1, 1), (1, 1, 1, 1)),
        # 1x1 stride 1: the input rows are the columns (no im2col)
        c(rng, "f32_conv1x1_direct", 1, 5, 6, 24, 50, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), bn=True),
        # read in place (backends/x86/conv_f32.c): a 3-channel first conv, stride 2, padding;
        # border pixels of many rows gathered into whole tiles; batch 2
        c(rng, "f32_conv_first_3ch", 2, 33, 40, 3, 20, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
          bn=True, relu6=True),
        # 7x7/2, pad 3: 7 pieces per tap chunk
        c(rng, "f32_conv7x7_3ch", 1, 30, 44, 3, 24, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3)),
        # k = 648 in place: the first tap chunk ends inside kernel row 2; dilated rows
        c(rng, "f32_conv_inplace_k648", 1, 9, 20, 72, 36, 3, 3, (1, 1), (2, 1), (2, 2, 1, 1),
          bn=True),
        # interior rows batched (conv_f32.c, finplace_t): 4 rows of 28 a batch, over
        # two tap chunks and two images
        direct(c(rng, "f32_conv_row_batches", 2, 9, 30, 64, 40, 3, 3, (1, 1), (1, 1),
                 (1, 1, 1, 1), bn=True)),
        # stride 2, 28 -> 14: 13 interior pixels a row would fill two half tiles in
        # place (conv_f32.c, finplace_pays), so every pixel is gathered into im2col blocks
        c(rng, "f32_conv_s2_rows_gathered", 1, 8, 28, 40, 72, 3, 3, (2, 2), (1, 1),
          (1, 1, 1, 1), bn=True),
        # rows of 128 interior pixels: longer than a batch, split across two
        c(rng, "f32_conv_long_rows", 1, 4, 130, 8, 20, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
        # rows of 9 interior pixels: read in place, in tiles shorter than the AVX-512 one
        direct(c(rng, "f32_conv_short_rows", 1, 11, 11, 24, 40, 3, 3, (1, 1), (1, 1),
                 (1, 1, 1, 1), bn=True)),
        # 49 pixels: balanced tiles of 10, 10, 10, 10, 9; more channels than pixels, but
        # weights small enough for bands of pixels
        direct(c(rng, "f32_conv_7x7_bands", 1, 7, 7, 40, 72, 3, 3, (1, 1), (1, 1),
                 (1, 1, 1, 1), relu6=True)),
        # 1 MB of weights and more channels than pixels: bands of 32 channels
        direct(c(rng, "f32_conv_channel_bands", 1, 7, 7, 120, 248, 3, 3, (1, 1), (1, 1),
                 (1, 1, 1, 1), bn=True)),
        # 1x1, 1 MB of weights, 169 pixels: bands of 32 channels whose pixels run as
        # two runs (120 + 49) under one pass of the weights (conv_f32.c, fgemm_rows_once)
        direct(c(rng, "f32_conv1x1_channel_bands_runs", 1, 13, 13, 256, 1024, 1, 1, (1, 1),
                 (1, 1), (0, 0, 0, 0))),
        # ReLU alone (clamp 0..+inf), no BatchNorm: the AVX-512 tile's one-max epilogue
        # (conv_f32_avx512.c), 8 channels of the last tile masked
        c(rng, "f32_conv1x1_relu_oc40", 1, 9, 10, 48, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
          relu=True),
        c(rng, "f32_depthwise_19", 1, 9, 8, 19, 0, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
          depthwise=d, bn=True, relu6=True),
        # AVX-512 vectors of 16 channels: 64 + 4 with the last masked; 3 with the last masked
        c(rng, "f32_depthwise_120", 1, 7, 9, 120, 0, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
          depthwise=d, relu6=True),
        c(rng, "f32_depthwise_40_dilated", 1, 9, 9, 40, 0, 3, 3, (1, 1), (2, 2), (2, 2, 2, 2),
          depthwise=d, bn=True),
        c(rng, "f32_depthwise_7_5x5", 2, 8, 7, 7, 0, 5, 5, (1, 1), (1, 2), (2, 2, 2, 2),
          depthwise=d),
        # MobileNetV2's 14x14 layer, two images: 12 interior pixels a row, a
        # chunk of 8 and one of 4, also in the first and last rows (their
        # windows' rows inside the image), the border columns alone
        c(rng, "f32_depthwise_14x14_576", 2, 14, 14, 576, 0, 3, 3, (1, 1), (1, 1),
          (1, 1, 1, 1), depthwise=d, bn=True, relu6=True),
        # 16 | channels: off a line, a masked head and tail around the
        # shifted blocks (check_offsets): one block; 64 + 16 channels, chunks
        # of 4-8 pixels at stride 1 and pairs at stride 2; 5x5 window
        c(rng, "f32_depthwise_16_shifted", 1, 5, 6, 16, 0, 3, 3, (1, 1), (1, 1),
          (1, 1, 1, 1), depthwise=d, bn=True),
        c(rng, "f32_depthwise_80_shifted", 1, 9, 11, 80, 0, 3, 3, (1, 1), (1, 1),
          (1, 1, 1, 1), depthwise=d, relu6=True),
        c(rng, "f32_depthwise_80_s2_shifted", 1, 9, 11, 80, 0, 3, 3, (2, 2), (1, 1),
          (0, 1, 0, 1), depthwise=d, bn=True),
        c(rng, "f32_depthwise_32_5x5_shifted", 1, 8, 8, 32, 0, 5, 5, (1, 1), (1, 1),
          (2, 2, 2, 2), depthwise=d),
        # stride and dilation 2 down, 1 across: kernel rows of 3 taps one pixel apart, whose
        # input vectors a chunk loads once a row (depthwise_f32_avx512.c, dw_block3), the
        # rows 2 apart; 11 interior pixels a row, a chunk of 8 and a pair and one after it
        c(rng, "f32_depthwise_48_rows3_s2x1_dil2x1", 1, 11, 13, 48, 0, 3, 3, (2, 1), (2, 1),
          (2, 2, 1, 1), depthwise=d, bn=True, relu6=True),
        # padding 1 across, 20 interior pixels a row: chunks of 8, 8 and 4, the first and
        # the last also computing the row's left and right border pixels
        # (depthwise_f32.c, dw_row_edges)
        c(rng, "f32_depthwise_32_edges", 1, 6, 22, 32, 0, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
          depthwise=d, bn=True, relu6=True),
        f32_fc_case(rng, "f32_fc_one_row", 1, 37, 10, True),
        f32_fc_case(rng, "f32_fc_rows", 13, 600, 50, False),  # two tap chunks
        # 655 K multiply-adds, under split_min_work, but 2.6 MB of weights:
        # split with the defaults (ukernel_lower.c: blob_bytes)
        f32_fc_case(rng, "f32_fc_weight_bound", 1, 1024, 640, True),
        # residual add + ReLU into the conv's kernel (tosa/uk_residual.c); the
        # 3x3 convs of 16-20 channels would take Winograd, which the
        # wino*_residual cases test
        direct(f32_residual_case(rng, "f32_residual_identity", 1, 9, 20, 1, False)),
        f32_residual_case(rng, "f32_residual_downsample", 2, 9, 12, 2, True),
        direct(f32_residual_case(rng, "f32_residual_after_relu", 1, 7, 16, 1, False,
                                 relu_before=True)),
        direct(f32_residual_case(rng, "f32_residual_nan_ignore", 1, 7, 16, 1, False,
                                 nan_ignore=True)),
        # the sum's own dispatch follows: the kernel writes its output over the skip, a
        # conv's, when the taps are one chunk (memory_plan.c, share_places); with two
        # (k = 576) the partial sums would overwrite the skip first
        f32_residual_case(rng, "f32_residual_over_skip", 1, 9, 12, 2, True, nan_ignore=True),
        f32_residual_case(rng, "f32_residual_over_skip_3x3", 1, 9, 12, 2, True,
                          nan_ignore=True, skip_first=True),
        direct(f32_residual_case(rng, "f32_residual_over_skip_k576", 1, 9, 64, 2, True,
                                 nan_ignore=True, skip_first=True)),
        f32_dwpw_case(rng, "f32_dwpw", 1, (13, 11), 40, 24, 1, False),
        f32_dwpw_case(rng, "f32_dwpw_residual", 1, (12, 9), 24, 24, 1, True),
        # 600 channels: chunks of the depthwise result (54 pixels) and two
        # tap chunks in the 1x1 conv
        f32_dwpw_case(rng, "f32_dwpw_s2_chunks", 2, (15, 17), 600, 20, 2, False),
        # MobileNetV2's 7x7 block end, two images: 5 interior pixels a row,
        # one chunk of 5
        f32_dwpw_case(rng, "f32_dwpw_7x7_960", 2, (7, 7), 960, 160, 1, False),
        # bands (2 and 4) that start mid-row, chunks of 3 rows, the window
        # sliding by 1 and by 2 rows, two images
        f32_block_case(rng, "f32_block_residual", 1, (29, 31), 8, 24, 8, 1, True),
        f32_block_case(rng, "f32_block_s2_batch", 2, (57, 30), 6, 40, 16, 2, False),
        # a ring of 5 rows (3x3 at dilation 2)
        f32_block_case(rng, "f32_block_dilated", 1, (30, 13), 5, 16, 12, 1, False, dil=2),
        # a first conv (3x3, stride 2) into the window: padded rows and
        # columns gathered, interior runs read in place; two images
        f32_first_block_case(rng, "f32_first_block", 1, (59, 45), 3, 24, 8, 3, 2, (1, 1, 1, 1),
                             1),
        f32_first_block_case(rng, "f32_first_block_batch", 2, (58, 62), 5, 16, 12, 3, 2,
                             (0, 1, 0, 1), 2),
        # a conv's rows into a max pool's window: SqueezeNet's start (no
        # padding, the conv's rows read in place), ResNet's (7x7, padded:
        # gathered borders; the pool padded too), two images
        f32_convpool_case(rng, "f32_convpool", 1, (63, 47), 3, 24, 3, 2, (0, 0, 0, 0), 3, 2,
                          (0, 0, 0, 0)),
        f32_convpool_case(rng, "f32_convpool_padded_batch", 2, (63, 57), 3, 20, 7, 2,
                          (3, 3, 3, 3), 3, 2, (1, 0, 1, 1)),
        direct(f32_concat_case(rng, "f32_concat", 1, (13, 11), 16, 24, 40)),
        f32_concat_case(rng, "f32_concat_bands", 2, (9, 10), 40, 64, 64),
        # the 3x3 conv's 1.2 MB of weights: bands of its channels, the 1x1
        # conv's of pixels
        direct(f32_concat_case(rng, "f32_concat_channel_bands", 1, (7, 7), 128, 256, 256)),
        # blocks the expansion stays out of, two calls: an image of 14 rows;
        # a window that would recompute 6 rows a band (dilation 3)
        apart(f32_block_case(rng, "f32_block_small_image", 1, (14, 20), 8, 24, 8, 1, True)),
        apart(f32_block_case(rng, "f32_block_dilated_3", 1, (30, 13), 5, 16, 12, 1, False,
                             dil=3)),
        # Winograd: 2x2 tiles half outside the image (odd sizes), channel tails in V
        # and M, batch 2
        wino(c(rng, "f32_wino_tails", 2, 9, 7, 35, 37, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
               bn=True, relu6=True)),
        # no padding; asymmetric padding
        wino(c(rng, "f32_wino_valid", 1, 9, 13, 32, 40, 3, 3, (1, 1), (1, 1), (0, 0, 0, 0))),
        wino(c(rng, "f32_wino_pad_2_0_0_1", 1, 7, 11, 40, 36, 3, 3, (1, 1), (1, 1),
               (2, 0, 0, 1), bn=True)),
        # k = ic = 600: two tap chunks in each of the 16 GEMMs
        wino(c(rng, "f32_wino_k600", 1, 6, 5, 600, 40, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))),
        # 49 tiles in blocks of up to 24: 16, 16, 17
        wino(c(rng, "f32_wino_blocks", 1, 14, 13, 64, 64, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
               relu6=True)),
        # U of 1.1 MB: blocks of up to 96 tiles (169 tiles: 84, 85)
        wino(c(rng, "f32_wino_big_blocks", 1, 26, 25, 128, 136, 3, 3, (1, 1), (1, 1),
               (1, 1, 1, 1))),
        # more channels than pixels and 9 * 120 * 256 floats (1.1 MB) of direct
        # weights: bands of 32 channels over every tile
        wino(c(rng, "f32_wino_channel_bands", 1, 5, 5, 120, 248, 3, 3, (1, 1), (1, 1),
               (1, 1, 1, 1), bn=True)),
        # the residual added in the output transform, the output over the skip
        wino(f32_residual_case(rng, "f32_wino_residual_over_skip", 1, 9, 32, 1, True,
                               nan_ignore=True, skip_first=True)),
        wino(f32_concat_case(rng, "f32_wino_concat", 1, (13, 11), 32, 24, 40)),
        # F(4x4, 3x3): 4x4 tiles partly outside the image (15x11), channel
        # tails in V and M, batch 2
        wino4(c(rng, "f32_wino4_tails", 2, 15, 11, 35, 37, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                bn=True, relu6=True)),
        # no padding (12x10 outputs); asymmetric padding (14x12)
        wino4(c(rng, "f32_wino4_valid", 1, 14, 12, 32, 40, 3, 3, (1, 1), (1, 1),
                (0, 0, 0, 0))),
        wino4(c(rng, "f32_wino4_pad_2_0_0_1", 1, 14, 13, 40, 36, 3, 3, (1, 1), (1, 1),
                (2, 0, 0, 1), bn=True)),
        # k = ic = 520: two tap chunks in each of the 36 GEMMs
        wino4(c(rng, "f32_wino4_k520", 1, 8, 8, 520, 32, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))),
        # 25 tiles in blocks of up to 12: 8, 8, 9
        wino4(c(rng, "f32_wino4_blocks", 1, 20, 20, 64, 64, 3, 3, (1, 1), (1, 1),
                (1, 1, 1, 1), relu6=True)),
        # U of 1.3 MB, beyond L2, still in blocks of up to 12 tiles (16: 8, 8)
        wino4(c(rng, "f32_wino4_u_beyond_l2", 1, 16, 16, 96, 96, 3, 3, (1, 1), (1, 1),
                (1, 1, 1, 1))),
        # the residual added in the output transform
        wino4(f32_residual_case(rng, "f32_wino4_residual_over_skip", 1, 12, 32, 1, True,
                                nan_ignore=True, skip_first=True)),
        # 16 input channels, SqueezeNet's fire2-3 (x86's min_channels): a
        # 4x4 tile's 36 GEMMs over k = 16, and F(2x2, 3x3) on an image 4x4
        # tiles would cover 1.8 times
        wino4(c(rng, "f32_wino4_16_channels", 1, 16, 15, 16, 64, 3, 3, (1, 1), (1, 1),
                (1, 1, 1, 1), relu6=True)),
        wino(c(rng, "f32_wino_16_channels", 1, 9, 9, 16, 20, 3, 3, (1, 1), (1, 1),
               (1, 1, 1, 1), bn=True)),
        # 1x1 convs whose last tile is one full 16-channel panel, with the next
        # tile's rows fetched ahead (conv_f32_avx512.c, pfa): SqueezeNet's squeeze
        # convs (oc 16, 48), two images; 169 pixels, k 96
        c(rng, "f32_conv1x1_oc16", 2, 9, 13, 40, 16, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
          relu6=True),
        c(rng, "f32_conv1x1_oc48", 1, 13, 13, 96, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
          bn=True),
    ]


def f32_module_text(case):
    name, x, y, body, res = case[:5]
    return (f"func.func @main(%x: tensor<{dims(x)}xf32>) -> tensor<{dims(y)}xf32> {{\n{body}"
            f"    return %{res} : tensor<{dims(y)}xf32>\n}}\n")


# tag, --features, the ISA suffix of the kernel symbols it must link (None:
# the Linalg path, no kernels at all)
F32_BUILDS = [("avx512", AVX512, "avx512"), ("avx2", "+avx2,+fma", "avx2"),
              ("linalg", "+fma", None)]


def check_f32_symbols(syms, kind, isa, residual=None):
    if isa is None:
        if "tinyml_uk_" in syms or "ukf_" in syms:
            raise RuntimeError("--features +fma still uses a microkernel")
        return
    if residual is not None and residual != ("tinyml_uk_conv_add_f32" in syms):
        raise RuntimeError(f"want the residual add {'in' if residual else 'outside'} "
                           f"the conv kernel; symbols:\n{syms}")
    other = "avx2" if isa == "avx512" else "avx512"
    if f"ukf_{kind}_{isa}" not in syms or f"ukf_{kind}_{other}" in syms:
        raise RuntimeError(f"want ukf_{kind}_{isa} (and not _{other}) in:\n{syms}")


# tinyml-run --offset: aligned, a float past a line, malloc's 16, a line's
# last float, for input and output alike; then input and output apart
# (IN,OUT): the input shifted, the output not, and the other way round
OFFSETS = ("0", "4", "16", "60", "16,0", "4,60", "0,16", "48,20")


def check_offsets(run_exe, mod, inp, want, threads=1):
    """The module's output at each of OFFSETS is `want` (bytes)."""
    for off in OFFSETS:
        od = f"{mod}.o{off.replace(',', '_')}.out"
        run([run_exe, mod, "--input", inp, "--output-dir", od, "--offset", off,
             "--threads", str(threads)])
        got = open(os.path.join(od, "output_0.bin"), "rb").read()
        if got != want:
            diff = sum(got[i:i + 4] != want[i:i + 4] for i in range(0, len(want), 4))
            raise RuntimeError(f"{mod}: {diff} of {len(want) // 4} values differ at --offset "
                               f"{off}")


def floats(path):
    raw = open(path, "rb").read()
    return struct.unpack(f"<{len(raw) // 4}f", raw)


def f32_modules(exes, work, case, have_avx512, check_syms):
    """The case compiled for each of F32_BUILDS (the AVX-512 one only where
    this CPU runs it), after check_syms(symbols, isa) on each object."""
    compile_exe, _, nm = exes
    src = os.path.join(work, case[0] + ".mlir")
    with open(src, "w") as f:
        f.write(f32_module_text(case))
    mode = case[9] if len(case) > 9 else None
    mods = {}
    for tag, features, isa in F32_BUILDS:
        extra = ["--features", features] + (["--no-winograd"] if mode == "direct" else [])
        extra += split_extra(case[0]) if isa else []
        check_syms(kernel_symbols(compile_exe, nm, src, work, extra), isa)
        if tag == "avx512" and not have_avx512:
            continue
        mods[tag] = os.path.join(work, f"{case[0]}.{tag}.tmlm")
        run([compile_exe, src, "-o", mods[tag], *extra])
        if isa and (split_extra(case[0]) or "_bound" in case[0]):
            check_split(exes[1], mods[tag])
    if mode in ("wino", "wino4"):
        mods["direct"] = os.path.join(work, f"{case[0]}.direct.tmlm")
        run([compile_exe, src, "-o", mods["direct"], "--features", "+avx2,+fma",
             "--no-winograd"])
    return mods


def wino_m_taken(run_exe, mod, case):
    """Which Winograd a case's 3x3 conv took, told apart by the module's
    constants: its U is 36 (F(4x4, 3x3)) or 16 (F(2x2, 3x3)) matrices of
    ic x round_up(oc, 8), and the rest of the constants are less than the
    difference."""
    info = subprocess.run([run_exe, "--info", mod], capture_output=True, text=True, check=True)
    size = int(info.stdout.split("constant_size: ")[1].split()[0])
    ic, oc = case[1][3], case[2][3]
    return 4 if size >= 36 * ic * ((oc + 7) // 8 * 8) * 4 else 2


def check_f32(exes, work, case, rng, have_avx512):
    run_exe = exes[1]
    x, kind = case[1], case[5]
    residual = case[6] if len(case) > 6 else None
    entries = case[7] if len(case) > 7 else None
    kernel = case[8] if len(case) > 8 else None

    def check_syms(syms, isa):
        check_f32_symbols(syms, kind, isa, residual)
        if isa and kernel and kernel not in syms:
            raise RuntimeError(f"want {kernel} in:\n{syms}")
        # with kernels, one entry per dispatch: the clamp left outside is one
        if isa and entries and (f"tinyml_entry_{entries - 1}" not in syms or
                                f"tinyml_entry_{entries}" in syms):
            raise RuntimeError(f"want {entries} entries; symbols:\n{syms}")
    mods = f32_modules(exes, work, case, have_avx512, check_syms)
    size = math.prod(x)
    inp = os.path.join(work, "in.bin")
    with open(inp, "wb") as f:
        f.write(struct.pack(f"<{size}f", *fvals(rng, size)))
    outs = {}
    for tag, m in mods.items():
        run([run_exe, m, "--input", inp, "--output-dir", m + ".out"])
        outs[tag] = floats(os.path.join(m + ".out", "output_0.bin"))
        if tag in ("linalg", "direct"):
            continue
        # split into bands of pixels or of 32 channels: the same bits
        run([run_exe, m, "--input", inp, "--output-dir", m + ".t3.out", "--threads", "3"])
        if floats(os.path.join(m + ".t3.out", "output_0.bin")) != outs[tag]:
            raise RuntimeError(f"{tag} kernels: 3 threads give other bits than 1")
        if kind == "dw":
            check_offsets(run_exe, m, inp, open(os.path.join(m + ".out", "output_0.bin"),
                                                "rb").read(), 3 if "576" in case[0] else 1)
    ref = outs["linalg"]
    if "direct" in outs and outs["direct"] == outs["avx2"]:
        raise RuntimeError("Winograd not taken: the same bits as --no-winograd")
    if "direct" in outs:
        want = 4 if case[9] == "wino4" else 2
        got = wino_m_taken(run_exe, mods["avx2"], case)
        if got != want:
            raise RuntimeError(f"Winograd F({got}x{got}, 3x3) taken, not F({want}x{want}, 3x3)")
    tol = 1e-4 * max(1.0, max(abs(v) for v in ref))
    bad = sum(abs(a - b) > tol for a, b in zip(outs["avx2"], ref))
    if bad:
        raise RuntimeError(f"AVX2 kernels: {bad} of {len(ref)} values off Linalg by > {tol:g}")
    if "avx512" in outs and outs["avx512"] != outs["avx2"]:
        diff = sum(a != b for a, b in zip(outs["avx512"], outs["avx2"]))
        raise RuntimeError(f"AVX-512 kernels: {diff} of {len(ref)} values differ from AVX2")


def maxpool_case(name, n, h, w, c, k, stride, pad, nan_mode=None):
    """tosa.max_pool2d, NHWC; pad is (top, bottom, left, right)."""
    oh = (h + pad[0] + pad[1] - k[0]) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - k[1]) // stride[1] + 1
    x, y = (n, h, w, c), (n, oh, ow, c)
    nan = f", nan_mode = #tosa.nan_mode<{nan_mode}>" if nan_mode else ""
    body = (f'    %y = "tosa.max_pool2d"(%x) <{{kernel = array<i64: {k[0]}, {k[1]}>, '
            f'pad = array<i64: {", ".join(map(str, pad))}>, '
            f'stride = array<i64: {stride[0]}, {stride[1]}>{nan}}}> : '
            f'(tensor<{dims(x)}xf32>) -> tensor<{dims(y)}xf32>\n')
    return (name, x, y, body, "y", "maxpool")


def maxpool_cases():
    c = maxpool_case
    return [
        c("maxpool_3x3s2_pad_c20_batch2", 2, 9, 9, 20, (3, 3), (2, 2), (1, 1, 1, 1)),
        c("maxpool_3x3s2_asym_pad_c70", 1, 12, 12, 70, (3, 3), (2, 2), (1, 0, 1, 0)),
        c("maxpool_3x3s2_c64_bands", 2, 23, 21, 64, (3, 3), (2, 2), (0, 0, 0, 0)),
        c("maxpool_3x3s2_c136", 1, 11, 11, 136, (3, 3), (2, 2), (0, 0, 0, 0)),
        c("maxpool_2x2s2_c64", 1, 8, 10, 64, (2, 2), (2, 2), (0, 0, 0, 0)),
        # 16 | channels off a line (check_offsets): a head, 128- and 64-channel
        # blocks and the tail; 16 channels, a head and a tail
        c("maxpool_3x3s2_c208_shifted", 1, 8, 10, 208, (3, 3), (2, 2), (0, 1, 0, 1)),
        c("maxpool_3x3s1_c16_shifted", 2, 5, 6, 16, (3, 3), (1, 1), (1, 1, 1, 1)),
        c("maxpool_3x3s1_pad_c37_bands", 2, 15, 14, 37, (3, 3), (1, 1), (1, 1, 1, 1)),
        c("maxpool_2x3_s_2_1_pad_c3", 3, 7, 7, 3, (2, 3), (2, 1), (0, 1, 2, 0)),
        c("maxpool_9x8_window_c5", 1, 10, 9, 5, (9, 8), (1, 1), (0, 0, 0, 0)),
        # 0.9 M comparisons, under split_min_work, but 2.5 MB moved (input +
        # twice the output): split with the defaults (ukernel_lower.c:
        # moved_bytes)
        c("maxpool_3x3s2_c128_memory_bound", 1, 57, 57, 128, (3, 3), (2, 2), (0, 0, 0, 0)),
    ]


# Bits the kernels treat apart: quiet and signalling NaNs of both signs
# and several payloads, the infinities, both zeros and the lowest float.
SPECIALS = [0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFC54321, 0x7F800001, 0xFF800002,
            0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0xFF7FFFFF, 0x00000001]


def pool_inputs(rng, size):
    """Words for: plain values; zeros of both signs among negatives; a few
    specials; many specials; every value -inf."""
    f = lambda v: struct.unpack("<I", struct.pack("<f", v))[0]
    plain = [f(rng.uniform(-3, 3)) for _ in range(size)]
    zeros = [rng.choice([0, 0x80000000, 0x80000000, f(-rng.random())]) for _ in range(size)]
    few = [rng.choice(SPECIALS) if rng.random() < 0.01 else f(rng.uniform(-3, 3))
           for _ in range(size)]
    many = [rng.choice(SPECIALS) if rng.random() < 0.3 else f(rng.uniform(-3, 3))
            for _ in range(size)]
    return [("plain", plain), ("zeros", zeros), ("few specials", few),
            ("many specials", many), ("all -inf", [0xFF800000] * size)]


def check_maxpool(exes, work, case, rng, have_avx512):
    """Every build and thread count gives the Linalg path's bits."""
    run_exe = exes[1]
    name, x = case[0], case[1]

    def check_syms(syms, isa):
        check_f32_symbols(syms, "maxpool", isa)
        if isa and "tinyml_uk_maxpool_f32" not in syms:
            raise RuntimeError(f"no tinyml_uk_maxpool_f32 in:\n{syms}")
    mods = f32_modules(exes, work, case, have_avx512, check_syms)
    size = math.prod(x)
    inp = os.path.join(work, "in.bin")
    for trial, (what, words) in enumerate(pool_inputs(rng, size)):
        with open(inp, "wb") as f:
            f.write(struct.pack(f"<{size}I", *words))
        ref = None
        for tag, m in reversed(list(mods.items())):  # Linalg first
            # the bands cases split into up to 8 workgroups
            for threads in (1,) if tag == "linalg" else (1, 3) if trial else (1, 2, 3, 4):
                od = f"{m}.t{threads}.out"
                run([run_exe, m, "--input", inp, "--output-dir", od, "--threads", str(threads)])
                got = open(os.path.join(od, "output_0.bin"), "rb").read()
                if ref is None:
                    ref = got
                elif got != ref:
                    diff = sum(got[i:i + 4] != ref[i:i + 4] for i in range(0, len(ref), 4))
                    raise RuntimeError(f"{what} input: {tag} on {threads} threads: {diff} of "
                                       f"{len(ref) // 4} values differ from Linalg")
            if tag != "linalg":
                check_offsets(run_exe, m, inp, ref)


def check_maxpool_refused(exes, work, case):
    compile_exe, _, nm = exes
    src = os.path.join(work, case[0] + ".mlir")
    with open(src, "w") as f:
        f.write(f32_module_text(case))
    if "tinyml_uk_" in kernel_symbols(compile_exe, nm, src, work, ["--features", AVX512]):
        raise RuntimeError("a NaN-ignoring max pool got the kernel")


def run_maxpools(exes, work, have_avx512):
    """The max pool cases; returns how many failed."""
    rng = random.Random(11)
    failures = run_cases(check_maxpool, maxpool_cases(), exes, work, rng, have_avx512)
    refused = maxpool_case("maxpool_nan_ignore_refused", 1, 6, 6, 8, (2, 2), (2, 2),
                           (0, 0, 0, 0), nan_mode="IGNORE")
    try:
        check_maxpool_refused(exes, work, refused)
        print(f"PASS {refused[0]}")
    except RuntimeError as e:
        failures += 1
        print(f"FAIL {refused[0]}: {e}")
    return failures


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    part = sys.argv[5] if len(sys.argv) > 5 else "convs"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    have_avx512, _ = host_avx512()
    exes = (compile_exe, run_exe, nm)
    if part == "maxpools":
        failures = run_maxpools(exes, work, have_avx512)
        print(f"ukernels (max pools): {failures} failure(s)")
        return 1 if failures else 0
    rng = random.Random(7)
    failures = run_cases(check_f32, f32_cases(rng), exes, work, rng, have_avx512)
    print(f"ukernels (f32): {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
