#!/usr/bin/env python3
"""Writes small float16 and float64 ONNX models and their expected outputs:
float16 (and float64) inputs, weights and outputs, for issue 25.

The weights and inputs are seeded here; the expected outputs are
onnxruntime-node's (ort_wide.js beside this file), so nothing here depends
on libtinyml.  Needs python3-onnx and numpy.

Usage: gen.py   (rewrites models/, data/ and manifest.json)
"""
import json
import os
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(25)
NP = {TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64}
NAME = {TensorProto.FLOAT16: "float16", TensorProto.DOUBLE: "float64"}


def model(elem, opset):
    """Conv (weights and bias of `elem`) -> Relu -> MatMul (weights of
    `elem`) -> Add (a constant of `elem`), input and output of `elem`.
    onnxruntime has no float64 Conv: there a per-channel Mul takes its place."""
    t = NP[elem]
    if elem == TensorProto.DOUBLE:
        first = helper.make_node("Mul", ["X", "S"], ["c"])
        w = [numpy_helper.from_array(rng.standard_normal((1, 3, 1, 1)).astype(t), "S")]
        channels = 3
    else:
        first = helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1])
        w = [numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(t), "W"),
             numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(t), "B")]
        channels = 4
    inits = w + [
        numpy_helper.from_array((rng.standard_normal((6, 5)) * 0.5).astype(t), "M"),
        numpy_helper.from_array((rng.standard_normal(5) * 0.1).astype(t), "A"),
    ]
    nodes = [
        first,
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MatMul", ["r", "M"], ["m"]),
        helper.make_node("Add", ["m", "A"], ["Y"]),
    ]
    g = helper.make_graph(nodes, "wide_" + NAME[elem],
                          [helper.make_tensor_value_info("X", elem, [1, 3, 5, 6])],
                          [helper.make_tensor_value_info("Y", elem, [1, channels, 5, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def main():
    os.makedirs(os.path.join(HERE, "models"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    manifest = []
    for elem in (TensorProto.FLOAT16, TensorProto.DOUBLE):
        name = "conv_matmul_" + NAME[elem]
        path = os.path.join(HERE, "models", name + ".onnx")
        save(model(elem, 13), path)
        x = rng.uniform(-1, 1, (1, 3, 5, 6)).astype(NP[elem])
        prefix = os.path.join(HERE, "data", name)
        x.tofile(prefix + "_in_0.bin")
        out = subprocess.run(["node", os.path.join(HERE, "ort_wide.js"), path, prefix,
                              prefix + "_in_0.bin"], check=True, stdout=subprocess.PIPE,
                             text=True).stdout
        o = json.loads(out.splitlines()[0])
        assert o["dtype"] == NAME[elem], o
        manifest.append({
            "model": "models/%s.onnx" % name, "format": "onnx",
            "cases": [{
                "label": "gen",
                "inputs": [{"kind": "input", "index": 0, "dtype": NAME[elem],
                            "shape": list(x.shape), "file": "data/%s_in_0.bin" % name}],
                "outputs": [{"kind": "output", "index": 0, "dtype": NAME[elem],
                             "shape": o["shape"], "file": "data/%s_out_0.bin" % name,
                             "source": "onnxruntime-node (CPU)"}]}]})
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
