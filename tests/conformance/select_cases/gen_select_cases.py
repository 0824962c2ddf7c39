#!/usr/bin/env python3
"""Writes OneHot and TopK cases that the ONNX backend suite leaves out, in
its layout (node/<test>/model.onnx, test_data_set_0/{input,output}_N.pb),
with onnxruntime's outputs as the expected ones: TopK with infinities, signed
zeros and ties, int32, smallest, opset 9's K attribute, a constant input (folded
at compile time); OneHot with int64 indices far outside [-depth, depth),
float indices that are not integers (no match, as in onnxruntime), opset 9, constant inputs.

Run by hand (needs Debian's python3-onnx for /usr/bin/python3 and
/work/shared/tools/reference/ort_run.js); the output is committed:
  /usr/bin/python3 gen_select_cases.py OUT_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

ORT_RUN = "/work/shared/tools/reference/ort_run.js"
NP = {"float32": np.float32, "int32": np.int32, "int64": np.int64}


def model(nodes, ins, outs, inits, opset):
    graph = helper.make_graph(nodes, "select", ins, outs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def run_ort(model_path, arrays, work):
    cmd = ["node", ORT_RUN, model_path, "--out", os.path.join(work, "ort")]
    for i, a in enumerate(arrays):
        f = os.path.join(work, "in%d.bin" % i)
        a.tofile(f)
        cmd += ["--in", f]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    outs = []
    for line in r.stdout.splitlines():
        j = json.loads(line)
        if j.get("kind") == "output":
            outs.append(np.fromfile(j["file"], dtype=NP[j["dtype"]]).reshape(j["shape"]))
    return outs


def write_case(out_dir, name, m, arrays):
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    with tempfile.TemporaryDirectory() as work:
        outs = run_ort(os.path.join(d, "model.onnx"), arrays, work)
    names = [i.name for i in m.graph.input] + [o.name for o in m.graph.output]
    for i, a in enumerate(arrays + outs):
        kind, k = ("input", i) if i < len(arrays) else ("output", i - len(arrays))
        t = numpy_helper.from_array(a, names[i])
        with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
            f.write(t.SerializeToString())
    print(name, [o.tolist() for o in outs])


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def topk_cases(out):
    inf = np.inf
    # No NaN: onnxruntime orders it inconsistently (its comparators are
    # not a strict weak order with NaN); we follow the ONNX reference.
    x = np.array([[1, -1, 3, 3, -inf, 0], [-0.0, 0.0, inf, inf, -inf, 2],
                  [5, 5, 5, 5, 5, 5]], np.float32)
    k4 = numpy_helper.from_array(np.array([4], np.int64), "k")
    n = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)
    write_case(out, "test_select_topk_inf_ties", model(
        [n], [vi("x", TP.FLOAT, [3, 6])], [vi("v", TP.FLOAT, None), vi("i", TP.INT64, None)],
        [k4], 13), [x])
    n = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)
    write_case(out, "test_select_topk_inf_signed_zero_smallest", model(
        [n], [vi("x", TP.FLOAT, [3, 6])], [vi("v", TP.FLOAT, None), vi("i", TP.INT64, None)],
        [k4], 13), [x])
    xi = np.array([[[7, -2, 0], [2147483647, 4, 0], [-2147483648, 4, 9], [7, 4, -1], [0, 1, 0]],
                   [[3, 3, 3], [1, 2, 3], [3, 2, 1], [-5, 8, 8], [3, 2, 1]]], np.int32)
    k3 = numpy_helper.from_array(np.array([3], np.int64), "k")
    n = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)
    write_case(out, "test_select_topk_int32_smallest_axis1", model(
        [n], [vi("x", TP.INT32, [2, 5, 3])], [vi("v", TP.INT32, None), vi("i", TP.INT64, None)],
        [k3], 13), [xi])
    rs = np.random.RandomState(11)
    x9 = rs.randint(-3, 3, size=(4, 5)).astype(np.float32)
    n = helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=0)
    write_case(out, "test_select_topk_opset9_k_attribute", model(
        [n], [vi("x", TP.FLOAT, [4, 5])], [vi("v", TP.FLOAT, None), vi("i", TP.INT64, None)],
        [], 9), [x9])
    xc = numpy_helper.from_array(np.array([[2, 9, 2, -1, 7], [0, 0, -0.0, 3, 3]], np.float32), "c")
    nodes = [helper.make_node("TopK", ["c", "k"], ["v0", "i"], axis=-1),
             helper.make_node("Add", ["v0", "z"], ["v"])]
    z = rs.randn(2, 3).astype(np.float32)
    write_case(out, "test_select_topk_constant_folded", model(
        nodes, [vi("z", TP.FLOAT, [2, 3])], [vi("v", TP.FLOAT, None), vi("i", TP.INT64, None)],
        [xc, k3], 13), [z])


def onehot_cases(out):
    ind = np.array([[0, 9, -1, -10], [10, -11, 2 ** 40, 5]], np.int64)
    depth = numpy_helper.from_array(np.array(10, np.int64), "depth")
    vals = numpy_helper.from_array(np.array([0, 7], np.float32), "values")
    n = helper.make_node("OneHot", ["ind", "depth", "values"], ["y"], axis=1)
    write_case(out, "test_select_onehot_int64_out_of_range", model(
        [n], [vi("ind", TP.INT64, [2, 4])], [vi("y", TP.FLOAT, None)], [depth, vals], 11), [ind])
    indf = np.array([1.5, -1.5, 3, -0.5, -2, 9.99, -9.5, 9], np.float32)
    depthf = numpy_helper.from_array(np.array([10], np.float32), "depth")
    n = helper.make_node("OneHot", ["ind", "depth", "values"], ["y"], axis=0)
    write_case(out, "test_select_onehot_float_indices", model(
        [n], [vi("ind", TP.FLOAT, [8]), vi("values", TP.FLOAT, [2])], [vi("y", TP.FLOAT, None)],
        [depthf], 11), [indf, np.array([-1, 3], np.float32)])
    ind9 = np.array([[0, 3], [-1, 4]], np.int32)
    depth5 = numpy_helper.from_array(np.array([5], np.int32), "depth")
    valsf = numpy_helper.from_array(np.array([0.5, -2], np.float32), "values")
    n = helper.make_node("OneHot", ["ind", "depth", "values"], ["y"])
    write_case(out, "test_select_onehot_opset9", model(
        [n], [vi("ind", TP.INT32, [2, 2])], [vi("y", TP.FLOAT, None)], [depth5, valsf], 9), [ind9])
    indc = numpy_helper.from_array(np.array([2, -3, 0], np.int64), "ind")
    nodes = [helper.make_node("OneHot", ["ind", "depth", "values"], ["h"], axis=0),
             helper.make_node("Add", ["h", "z"], ["y"])]
    z = np.arange(15, dtype=np.float32).reshape(5, 3)
    write_case(out, "test_select_onehot_constant_folded", model(
        nodes, [vi("z", TP.FLOAT, [5, 3])], [vi("y", TP.FLOAT, None)],
        [indc, numpy_helper.from_array(np.array([5], np.int64), "depth"), valsf], 11), [z])


def main():
    out = sys.argv[1]
    topk_cases(out)
    onehot_cases(out)


if __name__ == "__main__":
    main()
