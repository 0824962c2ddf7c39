#!/usr/bin/python3
"""Generates tests/conformance/misc_cases: models in the backend-test
layout (model.onnx, test_data_set_0/{input,output}_N.pb) for forms of Pow,
Mod, Det, ReverseSequence, BatchNormalization (training) and
LpNormalization and GlobalLpPool that Debian's
suite (ONNX 1.12) leaves out: integer powers with negative or large
exponents and fractional float exponents, float fmod with large quotients,
3x3 and 4x4 determinants (zero pivots included), run-time sequence lengths
on batch-major input, training-mode statistics on rank 3, LpNormalization
(p = 1 and 2, which Debian's suite has no test of) over first, middle and
last axes, GlobalLpPool with p = 1 and 2 (Debian's has only its default).

The expected outputs are onnxruntime's (onnxruntime-node via
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_misc_cases.py OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import helper, mapping, numpy_helper

ORT_RUN = "/work/shared/tools/reference/ort_run.js"
rng = np.random.default_rng(2025)


def floats(*shape, scale=4.0):
    return ((rng.random(shape) * 2 - 1) * scale).astype(np.float32)


def pivot_matrices():
    m = floats(3, 4, 4)
    m[0, 0, 0] = 0.0  # the first pivot is zero: a factorisation must swap rows
    m[1, :2, :2] = [[0.0, 0.0], [0.0, 0.0]]
    m[2, 3] = m[2, 0] * 2.0  # singular: det 0 up to rounding
    return m


# name, op, opset, attributes, named inputs, output count
CASES = [
    ("pow_int32_negative_exponent", "Pow", 15, {},
     [("x", np.array([-3, -2, -1, -1, 1, 1, 2, 3, 5, -7], np.int32)),
      ("y", np.array([-1, -2, -3, -4, -5, -1, -1, -2, -3, -1], np.int32))], 1),
    ("pow_int32_large", "Pow", 15, {},
     [("x", np.array([3, -3, 2, -2, 7, 0, 0, -1, 10, 1], np.int32)),
      ("y", np.array([19, 19, 30, 31, 11, 0, 5, 123457, 9, 2000000000], np.int32))], 1),
    ("pow_int64_int32_exponent", "Pow", 15, {},
     [("x", np.array([[3, -5, 2], [-2, 13, 6]], np.int64)),
      ("y", np.array([33, 13, 20], np.int32))], 1),
    ("pow_int32_float_exponent", "Pow", 15, {},
     [("x", np.array([2, 3, 10, 7, 5, 100, 9, -2], np.int32)),
      ("y", np.array([3.0, -1.0, 0.5, 1.5, 2.25, 0.3, 0.0, 5.0], np.float32))], 1),
    ("mod_fmod_float_large_quotient", "Mod", 13, {"fmod": 1},
     [("x", np.array([1000.3, -1000.3, 12345.678, -0.0, 5.5, -7.25, 3.0e6, 1.0e-3],
                     np.float32)),
      ("y", np.array([0.7, 0.7, -0.01, 3.0, -5.5, 0.5, -0.3, 7.0], np.float32))], 1),
    ("det_3x3_batch", "Det", 13, {}, [("x", floats(2, 3, 3, 3))], 1),
    ("det_4x4_pivots", "Det", 13, {}, [("x", pivot_matrices())], 1),
    ("det_1x1", "Det", 13, {}, [("x", floats(4, 1, 1))], 1),
    ("reversesequence_batch_major_rank3", "ReverseSequence", 10,
     {"batch_axis": 0, "time_axis": 1},
     [("x", floats(4, 5, 3)), ("lens", np.array([5, 0, 1, 3], np.int64))], 1),
    ("reversesequence_time_major_rank4", "ReverseSequence", 10,
     {"batch_axis": 1, "time_axis": 0},
     [("x", floats(6, 3, 2, 2)), ("lens", np.array([2, 6, 4], np.int64))], 1),
    ("batchnorm_training_rank3_momentum", "BatchNormalization", 15,
     {"training_mode": 1, "momentum": 0.7, "epsilon": 1e-3},
     [("x", floats(4, 3, 5)), ("scale", floats(3)), ("bias", floats(3)),
      ("mean", floats(3)), ("var", (rng.random(3) + 0.5).astype(np.float32))], 3),
    ("lpnormalization_p2_last_axis", "LpNormalization", 1, {"p": 2, "axis": -1},
     [("x", floats(3, 4, 5))], 1),
    ("lpnormalization_p2_axis1", "LpNormalization", 1, {"p": 2, "axis": 1},
     [("x", floats(2, 3, 4))], 1),
    ("lpnormalization_p1_axis0", "LpNormalization", 1, {"p": 1, "axis": 0},
     [("x", floats(4, 3))], 1),
    # A zero row: onnxruntime gives 0 there, not 0 * inf = NaN.
    ("lpnormalization_p2_zero_row", "LpNormalization", 1, {"p": 2, "axis": -1},
     [("x", np.concatenate([floats(2, 5), np.zeros((1, 5), np.float32)]))], 1),
    ("lpnormalization_p1_zero_row", "LpNormalization", 1, {"p": 1, "axis": 1},
     [("x", np.concatenate([np.zeros((1, 4), np.float32), floats(2, 4)]))], 1),
    # GlobalLpPool's p = 2 emitted tosa.sqrt, which MLIR 22 lacks.
    ("globallppool_p2", "GlobalLpPool", 2, {"p": 2}, [("x", floats(2, 3, 4, 5))], 1),
    ("globallppool_p1", "GlobalLpPool", 2, {"p": 1}, [("x", floats(1, 4, 3, 3))], 1),
    ("globallppool_p2_default_zero", "GlobalLpPool", 2, {},
     [("x", np.concatenate([floats(1, 2, 3, 3), np.zeros((1, 1, 3, 3), np.float32)], 1))], 1),
]


def model(name, op, opset, attrs, inputs, nout):
    outs = ["out%d" % i for i in range(nout)]
    node = helper.make_node(op, [n for n, _ in inputs], outs, **attrs)
    vis = [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
           for n, a in inputs]
    graph = helper.make_graph([node], name, vis,
                              [helper.make_tensor_value_info(o, mapping.NP_TYPE_TO_TENSOR_TYPE[inputs[0][1].dtype], None)
                               for o in outs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort(model_path, inputs, tmp):
    args = ["node", ORT_RUN, model_path, "--out", os.path.join(tmp, "ort")]
    for i, (_, a) in enumerate(inputs):
        path = os.path.join(tmp, "in%d.bin" % i)
        np.ascontiguousarray(a).tofile(path)
        args += ["--in", path]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    ys = []
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            y = np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"]))
            ys.append(y.reshape(rec["shape"]))
    return ys


def main():
    out_dir = os.path.join(sys.argv[1], "misc")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, opset, attrs, inputs, nout in CASES:
            d = os.path.join(out_dir, "test_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(model(name, op, opset, attrs, inputs, nout).SerializeToString())
            ys = ort(path, inputs, tmp)
            arrays = [("input", n, a) for n, a in inputs]
            arrays += [("output", "out%d" % i, y) for i, y in enumerate(ys)]
            counts = {"input": 0, "output": 0}
            for kind, n, a in arrays:
                t = numpy_helper.from_array(np.ascontiguousarray(a), n)
                with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, counts[kind])),
                          "wb") as f:
                    f.write(t.SerializeToString())
                counts[kind] += 1
            print(name, [a.shape for _, a in inputs], "->", [y.shape for y in ys])
            if op in ("Pow", "Mod", "Det"):
                print("   ", ys[0].ravel()[:12])


if __name__ == "__main__":
    main()
