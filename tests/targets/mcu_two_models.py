#!/usr/bin/env python3
"""Several models, one arena, on the Cortex-M4: tinyml-mcu-run --model2 runs
kws_ref_model and ad01_int8 in turn (A, B, A, B) with one context each on
ONE static arena (examples/cortex-m4/main_two_models.c).  Checks both
outputs against ../shared/reference (int8 within 1), that the arena is the
larger of the two modules' and not their sum, and prints both figures.
One run per case pair: the seeded inputs and the real samples.  Usage:
  mcu_two_models.py --mcu-run PATH [--board mps2-an386] [--shared DIR]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcu_models import compare  # noqa: E402  (the README's tolerances)

MODELS = ("kws_ref_model", "ad01_int8")
CASES = (("seed1", "seed1"), ("real-kws-sample0", "real-ad-sample0"))


def entries(shared):
    manifest = json.load(open(os.path.join(shared, "reference", "manifest.json")))
    by_name = {os.path.splitext(os.path.basename(e["model"]))[0]: e for e in manifest}
    return [by_name[m] for m in MODELS]


def case(entry, label):
    return next(c for c in entry["cases"] if c["label"] == label)


def command(a, models, cases, outs):
    """tinyml-mcu-run with the first model and --model2 the second."""
    cmd = [sys.executable, a.mcu_run, "--board", a.board]
    for n, (e, c, out) in enumerate(zip(models, cases, outs)):
        suffix = "2" if n else ""
        if n:
            cmd += ["--model2", os.path.join(a.shared, e["model"])]
        else:
            cmd.append(os.path.join(a.shared, e["model"]))
        for i in sorted(c["inputs"], key=lambda x: x["index"]):
            cmd += ["--input" + suffix, os.path.join(a.shared, i["file"])]
        cmd += ["--output-dir" + suffix, out]
    return cmd


def check_outputs(a, cases, outs):
    errs = []
    for name, c, out in zip(MODELS, cases, outs):
        for o in c["outputs"]:
            got = open(os.path.join(out, "output_%d.bin" % o["index"]), "rb").read()
            ref = open(os.path.join(a.shared, o["file"]), "rb").read()
            err = compare(got, ref, o["dtype"])
            if err:
                errs.append("%s output %d: %s" % (name, o["index"], err))
    return errs


def check_arena(stats):
    """The shared arena must be the larger module's, below the sum."""
    shared, one, two = (int(stats[k]) for k in ("arena", "arena1", "arena2"))
    if shared != max(one, two):
        return ["arena=%d, expected max(%d, %d)" % (shared, one, two)]
    return [] if shared < one + two else ["arena=%d is not below the sum %d" % (shared, one + two)]


def run_pair(a, models, labels):
    """Runs one case pair; returns the list of problems."""
    cases = [case(e, l) for e, l in zip(models, labels)]
    with tempfile.TemporaryDirectory() as tmp:
        outs = [os.path.join(tmp, m) for m in MODELS]
        r = subprocess.run(command(a, models, cases, outs), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            return [r.stdout.strip()], {}
        stats = dict(re.findall(r"^(\w+)=(\S+)$", r.stdout, re.M))
        return check_outputs(a, cases, outs) + check_arena(stats), stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcu-run", required=True)
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                     "shared"))
    a = ap.parse_args()
    models = entries(a.shared)
    failures = 0
    for labels in CASES:
        errs, stats = run_pair(a, models, labels)
        failures += bool(errs)
        print("%-4s %s/%s + %s/%s on one arena: arena=%s (separate %s + %s = %s)%s" % (
            "FAIL" if errs else "PASS", MODELS[0], labels[0], MODELS[1], labels[1],
            stats.get("arena"), stats.get("arena1"), stats.get("arena2"),
            stats.get("arena_separate"), "".join("\n     " + e for e in errs)))
    print("%d passed, %d failed" % (len(CASES) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
