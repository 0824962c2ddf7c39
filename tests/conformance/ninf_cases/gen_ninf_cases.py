#!/usr/bin/env python3
"""Writes reduction and softmax cases over rows that are all -inf, all
+inf, or hold +inf or NaN, in the ONNX backend suite's layout, with
onnxruntime's outputs as the expected ones (each also checked against
numpy, the ONNX reference's arithmetic, before it is written).

Run by hand (Debian's python3-onnx for /usr/bin/python3 and
/work/shared/tools/reference/ort_run.js); the output is committed:
  /usr/bin/python3 gen_ninf_cases.py OUT_DIR
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
INF = np.float32(np.inf)


def run_ort(model_path, x, work):
    f = os.path.join(work, "in0.bin")
    x.tofile(f)
    r = subprocess.run(["node", ORT_RUN, model_path, "--out", os.path.join(work, "ort"), "--in", f],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        j = json.loads(line)
        if j.get("kind") == "output":
            return np.fromfile(j["file"], dtype=np.float32).reshape(j["shape"])
    raise RuntimeError(r.stdout + r.stderr)


def write_case(out_dir, name, op, attrs, x, opset, expect, axes=None):
    ins = [helper.make_tensor_value_info("x", TP.FLOAT, x.shape)]
    inits, node_ins = [], ["x"]
    if axes is not None:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        node_ins.append("axes")
    node = helper.make_node(op, node_ins, ["y"], **attrs)
    graph = helper.make_graph([node], name, ins, [helper.make_tensor_value_info("y", TP.FLOAT, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with tempfile.TemporaryDirectory() as work:
        y = run_ort(os.path.join(d, "model.onnx"), x, work)
    np.testing.assert_allclose(y, expect.astype(np.float32), rtol=1e-6)  # NaN and inf in place
    for kind, a, n in (("input", x, "x"), ("output", y, "y")):
        with open(os.path.join(d, "test_data_set_0", "%s_0.pb" % kind), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(name, y.ravel().tolist()[:8])


def main():
    out = sys.argv[1]
    rs = np.random.RandomState(25)
    x = rs.randn(4, 5).astype(np.float32)
    x[1, :] = -INF
    x[2, 1] = INF
    x[3, 2] = np.nan
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # onnxruntime's ReduceMax/Min skip a NaN where numpy propagates it:
        # those rows are left out here.
        xr = x[:3]
        write_case(out, "test_ninf_reduce_max_rows", "ReduceMax", {"keepdims": 0}, xr, 18,
                   xr.max(axis=1), axes=[1])
        xm = -xr
        write_case(out, "test_ninf_reduce_min_rows", "ReduceMin", {"keepdims": 1}, xm, 18,
                   xm.min(axis=1, keepdims=True), axes=[-1])
        write_case(out, "test_ninf_reduce_max_all_axes_opset13", "ReduceMax", {"keepdims": 0},
                   np.full((2, 3), -INF, np.float32), 13, np.array(-INF, np.float32))
        mx = x.max(axis=1, keepdims=True)
        shift = np.where(np.isfinite(mx), mx, 0)
        lse = (np.log(np.exp(x - shift).sum(axis=1, keepdims=True)) + shift)
        write_case(out, "test_ninf_reduce_log_sum_exp_rows", "ReduceLogSumExp", {}, x, 18, lse, axes=[1])
        e = np.exp(x - mx)
        write_case(out, "test_ninf_softmax_rows", "Softmax", {"axis": 1}, x, 13, e / e.sum(axis=1, keepdims=True))
        write_case(out, "test_ninf_log_softmax_rows", "LogSoftmax", {"axis": -1}, x, 13,
                   (x - mx) - np.log(e.sum(axis=1, keepdims=True)))


if __name__ == "__main__":
    main()
