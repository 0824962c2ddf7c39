#!/usr/bin/env python3
"""Writes the loss cases that the ONNX backend suite leaves out, in its
layout (node/<test>/model.onnx, test_data_set_0/{input,output}_N.pb), with
onnxruntime's outputs as the expected ones: int32 targets, logits large
enough to overflow a naive exp, ignore_index = -1 with a mean and no
weight, every target ignored (0 / 0: NaN in onnxruntime and in the ONNX
reference), 2-D inputs, opset 12 and 22.

Run by hand (needs Debian's python3-onnx for /usr/bin/python3 and
/work/shared/tools/reference/ort_run.js); the output is committed:
  /usr/bin/python3 gen_loss_cases.py OUT_DIR
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


def make_model(op, attrs, xshape, tdtype, weighted, log_prob, opset):
    tshape = [xshape[0]] + xshape[2:]
    ins = [helper.make_tensor_value_info("x", TP.FLOAT, xshape),
           helper.make_tensor_value_info("target", tdtype, tshape)]
    if weighted:
        ins.append(helper.make_tensor_value_info("weight", TP.FLOAT, [xshape[1]]))
    outs = [helper.make_tensor_value_info("loss", TP.FLOAT, None)]
    if log_prob:
        outs.append(helper.make_tensor_value_info("log_prob", TP.FLOAT, xshape))
    node = helper.make_node(op, [i.name for i in ins], [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "loss", ins, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


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
            outs.append(np.fromfile(j["file"], dtype=np.float32).reshape(j["shape"]))
    return outs


def write_case(out_dir, name, model, arrays):
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with tempfile.TemporaryDirectory() as work:
        outs = run_ort(os.path.join(d, "model.onnx"), arrays, work)
    names = [i.name for i in model.graph.input] + [o.name for o in model.graph.output]
    for i, a in enumerate(arrays + outs):
        kind, k = ("input", i) if i < len(arrays) else ("output", i - len(arrays))
        t = numpy_helper.from_array(a, names[i])
        with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
            f.write(t.SerializeToString())
    print(name, [o.tolist() if o.size < 8 else o.shape for o in outs])


def main():
    out = sys.argv[1]
    rs = np.random.RandomState(25)
    nll, sce = "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"

    x = rs.randn(3, 5, 2).astype(np.float32)
    t = np.array([[-1, 2], [0, -1], [4, 1]], np.int64)
    write_case(out, "test_loss_nll_ii_minus1_mean", make_model(nll, {"ignore_index": -1}, [3, 5, 2],
               TP.INT64, False, False, 13), [x, t])

    t = np.full((3, 2), 7, np.int64)
    w = rs.rand(5).astype(np.float32)
    write_case(out, "test_loss_nll_all_ignored_mean_weight", make_model(nll, {"ignore_index": 7}, [3, 5, 2],
               TP.INT64, True, False, 13), [x, t, w])

    x2 = rs.randn(6, 4).astype(np.float32)
    t2 = np.array([0, 2, 3, 2, 1, 3], np.int32)
    w2 = rs.rand(4).astype(np.float32)
    write_case(out, "test_loss_nll_2d_int32_weight_ii_in_range_sum",
               make_model(nll, {"ignore_index": 2, "reduction": "sum"}, [6, 4], TP.INT32, True, False, 12),
               [x2, t2, w2])
    write_case(out, "test_loss_nll_opset22_none", make_model(nll, {"reduction": "none"}, [6, 4],
               TP.INT32, False, False, 22), [x2, t2])

    x3 = (rs.randn(2, 4, 3, 2) * 1000).astype(np.float32)
    t3 = rs.randint(0, 4, size=(2, 3, 2)).astype(np.int32)
    t3[0, 1, 1] = -100
    write_case(out, "test_loss_sce_large_logits_int32_none_log_prob",
               make_model(sce, {"reduction": "none", "ignore_index": -100}, [2, 4, 3, 2], TP.INT32, False,
                          True, 13), [x3, t3])

    x4 = (rs.randn(4, 3) * 50).astype(np.float32)
    t4 = np.array([1, 0, 2, 2], np.int64)
    w4 = rs.rand(3).astype(np.float32)
    write_case(out, "test_loss_sce_weight_mean_opset12", make_model(sce, {}, [4, 3], TP.INT64, True, False, 12),
               [x4, t4, w4])
    t5 = np.array([-1, -1, -1, -1], np.int64)
    write_case(out, "test_loss_sce_all_ignored_mean_log_prob",
               make_model(sce, {"ignore_index": -1}, [4, 3], TP.INT64, False, True, 13), [x4, t5])


if __name__ == "__main__":
    main()
