#!/usr/bin/env python3
"""Side-by-side benchmarks: libtinyml against the runtime a user would
otherwise pick, measured in the same run on the same machine.

  python3 bench/run.py [--build DIR] [--runs N] [--models a,b] [--csv FILE]
                       [--cpu NAME] [--no-onnx-zoo] [--mcu] [--rvv [--rvv-build DIR]]
                       [--no-x86]

  python3 bench/run.py --no-x86 --rvv     # only the RVV table (docs/PERF.md)

Rows (model, target, ours, peer, ratio = peer / ours, > 1 means faster):
- every .tflite model in ../shared/reference/manifest.json on x86-64:
  `tinyml-run --bench N` median against TFLite's wasm build
  (../shared/tools/reference/tflite_run.js --bench N; wasm, XNNPACK);
- mnist.onnx and the architecture-faithful MobileNetV2, SqueezeNet-1.1 and
  ResNet-50 that ../shared/tools/models/gen_models.py writes (cached in
  ~/.cache/tinyml-bench), against onnxruntime-node with one thread
  (ort_run.js --bench N --threads 1);
- --runs N is the least number of invokes per round: a model that runs
  N times in under 50 ms runs more (both sides as many), as the medians of
  few runs of a tens-of-microseconds model are the machine's jitter;
- every x86-64 row is compiled with default options, as a user compiles:
  the multi-versioned module, whose loader picks the best build this CPU
  runs (--cpu NAME pins one; the target column says it), and run on input
  files (tinyml-run --input), 1 thread against the peer's 1 thread; the
  note gives our 2-thread time and speed-up;
- with --mcu, the MLPerf Tiny int8 models on Cortex-M4 under QEMU
  (tinyml-mcu-run): instructions per inference, no peer;
- with --rvv, every model of the manifest under qemu-riscv64 (bench/rvv_insns.py):
  instructions per inference at VLEN 128 (--target rvv) against the same
  model compiled for scalar rv64gc (--features +m,+a,+f,+d,+c), both checked
  against the reference outputs; ratio = scalar / vector.  The riscv64
  runtime is cross-built in --rvv-build (default build-rvv) if missing.
--no-x86 leaves out the x86-64 rows (and so needs no node peers).

It builds what it needs (scripts/build.sh when DIR lacks the tools, the
peers' npm install via ../shared/tools/reference/setup.sh) and writes every
row to the CSV (default bench/results.csv; the last column, note, says
what was checked or why a row failed).  Timings on shared 2-core
machines are noisy: compare ratios, not milliseconds.
"""
import argparse
import array
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
REF_TOOLS = os.path.join(SHARED, "tools", "reference")
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tinyml-bench")
# name -> the folder gen_models.py writes (ONNX backend-test layout)
ZOO = {"mobilenetv2": "test_mobilenetv2_1_0", "squeezenet": "test_squeezenet1_1",
       "resnet50": "test_resnet50_v1_5"}


def sh(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}")
    return p.stdout


def ensure_tools(build, peers=True):
    if not os.path.exists(os.path.join(build, "tools", "tinyml-compile")):
        sh(["bash", os.path.join(ROOT, "scripts", "build.sh")],
           env=dict(os.environ, BUILD_DIR=build))
    if not peers:
        return
    env = dict(os.environ)
    if not os.path.isdir(os.path.join(env.get("TINYML_REF_DIR", os.path.join(
            os.path.expanduser("~"), ".cache", "tinyml-reference")), "node_modules")):
        sh(["sh", os.path.join(REF_TOOLS, "setup.sh")])


def compile_model(build, model, tmp, extra=()):
    module = os.path.join(tmp, "m.tmlm")
    sh([os.path.join(build, "tools", "tinyml-compile"), model, "-o", module, *extra])
    return module


INFO_INPUT = re.compile(r'^  input (\d+) "[^"]*": (\w+) \[[^]]*\], (\d+) bytes', re.M)


