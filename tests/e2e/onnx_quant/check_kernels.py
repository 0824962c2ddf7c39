#!/usr/bin/env python3
"""Checks that the quantised CNNs of gen.py run their convolutions and
their Gemm on the int8 microkernels: compiles each model with
tinyml-compile and reads the step labels tinyml-run --info prints, where a
kernel call names its kernel ("kernel conv_s8").  Each model has two full
convolutions and a Gemm (conv_s8, the Gemm as a 1x1 conv) and one depthwise
convolution (depthwise_s8).

Usage: check_kernels.py TINYML_COMPILE TINYML_RUN DIR [--cpu NAME]"""
import json
import os
import subprocess
import sys
import tempfile

WANT = {"kernel conv_s8": 3, "kernel depthwise_s8": 1}


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    compile_exe, run_exe, here = sys.argv[1:4]
    extra = sys.argv[4:]
    models = [e["model"] for e in json.load(open(os.path.join(here, "manifest.json")))
              if os.path.basename(e["model"]).startswith("cnn_")]
    tmp = tempfile.mkdtemp()
    failed = 0
    for m in models:
        out = os.path.join(tmp, os.path.basename(m) + ".tmod")
        subprocess.run([compile_exe, os.path.join(here, m), "-o", out] + extra, check=True)
        info = subprocess.run([run_exe, "--info", out], check=True, capture_output=True,
                              text=True).stdout
        steps = [l for l in info.splitlines() if l.strip().startswith("step ")]
        got = {k: sum(l.count(k + ",") + l.endswith(k) for l in steps) for k in WANT}
        ok = got == WANT
        failed += not ok
        print("%s %s: %s" % ("PASS" if ok else "FAIL", m, got))
        if not ok:
            print(info)
    print("%d of %d models use the int8 kernels as expected" % (len(models) - failed, len(models)))
    return 1 if failed or len(models) != 4 else 0


if __name__ == "__main__":
    sys.exit(main())
