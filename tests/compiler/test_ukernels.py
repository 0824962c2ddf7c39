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
microkernel module also runs on 2, 3 and 4 threads: the *_bands cases are
large enough that their call is split into 4, 6 and 8 bands of output
pixels (lib/ukernels/uk_abi.h), bands that start mid-row and, with a batch,
span two images; every split must give the same bytes.

usage: test_ukernels.py TINYML_COMPILE TINYML_RUN NM WORK_DIR
"""
import os
import random
import shutil
import struct
import subprocess
import sys


def dense(values, shape, ty):
    """Any shape: MLIR's hex form holds the raw little-endian elements."""
    fmt = {"i8": "<b", "i32": "<i"}[ty]
    raw = b"".join(struct.pack(fmt, v) for v in values)
    return f'dense<"0x{raw.hex().upper()}"> : tensor<{shape}x{ty}>'


def const(name, values, shape, ty):
    return f'    %{name} = "tosa.const"() <{{values = {dense(values, shape, ty)}}}> : () -> tensor<{shape}x{ty}>\n'


def scalar(name, v, ty):
    return f'    %{name} = "tosa.const"() <{{values = dense<{v}> : tensor<1x{ty}>}}> : () -> tensor<1x{ty}>\n'


def dims(shape):
    return "x".join(str(d) for d in shape)


def rescale_chain(rng, acc, acc_shape, oc, per_channel, clamp):
    n = oc if per_channel else 1
    mult = [rng.randrange(1 << 30, 1 << 31) for _ in range(n)]
    # shifts below, at and above 32: the kernels take different paths
    shift = [rng.choice([20, 29, 31, 32, 33, 36, 38, 40]) for _ in range(n)]
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


def out_size(i, k, s, d, pb, pa):
    return (i + pb + pa - ((k - 1) * d + 1)) // s + 1


def conv_case(rng, name, n, h, w, ic, oc, kh, kw, stride, dil, pad, depthwise=False, mult=1,
              w_zp=0, clamp=True):
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
    chain, res = rescale_chain(rng, "acc", y, oc, True, clamp)
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


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-3000:]}")
    return p.stdout


def uses_ukernel(compile_exe, nm, src, work, extra):
    out = os.path.join(work, "emit")
    shutil.rmtree(out, ignore_errors=True)
    run([compile_exe, src, "--emit", "c", "--name", "m", "-o", out, *extra])
    return "tinyml_uk_" in run([nm, os.path.join(out, "m_kernels.o")])


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
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
    ]
    refused = conv_case(rng, "weight_zero_point_refused", 1, 5, 5, 4, 8, 3, 3, (1, 1), (1, 1),
                        (1, 1, 1, 1), w_zp=3)
    failures = 0
    for case in cases + [refused]:
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
            mods = []
            for tag, extra in (("uk", []), ("linalg", ["--features", "+fma"])):
                m = os.path.join(work, f"{name}.{tag}.tmlm")
                run([compile_exe, src, "-o", m, *extra])
                mods.append(m)
            size = 1
            for d in x:
                size *= d
            for trial in range(3):
                inp = os.path.join(work, "in.bin")
                with open(inp, "wb") as f:
                    f.write(bytes(rng.randrange(256) for _ in range(size)))
                outs, names = [], ["1 thread", "linalg"]
                for m in mods:
                    od = m + ".out"
                    run([run_exe, m, "--input", inp, "--output-dir", od])
                    outs.append(open(os.path.join(od, "output_0.bin"), "rb").read())
                for threads in (2, 3, 4) if trial == 0 else ():
                    od = f"{mods[0]}.t{threads}.out"
                    run([run_exe, mods[0], "--input", inp, "--output-dir", od,
                         "--threads", str(threads)])
                    outs.append(open(os.path.join(od, "output_0.bin"), "rb").read())
                    names.append(f"{threads} threads")
                for name_, got in zip(names[1:], outs[1:]):
                    if got != outs[0]:
                        diff = sum(a != b for a, b in zip(outs[0], got))
                        raise RuntimeError(f"trial {trial}: {name_}: {diff} of {len(got)} "
                                           "bytes differ")
            print(f"PASS {name}")
        except RuntimeError as e:
            failures += 1
            print(f"FAIL {name}: {e}")
    print(f"ukernels: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
