#!/usr/bin/env python3
"""BatchNorm folded into the f32 conv kernels' weights (uk_pack.c,
fill_f32): a conv's multiply and add by per-channel constants become
weights w * scale and a bias bias * scale + offset, and the kernels skip
the identity scale and offset that are left.

Finite BatchNorm: a 1x1 conv (the AVX-512 tile's store-only epilogue),
one with ReLU6 (its clamp-only one), a 3x3 one on Winograd (the scale
goes into g), a depthwise conv with ReLU6 (its clamp-only epilogue) and a
ResNet block's end without Winograd (the tile's residual identity path)
must agree with the Linalg path within test_ukernels_f32's tolerance,
AVX-512 and AVX2 bit for bit (its check_f32).  The ReLU6 cases' scales
lie in [-8, 8], so that the upper bound clips.  A bias left unscaled or
an offset added twice is off by about |bias| or |offset|, far past the
tolerance; a clamp or residual lost on the AVX-512 identity paths makes
its bits differ from AVX2's, whose epilogue has no such path.

A non-finite scale must not be folded: with channel 0's scale +inf and a
zero among its weights, TOSA gives sum * inf = +-inf where a folded
0 * inf weight would be NaN; channel 1's scale is NaN.  Every output must
be NaN where Linalg's is, the same infinity where Linalg's is one, and
within the tolerance elsewhere, for the 1x1 and Winograd convs and the
depthwise one.

The results alone cannot tell a fold from none (the unfolded kernels are
within the tolerance too), so each case also reads its kernel's blob in
the module's constants (check_blob): folded, its scale array is all 1.0
and its offset all -0.0; the non-finite cases keep scale +inf and NaN.

usage: test_bn_fold.py TINYML_COMPILE TINYML_RUN NM WORK_DIR
"""
import math
import os
import random
import shutil
import struct
import sys

from uk_common import c_int, const, host_avx512, run, run_cases, uk_blobs
from test_ukernels_f32 import (check_f32, check_f32_symbols, f32_conv_case, f32_modules,
                               f32_module_text, direct, f32_residual_case, floats, fvals, wino)


def replace_const(case, name, values):
    """case with constant %name's values replaced (same shape)."""
    lines = case[3].splitlines(keepends=True)
    i = next(i for i, s in enumerate(lines) if s.startswith(f"    %{name} = "))
    shape = lines[i].split("tensor<")[-1].rsplit("xf32>", 1)[0]
    lines[i] = const(name, values, shape, "f32")
    return case[:3] + ("".join(lines),) + tuple(case[4:])


def wide_scale(rng, case):
    """Scales in [-8, 8], so that ReLU6's upper bound clips some outputs."""
    oc = case[2][3]
    return replace_const(case, "sc", [rng.uniform(-8, 8) for _ in range(oc)])


def finite_cases(rng):
    c = f32_conv_case
    return [
        c(rng, "fold_conv1x1_bn", 1, 6, 7, 24, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), bn=True),
        wide_scale(rng, c(rng, "fold_conv1x1_bn_relu6", 1, 6, 7, 24, 40, 1, 1, (1, 1), (1, 1),
                          (0, 0, 0, 0), bn=True, relu6=True)),
        wide_scale(rng, wino(c(rng, "fold_wino_bn_relu6", 1, 9, 7, 32, 40, 3, 3, (1, 1),
                               (1, 1), (1, 1, 1, 1), bn=True, relu6=True))),
        wide_scale(rng, c(rng, "fold_dw_bn_relu6", 1, 9, 8, 40, 40, 3, 3, (1, 1), (1, 1),
                          (1, 1, 1, 1), depthwise=True, bn=True, relu6=True)),
        direct(f32_residual_case(rng, "fold_residual_bn_relu", 1, 7, 16, 1, False)),
    ]


def non_finite(rng, case):
    """case with scale +inf (and weight 0 among its taps) on channel 0 and
    NaN on channel 1."""
    lines = case[3].splitlines(keepends=True)
    shape = next(s for s in lines if s.startswith("    %w = ")).split("tensor<")[-1]
    w = fvals(rng, math.prod(int(d) for d in shape.rsplit("xf32>", 1)[0].split("x")))
    w[0] = 0.0  # channel 0's first tap: depthwise [kh, kw, ic, 1], conv [oc, kh, kw, ic]
    sc = fvals(rng, case[2][3])
    sc[0], sc[1] = math.inf, math.nan
    return replace_const(replace_const(case, "w", w), "sc", sc)


F32_KINDS = (c_int("TINYML_UK_CONV_F32"), c_int("TINYML_UK_DEPTHWISE_F32"))
ONE, NEG_ZERO, INF = 0x3F800000, 0x80000000, 0x7F800000


