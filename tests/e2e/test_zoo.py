#!/usr/bin/env python3
"""The models users bring: every model in ../shared/zoo, as zoo_status.json
says it should fare.

A model marked "runs" must compile with default options (or those
OPTIONS below gives it) and match, case by case, both sets of expected
outputs the zoo has:

  reference-tflm/ (TFLite Micro's reference kernels, where TFLM runs the
      model): integers within 1, floats within 1e-4 + 1e-3 * |expected|,
      as ../shared/reference/README.md asks of the curated models;
  reference/ (TFLite's XNNPACK path and onnxruntime): floats within
      1e-3 + 1e-3 * max|expected|; integers within 48 steps, because
      XNNPACK rounds differently from the reference kernels and the
      difference grows through a network (MLPerf Tiny's int8 ResNet, which
      matches TFLM bit for bit, is 32 steps from XNNPACK on one photo);
      real-* inputs (photos, tokens, audio) must also give the same top
      class.  Where the two references of a case are themselves further
      apart than this, no output can be within reach of both; the TFLM one
      (exact kernels) is then checked and the other only reported.  That
      is the int8 LSTM of DTLN: TFLite's integer LSTM (EvalInteger8x8_16)
      rounds differently from TFLM's, by up to 59 steps after its LOGISTIC;
  zoo_kernels/ (beside this script: TFLite's own kernels, made by
      zoo_kernels/make_ref.py, for models TFLM cannot run whose reference/
      is not what TFLite computes): checked as reference-tflm is.  That is
      the uint8 SSD detector, whose XNNPACK backbone is up to 8 steps from
      TFLite's kernels before its detection operator, so that the
      detections themselves differ.

Models in STRICT below have their reference/ floats checked as
reference-tflm's are.

A model whose manifest entry has "reference_from" (an original with dynamic
dimensions, which the reference tools cannot size) is checked on the cases
of that model: a copy with the same weights and fixed shapes.  A model in
TWINS below (a curated model's original form) is checked on that curated
model's ../shared/reference cases, as reference-tflm is.  A model marked
"runs" that no case checks fails.

A model marked with an error must be refused: tinyml-compile exits with
status 1 (never a signal) and prints that text.  A refused model that
starts to compile fails the test too, so that the status file, which is
the count of models we run, stays true.

Usage: test_zoo.py TINYML_COMPILE TINYML_RUN SHARED_DIR STATUS_JSON
"""
import json
import os
import subprocess
import sys
import tempfile

from test_shared_models import argmax, read_values


# Compile options per model: the dynamic dimensions the issue binds (issue
# 25); the batch, unbound, defaults to 1.
OPTIONS = {
    "models/onnx-rnn/silero_vad_16k_op15.onnx": ["--dim", "sequence=512"],
    "models/onnx-rnn/silero_vad_op18_ifless.onnx": ["--dim", "sequence=512"],
}

# Float models whose reference/ (onnxruntime) outputs are checked as tightly
# as the exact-kernel ones, 1e-4 + 1e-3 * |expected| per value: a small
# float network where onnxruntime's rounding leaves room for no more.
STRICT = {
    "models/onnx-rnn/silero_vad_16k_op15.onnx",
    "models/onnx-rnn/silero_vad_16k_op15_fixed_1x512.onnx",
    "models/onnx-rnn/silero_vad_op18_ifless.onnx",
    "models/onnx-rnn/silero_vad_op18_ifless_fixed_1x512.onnx",
}


def within(ours, want, dtype, exact_kernels):
    """(ok, note) for one output against one reference."""
    if len(ours) != len(want):
        return False, "%d values, expected %d" % (len(ours), len(want))
    diffs = [abs(a - b) for a, b in zip(ours, want)]
    worst, mean = max(diffs), sum(diffs) / len(diffs)
    if dtype == "float32":
        scale = max(abs(b) for b in want)
        if exact_kernels:
            ok = all(d <= 1e-4 + 1e-3 * abs(b) for d, b in zip(diffs, want))
        else:
            ok = worst <= 1e-3 + 1e-3 * scale
        return ok, "max|d|=%.3g" % worst
    ok = worst <= (1 if exact_kernels else 48)
    return ok, "max|d|=%d mean=%.2f" % (worst, mean)


