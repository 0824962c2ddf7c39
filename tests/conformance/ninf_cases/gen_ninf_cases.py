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


def run_ort(model_path, x, work, dtype=np.float32):
    f = os.path.join(work, "in0.bin")
    x.tofile(f)
    r = subprocess.run(["node", ORT_RUN, model_path, "--out", os.path.join(work, "ort"), "--in", f],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        j = json.loads(line)
        if j.get("kind") == "output":
            return np.fromfile(j["file"], dtype=dtype).reshape(j["shape"])
    raise RuntimeError(r.stdout + r.stderr)


def write_case(out_dir, name, op, attrs, x, opset, expect, axes=None, out_type=TP.FLOAT):
    ins = [helper.make_tensor_value_info("x", TP.FLOAT, x.shape)]
    inits, node_ins = [], ["x"]
    if axes is not None:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        node_ins.append("axes")
    node = helper.make_node(op, node_ins, ["y"], **attrs)
    graph = helper.make_graph([node], name, ins, [helper.make_tensor_value_info("y", out_type, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with tempfile.TemporaryDirectory() as work:
        y = run_ort(os.path.join(d, "model.onnx"), x, work, np.int64 if out_type == TP.INT64 else np.float32)
    np.testing.assert_allclose(y, expect.astype(y.dtype), rtol=1e-6)  # NaN and inf in place
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
        # tosa.argmax compares from -FLT_MAX: a -FLT_MAX after a leading -inf
        # must still win.  (onnxruntime skips NaN where numpy picks the first
        # NaN, so no NaN here.)
        F = np.finfo(np.float32).max
        xa = np.array([[-INF, -F, -INF], [-INF, -INF, -INF], [2, -INF, 2]], np.float32)
        for last in (0, 1):
            ref = np.argmax(xa, axis=1) if not last else 2 - np.argmax(xa[:, ::-1], axis=1)
            write_case(out, "test_ninf_argmax_rows_last%d" % last, "ArgMax",
                       {"axis": 1, "keepdims": 0, "select_last_index": last}, xa, 13, ref, out_type=TP.INT64)
            write_case(out, "test_ninf_argmin_rows_last%d" % last, "ArgMin",
                       {"axis": 1, "keepdims": 0, "select_last_index": last}, -xa, 13, ref, out_type=TP.INT64)
        write_case(out, "test_ninf_log_softmax_rows", "LogSoftmax", {"axis": -1}, x, 13,
                   (x - mx) - np.log(e.sum(axis=1, keepdims=True)))


if __name__ == "__main__":
    main()