def input_files(build, module, tmp):
    """One file per input, as a user feeds them (tinyml-run --input): floats
    uniform in [-1, 1), other types random bytes.  The module reads them
    from buffers the tool allocates, so where they land is not ours to
    pick (issue 27: speed must not depend on it)."""
    info = sh([os.path.join(build, "tools", "tinyml-run"), "--info", module])
    rng = random.Random(7)
    args = []
    for index, dtype, size in INFO_INPUT.findall(info):
        path = os.path.join(tmp, f"in{index}.bin")
        if dtype == "float32":
            data = array.array("f", (rng.uniform(-1.0, 1.0) for _ in range(int(size) // 4)))
            data = data.tobytes()
        else:
            data = bytes(rng.getrandbits(8) for _ in range(int(size)))
        with open(path, "wb") as f:
            f.write(data)
        args += ["--input", path]
    return args


def ours(build, module, runs, threads=1, inputs=()):
    out = sh([os.path.join(build, "tools", "tinyml-run"), module, "--bench", str(runs),
              "--threads", str(threads), *inputs])
    return float(re.search(r"median_ms=([\d.]+)", out).group(1))


# A round lasts at least this long: the median of 10 runs of a 30 us model
# was the VM's jitter (kws_ref_model's 2-thread "0.97x" runs the same
# inline code as 1 thread).
MIN_ROUND_MS = 50.0


def enough_runs(ms, runs):
    """`runs`, or more where that many invokes of `ms` take under
    MIN_ROUND_MS; both sides then run as many."""
    return max(runs, int(MIN_ROUND_MS / max(ms, 1e-3)) + 1)


def side_by_side(build, path, script, runs, rounds, tmp, extra, ours_extra=()):
    """Our median and the peer's mean, measured in alternating rounds; the
    best round of each counts, so a burst of load on a shared machine
    penalises neither side more than the other."""
    module = compile_model(build, path, tmp, ours_extra)
    inputs = input_files(build, module, tmp)
    runs = enough_runs(ours(build, module, 5, 1, inputs), runs)
    mine, theirs, two = [], [], []
    for _ in range(rounds):
        mine.append(ours(build, module, runs, 1, inputs))
        theirs.append(peer(script, path, runs, extra))
        two.append(ours(build, module, runs, 2, inputs))
    return min(mine), min(theirs), min(two)


MATMUL = """func.func @main(%a: tensor<1x512x512xf32>, %b: tensor<1x512x512xf32>) -> tensor<1x512x512xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.matmul %a, %b, %z, %z : (tensor<1x512x512xf32>, tensor<1x512x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x512xf32>
  return %c : tensor<1x512x512xf32>
}
"""


def matmul_row(build, runs, rounds, tmp, cpu):
    """A 512^3 f32 matmul in GFLOP/s, best of `rounds` medians, one thread."""
    src = os.path.join(tmp, "matmul512.mlir")
    with open(src, "w") as f:
        f.write(MATMUL)
    cpu_args = ("--cpu", cpu) if cpu else ()
    module = compile_model(build, src, tmp, cpu_args)
    inputs = input_files(build, module, tmp)
    runs = enough_runs(ours(build, module, 5, 1, inputs), runs)
    ms, ms2 = [], []
    for _ in range(rounds):
        ms.append(ours(build, module, runs, 1, inputs))
        ms2.append(ours(build, module, runs, 2, inputs))
    gflops = 2 * 512 ** 3 / (min(ms) * 1e-3) / 1e9
    return ("matmul_512_f32", " ".join(("x86-64",) + cpu_args), f"{gflops:.1f} GFLOP/s", "150 GFLOP/s",
            f"{gflops / 150:.2f}", "issue 27's bar, inputs from files",
            f"{min(ms):.3f} ms; 2 threads {min(ms2):.3f} ms ({min(ms) / min(ms2):.2f}x)")


def peer(script, model, runs, extra=()):
    # --no-liftoff: V8 first runs wasm from its baseline compiler and swaps
    # in optimised code when a background compile ends, so a short --bench
    # timed TFLite's wasm anywhere from its optimised speed to 5-9x slower
    # depending on the load (resnet8_int8: 0.47 or 4.5 ms).  The peer at its
    # steady state is the honest one.  (onnxruntime-node is native code.)
    out = sh(["node", "--no-liftoff", os.path.join(REF_TOOLS, script), model, "--bench", str(runs),
              "--out", os.path.join(tempfile.gettempdir(), "tinyml-bench-peer"), *extra])
    for line in out.splitlines():
        if line.startswith("{") and '"bench"' in line:
            d = json.loads(line)
            return float(d.get("median_ms", d.get("ms_per_inference")))
    raise RuntimeError(f"{script} printed no bench line")


def zoo_models():
    paths = [(n, os.path.join(CACHE, "zoo", d, "model.onnx")) for n, d in ZOO.items()]
    if not all(os.path.exists(p) for _, p in paths):
        probe = subprocess.run(["/usr/bin/python3", "-c", "import numpy, onnx"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if probe.returncode != 0:  # a fresh machine: Debian's numpy and onnx
            sh(["bash", os.path.join(ROOT, "scripts", "install-deps.sh"), "--bench"])
        sh(["/usr/bin/python3", os.path.join(SHARED, "tools", "models", "gen_models.py"),
            os.path.join(CACHE, "zoo")])
    return paths


# TFLite Micro + CMSIS-NN on the same QEMU: instructions per Invoke() and
# arena_used_bytes (bench/tflm_cmsis.json; CI holds ours to them too).
TFLM_CMSIS = {name: (m["instructions"], m["arena"]) for name, m in json.load(
    open(os.path.join(os.path.dirname(__file__), "tflm_cmsis.json")))["models"].items()}


def mcu_run(build, model, inputs, extra=()):
    with tempfile.TemporaryDirectory() as out:
        text = sh([sys.executable, os.path.join(build, "tools", "tinyml-mcu-run"), "--board",
                   "mps2-an386", model, *inputs, "--output-dir", out,
                   *(("--", *extra) if extra else ())])
    return (int(re.search(r"instructions=(\d+)", text).group(1)),
            int(re.search(r"arena=(\d+)", text).group(1)))


def mcu_rows(build, models):
    """Ours on the Cortex-M4 with the microkernels, and without them
    (--features +thumb2 leaves out +dsp, so the Linalg path runs), against
    TFLite Micro + CMSIS-NN's figures."""
    rows = []
    manifest = json.load(open(os.path.join(SHARED, "reference", "manifest.json")))
    for e in manifest:
        name = os.path.splitext(os.path.basename(e["model"]))[0]
        if name not in models:
            continue
        inputs = sum((["--input", os.path.join(SHARED, i["file"])]
                      for i in e["cases"][0]["inputs"]), [])
        model = os.path.join(SHARED, e["model"])
        n, arena = mcu_run(build, model, inputs)
        before, arena_before = mcu_run(build, model, inputs, ("--features", "+thumb2"))
        peer_n, peer_arena = TFLM_CMSIS.get(name, (0, 0))
        note = (f"without ukernels {before} instr, arena {arena_before}; arena {arena}"
                + (f" (TFLM {peer_arena})" if peer_arena else ""))
        rows.append((name, "cortex-m4 (qemu)", f"{n} instr",
                     f"{peer_n:.0f} instr" if peer_n else "",
                     f"{peer_n / n:.2f}" if peer_n else "", "TFLM + CMSIS-NN (issue 7)", note))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; best counts")
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--csv", default=os.path.join(ROOT, "bench", "results.csv"))
    ap.add_argument("--cpu", default="",
                    help="tinyml-compile --cpu for the x86-64 rows (default: none, the "
                         "multi-versioned module a user gets)")
    ap.add_argument("--no-onnx-zoo", action="store_true")
    ap.add_argument("--mcu", action="store_true")
    ap.add_argument("--rvv", action="store_true")
    ap.add_argument("--rvv-build", default=os.path.join(ROOT, "build-rvv"),
                    help="riscv64 runtime-only build dir (set up if missing)")
    ap.add_argument("--no-x86", action="store_true")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    ensure_tools(a.build, peers=not a.no_x86)
    wanted = set(filter(None, a.models.split(",")))
    manifest = json.load(open(os.path.join(SHARED, "reference", "manifest.json")))
    jobs = []
    cpu_args = ("--cpu", a.cpu) if a.cpu else ()
    for e in manifest:
        name = os.path.splitext(os.path.basename(e["model"]))[0]
        script = "tflite_run.js" if e["format"] == "tflite" else "ort_run.js"
        jobs.append((name, os.path.join(SHARED, e["model"]), script, cpu_args))
    if a.no_x86:
        jobs = []
    elif not a.no_onnx_zoo:
        jobs += [(n, p, "ort_run.js", cpu_args) for n, p in zoo_models()]
    rows = []
    if jobs:
        print(f"{'model':28} {'target':18} {'ours':>12} {'peer':>12} {'ratio':>7}  peer")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, script, ours_extra in jobs:
            if wanted and name not in wanted:
                continue
            extra = ("--threads", "1") if script == "ort_run.js" else ()
            label = "TFLite wasm (XNNPACK)" if script == "tflite_run.js" else "onnxruntime 1 thread"
            target = " ".join(("x86-64",) + ours_extra)
            try:
                mine, theirs, two = side_by_side(a.build, path, script, a.runs, a.rounds, tmp,
                                                 extra, ours_extra)
                row = (name, target, f"{mine:.3f} ms", f"{theirs:.3f} ms", f"{theirs / mine:.2f}",
                       f"{label}; 2 threads {two:.3f} ms ({mine / two:.2f}x)")
            except RuntimeError as err:
                row = (name, target, "error", "", "", str(err).splitlines()[0])
            rows.append(row[:5] + (label, row[5] if len(row) == 6 else ""))
            print(f"{row[0]:28} {row[1]:18} {row[2]:>12} {row[3]:>12} {row[4]:>7}  "
                  f"{row[5] if len(row) == 6 else label}", flush=True)
    if not a.no_x86 and (not wanted or "matmul_512_f32" in wanted):
        with tempfile.TemporaryDirectory() as tmp:
            row = matmul_row(a.build, a.runs, a.rounds, tmp, a.cpu)
        rows.append(row)
        print(f"{row[0]:28} {row[1]:18} {row[2]:>12} {row[3]:>12} {row[4]:>7}  {row[5]}")
    if a.mcu:
        for row in mcu_rows(a.build, wanted or {"kws_ref_model", "vww_96_int8", "resnet8_int8",
                                                 "ad01_int8", "person_detect"}):
            rows.append(row)
            print(f"{row[0]:28} {row[1]:18} {row[2]:>16} {row[3]:>16} {row[4]:>7}  {row[6]}")
    if a.rvv:
        import rvv_insns
        rows += rvv_insns.rvv_rows(a.build, os.path.abspath(a.rvv_build), SHARED, manifest, wanted)
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "target", "ours", "peer", "ratio_peer_over_ours", "peer_name", "note"])
        w.writerows(rows)
    print(f"wrote {a.csv}")


if __name__ == "__main__":
    main()
