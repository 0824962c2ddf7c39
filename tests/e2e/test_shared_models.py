#!/usr/bin/env python3
"""Compiles every .tflite (or, with --format onnx, .onnx) model listed in ../shared/reference/manifest.json
with tinyml-compile, runs each reference case with tinyml-run, and compares
with the peers' expected outputs at the tolerances of
../shared/reference/README.md:

  int8/uint8: every element within 1 (exact matches are counted too),
              equal in cases marked "exact";
  float32:    |ours - expected| <= 1e-4 + 1e-3 * |expected|;
  real-*:     also the same top class.

Prints one line per case and a summary; exits 1 on any failure.  With
--report it also prints, per model, compile time, module and .tflite sizes,
arena bytes and tinyml-run --bench latency (for issue notes).

Usage: test_shared_models.py TINYML_COMPILE TINYML_RUN SHARED_DIR
           [--manifest FILE] [--report]
           [--ops FLATC OUTDIR] [--format tflite|onnx]
           [--target NAME] [--cpu NAME] [--runner "CMD ..."] [--run-exe PATH]
           [--models a,b,c]
--manifest reads another manifest of the same format (paths in it may be
absolute).  --ops first builds the operator test models of tflite_ops/
with FLATC into OUTDIR (gen_ops.py) and then checks those.

Other targets: --target NAME and --cpu NAME are passed to tinyml-compile
(--cpu host: the AVX-512 microkernels and transform script on a CPU that
has AVX-512, as bench/run.py compiles); --run-exe PATH
replaces TINYML_RUN (e.g. a cross-built tinyml-run) and --runner prefixes
every tinyml-run command (e.g. "qemu-riscv64 -cpu rv64,v=true,vlen=128").
--models keeps only the models with those base names and skips the refusal
checks of errors.json.
"""
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import time

FORMATS = {"int8": "b", "uint8": "B", "int16": "h", "int32": "i", "int64": "q",
           "float32": "f"}
FORMATS.update({"float16": "e", "float64": "d"})
FORMATS.update({"uint16": "H", "uint32": "I", "uint64": "Q", "bool": "?"})
FLOATS = ("float32", "float16", "float64")


def read_values(path, dtype):
    data = open(path, "rb").read()
    fmt = FORMATS[dtype]
    n = len(data) // struct.calcsize(fmt)
    return list(struct.unpack("<%d%s" % (n, fmt), data))


def compare(ours, want, dtype, exact_only=False):
    """Returns (ok, max_abs_diff, exact); exact_only: integers must be equal."""
    if len(ours) != len(want):
        return False, float("inf"), False
    worst, ok = 0.0, True
    for a, b in zip(ours, want):
        if a == b:  # equal infinities (a detection's -inf class scores) differ by NaN
            continue
        d = abs(a - b)
        worst = max(worst, d)
        if dtype in FLOATS:
            if not d <= 1e-4 + 1e-3 * abs(b):
                ok = False
        elif d > (0 if exact_only else 1):
            ok = False
    return ok, worst, worst == 0


def argmax(v):
    return max(range(len(v)), key=lambda i: v[i])


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def check_case(run_exe, module, shared, case, workdir):
    cmd = run_exe + [module]
    for inp in sorted(case["inputs"], key=lambda i: i["index"]):
        cmd += ["--input", os.path.join(shared, inp["file"])]
    cmd += ["--output-dir", workdir]
    if "invokes" in case:  # the outputs of the last of them
        cmd += ["--invokes", str(case["invokes"])]
    r = run(cmd)
    if r.returncode != 0:
        return False, "tinyml-run failed: " + r.stdout.strip(), False
    notes, ok, all_exact = [], True, True
    for out in case["outputs"]:
        dtype = out["dtype"]
        ours = read_values(os.path.join(workdir, "output_%d.bin" % out["index"]), dtype)
        want = read_values(os.path.join(shared, out["file"]), dtype)
        good, worst, exact = compare(ours, want, dtype, case.get("exact", False))
        all_exact = all_exact and exact
        if dtype in FLOATS:
            notes.append("out%d max|d|=%.3g" % (out["index"], worst))
        else:
            notes.append("out%d max|d|=%d%s" % (out["index"], worst, " (exact)" if exact else ""))
        if case["label"].startswith("real-") and len(ours) == len(want) and len(want) > 1:
            if argmax(ours) != argmax(want):
                good = False
                notes.append("top class %d, expected %d" % (argmax(ours), argmax(want)))
        ok = ok and good
    return ok, ", ".join(notes), all_exact


