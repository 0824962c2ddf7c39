#!/usr/bin/env python3
"""Writes single-node com.microsoft QLinearAveragePool models (int8 and
uint8: padded with count_include_pad 0 and 1, ceil_mode, asymmetric pads,
auto_pad, channels_last, 1-D, a whole-image kernel) and the QDQ form
DequantizeLinear -> AveragePool -> QuantizeLinear, with onnxruntime's
outputs as the expected values.  Inputs and outputs are the quantised
tensors; every case is marked exact (ours equals onnxruntime's bytes: both
compute qlinear_pool's float average and round it the same way), so a
one-step regression fails.

Usage: gen.py SHARED_DIR   (rewrites models/, data/ and manifest.json;
python3-onnx, numpy, node with onnxruntime-node:
SHARED_DIR/tools/reference/ort_run.js)"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(26)

# name, input shape (NCHW, or NHWC with channels_last), attributes
CASES = [
    ("pad1_cip0", (1, 6, 9, 9), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("pad1_cip1", (1, 6, 9, 9), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                     count_include_pad=1)),
    ("ceil", (2, 5, 8, 7), dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1)),
    ("ceil_pad", (1, 4, 8, 8), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0],
                                    ceil_mode=1)),
    ("asym", (1, 4, 7, 10), dict(kernel_shape=[3, 4], strides=[1, 2], pads=[0, 2, 1, 1])),
    ("same_upper", (1, 3, 7, 7), dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_UPPER")),
    ("nhwc", (1, 9, 9, 6), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                channels_last=1)),
    ("nhwc_cip1", (2, 6, 5, 7), dict(kernel_shape=[2, 3], strides=[1, 2], pads=[1, 0, 0, 1],
                                     channels_last=1, count_include_pad=1)),
    ("1d", (1, 5, 17), dict(kernel_shape=[4], strides=[3], pads=[2, 1])),
    ("1d_nhwc", (1, 17, 5), dict(kernel_shape=[3], strides=[2], channels_last=1)),
    ("whole", (1, 8, 6, 5), dict(kernel_shape=[6, 5])),
    ("whole_nhwc", (2, 6, 5, 8), dict(kernel_shape=[6, 5], channels_last=1)),
    ("big_k", (1, 4, 12, 12), dict(kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])),
]

PARAMS = {"int8": (np.int8, 0.05, 3, 0.037, -5), "uint8": (np.uint8, 0.02, 131, 0.013, 118)}


def qlinear_model(path, shape, attrs, dname):
    dt, xs, xz, ys, yz = PARAMS[dname]
    t = TensorProto.INT8 if dt == np.int8 else TensorProto.UINT8
    inits = [numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(xz, dt), "xz"),
             numpy_helper.from_array(np.array(ys, np.float32), "ys"),
             numpy_helper.from_array(np.array(yz, dt), "yz")]
    node = helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                            domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "qpool", [helper.make_tensor_value_info("x", t, shape)],
                          [helper.make_tensor_value_info("y", t, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)


def qdq_model(path, shape, attrs, dname):
    dt, xs, xz, ys, yz = PARAMS[dname]
    t = TensorProto.INT8 if dt == np.int8 else TensorProto.UINT8
    inits = [numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(xz, dt), "xz"),
             numpy_helper.from_array(np.array(ys, np.float32), "ys"),
             numpy_helper.from_array(np.array(yz, dt), "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("AveragePool", ["xf"], ["yf"], **attrs),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "qdq_pool", [helper.make_tensor_value_info("x", t, shape)],
                          [helper.make_tensor_value_info("y", t, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def run_ort(ort, model, x, prefix):
    x.tofile(prefix + "_feed.bin")
    out = subprocess.run(["node", ort, model, "--in", prefix + "_feed.bin", "--out", prefix],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    rec = [json.loads(l) for l in out if l.startswith("{") and '"output"' in l][0]
    return np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"])).reshape(rec["shape"])


def entry(name, x, y, dname):
    fi, fo = "data/%s_in.bin" % name, "data/%s_out.bin" % name
    x.tofile(os.path.join(HERE, fi))
    y.tofile(os.path.join(HERE, fo))
    return {"model": "models/%s.onnx" % name, "format": "onnx", "cases": [
        {"label": "case0", "exact": True,
         "inputs": [{"kind": "input", "index": 0, "dtype": dname, "shape": list(x.shape), "file": fi}],
         "outputs": [{"kind": "output", "index": 0, "dtype": dname, "shape": list(y.shape),
                      "file": fo, "source": "onnxruntime-node (CPU)"}]}]}


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    ort = os.path.join(sys.argv[1], "tools", "reference", "ort_run.js")
    for d in ("models", "data"):
        os.makedirs(os.path.join(HERE, d), exist_ok=True)
    tmp = tempfile.mkdtemp()
    manifest = []
    for dname in ("int8", "uint8"):
        dt = PARAMS[dname][0]
        info = np.iinfo(dt)
        for case, shape, attrs in CASES:
            x = RNG.integers(info.min, info.max + 1, shape).astype(dt)
            name = "qlinear_%s_%s" % (case, dname)
            path = os.path.join(HERE, "models", name + ".onnx")
            qlinear_model(path, shape, attrs, dname)
            manifest.append(entry(name, x, run_ort(ort, path, x, os.path.join(tmp, name)), dname))
            print(name, "ok")
            if "channels_last" in attrs:
                continue
            name = "qdq_%s_%s" % (case, dname)
            path = os.path.join(HERE, "models", name + ".onnx")
            qdq_model(path, shape, attrs, dname)
            manifest.append(entry(name, x, run_ort(ort, path, x, os.path.join(tmp, name)), dname))
            print(name, "ok")
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
