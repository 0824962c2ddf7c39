#!/usr/bin/env python3
"""Deployment without the interpreter: `--emit c` and `--emit static-lib`.

For each model it compiles a module and the two emitted forms for the host,
runs the module with tinyml-run, builds the generated C (with the kernels
object) and the static library into a small program, and requires the
outputs to be byte-identical to the module's.  It also checks that the
generated C is warning-free under -Wall -Wextra -Werror, that a misaligned
arena is refused, and that a bad --name is refused with a message.

Stateful models (STATEFUL: SVDF and LSTM from the zoo) run INVOKES invokes
on one caller-owned state, byte-identical to `tinyml-run --invokes`; the
program then resets the state, runs them again and requires the same
outputs.

usage: test_emit.py TINYML_COMPILE TINYML_RUN SHARED_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

MODELS = [
    "models/mlperf-tiny/kws_ref_model.tflite",  # int8, per-channel
    "models/mlperf-tiny/ad01_int8.tflite",      # large constants
    "models/tflm/hello_world_float.tflite",
    "models/onnx/mnist.onnx",
]
# (model, manifest), both relative to SHARED_DIR: the state kept between
# invokes, SVDF's int16 memory and an LSTM's cell.
STATEFUL = [
    ("zoo/models/tflite-audio/tflm_keyword_scrambled.tflite", "zoo/reference-tflm/manifest.json"),
    ("zoo/models/tflite-rnn/tflm_trained_lstm_int8.tflite", "zoo/reference-tflm/manifest.json"),
]
INVOKES = 3
CC = os.environ.get("CC", "cc").split()[0]

MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@NAME@.h"

#if @UP@_STATE_SIZE
#define INVOKES @INVOKES@
#define STATE_ARG state,
#else
#define INVOKES 1
#define STATE_ARG
#endif

static size_t in_sizes[] = {@IN_SIZES@};
static size_t out_sizes[] = {@OUT_SIZES@};

int main(int argc, char **argv) {
  /* argv: OUTDIR IN0 IN1 ...; "--misaligned" checks the refusal. */
  int misaligned = argc > 1 && argv[1][0] == '-';
  void *arena = aligned_alloc(@UP@_ARENA_ALIGNMENT,
                              ((@UP@_ARENA_SIZE + 64) / 64 + 1) * 64);
  const void *ins[@UP@_INPUT_COUNT + 1];
  void *outs[@UP@_OUTPUT_COUNT + 1];
  for (unsigned i = 0; i < @UP@_INPUT_COUNT; ++i) {
    void *p = malloc(in_sizes[i]);
    FILE *f = misaligned ? NULL : fopen(argv[2 + i], "rb");
    if (f && fread(p, 1, in_sizes[i], f) != in_sizes[i]) return 3;
    if (f) fclose(f);
    ins[i] = p;
  }
  for (unsigned i = 0; i < @UP@_OUTPUT_COUNT; ++i) outs[i] = calloc(1, out_sizes[i]);
#if @UP@_STATE_SIZE
  void *state = aligned_alloc(@UP@_STATE_ALIGNMENT, @UP@_STATE_SIZE);
  if (misaligned && @NAME@_invoke(arena, (char *)state + 8, ins, outs) != -1) return 7;
  @NAME@_reset_state(state);
#endif
  if (misaligned) return @NAME@_invoke((char *)arena + 8, STATE_ARG ins, outs) == -1 ? 0 : 4;
  for (int k = 0; k < INVOKES; ++k)
    if (@NAME@_invoke(arena, STATE_ARG ins, outs) != 0) return 5;
#if @UP@_STATE_SIZE
  /* From the initial state again: the same outputs. */
  void *first[@UP@_OUTPUT_COUNT + 1];
  for (unsigned i = 0; i < @UP@_OUTPUT_COUNT; ++i) {
    first[i] = malloc(out_sizes[i]);
    memcpy(first[i], outs[i], out_sizes[i]);
  }
  @NAME@_reset_state(state);
  for (int k = 0; k < INVOKES; ++k)
    if (@NAME@_invoke(arena, STATE_ARG ins, outs) != 0) return 5;
  for (unsigned i = 0; i < @UP@_OUTPUT_COUNT; ++i)
    if (memcmp(first[i], outs[i], out_sizes[i]) != 0) return 8;
#endif
  for (unsigned i = 0; i < @UP@_OUTPUT_COUNT; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/output_%u.bin", argv[1], i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(outs[i], 1, out_sizes[i], f) != out_sizes[i]) return 6;
    fclose(f);
  }
  return 0;
}
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> {p.returncode}\n{p.stdout}")
    return p.stdout


def first_case(manifest, model):
    for entry in manifest["models"] if isinstance(manifest, dict) and "models" in manifest else manifest:
        if entry["model"] == model:
            return entry["cases"][0]
    raise RuntimeError(f"{model} is not in the manifest")


def write_main(d, name, header):
    sizes = {k: dict(re.findall(rf"#define {name.upper()}_{k}(\d+)_SIZE (\d+)u", header))
             for k in ("INPUT", "OUTPUT")}
    text = MAIN.replace("@NAME@", name).replace("@UP@", name.upper())
    text = text.replace("@INVOKES@", str(INVOKES))
    for k, key in (("INPUT", "@IN_SIZES@"), ("OUTPUT", "@OUT_SIZES@")):
        text = text.replace(key, ", ".join(sizes[k][str(i)] for i in range(len(sizes[k]))))
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write(text)


def outputs_of(d):
    return {n: open(os.path.join(d, n), "rb").read()
            for n in sorted(os.listdir(d)) if n.startswith("output_")}


def check_model(tc, tr, shared, work, model, manifest, stateful=False):
    name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(model))[0])
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = os.path.join(shared, model)
    base = os.path.join(shared, "zoo") if stateful else shared
    inputs = [os.path.join(base, i["file"])
              for i in first_case(manifest, os.path.relpath(path, base))["inputs"]]
    run([tc, path, "-o", os.path.join(d, "m.tmlm")])
    info = run([tr, "--info", os.path.join(d, "m.tmlm")])
    if stateful != ("state_size:" in info):
        raise RuntimeError("the module's state_size is not what the test expects:\n" + info)
    invokes = ["--invokes", str(INVOKES)] if stateful else []
    run([tr, os.path.join(d, "m.tmlm"), *sum((["--input", i] for i in inputs), []),
         *invokes, "--output-dir", os.path.join(d, "ref")])
    expected = outputs_of(os.path.join(d, "ref"))
    for emit in ("c", "static-lib"):
        e = os.path.join(d, emit)
        run([tc, path, "--emit", emit, "--name", name, "-o", e])
        header = open(os.path.join(e, f"{name}.h")).read()
        write_main(e, name, header)
        objs = ([f"{name}.c", f"{name}_kernels.o"] if emit == "c" else [f"lib{name}.a"])
        warn = ["-Wall", "-Wextra", "-Werror"] if emit == "c" else []
        run([CC, "-std=c11", "-O2", *warn, "-I.", "main.c", *objs, "-lm", "-o", "prog"], cwd=e)
        out = os.path.join(e, "out")
        os.makedirs(out)
        run([os.path.join(e, "prog"), out, *inputs])
        got = outputs_of(out)
        if got != expected:
            raise RuntimeError(f"{emit}: outputs differ from the module's "
                               f"({sorted(got)} vs {sorted(expected)})")
        run([os.path.join(e, "prog"), "--misaligned"])
    sizes = {n: os.path.getsize(os.path.join(d, "c", n)) for n in os.listdir(os.path.join(d, "c"))
             if n.startswith(name)}
    print(f"PASS {model}: c and static-lib outputs identical to the module's "
          f"({len(expected)} output(s){', %d invokes on one state' % INVOKES if stateful else ''}"
          f"); files {sizes}")


HERE = os.path.dirname(os.path.abspath(__file__))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def run_mlir_case(tc, tr, work, model, files, tag=""):
    """Checks the TOSA text `model` (beside this file) on one case whose
    inputs are `files` [(name, bytes)], as check_model does for the shared
    models, and returns the module's outputs as {file name: bytes}."""
    d = os.path.join(work, os.path.splitext(model)[0] + "_inputs" + tag)
    os.makedirs(d, exist_ok=True)
    for name, blob in files:
        with open(os.path.join(d, name), "wb") as f:
            f.write(blob)
    shutil.copy(os.path.join(HERE, model), os.path.join(d, model))
    manifest = [{"model": model, "cases": [{"inputs": [{"file": n} for n, _ in files]}]}]
    check_model(tc, tr, d, work, model, manifest)
    return outputs_of(os.path.join(work, os.path.splitext(model)[0], "ref"))


