#!/usr/bin/python3
"""Generates tests/conformance/scatter_cases: ScatterND and ScatterElements
models in the backend-test layout (model.onnx, test_data_set_0/
{input,output}_N.pb) for what Debian's suite (ONNX 1.12) does not cover:
the max and min reductions (opset 18), duplicate indices with every
reduction, integer and uint8 data, int32 indices, and all-constant
operands (folded at compile time).

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_scatter_cases.py OUT_DIR
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


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 8 - 4).astype(np.float32)


def ints(dtype, lo, hi, *shape):
    return rng.integers(lo, hi, shape).astype(dtype)


I64 = np.int64
# name, op, opset, attributes, data, indices, updates, fold
CASES = [
    ("nd_max_duplicates", "ScatterND", 18, dict(reduction="max"), floats(4, 3, 5),
     np.array([[0], [2], [0], [3], [2]], I64), floats(5, 3, 5), False),
    ("nd_min_duplicates", "ScatterND", 18, dict(reduction="min"), floats(4, 3, 5),
     np.array([[1], [1], [-1], [0]], I64), floats(4, 3, 5), False),
    ("nd_max_int32_elements", "ScatterND", 18, dict(reduction="max"), ints(np.int32, -50, 50, 3, 4),
     np.array([[0, 1], [2, 3], [0, 1], [-1, 0]], I64), ints(np.int32, -50, 50, 4), False),
    ("nd_add_many_duplicates", "ScatterND", 16, dict(reduction="add"), floats(3, 6),
     np.array([[i % 3] for i in range(24)], I64), floats(24, 6) * 1000, False),
    ("nd_none_duplicates_last_wins", "ScatterND", 13, {}, floats(5, 2, 3),
     np.array([[[1], [3]], [[1], [4]], [[3], [1]]], I64), floats(3, 2, 2, 3), False),
    ("nd_uint8", "ScatterND", 13, {}, ints(np.uint8, 0, 256, 4, 5),
     np.array([[3], [0]], I64), ints(np.uint8, 0, 256, 2, 5), False),
    ("nd_mul_folded", "ScatterND", 16, dict(reduction="mul"), floats(4, 3),
     np.array([[2], [0], [2]], I64), floats(3, 3), True),
    ("elements_max_axis1", "ScatterElements", 18, dict(axis=1, reduction="max"), floats(3, 5),
     np.array([[0, 4, 0], [-1, 2, 2], [1, 1, 1]], I64), floats(3, 3), False),
    ("elements_min_int32_idx", "ScatterElements", 18, dict(axis=0, reduction="min"), floats(4, 3),
     np.array([[3, 0, 1], [3, 0, 1]], np.int32), floats(2, 3), False),
    ("elements_add_3d_axis2", "ScatterElements", 16, dict(axis=-1, reduction="add"),
     floats(2, 3, 4), ints(I64, -4, 4, 2, 2, 5), floats(2, 2, 5), False),
    ("elements_none_int8_duplicates", "ScatterElements", 13, dict(axis=0),
     ints(np.int8, -128, 128, 4, 3), np.array([[1, 2, 3], [1, 0, 3], [2, 2, 2]], I64),
     ints(np.int8, -128, 128, 3, 3), False),
    ("elements_none_folded", "ScatterElements", 13, dict(axis=1), floats(3, 4),
     np.array([[3, 1], [0, 0], [2, -1]], I64), floats(3, 2), True),
]


def model(name, op, opset, attrs, data, idx, upd, fold):
    arrays = (("data", data), ("indices", idx), ("updates", upd))
    elem = mapping.NP_TYPE_TO_TENSOR_TYPE[data.dtype]
    nodes = [helper.make_node(op, ["data", "indices", "updates"], ["S" if fold else "Y"], **attrs)]
    if fold:
        # The scattered constant plus a run-time zero, so the model has an input.
        inits = [numpy_helper.from_array(a, n) for n, a in arrays]
        nodes.append(helper.make_node("Add", ["S", "Z"], ["Y"]))
        inputs = [helper.make_tensor_value_info("Z", elem, [1])]
    else:
        inits = []
        inputs = [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
                  for n, a in arrays]
    graph = helper.make_graph(nodes, name, inputs,
                              [helper.make_tensor_value_info("Y", elem, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort(model_path, feeds, tmp):
    args = ["node", ORT_RUN, model_path, "--out", os.path.join(tmp, "ort")]
    for i, a in enumerate(feeds):
        p = os.path.join(tmp, "in%d.bin" % i)
        a.tofile(p)
        args += ["--in", p]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            dtype = "uint8" if rec["dtype"] == "bool" else rec["dtype"]
            return np.fromfile(rec["file"], dtype=np.dtype(dtype)).reshape(rec["shape"])
    raise RuntimeError("no output from onnxruntime")


def main():
    out_dir = os.path.join(sys.argv[1], "scatter")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, opset, attrs, data, idx, upd, fold in CASES:
            d = os.path.join(out_dir, "test_scatter_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(model(name, op, opset, attrs, data, idx, upd, fold).SerializeToString())
            feeds = [np.zeros([1], data.dtype)] if fold else [data, idx, upd]
            names = ["Z"] if fold else ["data", "indices", "updates"]
            y = ort(path, feeds, tmp)
            files = [("input_%d" % i, n, a) for i, (n, a) in enumerate(zip(names, feeds))]
            for kind, name_, arr in files + [("output_0", "Y", y)]:
                t = numpy_helper.from_array(np.ascontiguousarray(arr), name_)
                with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
                    f.write(t.SerializeToString())
            print(name, data.shape, "->", y.shape)


if __name__ == "__main__":
    main()