def info_value(text, key):
    m = re.search(r"^%s: (\d+)" % key, text, re.M)
    return int(m.group(1)) if m else -1


def bench(run_exe, module):
    r = run(run_exe + [module, "--bench", "50"])
    m = re.search(r"median_ms=([0-9.]+)", r.stdout)
    return float(m.group(1)) if m else float("nan")


def option(name, default=None):
    """The value after --name in the options, or default."""
    args = sys.argv[4:]
    if name not in args:
        return default
    k = args.index(name)
    if k + 1 >= len(args):
        raise SystemExit("%s needs a value" % name)
    return args[k + 1]


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    compile_exe, run_exe, shared = sys.argv[1:4]
    report = "--report" in sys.argv[4:]
    target = option("--target")
    # tinyml-run as a command: the optional runner (an emulator) first.
    run_exe = shlex.split(option("--runner", "")) + [option("--run-exe", run_exe)]
    models = option("--models")
    models = set(models.split(",")) if models else None
    cpu = option("--cpu")
    target_args = (["--target", target] if target else []) + (["--cpu", cpu] if cpu else [])
    manifest = os.path.join(shared, "reference", "manifest.json")
    if "--manifest" in sys.argv[4:]:
        manifest = sys.argv[sys.argv.index("--manifest") + 1]
    if "--ops" in sys.argv[4:]:
        k = sys.argv.index("--ops")
        flatc, outdir = sys.argv[k + 1], sys.argv[k + 2]
        schema = os.path.join(shared, "schema", "tflite", "schema_flatc2.fbs")
        if os.path.exists(schema):
            gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tflite_ops", "gen_ops.py")
            subprocess.run([sys.executable, gen, flatc, schema, outdir], check=True)
        manifest = os.path.join(outdir, "manifest.json")
    if not os.path.exists(manifest):
        msg = "SKIP: %s is missing (../shared not provided)" % manifest
        print(msg)
        return 1 if os.environ.get("CI") == "true" else 77
    fmt = sys.argv[sys.argv.index("--format") + 1] if "--format" in sys.argv[4:] else "tflite"
    entries = [e for e in json.load(open(manifest)) if e["format"] == fmt]
    if models is not None:
        entries = [e for e in entries
                   if os.path.splitext(os.path.basename(e["model"]))[0] in models]
        missing = models - {os.path.splitext(os.path.basename(e["model"]))[0] for e in entries}
        if missing:
            print("FAIL: --models names not in the manifest: %s" % ", ".join(sorted(missing)))
            return 1
    passed = failed = exact_cases = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for entry in entries:
            model = os.path.join(shared, entry["model"])
            name = os.path.splitext(os.path.basename(model))[0]
            module = os.path.join(tmp, name + ".tmod")
            t0 = time.monotonic()
            r = run([compile_exe, model, "-o", module] + target_args)
            compile_s = time.monotonic() - t0
            if r.returncode != 0:
                for case in entry["cases"]:
                    print("FAIL %s/%s: compile failed: %s" % (name, case["label"], r.stdout.strip()))
                    failed += 1
                continue
            for case in entry["cases"]:
                work = os.path.join(tmp, name + "-" + case["label"])
                os.makedirs(work, exist_ok=True)
                ok, note, exact = check_case(run_exe, module, shared, case, work)
                print("%s %s/%s: %s" % ("PASS" if ok else "FAIL", name, case["label"], note))
                passed += ok
                failed += not ok
                exact_cases += ok and exact
            if report:
                info = run(run_exe + ["--info", module]).stdout
                rows.append((name, compile_s, os.path.getsize(module), os.path.getsize(model),
                             info_value(info, "arena_size"), bench(run_exe, module)))
    errors = os.path.join(os.path.dirname(manifest), "errors.json")
    if os.path.exists(errors) and models is None:
        for e in json.load(open(errors)):
            r = run([compile_exe, e["model"], "-o", os.devnull] + target_args)
            ok = r.returncode != 0 and e["error"] in r.stdout
            print("%s refuse %s: %s" % ("PASS" if ok else "FAIL", os.path.basename(e["model"]),
                                        r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "compiled"))
            passed += ok
            failed += not ok
    print("%s models%s: %d cases passed, %d failed (%d bit-exact), %d models"
          % (fmt, " (target %s)" % target if target else "", passed, failed, exact_cases,
             len(entries)))
    if report:
        print("%-24s %9s %10s %10s %9s %9s" % ("model", "compile_s", "module_B", "tflite_B",
                                               "arena_B", "bench_ms"))
        for row in rows:
            print("%-24s %9.2f %10d %10d %9d %9.3f" % row)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
