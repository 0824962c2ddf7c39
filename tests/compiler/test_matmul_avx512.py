#!/usr/bin/env python3
"""x86-64's AVX-512 transform script (8x32 register tiles over strips of
32 columns, B packed per 256x32 block into a stack panel) against the AVX2
one (6x16, n 256) on matmuls whose operands both come at
run time, the Linalg path's batch_matmul.

Each case is compiled for x86-64-v3 (AVX2) and x86-64-v4 (AVX-512) and run
on the same inputs:
- f32, tests/e2e/models/matmul_tiles.mlir (2 x 37x300 by 300x290: every
  remainder of both scripts' cache and register tiles): the two modules
  must agree bit for bit, since both sum each output over k in order;
- int8 with zero points (i8 x i8 -> i32, the same shapes): both must equal
  the exact integer sums, computed here, element by element.
Without AVX-512 (F, BW, VL, DQ) on this CPU it says so and skips (77).

usage: test_matmul_avx512.py TINYML_COMPILE TINYML_RUN E2E_MODELS WORK_DIR
"""
import os
import random
import shutil
import struct
import subprocess
import sys

B, M, K, N = 2, 37, 300, 290
A_ZP, B_ZP = 3, -5
CPUS = ("x86-64-v3", "x86-64-v4")

INT8_MODEL = f"""module {{
  func.func @main(%a: tensor<{B}x{M}x{K}xi8>, %b: tensor<{B}x{K}x{N}xi8>) -> (tensor<{B}x{M}x{N}xi32>) {{
    %za = "tosa.const"() <{{values = dense<{A_ZP}> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %zb = "tosa.const"() <{{values = dense<{B_ZP}> : tensor<1xi8>}}> : () -> tensor<1xi8>
    %c = tosa.matmul %a, %b, %za, %zb : (tensor<{B}x{M}x{K}xi8>, tensor<{B}x{K}x{N}xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<{B}x{M}x{N}xi32>
    return %c : tensor<{B}x{M}x{N}xi32>
  }}
}}
"""


def has_avx512():
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq"))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout}")


def outputs(exes, model, inputs, work, tag):
    """Output 0's bytes of `model` compiled for each of CPUS."""
    got = {}
    for cpu in CPUS:
        module = os.path.join(work, f"{tag}_{cpu}.tmlm")
        out_dir = os.path.join(work, f"{tag}_{cpu}_out")
        run([exes[0], model, "-o", module, "--cpu", cpu])
        run([exes[1], module, *sum((["--input", i] for i in inputs), []), "--output-dir", out_dir])
        got[cpu] = open(os.path.join(out_dir, "output_0.bin"), "rb").read()
    return got


def write(path, fmt, values):
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{len(values)}{fmt}", *values))
    return path


def check_f32(exes, models, work, rng):
    a = write(os.path.join(work, "fa.bin"), "f", [rng.uniform(-1, 1) for _ in range(B * M * K)])
    b = write(os.path.join(work, "fb.bin"), "f", [rng.uniform(-1, 1) for _ in range(B * K * N)])
    got = outputs(exes, os.path.join(models, "matmul_tiles.mlir"), [a, b], work, "f32")
    if got[CPUS[0]] != got[CPUS[1]]:
        diff = sum(x != y for x, y in zip(got[CPUS[0]][::4], got[CPUS[1]][::4]))
        raise SystemExit(f"FAIL f32: {CPUS[1]} differs from {CPUS[0]} in about {diff} outputs")
    print(f"PASS f32 {B}x{M}x{K} by {K}x{N}: {CPUS[1]} bit-identical to {CPUS[0]}")


def check_int8(exes, work, rng):
    av = [rng.randint(-128, 127) for _ in range(B * M * K)]
    bv = [rng.randint(-128, 127) for _ in range(B * K * N)]
    a = write(os.path.join(work, "ia.bin"), "b", av)
    b = write(os.path.join(work, "ib.bin"), "b", bv)
    model = os.path.join(work, "matmul_i8.mlir")
    with open(model, "w") as f:
        f.write(INT8_MODEL)
    got = outputs(exes, model, [a, b], work, "i8")
    want = []
    for n in range(B):
        cols = [[bv[(n * K + k) * N + j] - B_ZP for k in range(K)] for j in range(N)]
        for i in range(M):
            row = [x - A_ZP for x in av[(n * M + i) * K:(n * M + i + 1) * K]]
            want += [sum(x * y for x, y in zip(row, col)) for col in cols]
    for cpu in CPUS:
        vals = struct.unpack(f"<{B * M * N}i", got[cpu])
        bad = [e for e, (x, y) in enumerate(zip(vals, want)) if x != y]
        if bad:
            e = bad[0]
            raise SystemExit(f"FAIL int8 {cpu}: {len(bad)} outputs wrong, first {e}: "
                             f"got {vals[e]}, want {want[e]}")
    print(f"PASS int8 {B}x{M}x{K} by {K}x{N}, zero points {A_ZP} and {B_ZP}: "
          f"{' and '.join(CPUS)} exact")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    exes, models, work = sys.argv[1:3], sys.argv[3], sys.argv[4]
    if not has_avx512():
        print("SKIP: this CPU has no AVX-512 (F, BW, VL, DQ), so x86-64-v4 modules cannot run")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = random.Random(7)
    check_f32(exes, models, work, rng)
    check_int8(exes, work, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
