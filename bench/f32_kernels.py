#!/usr/bin/env python3
"""GFLOP/s of the x86-64 f32 microkernels, AVX2 against AVX-512, on conv and
depthwise shapes of the ONNX zoo models (docs/PERF.md).

  python3 bench/f32_kernels.py [--build DIR] [--runs N] [--rounds N] [--only TEXT]

Each shape is one TOSA conv2d or depthwise_conv2d (with a BatchNorm
multiply/add and ReLU6, which the kernel applies as it stores), built by
tests/compiler/test_ukernels.py's case builders, compiled with --features
+avx2,+fma and with +avx512f,+avx512bw,+avx512vl,+avx512dq added, and timed
with `tinyml-run --bench N --flops F` in alternating rounds; the best round
of each counts, as in bench/run.py.  The AVX-512 column needs a CPU with
those features.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "compiler"))
import test_ukernels as tu  # noqa: E402

# name: n, h, w, ic, oc, kh, kw, stride, pad (oc 0: depthwise)
SHAPES = {
    "conv3x3 56x56 64->64": (1, 56, 56, 64, 64, 3, 3, 1, 1),
    "conv3x3/2 112x112 32->64": (1, 112, 112, 32, 64, 3, 3, 2, 1),
    "conv3x3 14x14 256->256": (1, 14, 14, 256, 256, 3, 3, 1, 1),
    "conv1x1 56x56 256->64": (1, 56, 56, 256, 64, 1, 1, 1, 0),
    "conv1x1 7x7 960->320": (1, 7, 7, 960, 320, 1, 1, 1, 0),
    "conv3x3/2 224x224 3->64": (1, 224, 224, 3, 64, 3, 3, 2, 1),
    "conv7x7/2 224x224 3->64": (1, 224, 224, 3, 64, 7, 7, 2, 3),
    "conv3x3 7x7 512->512": (1, 7, 7, 512, 512, 3, 3, 1, 1),
    "conv1x1 112x112 16->96": (1, 112, 112, 16, 96, 1, 1, 1, 0),
    "dw3x3 112x112x32": (1, 112, 112, 32, 0, 3, 3, 1, 1),
    "dw3x3/2 56x56x144": (1, 56, 56, 144, 0, 3, 3, 2, 1),
    "dw3x3 14x14x576": (1, 14, 14, 576, 0, 3, 3, 1, 1),
}
# The AVX-512 tiles need every feature of x86.c's ukernel_wide_feature: with
# +avx512f alone the compiler links the AVX2 ones.
BUILDS = (("AVX2", "+avx2,+fma"),
          ("AVX-512", "+avx2,+fma,+avx512f,+avx512bw,+avx512vl,+avx512dq"))


def gflops(run_exe, module, runs, flops):
    out = subprocess.run([run_exe, module, "--bench", str(runs), "--flops", str(flops)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"gflops=([\d.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="only shapes whose name contains this")
    a = ap.parse_args()
    compile_exe = os.path.join(a.build, "tools", "tinyml-compile")
    run_exe = os.path.join(a.build, "tools", "tinyml-run")
    rng = random.Random(3)
    print(f"{'shape':28} {'AVX2':>8} {'AVX-512':>8}  GFLOP/s")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (n, h, w, ic, oc, kh, kw, s, p) in SHAPES.items():
            if a.only not in name:
                continue
            dw = oc == 0
            case = tu.f32_conv_case(rng, "k", n, h, w, ic, oc, kh, kw, (s, s), (1, 1),
                                    (p, p, p, p), depthwise=dw, bn=True, relu6=True)
            y = case[2]
            flops = 2 * y[1] * y[2] * y[3] * kh * kw * (1 if dw else ic)
            src = os.path.join(tmp, "k.mlir")
            with open(src, "w") as f:
                f.write(tu.f32_module_text(case))
            mods = []
            for tag, features in BUILDS:
                mods.append(os.path.join(tmp, f"{tag}.tmlm"))
                subprocess.run([compile_exe, src, "-o", mods[-1], "--features", features],
                               check=True)
            best = [0.0] * len(mods)
            for _ in range(a.rounds):
                for i, m in enumerate(mods):
                    best[i] = max(best[i], gflops(run_exe, m, a.runs, flops))
            print(f"{name:28} {best[0]:8.1f} {best[1]:8.1f}", flush=True)


if __name__ == "__main__":
    main()