def blob_arrays(mod, oc):
    """The scale and offset bits (oc uint32 each) of every f32 conv or
    depthwise blob of oc channels in the module's constants (uk_blobs),
    whose arrays lie where tc_uk_f32_chan_layout puts them (bias, scale,
    offset, round_up(oc_padded, 16) floats each, the first 64-aligned
    after the header)."""
    raw, found = open(mod, "rb").read(), []
    for at, p in uk_blobs(raw, F32_KINDS):
        chan = 4 * (-(-p.oc_padded // 16) * 16)
        if p.oc != oc or (p.bias_off % 64, p.mult_off - p.bias_off, p.shift_off - p.mult_off,
                          p.bias_off >= 4 * len(p)) != (0, chan, chan, True):
            continue
        found.append((struct.unpack_from(f"<{oc}I", raw, at + p.mult_off),
                      struct.unpack_from(f"<{oc}I", raw, at + p.shift_off)))
    return found


def check_blob(exes, work, case, folded):
    """The case's kernel blob (compiled for AVX2) has BatchNorm folded into
    its weights (scale all 1.0, offset all -0.0) or, when not `folded`,
    keeps channel 0's scale +inf and channel 1's NaN."""
    src = os.path.join(work, case[0] + ".blob.mlir")
    with open(src, "w") as f:
        f.write(f32_module_text(case))
    mod = os.path.join(work, case[0] + ".blob.tmlm")
    mode = case[9] if len(case) > 9 else None
    run([exes[0], src, "-o", mod, "--features", "+avx2,+fma"] +
        (["--no-winograd"] if mode == "direct" else []))
    blobs = blob_arrays(mod, case[2][3])
    if len(blobs) != 1:
        raise RuntimeError(f"want one f32 kernel blob of {case[2][3]} channels, found {len(blobs)}")
    scale, offset = blobs[0]
    if folded and (set(scale) != {ONE} or set(offset) != {NEG_ZERO}):
        raise RuntimeError(f"not folded: blob scale {[hex(v) for v in scale[:4]]}..., "
                           f"offset {[hex(v) for v in offset[:4]]}...")
    if not folded and (scale[0] != INF or (scale[1] & INF) != INF or not scale[1] & 0x7FFFFF):
        raise RuntimeError(f"folded: blob scale {[hex(v) for v in scale[:4]]}..., "
                           "want +inf and NaN first")


def check_folded(exes, work, case, rng, have_avx512):
    check_blob(exes, work, case, True)
    check_f32(exes, work, case, rng, have_avx512)


def same_class(a, b, tol):
    if math.isnan(b):
        return math.isnan(a)
    if math.isinf(b):
        return a == b
    return math.isfinite(a) and abs(a - b) <= tol


def check_non_finite(exes, work, case, rng, have_avx512):
    check_blob(exes, work, case, False)
    kind = case[5]
    mods = f32_modules(exes, work, case, have_avx512,
                       lambda syms, isa: check_f32_symbols(syms, kind, isa))
    inp = os.path.join(work, "in.bin")
    size = math.prod(case[1])
    with open(inp, "wb") as f:
        f.write(struct.pack(f"<{size}f", *fvals(rng, size)))
    outs = {}
    for tag, m in mods.items():
        run([exes[1], m, "--input", inp, "--output-dir", m + ".out"])
        outs[tag] = floats(os.path.join(m + ".out", "output_0.bin"))
    raw = {t: open(os.path.join(m + ".out", "output_0.bin"), "rb").read() for t, m in mods.items()}
    if "direct" in raw and raw["direct"] == raw["avx2"]:
        raise RuntimeError("Winograd not taken: the same bits as --no-winograd")
    ref = outs["linalg"]
    if not any(math.isinf(v) for v in ref) or not any(math.isnan(v) for v in ref):
        raise RuntimeError("the reference has no inf or no NaN: the case tests nothing")
    tol = 1e-4 * max([1.0] + [abs(v) for v in ref if math.isfinite(v)])
    for tag, got in outs.items():
        bad = [i for i, (a, b) in enumerate(zip(got, ref)) if not same_class(a, b, tol)]
        if bad:
            i = bad[0]
            raise RuntimeError(f"{tag}: {len(bad)} of {len(ref)} values off Linalg, "
                               f"first at {i}: {got[i]} for {ref[i]}")


def non_finite_cases(rng):
    c = f32_conv_case
    conv1 = c(rng, "nofold_conv1x1_inf_nan", 1, 5, 6, 16, 24, 1, 1, (1, 1), (1, 1),
              (0, 0, 0, 0), bn=True)
    wino3 = wino(c(rng, "nofold_wino_inf_nan", 1, 9, 7, 32, 40, 3, 3, (1, 1), (1, 1),
                   (1, 1, 1, 1), bn=True))
    dw = c(rng, "nofold_dw_inf_nan", 1, 7, 6, 32, 32, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
           depthwise=True, bn=True)
    return [non_finite(rng, conv1), non_finite(rng, wino3), non_finite(rng, dw)]


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    have_avx512, _ = host_avx512()
    exes = (compile_exe, run_exe, nm)
    rng = random.Random(27)
    failures = run_cases(check_folded, finite_cases(rng), exes, work, rng, have_avx512)
    failures += run_cases(check_non_finite, non_finite_cases(rng), exes, work, rng, have_avx512)
    print(f"bn_fold: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
