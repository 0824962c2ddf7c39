#!/usr/bin/env python3
"""The f32 matmul whose B is not a constant (tinyml_uk_matmul_f32,
backends/x86/matmul_f32.c), on small TOSA functions of two inputs.

Each case is compiled three times, as test_ukernels_f32.py's are: with
the AVX-512 kernels (the object must define tinyml_uk_matmul_f32 and
ukf_tile_avx512), the AVX2 ones (tinyml_uk_matmul_f32 and ukf_tile_avx2)
and --features +fma (the Linalg path: no microkernel).  Every module's
output must be within a float tolerance of a float64 reference computed
here, and the kernel modules must give the Linalg path's bits exactly:
each output is 0, then the FMAs in k order, with exact partial sums
between the kernel's tap chunks, which is the order the Linalg path sums
in.  The kernel modules also run on 3 threads (workgroups take bands of
32 columns of B, each packing its own) and must give the same bits; with
more than 32 columns the kernel's step must be split across workgroups
(uk_common.py's check_split, from tinyml-run --info), or the 3-thread
run would compare one band with itself.  The shapes cover K over one
tap chunk of 512 (two and three chunks), N that
is no multiple of 32 or 16 (a last panel 8 wide, a last group of 11
columns), few taps, and an add and a clamp after the matmul, which the
kernel applies.  A batch-2 matmul must keep the Linalg path (the kernel
takes batch 1), and so must one of fewer than 384 rows (MIN_ROWS).
The AVX-512 modules run only where the CPU has AVX-512.

usage: test_ukernels_f32_matmul.py TINYML_COMPILE TINYML_RUN NM WORK_DIR
"""
import os
import random
import shutil
import struct
import sys

from uk_common import (AVX512, ROOT, c_int, check_split, const, host_avx512, kernel_symbols,
                       run, run_cases)

# Fewer rows of A keep the Linalg path.
MIN_ROWS = c_int("MM_MIN_ROWS", os.path.join(ROOT, "lib", "compiler", "tosa", "uk_match_f32.c"))
BUILDS = [("avx512", AVX512, "avx512"), ("avx2", "+avx2,+fma", "avx2"), ("linalg", "+fma", None)]
# Columns of B per band of a workgroup.
GROUP = c_int("TINYML_UK_F32_GROUP")


def fvals(rng, n):
    return [round(rng.uniform(-1.0, 1.0), 3) for _ in range(n)]


def case(rng, name, batch, m, k, n, bias_relu=False):
    """(name, batch, m, k, n, module text, bias or None)."""
    a, b, y = f"{batch}x{m}x{k}", f"{batch}x{k}x{n}", f"{batch}x{m}x{n}"
    body = '    %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>\n'
    body += (f'    %acc = "tosa.matmul"(%a, %b, %z, %z) : (tensor<{a}xf32>, tensor<{b}xf32>, '
             f'tensor<1xf32>, tensor<1xf32>) -> tensor<{y}xf32>\n')
    res, bias = "acc", None
    if bias_relu:
        bias = fvals(rng, n)
        body += const("c", bias, f"1x1x{n}", "f32")
        body += (f'    %r = "tosa.add"(%acc, %c) : (tensor<{y}xf32>, tensor<1x1x{n}xf32>) '
                 f'-> tensor<{y}xf32>\n')
        body += (f'    %res = "tosa.clamp"(%r) <{{max_val = 3.4028235e+38 : f32, '
                 f'min_val = 0.0 : f32}}> : (tensor<{y}xf32>) -> tensor<{y}xf32>\n')
        res = "res"
    text = (f"func.func @main(%a: tensor<{a}xf32>, %b: tensor<{b}xf32>) -> tensor<{y}xf32> {{\n"
            f"{body}    return %{res} : tensor<{y}xf32>\n}}\n")
    return name, batch, m, k, n, text, bias


def cases(rng):
    return [
        # three tap chunks (512 + 512 + 76); groups of 32, the last of 11
        # columns in one 16-wide panel; 384 rows (MIN_ROWS), tiles of 12
        case(rng, "mm_k1100_n43", 1, 384, 1100, 43),
        # two chunks (512 + 8); 40 columns: a group of 16 + 16, then one
        # of an 8-wide panel; the add and the clamp in the kernel
        case(rng, "mm_k520_n40_bias_relu", 1, 400, 520, 40, bias_relu=True),
        # a single tap, fewer columns than a panel; 390 rows: tiles of
        # fewer than 12 at the end
        case(rng, "mm_m385_k1_n3", 1, 385, 1, 3),
        case(rng, "mm_m390_k7_n24", 1, 390, 7, 24),
    ]


