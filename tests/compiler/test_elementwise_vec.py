#!/usr/bin/env python3
"""Elementwise steps reach a vector loop even when their output is placed
exactly over an input (lib/compiler/linalg/inplace.h): the strategy
vectorizes them itself, since LLVM's loop vectorizer guards its loop with
an overlap check that sends an in-place step to its scalar loop, and its
SLP vectorizer does not touch what may alias.

tests/e2e's mul_in_place models (a conv, an f32 mul placed over the conv's
output, a depthwise) are compiled with `--emit c` for each target and
CPU, and the step functions (`tinyml_entry_*`, not the microkernels) of
the kernels object disassembled: their vector multiplies must do the
work, with at most n % 8 multiplies left scalar (105 = 6 x 16 + 9: a
vector<9> becomes 8 lanes and one on x86-64).  A scalar loop, or one
fully unrolled, has about n of them.  The models' numerics are e2e's.

On x86-64 the step functions' vector stores must also go up in memory:
16 f32 as two ymm stores came out upper half first, and on a caller's
buffer 16 bytes past a cache line every such store split a line behind
a later one (2.5x slower than aligned: docs/PERF.md, "Buffer
placement"); the AVX2 strategy's f32 tiles are one ymm each.

usage: test_elementwise_vec.py TINYML_COMPILE E2E_MODELS WORK_DIR TARGET...
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from uk_common import objdump, run, step_instructions  # noqa: E402

MODELS = (("mul_in_place", 105), ("mul_in_place16", 96))
# target: (CPUs, llvm-objdump options, vector multiply, scalar multiply,
# vector store whose order is checked or None)
TARGETS = {
    "x86-64": (("x86-64-v3", "x86-64-v4"), [], re.compile(r"^vmulps$"), re.compile(r"^vmulss$"),
               re.compile(r"^vmov[ua]p[sd]$")),
    "rvv": (("",), ["--mattr=+v"], re.compile(r"^vfmul\.v[vf]$"), re.compile(r"^fmul\.s$"), None),
}
# "%ymm1, 0x20(%rdi,%rax,4)": the displacement and the rest of the address
STORE = re.compile(r"^%[yz]mm\d+,\s*(-?0x[0-9a-f]+|-?\d+)?(\(.*\))$")


def step_multiplies(text, vector, scalar):
    """(vector, scalar) multiply counts in the step functions."""
    counts = [0, 0]
    for _, mnemonic, _, _ in step_instructions(text):
        counts[0] += bool(vector.match(mnemonic))
        counts[1] += bool(scalar.match(mnemonic))
    return counts


def descending_stores(text, store):
    """Vector stores in the step functions that follow a store to the same
    base and index at a higher displacement."""
    found, last, where_fn = [], None, None
    for function, mnemonic, operands, line in step_instructions(text):
        if function != where_fn:
            where_fn, last = function, None
        if not store.match(mnemonic):
            continue
        a = STORE.match(operands)
        if not a:
            continue
        disp, where = int(a.group(1) or "0", 0), a.group(2)
        if last and last[1] == where and disp < last[0]:
            found.append(line.strip())
        last = (disp, where)
    return found


def main():
    compile_exe, models, work = sys.argv[1:4]
    dump = objdump()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failed = 0
    for target in sys.argv[4:]:
        cpus, dump_opts, vector, scalar, store = TARGETS[target]
        for cpu in cpus:
            for model, n in MODELS:
                out = os.path.join(work, f"{model}_{target}_{cpu or 'default'}")
                run([compile_exe, os.path.join(models, model + ".mlir"), "-o", out,
                     "--emit", "c", "--name", "m", "--target", target]
                    + (["--cpu", cpu] if cpu else []))
                text = run([dump, "-d", "--no-show-raw-insn", *dump_opts,
                            os.path.join(out, "m_kernels.o")])
                vec, sca = step_multiplies(text, vector, scalar)
                ok = vec >= 1 and sca <= n % 8
                failed += not ok
                print(f"{'PASS' if ok else 'FAIL'} {model} ({n} elements) {target} "
                      f"{cpu or 'default'}: {vec} vector, {sca} scalar multiplies "
                      f"(at most {n % 8} scalar)")
                down = descending_stores(text, store) if store else []
                failed += bool(down)
                if store:
                    print(f"{'FAIL' if down else 'PASS'} {model} {target} {cpu}: "
                          f"{len(down)} vector stores below the one before"
                          + "".join(f"\n    {d}" for d in down))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
