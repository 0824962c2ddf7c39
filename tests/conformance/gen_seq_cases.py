#!/usr/bin/python3
"""Generates tests/conformance/seq_cases: Loop and Scan models (unrolled at
compile time by the importer) in the backend-test layout, for the forms
Debian's suite lacks: Loop scan outputs with a constant trip count and a
condition that stops early, a Loop without M, Scan-9 with reversed
directions and non-zero axes, Scan-8 with a batch of 2, and sequence ops
inside a Loop body.

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_seq_cases.py OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto as TP, helper, numpy_helper

ORT_RUN = "/work/shared/tools/reference/ort_run.js"
rng = np.random.default_rng(25)
F = TP.FLOAT


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 8 - 4).astype(np.float32)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(arr), name))


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def loop_scan_early():
    """M = 5, cond true; the body's condition iter < 2 stops after 3 steps."""
    body = helper.make_graph(
        [const("two", np.int64(2)), const("half", np.float32(0.5)),
         helper.make_node("Less", ["i", "two"], ["c_out"]),
         helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
         helper.make_node("Mul", ["y_in", "half"], ["yh"]),
         helper.make_node("Add", ["yh", "row"], ["y_out"]),
         helper.make_node("Mul", ["y_out", "row"], ["s_out"])],
        "body", [vi("i", TP.INT64, []), vi("c_in", TP.BOOL, []), vi("y_in", F, [2])],
        [vi("c_out", TP.BOOL, []), vi("y_out", F, [2]), vi("s_out", F, [2])])
    nodes = [const("M", np.int64(5)), const("cond", np.bool_(True)),
             helper.make_node("Loop", ["M", "cond", "Y0"], ["Y", "S"], body=body)]
    return nodes, [("X", floats(4, 2)), ("Y0", floats(2))], ["Y", "S"]


def loop_no_m():
    """No trip count: runs while the folded condition iter < 3 holds."""
    body = helper.make_graph(
        [const("three", np.int64(3)),
         helper.make_node("Less", ["i", "three"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["y_in", "fi"], ["p"]),
         helper.make_node("Add", ["p", "X"], ["y_out"]),
         helper.make_node("Sub", ["y_out", "X"], ["s_out"])],
        "body", [vi("i", TP.INT64, []), vi("c_in", TP.BOOL, []), vi("y_in", F, [2, 3])],
        [vi("c_out", TP.BOOL, []), vi("y_out", F, [2, 3]), vi("s_out", F, [2, 3])])
    nodes = [const("cond", np.bool_(True)),
             helper.make_node("Loop", ["", "cond", "Y0"], ["Y", "S"], body=body)]
    return nodes, [("X", floats(2, 3)), ("Y0", floats(2, 3))], ["Y", "S"]


def loop_sequence_body():
    """A carried sequence: each step inserts a row; ConcatFromSequence after."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Gather", ["X", "i"], ["row"], axis=0),
         helper.make_node("Add", ["row", "acc_in"], ["acc_out"]),
         helper.make_node("SequenceInsert", ["seq_in", "acc_out"], ["seq_out"])],
        "body", [vi("i", TP.INT64, []), vi("c_in", TP.BOOL, []),
                 helper.make_tensor_sequence_value_info("seq_in", F, None), vi("acc_in", F, [3])],
        [vi("c_out", TP.BOOL, []), helper.make_tensor_sequence_value_info("seq_out", F, None),
         vi("acc_out", F, [3])])
    nodes = [const("M", np.int64(4)), const("cond", np.bool_(True)),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("Loop", ["M", "cond", "empty", "A0"], ["seq", "A"], body=body),
             helper.make_node("ConcatFromSequence", ["seq"], ["Y"], axis=1, new_axis=1),
             helper.make_node("SequenceLength", ["seq"], ["n"]),
             helper.make_node("Cast", ["n"], ["nf"], to=F),
             helper.make_node("Mul", ["A", "nf"], ["Z"])]
    return nodes, [("X", floats(4, 3)), ("A0", floats(3))], ["Y", "Z"]


def scan9_directions_axes():
    """Two scan inputs (one reversed, one on axis 1), two scan outputs (one
    reversed, one stacked on axis 1)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "b"], ["o1"]),
         helper.make_node("Sub", ["a", "b"], ["o2"])],
        "body", [vi("s_in", F, [3]), vi("a", F, [3]), vi("b", F, [3])],
        [vi("s_out", F, [3]), vi("o1", F, [3]), vi("o2", F, [3])])
    nodes = [helper.make_node("Scan", ["S0", "A", "B"], ["S", "O1", "O2"], body=body,
                              num_scan_inputs=2, scan_input_directions=[1, 0],
                              scan_input_axes=[0, 1], scan_output_directions=[1, 0],
                              scan_output_axes=[0, -1])]
    return nodes, [("S0", floats(3)), ("A", floats(4, 3)), ("B", floats(3, 4))], ["S", "O1", "O2"]


def scan8_batch():
    """Scan-8: a batch of 2, the scan input read backwards."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "a"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "a"], ["o"])],
        "body", [vi("s_in", F, [2]), vi("a", F, [2])],
        [vi("s_out", F, [2]), vi("o", F, [2])])
    nodes = [helper.make_node("Scan", ["", "S0", "A"], ["S", "O"], body=body,
                              num_scan_inputs=1, directions=[1])]
    return nodes, [("S0", floats(2, 2)), ("A", floats(2, 5, 2))], ["S", "O"]


CASES = [("loop_scan_early", 13, loop_scan_early), ("loop_no_m", 13, loop_no_m),
         ("loop_sequence_body", 13, loop_sequence_body),
         ("scan9_directions_axes", 11, scan9_directions_axes), ("scan8_batch", 8, scan8_batch)]


def ort(model_path, feeds, tmp):
    args = ["node", ORT_RUN, model_path, "--out", os.path.join(tmp, "ort")]
    for k, (_, x) in enumerate(feeds):
        p = os.path.join(tmp, "in%d.bin" % k)
        x.tofile(p)
        args += ["--in", p]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    ys = []
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            ys.append(np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"])).reshape(rec["shape"]))
    return ys


def main():
    out_dir = os.path.join(sys.argv[1], "seq")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, opset, make in CASES:
            nodes, feeds, outs = make()
            graph = helper.make_graph(nodes, name, [vi(n, F, x.shape) for n, x in feeds],
                                      [vi(n, F, None) for n in outs])
            m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
            m.ir_version = 7
            d = os.path.join(out_dir, "test_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            ys = ort(path, feeds, tmp)
            for k, (n, x) in enumerate(feeds):
                with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(x, n).SerializeToString())
            for k, y in enumerate(ys):
                with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(y, outs[k]).SerializeToString())
            print(name, [y.shape for y in ys])


if __name__ == "__main__":
    main()
