#!/usr/bin/env python3
"""Threads: libtinyml on 1 thread against N threads, same module, same machine.

  python3 bench/threads.py [--build DIR] [--threads 1,2] [--rounds R] [--runs N]
                           [--models matmul512,mobilenetv2,squeezenet,resnet50]
                           [--compile-args "--features +avx,+fma"] [--csv FILE]

Each model (the architecture-faithful f32 ONNX MobileNetV2, SqueezeNet-1.1
and ResNet-50 that ../shared/tools/models/gen_models.py writes, cached in
~/.cache/tinyml-bench/zoo like bench/run.py's; and matmul512, the e2e test's
512x512 f32 matmul, a probe: its kernel is bound by FMA throughput, so its
speedup is what the machine's cores give at that moment, e.g. about 1.0
when the two "cores" are hyperthreads of one) is compiled once, then
`tinyml-run MODULE --bench N --threads T` runs for every T in turn, R rounds,
the order of T reversed every other round, so a burst of load on a shared
machine falls on every thread count alike.  Printed per model and T: the
median over the rounds of each run's median_ms, the best round,
speedup = the 1-thread median / this median, and paired = the median over
the rounds of each round's 1-thread time / its T-thread time, the two
measured back to back: this VM's speed drifts by 10-25% from minute to
minute (docs/PERF.md, "Threads"), and a drift that the medians of the two
columns catch at different moments moves `speedup` but not `paired`.  Outputs are bit-identical for
every T (tests/api/test_threads.c checks it); this measures time only.
--compile-args go to tinyml-compile: "--features +avx,+fma" (no +avx2) keeps
x86-64's f32 convs on the Linalg path instead of its microkernels, which run
as one workgroup.
"""
import argparse
import csv
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tinyml-bench")
ZOO = {"mobilenetv2": "test_mobilenetv2_1_0", "squeezenet": "test_squeezenet1_1",
       "resnet50": "test_resnet50_v1_5"}
PROBES = {"matmul512": os.path.join(ROOT, "tests", "e2e", "models", "matmul512.mlir")}


def sh(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"threads.py: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}")
    return p.stdout


def model_path(name):
    if name in PROBES:
        return PROBES[name]
    path = os.path.join(CACHE, "zoo", ZOO[name], "model.onnx")
    if not os.path.exists(path):
        sh(["/usr/bin/python3", os.path.join(SHARED, "tools", "models", "gen_models.py"),
            os.path.join(CACHE, "zoo")])
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--models", default=",".join([*PROBES, *ZOO]))
    ap.add_argument("--compile-args", default="", help="extra tinyml-compile arguments")
    ap.add_argument("--csv", help="also write the rows here")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    if threads[0] != 1:
        threads.insert(0, 1)
    tools = os.path.join(a.build, "tools")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            module = os.path.join(tmp, name + ".tmlm")
            sh([os.path.join(tools, "tinyml-compile"), model_path(name), "-o", module,
                *shlex.split(a.compile_args)])
            medians = {t: [] for t in threads}
            for r in range(a.rounds):
                for t in threads if r % 2 == 0 else threads[::-1]:
                    out = sh([os.path.join(tools, "tinyml-run"), module, "--bench",
                              str(a.runs), "--threads", str(t)])
                    medians[t].append(float(re.search(r"median_ms=([\d.]+)", out).group(1)))
            base = statistics.median(medians[1])
            for t in threads:
                m = statistics.median(medians[t])
                paired = statistics.median(one / many for one, many in zip(medians[1], medians[t]))
                rows.append((name, t, m, min(medians[t]), base / m, paired))
                print(f"{name:12s} threads={t:<2d} median_ms={m:9.3f} best_ms={min(medians[t]):9.3f} "
                      f"speedup={base / m:5.2f} paired={paired:5.2f}", flush=True)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "threads", "median_ms", "best_ms", "speedup", "paired"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
