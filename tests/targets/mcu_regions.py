#!/usr/bin/env python3
"""Arena regions on the Cortex-M7 (mps2-an500): kws_ref_model compiled with
--arena-regions 8K,64K runs under tinyml-mcu-run, its output matches
../shared/reference, it reports two regions with region 0 within its 8 KiB,
and its instructions per inference are those of the one-arena module within
two timer ticks.  Usage:
  mcu_regions.py --mcu-run PATH [--shared DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcu_models import compare, shared_present  # noqa: E402  (the README's tolerances)


def run(a, model, ref, out, *compile_args):
    cmd = [sys.executable, a.mcu_run, "--board", a.board, model, "--input",
           os.path.join(ref, "seed1_in_0.bin"), "--output-dir", out]
    if compile_args:
        cmd += ["--", *compile_args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    values = dict(re.findall(r"^(\w+)=(\d+)\s*$", r.stdout, re.M))
    return r, values


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcu-run", required=True)
    ap.add_argument("--board", default="mps2-an500")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                      "..", "shared"))
    a = ap.parse_args()
    model = os.path.join(a.shared, "models", "mlperf-tiny", "kws_ref_model.tflite")
    ref = os.path.join(a.shared, "reference", "kws_ref_model")
    if not shared_present(model, "mcu_regions"):
        return 0
    problems = []
    with tempfile.TemporaryDirectory(prefix="tinyml-mcu-regions-") as work:
        one, v1 = run(a, model, ref, os.path.join(work, "one"))
        split, v2 = run(a, model, ref, os.path.join(work, "split"), "--arena-regions", "8K,64K")
        print(split.stdout, end="")
        for name, r in (("one arena", one), ("regions", split)):
            if r.returncode != 0:
                problems.append("%s: tinyml-mcu-run exited %d:\n%s" % (name, r.returncode, r.stdout))
        if not problems:
            want = open(os.path.join(ref, "seed1_out_0.bin"), "rb").read()
            err = compare(open(os.path.join(work, "split", "output_0.bin"), "rb").read(), want,
                          "int8")
            if err:
                problems.append("regions: output " + err)
            if "arena_region_1" not in v2 or int(v2.get("arena_region_0", 1 << 30)) > 8192:
                problems.append("regions: expected two regions, region 0 within 8192 bytes")
            if abs(int(v2["instructions"]) - int(v1["instructions"])) > 80:
                problems.append("regions: instructions %s, one arena %s" %
                                (v2["instructions"], v1["instructions"]))
    for p in problems:
        print("FAIL mcu_regions: " + p)
    if not problems:
        print("PASS mcu_regions: kws_ref_model on %s, regions %s + %s bytes (one arena %s), "
              "instructions %s (one arena %s)" % (a.board, v2["arena_region_0"],
                                                  v2["arena_region_1"], v1["arena"],
                                                  v2["instructions"], v1["instructions"]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