def floats(blob):
    return list(struct.unpack("<%df" % (len(blob) // 4), blob))


# A WHILE whose trip count is a model input (tosa.while_loop, compiled as one
# scf.while dispatch): the module runs it n times, checked against the same
# float32 steps in Python, and the emitted forms must give the module's
# bytes, as for every model above.
def check_loop(tc, tr, work, x=(-20.0, 0.25, 3.0, -0.7), n=5):
    out = run_mlir_case(tc, tr, work, "while_loop.mlir",
                        [("x.bin", struct.pack("<4f", *x)), ("n.bin", struct.pack("<i", n))])
    want = [f32(v) for v in x]
    for _ in range(n):
        want = [f32(f32(v * 0.5) + 1.0) for v in want]
    got, count = floats(out["output_0.bin"]), struct.unpack("<i", out["output_1.bin"])[0]
    if got != want or count != n:
        raise RuntimeError(f"while_loop: {got}, {count} trips; expected {want}, {n}")
    print(f"PASS while_loop.mlir: {n} trips as computed in Python")


# A body that yields its values in another order: (x, y) = (y, x + y).
def check_swap(tc, tr, work, a=(1.0, 2.0, 3.0, 4.0), b=(0.5, 1.0, -1.0, 2.0), n=5):
    out = run_mlir_case(tc, tr, work, "while_swap.mlir",
                        [("a.bin", struct.pack("<4f", *a)), ("b.bin", struct.pack("<4f", *b)),
                         ("n.bin", struct.pack("<i", n))])
    x, y = [f32(v) for v in a], [f32(v) for v in b]
    for _ in range(n):
        x, y = y, [f32(p + q) for p, q in zip(x, y)]
    got = [floats(out["output_0.bin"]), floats(out["output_1.bin"])]
    if got != [x, y]:
        raise RuntimeError(f"while_swap: {got}; expected {[x, y]}")
    print(f"PASS while_swap.mlir: {n} trips of a swapping body as computed in Python")


# tosa.cond_if from TOSA text becomes scf.if (tosa-to-scf), kept whole in
# one dispatch like a loop: each branch taken, against Python.
def check_cond_if(tc, tr, work, x=(-20.0, 0.25, 3.0, -0.7)):
    for c in (1, 0):
        out = run_mlir_case(tc, tr, work, "cond_if.mlir",
                            [("x.bin", struct.pack("<4f", *x)), ("c.bin", bytes([c]))],
                            tag="_%d" % c)
        want = [abs(f32(v)) if c else 0.0 - f32(v) for v in x]
        got = floats(out["output_0.bin"])
        if got != want:
            raise RuntimeError(f"cond_if (c = {c}): {got}; expected {want}")
    print("PASS cond_if.mlir: both branches as computed in Python")


def check_bad_name(tc, shared, work):
    p = subprocess.run([tc, os.path.join(shared, MODELS[2]), "--emit", "c", "--name", "9lives",
                        "-o", os.path.join(work, "bad")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 1 or "9lives" not in p.stdout or "C identifier" not in p.stdout:
        raise RuntimeError(f"bad --name: rc {p.returncode}, message {p.stdout!r}")
    print("PASS --name 9lives refused:", p.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    tc, tr, shared, work = sys.argv[1:]
    if not os.path.isdir(shared):
        print(f"SKIP: {shared} is missing (the shared models and references)")
        sys.exit(77)
    manifest = json.load(open(os.path.join(shared, "reference", "manifest.json")))
    os.makedirs(work, exist_ok=True)
    failures = 0
    for model in MODELS:
        try:
            check_model(tc, tr, shared, work, model, manifest)
        except Exception as e:  # report every model, then fail
            failures += 1
            print(f"FAIL {model}: {e}")
    for model, man in STATEFUL:
        try:
            check_model(tc, tr, shared, work, model,
                        json.load(open(os.path.join(shared, man))), stateful=True)
        except Exception as e:
            failures += 1
            print(f"FAIL {model}: {e}")
    try:
        check_bad_name(tc, shared, work)
    except Exception as e:
        failures += 1
        print(f"FAIL {e}")
    for name, check in (("while_loop.mlir", check_loop), ("while_swap.mlir", check_swap),
                        ("cond_if.mlir", check_cond_if)):
        try:
            check(tc, tr, work)
        except Exception as e:
            failures += 1
            print(f"FAIL {name}: {e}")
    print(f"emit: {len(MODELS) + len(STATEFUL) + 4 - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
