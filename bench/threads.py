#!/usr/bin/env python3
"""Threads: libtinyml on 1 thread against N threads, same module, same machine.

  python3 bench/threads.py [--build DIR] [--threads 1,2] [--rounds R] [--runs N]
                           [--models matmul512,mobilenetv2,squeezenet,resnet50]
                           [--compile-args "--features +avx,+fma"] [--no-peer]
                           [--no-per-cpu] [--csv FILE]

Each model (the architecture-faithful f32 ONNX MobileNetV2, SqueezeNet-1.1
and ResNet-50 that ../shared/tools/models/gen_models.py writes, cached in
~/.cache/tinyml-bench/zoo like bench/run.py's; and matmul512, the e2e test's
512x512 f32 matmul, a probe, compiled for the default CPU (AVX2 tiles)
whatever --compile-args say: its kernel is bound by FMA throughput, so its
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
The ONNX models also run on onnxruntime-node (../shared/tools/reference/
ort_run.js --bench N --threads T, intra-op threads) in the same rounds,
right after ours at the same T: its speedup and paired are the peer's own
scaling on the same machine at the same moments, and ort/ours is its
median over ours at each T (> 1: ours is faster).  --no-peer leaves it out.
Each round also runs our 1-thread case pinned to each CPU this process may
use, one after the other (--no-per-cpu leaves it out).  This VM's vCPUs
are not always alike: for minutes at a time one of them ran MobileNetV2
20% slower than the other (docs/PERF.md, "Threads").  An unpinned
1-thread run lands on either, while every split phase waits for the
slower one.  Printed per model: each CPU's median, and for T = the number
of CPUs, bound = the median over rounds of 1 / (sum of 1 / each CPU's
time), what T threads would take if they shared the work perfectly at
each CPU's own speed, and efficiency = bound / our T-thread time, round
by round.  The speedup and paired columns stay as measured; this says how
much of a shortfall the machine's CPUs explain.
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

import run as bench_run  # bench/run.py: the zoo, the peers' setup and runner

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ZOO = bench_run.ZOO
PROBES = {"matmul512": os.path.join(ROOT, "tests", "e2e", "models", "matmul512.mlir")}


def sh(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"threads.py: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}")
    return p.stdout


def model_path(name):
    if name in PROBES:
        return PROBES[name]
    return dict(bench_run.zoo_models())[name]  # generated (and numpy/onnx installed) once


def medians_of(samples):
    """Per T: the median, the best, speedup and paired (see above)."""
    base = statistics.median(samples[1])
    for t, ms in samples.items():
        m = statistics.median(ms)
        yield t, m, min(ms), base / m, statistics.median(a / b for a, b in zip(samples[1], ms))


def run_ours(tools, module, runs, t, cpu=None):
    """tinyml-run's median_ms on t threads; with cpu, pinned to that CPU."""
    pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
    out = sh([os.path.join(tools, "tinyml-run"), module, "--bench", str(runs), "--threads", str(t)],
             preexec_fn=pin)
    return float(re.search(r"median_ms=([\d.]+)", out).group(1))


def measure(tools, module, path, threads, a, peer, cpus):
    """R rounds of every T, ours then (with peer) onnxruntime's at that T,
    then ours on 1 thread pinned to each of `cpus` in turn."""
    ours = {t: [] for t in threads}
    theirs = {t: [] for t in threads} if peer else None
    pinned = {cpu: [] for cpu in cpus}
    for r in range(a.rounds):
        for t in threads if r % 2 == 0 else threads[::-1]:
            ours[t].append(run_ours(tools, module, a.runs, t))
            if peer:
                theirs[t].append(bench_run.peer("ort_run.js", path, a.runs, ("--threads", str(t))))
        for cpu in cpus if r % 2 == 0 else cpus[::-1]:
            pinned[cpu].append(run_ours(tools, module, a.runs, 1, cpu))
    return ours, theirs, pinned


def per_cpu_line(name, ours, pinned):
    """Each CPU's 1-thread median; for T = len(pinned), the perfect-sharing
    bound and our efficiency against it, round by round."""
    line = f"{name:12s} libtinyml   1 thread pinned: " + " ".join(
        f"cpu{cpu}={statistics.median(ms):.3f}" for cpu, ms in pinned.items())
    t = len(pinned)
    if t not in ours:
        return line, None, None
    bounds = [1 / sum(1 / ms[r] for ms in pinned.values()) for r in range(len(ours[t]))]
    bound = statistics.median(bounds)
    eff = statistics.median(b / m for b, m in zip(bounds, ours[t]))
    return line + f" ms; threads={t} bound={bound:.3f} ms efficiency={eff:.2f}", bound, eff


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--models", default=",".join([*PROBES, *ZOO]))
    ap.add_argument("--compile-args", default="", help="extra tinyml-compile arguments")
    ap.add_argument("--no-peer", action="store_true", help="leave out onnxruntime")
    ap.add_argument("--no-per-cpu", action="store_true",
                    help="leave out the 1-thread runs pinned to each CPU")
    ap.add_argument("--csv", help="also write the rows here")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    if threads[0] != 1:
        threads.insert(0, 1)
    tools = os.path.join(a.build, "tools")
    peer = not a.no_peer and any(n in ZOO for n in a.models.split(","))
    cpus = [] if a.no_per_cpu else sorted(os.sched_getaffinity(0))
    if peer:
        bench_run.ensure_tools(a.build)  # the peers' npm install, once
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.models.split(","):
            path = model_path(name)
            module = os.path.join(tmp, name + ".tmlm")
            # The probe keeps the default CPU's 6x16 tiles (FMA-bound)
            # whatever --compile-args say: AVX-512's 8x32 ones run it twice
            # as fast and wait on memory more (1.55-1.79x on 2 threads
            # here, against 1.85-1.91x), which blurs what it probes.
            extra = [] if name in PROBES else shlex.split(a.compile_args)
            sh([os.path.join(tools, "tinyml-compile"), path, "-o", module, *extra])
            ours, theirs, pinned = measure(tools, module, path, threads, a,
                                           peer and name in ZOO, cpus)
            ort = dict((t, m) for t, m, *_ in medians_of(theirs)) if theirs else {}
            for who, samples in (("libtinyml", ours), ("onnxruntime", theirs)):
                for t, m, best, speedup, paired in medians_of(samples) if samples else ():
                    vs = f"{ort[t] / m:.2f}" if who == "libtinyml" and ort else ""
                    rows.append((name, who, t, m, best, speedup, paired, vs, ""))
                    print(f"{name:12s} {who:11s} threads={t:<2d} median_ms={m:9.3f} "
                          f"best_ms={best:9.3f} speedup={speedup:5.2f} paired={paired:5.2f}"
                          + (f" ort/ours={vs}" if vs else ""), flush=True)
            if pinned:
                line, bound, eff = per_cpu_line(name, ours, pinned)
                print(line, flush=True)
                if bound is not None:
                    rows.append((name, "libtinyml-bound", len(pinned), bound, "", "", "", "",
                                 f"{eff:.2f}"))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "runtime", "threads", "median_ms", "best_ms", "speedup", "paired",
                        "ort_over_ours", "efficiency"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
