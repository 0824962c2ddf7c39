#!/usr/bin/python3
"""Generates tests/conformance/old_cases: opset 6-9 forms of common ops
(BatchNormalization spatial, Upsample-7/9, Pad-2 with a pads attribute,
Slice-1 with attributes, Concat/Flatten at opset 7, and ImageScaler and
Crop, dropped from ONNX after opset 9) in the backend-test
layout.  The expected outputs are onnxruntime's (onnxruntime-node via
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_old_cases.py OUT_DIR
"""
import tempfile
OUT = __import__("sys").argv[1]
TMP = tempfile.mkdtemp()
import json, os, subprocess, sys, numpy as np
from onnx import TensorProto as TP, helper, numpy_helper
rng = np.random.default_rng(7)
F = TP.FLOAT
def vi(n, s): return helper.make_tensor_value_info(n, F, s)
def case(name, opset, nodes, feeds, outs, inits=[]):
    g = helper.make_graph(nodes, name, [vi(n, x.shape) for n, x in feeds], [vi(n, None) for n in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 3
    d = OUT + "/old/test_" + name; os.makedirs(d + "/test_data_set_0", exist_ok=True)
    open(d + "/model.onnx", "wb").write(m.SerializeToString())
    args = ["node", "/work/shared/tools/reference/ort_run.js", d + "/model.onnx", "--out", TMP + "/ort"]
    for k, (n, x) in enumerate(feeds):
        x.tofile(TMP + "/in%d.bin" % k); args += ["--in", TMP + "/in%d.bin" % k]
        open(d + "/test_data_set_0/input_%d.pb" % k, "wb").write(numpy_helper.from_array(x, n).SerializeToString())
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode: print(name, "ORT FAILS:", r.stderr[-300:]); return
    k = 0
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            y = np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"])).reshape(rec["shape"])
            open(d + "/test_data_set_0/output_%d.pb" % k, "wb").write(numpy_helper.from_array(y, outs[k]).SerializeToString()); k += 1
    print(name, "ok")
x = (rng.random((1, 2, 3, 4), dtype=np.float32) * 4 - 2)
P = [numpy_helper.from_array(rng.random(2, dtype=np.float32) + 0.5, n) for n in ("s", "b", "m", "v")]
case("bn7_spatial", 7, [helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["Y"], spatial=1, epsilon=1e-3)], [("X", x)], ["Y"], P)
case("upsample7", 7, [helper.make_node("Upsample", ["X"], ["Y"], scales=[1.0, 1.0, 2.0, 3.0], mode="nearest")], [("X", x)], ["Y"])
case("upsample9", 9, [helper.make_node("Constant", [], ["sc"], value=numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32))), helper.make_node("Upsample", ["X", "sc"], ["Y"], mode="linear")], [("X", x)], ["Y"])
case("pad2", 7, [helper.make_node("Pad", ["X"], ["Y"], pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="constant", value=1.5)], [("X", x)], ["Y"])
case("pad2_reflect", 7, [helper.make_node("Pad", ["X"], ["Y"], pads=[0, 0, 1, 2, 0, 0, 2, 1], mode="reflect")], [("X", x)], ["Y"])
case("slice1", 7, [helper.make_node("Slice", ["X"], ["Y"], axes=[2, 3], starts=[1, -3], ends=[3, 100])], [("X", x)], ["Y"])
case("concat7", 7, [helper.make_node("Concat", ["X", "X"], ["Y"], axis=1), helper.make_node("Flatten", ["Y"], ["Z"], axis=2)], [("X", x)], ["Z"])
case("imagescaler", 7, [helper.make_node("ImageScaler", ["X"], ["Y"], scale=0.5, bias=[1.0, -2.0])], [("X", x)], ["Y"])
case("crop", 7, [helper.make_node("Crop", ["X"], ["Y"], border=[1, 0, 1, 1])], [("X", x)], ["Y"])
case("crop_scale", 7, [helper.make_node("Crop", ["X"], ["Y"], border=[1, 1, 0, 0], scale=[2, 2])], [("X", x)], ["Y"])
