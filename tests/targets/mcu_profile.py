#!/usr/bin/env python3
"""Per-step profile on the Cortex-M4: tinyml-mcu-run --profile on
kws_ref_model.  Checks one row per step of the module (tinyml-run --info
counts them on the host), that the rows name the model's CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED operators, that they add up to
instructions= within 5%, and that the outputs still match the reference.
Usage:
  mcu_profile.py --mcu-run PATH --compile PATH --run PATH [--shared DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcu_models import compare, shared_present  # noqa: E402  (the README's tolerances)


def steps_on_host(a, model, work):
    """The module's step count, from a host compile of the same model."""
    host = os.path.join(work, "host.tmod")
    subprocess.run([a.compile, model, "-o", host], check=True)
    info = subprocess.run([a.run, "--info", host], check=True, stdout=subprocess.PIPE,
                          text=True).stdout
    return int(re.search(r"^dispatch_count: (\d+)", info, re.M).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcu-run", required=True)
    ap.add_argument("--compile", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                      "..", "shared"))
    a = ap.parse_args()
    model = os.path.join(a.shared, "models", "mlperf-tiny", "kws_ref_model.tflite")
    ref = os.path.join(a.shared, "reference", "kws_ref_model")
    if not shared_present(model, "mcu_profile"):
        return 0
    with tempfile.TemporaryDirectory(prefix="tinyml-mcu-profile-") as work:
        out = os.path.join(work, "out")
        r = subprocess.run([sys.executable, a.mcu_run, "--board", a.board, model, "--input",
                            os.path.join(ref, "seed1_in_0.bin"), "--output-dir", out,
                            "--profile"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        print(r.stdout, end="")
        problems = [] if r.returncode == 0 else ["tinyml-mcu-run exited %d" % r.returncode]
        rows = re.findall(r"^step +(\d+) +(\d+) +[\d.]+% (.*)$", r.stdout, re.M)
        steps = steps_on_host(a, model, work)
        if [int(s) for s, _, _ in rows] != list(range(steps)):
            problems.append("%d rows for %d steps" % (len(rows), steps))
        names = " ".join(label for _, _, label in rows)
        for op in ("CONV_2D ", "DEPTHWISE_CONV_2D ", "FULLY_CONNECTED "):
            if op not in names:
                problems.append("no row names %s" % op.strip())
        total = re.search(r"^instructions=(\d+)", r.stdout, re.M)
        summed = sum(int(n) for _, n, _ in rows)
        if not total or abs(summed / int(total.group(1)) - 1) > 0.05:
            problems.append("rows sum to %d, not within 5%% of %s" %
                            (summed, total.group(1) if total else "?"))
        if r.returncode == 0:
            err = compare(open(os.path.join(out, "output_0.bin"), "rb").read(),
                          open(os.path.join(ref, "seed1_out_0.bin"), "rb").read(), "int8")
            if err:
                problems.append(err)
    for p in problems:
        print("FAIL mcu_profile: " + p)
    if not problems:
        print("PASS mcu_profile: kws_ref_model, %d rows, sum %d of instructions=%s" %
              (len(rows), summed, total.group(1)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
