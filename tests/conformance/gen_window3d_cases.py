#!/usr/bin/python3
"""Generates tests/conformance/window3d_cases: 3-D pools and convolutions
and ConvTranspose padding forms that Debian's suite (ONNX 1.12) does not
cover (MaxPool's Indices with dilations, pads, ties, storage_order 1 and
in 1-D; MaxUnpool with pads and duplicate indices; 3-D average pooling with pads and ceil_mode, with and without
count_include_pad; dilated 3-D max pooling; grouped, dilated and
run-time-weight Conv3d; ConvTranspose with SAME_LOWER and with an
output_shape larger than the full result), in the backend-test layout
(model.onnx, test_data_set_0/{input,output}_N.pb).

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_window3d_cases.py OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, mapping, numpy_helper

ORT_RUN = "/work/shared/tools/reference/ort_run.js"
rng = np.random.default_rng(3)


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 8 - 4).astype(np.float32)


# name, opset, op, attributes, inputs (name -> array), constant input names
CASES = [
    ("avgpool3d_pads_ceil", 19, "AveragePool",
     dict(kernel_shape=[3, 2, 3], strides=[2, 2, 2], pads=[1, 0, 1, 1, 0, 0], ceil_mode=1),
     [("X", floats(1, 2, 7, 9, 9))], []),
    ("avgpool3d_pads_count_include_pad", 19, "AveragePool",
     dict(kernel_shape=[2, 3, 3], strides=[1, 2, 2], pads=[1, 1, 1, 0, 1, 2], count_include_pad=1),
     [("X", floats(2, 3, 5, 6, 7))], []),
    ("avgpool3d_same_upper", 19, "AveragePool",
     dict(kernel_shape=[3, 3, 2], strides=[2, 1, 2], auto_pad="SAME_UPPER"),
     [("X", floats(1, 2, 5, 6, 7))], []),
    ("maxpool3d_dilated_pads", 12, "MaxPool",
     dict(kernel_shape=[2, 2, 3], strides=[1, 2, 1], dilations=[2, 1, 2], pads=[1, 1, 0, 0, 1, 2]),
     [("X", floats(1, 3, 6, 7, 8))], []),
    ("conv3d_grouped_dilated", 11, "Conv",
     dict(group=2, dilations=[2, 1, 2], strides=[1, 2, 1], pads=[1, 0, 2, 1, 1, 0]),
     [("X", floats(1, 4, 6, 7, 8)), ("W", floats(6, 2, 3, 2, 3)), ("B", floats(6))], ["W", "B"]),
    ("conv3d_depthwise_runtime_weights", 11, "Conv",
     dict(group=3, strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1]),
     [("X", floats(1, 3, 5, 6, 5)), ("W", floats(3, 1, 2, 3, 2))], []),
    ("conv3d_same_lower_runtime_weights", 11, "Conv",
     dict(auto_pad="SAME_LOWER", strides=[2, 1, 3]),
     [("X", floats(2, 2, 5, 4, 7)), ("W", floats(3, 2, 2, 3, 2)), ("B", floats(3))], ["B"]),
    ("maxpool_indices_dilated_pads_ties", 12, "MaxPool",
     dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[1, 2], pads=[1, 1, 1, 0]),
     [("X", np.round(floats(2, 3, 7, 6)))], []),
    ("maxpool_indices_storage_order_1", 12, "MaxPool",
     dict(kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 1, 1], storage_order=1),
     [("X", floats(1, 2, 6, 7))], []),
    ("maxpool_indices_1d", 12, "MaxPool", dict(kernel_shape=[3], strides=[2], pads=[1, 1]),
     [("X", np.round(floats(2, 2, 9)))], []),
    ("maxunpool_duplicates_pads", 11, "MaxUnpool",
     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 1]),
     [("X", floats(1, 2, 3, 3)), ("I", np.array([3, 0, 5, 5, 11, 14, 7, 8, 2, 30, 16, 16, 20, 21,
                                                 29, 17, 25, 18], np.int64).reshape(1, 2, 3, 3))], []),
    ("convtranspose_same_lower_odd", 11, "ConvTranspose",
     dict(auto_pad="SAME_LOWER", strides=[2, 2]),
     [("X", floats(1, 2, 3, 4)), ("W", floats(2, 3, 3, 3))], ["W"]),
    ("convtranspose_output_shape_larger", 11, "ConvTranspose",
     dict(output_shape=[11, 8], strides=[3, 2]),
     [("X", floats(1, 1, 3, 3)), ("W", floats(1, 2, 3, 3)), ("B", floats(2))], ["W", "B"]),
    ("convtranspose3d_strided_dilated_pads", 11, "ConvTranspose",
     dict(strides=[2, 1, 3], dilations=[1, 2, 1], pads=[1, 0, 2, 0, 1, 1], output_padding=[1, 0, 2]),
     [("X", floats(1, 2, 3, 4, 3)), ("W", floats(2, 3, 2, 2, 3)), ("B", floats(3))], ["W", "B"]),
    ("convtranspose3d_runtime_weights_same_upper", 11, "ConvTranspose",
     dict(strides=[2, 2, 1], auto_pad="SAME_UPPER"),
     [("X", floats(2, 3, 3, 2, 4)), ("W", floats(3, 2, 3, 2, 2))], []),
]


def model(name, opset, op, attrs, inputs, consts):
    inits = [numpy_helper.from_array(a, n) for n, a in inputs if n in consts]
    feeds = [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
             for n, a in inputs if n not in consts]
    outs = ["Y", "Indices"] if "indices" in name else ["Y"]
    node = helper.make_node(op, [n for n, _ in inputs], outs, **attrs)
    out = [helper.make_tensor_value_info(o, TensorProto.FLOAT if o == "Y" else TensorProto.INT64, None)
           for o in outs]
    graph = helper.make_graph([node], name, feeds, out, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort(model_path, arrays, tmp):
    args = ["node", ORT_RUN, model_path, "--out", os.path.join(tmp, "o")]
    for i, a in enumerate(arrays):
        path = os.path.join(tmp, "in%d.bin" % i)
        a.tofile(path)
        args += ["--in", path]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    ys = []
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "output":
            dt = np.int64 if rec["dtype"] == "int64" else np.float32
            ys.append(np.fromfile(rec["file"], dtype=dt).reshape(rec["shape"]))
    if not ys:
        raise RuntimeError("no output from onnxruntime")
    return ys


def main():
    out_dir = os.path.join(sys.argv[1], "window3d")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, opset, op, attrs, inputs, consts in CASES:
            case = os.path.join(out_dir, "test_" + name)
            data = os.path.join(case, "test_data_set_0")
            os.makedirs(data)
            path = os.path.join(case, "model.onnx")
            with open(path, "wb") as f:
                f.write(model(name, opset, op, attrs, inputs, consts).SerializeToString())
            fed = [a for n, a in inputs if n not in consts]
            for i, a in enumerate(fed):
                with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(a).SerializeToString())
            for i, y in enumerate(ort(path, fed, tmp)):
                with open(os.path.join(data, "output_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(y).SerializeToString())
                print(name, y.shape, y.dtype)


if __name__ == "__main__":
    main()
