#!/usr/bin/env python3
"""tinyml-compile then tinyml-run on the small CNN (conv, depthwise conv,
pooling, transpose, matmul, softmax; two results) must reproduce the plain C
reference of tests/e2e/reference.c within 1e-4 relative.

Usage: test_cnn_reference.py TINYML_COMPILE TINYML_RUN TEST_E2E MODEL_DIR
"""
import os
import struct
import subprocess
import sys
import tempfile

MODEL = "cnn_two_results"
REL_TOL = 1e-4


def floats(path):
    data = open(path, "rb").read()
    return struct.unpack("<%df" % (len(data) // 4), data)


def run(*cmd):
    print("+", " ".join(cmd))
    subprocess.run(cmd, check=True)


def main():
    compile_exe, run_exe, e2e_exe, models = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, MODEL + ".tmlm")
        out = os.path.join(tmp, "out")
        run(e2e_exe, "--write-case", MODEL, tmp)
        run(compile_exe, os.path.join(models, MODEL + ".mlir"), "-o", module)
        run(run_exe, module, "--input", os.path.join(tmp, "input_0.bin"),
            "--output-dir", out)
        failures = 0
        for i in range(2):
            got = floats(os.path.join(out, "output_%d.bin" % i))
            want = floats(os.path.join(tmp, "expected_%d.bin" % i))
            if len(got) != len(want):
                print("output %d: %d values, want %d" % (i, len(got), len(want)))
                failures += 1
                continue
            worst = max(abs(g - w) / max(1.0, abs(w)) for g, w in zip(got, want))
            ok = worst <= REL_TOL
            failures += not ok
            print("output %d: %d values, max rel err %.2e %s"
                  % (i, len(got), worst, "ok" if ok else "FAIL"))
        print("%d passed, %d failed" % (2 - failures, failures))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
