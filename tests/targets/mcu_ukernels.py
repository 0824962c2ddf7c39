#!/usr/bin/env python3
"""The Cortex-M4's int8 microkernels, each layer a copy specialised on its
constant parameters (lib/compiler/codegen/uk_specialise.c), against the
host's Linalg path, byte for byte.

The cases are tests/compiler/test_ukernels.py's int8 ones (awkward shapes:
channel counts that fill no 2- or 4-channel step, strides, dilations,
asymmetric padding, batches, a depthwise window too large for the tap
lists, shifts on both sides of 32), so every branch that the constant
header folds away in some copy and keeps in another is taken.  Each is
compiled for the host with --features +fma (no microkernel: the Linalg
path, an implementation that shares no code with the kernels) and run with
tinyml-run, then run on the emulated Cortex-M4 by tinyml-mcu-run; the
outputs must be equal on two random inputs.  The Arm object (--emit c)
must call a kernel copy: it has no generic tinyml_uk_conv_s8 or
tinyml_uk_depthwise_s8 left, and no parameter header survives as data
(every load of one folded).  Usage:
  mcu_ukernels.py --mcu-run PATH --compile PATH --run PATH --nm PATH [--board B]
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compiler"))
from test_ukernels import conv_case, fc_case, module_text, run  # noqa: E402


def cases(rng):
    return [
        conv_case(rng, "conv3x3_tails", 1, 9, 7, 5, 13, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
        conv_case(rng, "conv_stride_dilation_batch", 2, 11, 10, 6, 17, 3, 2, (2, 1), (2, 3),
                  (2, 0, 1, 0)),
        conv_case(rng, "conv1x1", 1, 5, 6, 24, 40, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  clamp=False),
        conv_case(rng, "conv_wide_k", 1, 6, 5, 33, 9, 5, 4, (1, 2), (1, 1), (2, 2, 1, 2)),
        conv_case(rng, "depthwise", 1, 9, 8, 19, 0, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1),
                  depthwise=True),
        conv_case(rng, "depthwise_big_window", 1, 6, 5, 12, 0, 9, 8, (1, 1), (1, 1),
                  (4, 4, 4, 4), depthwise=True),
        conv_case(rng, "depthwise_dilated_batch", 2, 13, 12, 8, 0, 3, 3, (1, 2), (2, 2),
                  (2, 1, 2, 1), depthwise=True),
        conv_case(rng, "depthwise_one_channel_x6", 1, 10, 9, 1, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True, mult=6),
        fc_case(rng, "fc_bias_per_tensor", 1, 37, 10, True, False),
        fc_case(rng, "fc_rows_no_bias", 5, 20, 23, False, True),
        conv_case(rng, "depthwise_s1_pairs_tail", 1, 7, 9, 10, 0, 3, 3, (1, 1), (1, 1),
                  (1, 1, 1, 1), depthwise=True),
        conv_case(rng, "depthwise_s2_odd_channels", 1, 11, 12, 7, 0, 3, 3, (2, 2), (1, 1),
                  (0, 1, 0, 1), depthwise=True),
        conv_case(rng, "depthwise_5x5_s1_pad2", 1, 8, 10, 16, 0, 5, 5, (1, 1), (1, 1),
                  (2, 2, 2, 2), depthwise=True),
        conv_case(rng, "depthwise_s1_dilated_w", 1, 9, 11, 6, 0, 3, 3, (1, 1), (1, 2),
                  (1, 1, 2, 2), depthwise=True),
        # every shift in [33, 54]: the blobs carry req records (uk_abi.h)
        # and the kernels requantise through the high word.  Multipliers of
        # 2^30 make exact .5 ties (both signs: the bias is either) common;
        # 2^31 - 1 is the largest; 15 pixels take the 4-, 2- and 1-pixel
        # kernels, 13 channels an odd last pair.
        conv_case(rng, "conv1x1_req_edges", 1, 3, 5, 20, 13, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0),
                  rq={"shifts": [33, 34, 41, 54], "mults": [1 << 30, (1 << 31) - 1, 1518500250]}),
        conv_case(rng, "conv3x3_req_ties_full", 1, 7, 6, 8, 6, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  clamp=False, rq={"shifts": [33, 35], "mults": [1 << 30]}),
        conv_case(rng, "depthwise_req", 1, 9, 8, 11, 0, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1),
                  depthwise=True, rq={"shifts": [33, 36, 54], "mults": [1 << 30, (1 << 31) - 1]}),
        # one shift outside [33, 54] leaves the layer on the general path
        conv_case(rng, "conv1x1_shift55_general", 1, 3, 3, 12, 7, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), rq={"shifts": [33, 55], "mults": [1 << 30]}),
        conv_case(rng, "conv1x1_shift32_general", 1, 2, 3, 8, 5, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False, rq={"shifts": [32], "mults": [(1 << 31) - 1]}),
        # One output pixel per image: the fully-connected kernel (4 rows per
        # step), with k_padded taking each loop (8, 4, 2, 1 groups per trip)
        # and rows that leave 1, 2 or 3 of the last 4 unused.
        fc_case(rng, "fc_k96_rows4", 1, 96, 4, True, True),
        fc_case(rng, "fc_k45_rows5", 1, 45, 5, True, False),
        fc_case(rng, "fc_k13_rows7", 1, 13, 7, False, True),
        fc_case(rng, "fc_k37_rows10", 1, 37, 10, True, True),
        fc_case(rng, "fc_k100_rows3", 1, 100, 3, True, True),
        fc_case(rng, "fc_m2", 2, 24, 6, True, True),
        conv_case(rng, "conv_one_pixel_batch2", 2, 3, 3, 5, 9, 3, 3, (1, 1), (1, 1),
                  (0, 0, 0, 0)),
        conv_case(rng, "conv1x1_one_pixel_batch2", 2, 1, 1, 24, 6, 1, 1, (1, 1), (1, 1),
                  (0, 0, 0, 0), clamp=False),
        fc_case(Extremes(rng.random()), "fc_extreme_weights_zero_point", 1, 160, 9, True, True),
        conv_case(Extremes(rng.random()), "conv_one_pixel_extremes", 1, 1, 1, 64, 6, 1, 1,
                  (1, 1), (1, 1), (0, 0, 0, 0), clamp=False),
    ]


class Extremes(random.Random):
    """Weights and zero points only -128 or 127, the largest products."""

    def randrange(self, start, stop=None, step=1):
        if (start, stop) == (-128, 128):
            return self.choice((-128, 127))
        return super().randrange(start, stop, step)


def check_object(compile_exe, nm, src, work):
    """The Arm object's symbols: a kernel copy, no generic kernel, no header."""
    out = os.path.join(work, "emit")
    shutil.rmtree(out, ignore_errors=True)
    run([compile_exe, src, "--target", "armv7em", "--emit", "c", "--name", "m", "-o", out])
    syms = run([nm, os.path.join(out, "m_kernels.o")])
    left = [s for s in ("tinyml_uk_conv_s8\n", "tinyml_uk_depthwise_s8\n", "tinyml_uk_params.c")
            if s in syms]
    if left:
        raise RuntimeError("the Arm object still has %s" % ", ".join(s.strip() for s in left))
    if ".c" not in syms or "tinyml_uk_" not in syms:
        raise RuntimeError("the Arm object has no kernel copy:\n" + syms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcu-run", required=True)
    ap.add_argument("--compile", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--nm", required=True)
    ap.add_argument("--board", default="mps2-an386")
    a = ap.parse_args()
    rng = random.Random(28)
    work = tempfile.mkdtemp(prefix="mcu-ukernels-")
    failures = 0
    for case in cases(rng):
        name, x = case[0], case[1]
        src = os.path.join(work, name + ".mlir")
        with open(src, "w") as f:
            f.write(module_text(case))
        try:
            check_object(a.compile, a.nm, src, work)
            host = os.path.join(work, name + ".host.tmlm")
            run([a.compile, src, "-o", host, "--features", "+fma"])
            size = 1
            for d in x:
                size *= d
            for trial in range(2):
                inp = os.path.join(work, "in.bin")
                with open(inp, "wb") as f:
                    f.write(bytes(rng.randrange(256) for _ in range(size)))
                want_dir, got_dir = os.path.join(work, "want"), os.path.join(work, "got")
                run([a.run, host, "--input", inp, "--output-dir", want_dir])
                run([sys.executable, a.mcu_run, "--board", a.board, src, "--input", inp,
                     "--output-dir", got_dir])
                want = open(os.path.join(want_dir, "output_0.bin"), "rb").read()
                got = open(os.path.join(got_dir, "output_0.bin"), "rb").read()
                if got != want:
                    diff = sum(p != q for p, q in zip(want, got))
                    raise RuntimeError("trial %d: %d of %d bytes differ" % (trial, diff,
                                                                           len(want)))
            print("PASS %s" % name)
        except RuntimeError as e:
            failures += 1
            print("FAIL %s: %s" % (name, e))
    shutil.rmtree(work, ignore_errors=True)
    print("mcu_ukernels: %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