def check_case(run_exe, module, zoo, case, work, exact_kernels, base):
    cmd = [run_exe, module]
    for inp in sorted(case["inputs"], key=lambda i: i["index"]):
        cmd += ["--input", os.path.join(zoo, inp["file"])]
    r = subprocess.run(cmd + ["--output-dir", work], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return False, "tinyml-run failed: " + r.stdout.strip()
    ok, notes = True, []
    for out in case["outputs"]:
        ours = read_values(os.path.join(work, "output_%d.bin" % out["index"]), out["dtype"])
        want = read_values(os.path.join(base, out["file"]), out["dtype"])
        good, note = within(ours, want, out["dtype"], exact_kernels)
        if case["label"].startswith("real-") and len(want) > 1 and len(ours) == len(want):
            if argmax(ours) != argmax(want):
                good = False
                note += " top class %d, expected %d" % (argmax(ours), argmax(want))
        notes.append("out%d %s" % (out["index"], note))
        ok = ok and good
    return ok, ", ".join(notes)


KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo_kernels")

# Zoo models with no cases of their own that are a curated model in another
# form: TFLM's original person_detect (bias quantised on axis 3) holds the
# same weights as ../shared/models/tflm/person_detect.tflite, so it must give
# that model's outputs from TFLite's reference kernels.
TWINS = {"models/tflite-classification/tflm_person_detect.tflite": "models/tflm/person_detect.tflite"}


def twin_cases(zoo, model):
    """The curated twin's cases from ../shared/reference, paths made absolute."""
    shared = os.path.dirname(os.path.abspath(zoo))
    path = os.path.join(shared, "reference", "manifest.json")
    if model not in TWINS or not os.path.exists(path):
        return []
    out = []
    for entry in json.load(open(path)):
        if entry["model"] != TWINS[model]:
            continue
        for case in entry.get("cases", []):
            case = json.loads(json.dumps(case))
            for t in case["inputs"] + case["outputs"]:
                t["file"] = os.path.join(shared, t["file"])
            out.append(("shared-reference", True, case, shared))
    return out


def load_cases(zoo):
    """model path -> [(reference name, exact_kernels, case, folder of its files)]."""
    cases, borrowed = {}, {}
    for sub, exact, base, path in (
            ("reference", False, zoo, os.path.join(zoo, "reference", "manifest.json")),
            ("reference-tflm", True, zoo, os.path.join(zoo, "reference-tflm", "manifest.json")),
            ("zoo_kernels", True, KERNELS, os.path.join(KERNELS, "manifest.json"))):
        if not os.path.exists(path):
            continue
        for entry in json.load(open(path)):
            cases.setdefault(entry["model"], [])
            for case in entry.get("cases", []):
                cases[entry["model"]].append((sub, exact, case, base))
            if entry.get("reference_from"):
                borrowed[entry["model"]] = entry["reference_from"]
    for model, source in borrowed.items():
        cases[model] = cases[model] + cases.get(source, [])
    for model in TWINS:
        cases[model] = cases.get(model, []) + twin_cases(zoo, model)
    return cases


def references_disagree(zoo, case, cases):
    """Whether a reference/ case is out of tolerance of an exact-kernel
    case (reference-tflm or zoo_kernels) with the same label, so that both
    cannot be met."""
    for sub, exact, other, base in cases:
        if not exact or other["label"] != case["label"]:
            continue
        for a, b in zip(case["outputs"], other["outputs"]):
            va = read_values(os.path.join(zoo, a["file"]), a["dtype"])
            vb = read_values(os.path.join(base, b["file"]), b["dtype"])
            if not within(vb, va, a["dtype"], False)[0]:
                return True
    return False


def check_model(compile_exe, run_exe, zoo, model, want, cases, tmp):
    """Returns (passed, failed) and prints one line per check."""
    name = os.path.splitext(os.path.basename(model))[0]
    module = os.path.join(tmp, name + ".tmod")
    r = subprocess.run([compile_exe, os.path.join(zoo, model), "-o", module] +
                       OPTIONS.get(model, []),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    msg = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if want != "runs":
        ok = r.returncode == 1 and want in r.stdout
        why = "compiles: mark it \"runs\" in zoo_status.json" if r.returncode == 0 else msg
        print("%s refuse %s: %s" % ("PASS" if ok else "FAIL", name, why))
        return int(ok), int(not ok)
    if r.returncode != 0:
        print("FAIL %s: compile failed: %s" % (name, msg))
        return 0, 1
    if not cases:  # e.g. a reference_from naming a model with no cases
        print("FAIL %s: compiles, but no reference case checks it" % name)
        return 0, 1
    passed = failed = 0
    for sub, exact, case, base in cases:
        work = os.path.join(tmp, "%s-%s-%s" % (name, sub, case["label"]))
        os.makedirs(work, exist_ok=True)
        ok, note = check_case(run_exe, module, zoo, case, work, exact or model in STRICT, base)
        if not ok and sub == "reference" and references_disagree(zoo, case, cases):
            print("INFO %s/%s (%s): %s; not checked: out of tolerance of the exact-kernel "
                  "reference too" % (name, case["label"], sub, note))
            continue
        print("%s %s/%s (%s): %s" % ("PASS" if ok else "FAIL", name, case["label"], sub, note))
        passed += ok
        failed += not ok
    return passed, failed


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    compile_exe, run_exe, shared, status_path = sys.argv[1:]
    zoo = os.path.join(shared, "zoo")
    if not os.path.isdir(zoo):
        print("SKIP: %s is missing (../shared not provided)" % zoo)
        return 1 if os.environ.get("CI") == "true" else 77
    status = json.load(open(status_path))
    cases = load_cases(zoo)
    unlisted = sorted(set(cases) - set(status))
    passed = failed = 0
    for model in unlisted:
        print("FAIL %s: not in %s" % (model, os.path.basename(status_path)))
        failed += 1
    with tempfile.TemporaryDirectory() as tmp:
        for model, want in sorted(status.items()):
            p, f = check_model(compile_exe, run_exe, zoo, model, want, cases.get(model, []), tmp)
            passed += p
            failed += f
    runs = sum(1 for w in status.values() if w == "runs")
    print("zoo: %d of %d models run; %d checks passed, %d failed" % (runs, len(status), passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