def reference(a, b, m, k, n, bias):
    """Each output in float64, and a bound of its float32 rounding error:
    1e-5 times the sum of its terms' magnitudes (at least 1e-5)."""
    out = []
    for i in range(m):
        row = a[i * k:(i + 1) * k]
        for j in range(n):
            terms = [row[t] * b[t * n + j] for t in range(k)]
            v = sum(terms)
            if bias is not None:
                v = max(v + bias[j], 0.0)
            out.append((v, 1e-5 * max(1.0, sum(abs(x) for x in terms))))
    return out


def floats(path):
    raw = open(path, "rb").read()
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def write_floats(path, values):
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{len(values)}f", *values))


def check_symbols(syms, isa, batch, m):
    if isa is None or batch != 1 or m < MIN_ROWS:
        if "tinyml_uk_" in syms:
            why = "+fma" if isa is None else "batch 2" if batch != 1 else f"{m} rows"
            raise RuntimeError(f"{why} still uses a microkernel:\n{syms}")
        return
    other = "avx2" if isa == "avx512" else "avx512"
    if ("tinyml_uk_matmul_f32" not in syms or f"ukf_tile_{isa}" not in syms or
            f"ukf_tile_{other}" in syms):
        raise RuntimeError(f"want tinyml_uk_matmul_f32 and ukf_tile_{isa} in:\n{syms}")


def check(exes, work, c, rng, have_avx512):
    compile_exe, run_exe, nm = exes
    name, batch, m, k, n, text, bias = c
    src = os.path.join(work, name + ".mlir")
    with open(src, "w") as f:
        f.write(text)
    a, b = fvals(rng, batch * m * k), fvals(rng, batch * k * n)
    ins = [os.path.join(work, "a.bin"), os.path.join(work, "b.bin")]
    write_floats(ins[0], a)
    write_floats(ins[1], b)
    outs = {}
    for tag, features, isa in BUILDS:
        extra = ["--features", features]
        check_symbols(kernel_symbols(compile_exe, nm, src, work, extra), isa, batch, m)
        if tag == "avx512" and not have_avx512:
            continue
        mod = os.path.join(work, f"{name}.{tag}.tmlm")
        run([compile_exe, src, "-o", mod, *extra])
        if isa and batch == 1 and m >= MIN_ROWS and n > GROUP:
            check_split(run_exe, mod)
        for threads in ((1, 3) if isa else (1,)):
            od = f"{mod}.t{threads}.out"
            run([run_exe, mod, "--input", ins[0], "--input", ins[1], "--output-dir", od,
                 "--threads", str(threads)])
            got = floats(os.path.join(od, "output_0.bin"))
            if threads == 1:
                outs[tag] = got
            elif got != outs[tag]:
                raise RuntimeError(f"{tag}: 3 threads give other bits than 1")
    want = []
    for i in range(batch):
        want += reference(a[i * m * k:], b[i * k * n:], m, k, n, bias)
    for tag, got in outs.items():
        bad = sum(abs(x - y) > tol for x, (y, tol) in zip(got, want))
        if bad or len(got) != len(want):
            raise RuntimeError(f"{tag}: {bad} of {len(want)} values off the reference")
        if got != outs["linalg"]:
            diff = sum(x != y for x, y in zip(got, outs["linalg"]))
            raise RuntimeError(f"{tag}: {diff} of {len(want)} values differ from Linalg's bits")


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    have_avx512, _ = host_avx512()
    rng = random.Random(27)
    all_cases = cases(rng) + [case(rng, "mm_batch2_linalg", 2, 6, 20, 40),
                              case(rng, f"mm_m{MIN_ROWS - 1}_linalg", 1, MIN_ROWS - 1, 20, 40)]
    failures = run_cases(check, all_cases, (compile_exe, run_exe, nm), work, rng, have_avx512)
    print(f"ukernels (f32 matmul, B at run time): {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
