#!/usr/bin/env python3
"""RVV's f32 convolutions multiply and add in one instruction (vfmacc), in
short innermost loops.

backends/rvv/strategy.mlir marks the vectorized conv and depthwise bodies'
arith.mulf / arith.addf as contractable; without that flag LLVM keeps a
vfmul and a vfadd per tap, and resnet8_float ran 8.08 M instructions per
inference at VLEN 128 instead of 7.30 M (docs/PERF.md, RVV).

tests/e2e's conv2d and depthwise_conv2d models are compiled with
`--target rvv --emit c`; in the step functions (`tinyml_entry_*`) of the
kernels object there must be a fused multiply-add and no vector multiply
(vfmul) at all.  The shortest loop (a backward branch) around a fused
multiply-add must also hold at most MODELS' count of instructions, 7 for
conv2d (a flw, a vle32, the vfmacc, two pointer steps, a branch, one
more): lib/compiler/codegen/exe_abi.c tells LLVM that an entry's
workgroup_count is never 0, without which each tap rebuilt its input address from an index
(8, and 12 for depthwise_conv2d).  depthwise_conv2d's is 7 too since the
strategy keeps its accumulator in a register across (kh, kw) (9 while it
was loaded and stored every tap).  The models' numerics are e2e's (and
CI's rvv stage).

rvv_pad_copy16.mlir, a 3x3 conv padded by 1 on 16 channels, copies its
input into a padded buffer: the strategy vectorizes that rank-4
linalg.copy, so its step functions store no f32 one at a time (fsw; 144
before, a fully unrolled scalar copy).

usage: test_rvv_codegen.py TINYML_COMPILE E2E_MODELS PAD_COPY_MODEL WORK_DIR
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from uk_common import objdump, run, step_instructions  # noqa: E402

# model: instructions at most in the innermost loop around the vfmacc
MODELS = {"conv2d": 7, "depthwise_conv2d": 7}
FUSED = re.compile(r"^vf(n?m(acc|add|sac|sub))\.v[vf]$")
MULTIPLY = re.compile(r"^vfmul\.v[vf]$")


def step_counts(text):
    """(fused multiply-adds, vector multiplies, scalar f32 stores) in the
    step functions."""
    counts = [0, 0, 0]
    for _, mnemonic, _, _ in step_instructions(text):
        counts[0] += bool(FUSED.match(mnemonic))
        counts[1] += bool(MULTIPLY.match(mnemonic))
        counts[2] += mnemonic == "fsw"
    return counts


def innermost_loop(text):
    """Instructions in the shortest backward-branch loop holding a fused
    multiply-add, or None."""
    ins = []
    for line in text.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2), m.group(3)))
    best = None
    for addr, mnemonic, operands in ins:
        target = re.search(r"0x([0-9a-f]+)", operands)
        if not mnemonic.startswith("b") or not target or int(target.group(1), 16) > addr:
            continue
        body = [i for i in ins if int(target.group(1), 16) <= i[0] <= addr]
        if any(FUSED.match(i[1]) for i in body) and (best is None or len(body) < best):
            best = len(body)
    return best


def disassemble(dump, compile_exe, model, out):
    run([compile_exe, model, "-o", out, "--emit", "c", "--name", "m", "--target", "rvv"])
    return run([dump, "-d", "--no-show-raw-insn", "--mattr=+v", os.path.join(out, "m_kernels.o")])


def main():
    compile_exe, models, pad_copy, work = sys.argv[1:5]
    dump = objdump()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failed = 0
    for model, most in MODELS.items():
        text = disassemble(dump, compile_exe, os.path.join(models, model + ".mlir"),
                           os.path.join(work, model))
        fused, mul, _ = step_counts(text)
        ok = fused >= 1 and mul == 0
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {model} rvv: {fused} fused multiply-adds, "
              f"{mul} vector multiplies (want >= 1 and 0)")
        n = innermost_loop(text)
        ok = n is not None and n <= most
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {model} rvv: innermost loop around the fused "
              f"multiply-add has {n} instructions (at most {most})")
    stores = step_counts(disassemble(dump, compile_exe, pad_copy,
                                     os.path.join(work, "pad_copy16")))[2]
    failed += stores != 0
    print(f"{'FAIL' if stores else 'PASS'} rvv_pad_copy16 rvv: {stores} scalar f32 stores "
          f"(want 0)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
