#!/usr/bin/env python3
"""Writes a small quantised CNN in ONNX's two quantised forms, with
onnxruntime's outputs as the expected values.

The network: Conv 3x3 + Relu, depthwise Conv 3x3, a residual Add, MaxPool
2x2, Conv 1x1 + Relu, GlobalAveragePool, Flatten and Gemm.  Weights and
biases are seeded random floats; every activation's scale and zero point
come from its range on a float forward pass of a calibration input (numpy,
here), weights are symmetric int8 (per channel for the two full convs, per
tensor for the depthwise one and the Gemm), biases int32 at x_scale *
w_scale.  Two forms:
  - qdq: DequantizeLinear / QuantizeLinear around float Conv, Add, MaxPool,
    GlobalAveragePool, Flatten and Gemm (as onnxruntime's quantiser writes);
  - qop: QLinearConv, com.microsoft's QLinearAdd, QLinearLeakyRelu,
    QLinearGlobalAveragePool and QGemm, and an int8 MaxPool.
Beside them, misc_*: QLinearSigmoid, QLinearMul and QLinearMatMul, and
qdq_fallback_int8: a QDQ Conv the int8 path does not take (auto_pad),
computed in float.
each with int8 and with uint8 activations.  Inputs and outputs are the
quantised tensors, so the test compares within one quantisation step.

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
RNG = np.random.default_rng(25)
F32 = np.float32


# ---- float reference for calibration ----------------------------------------

def conv(x, w, b, pad, group=1):
    n, c, h, wd = x.shape
    o, ic, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow), F32)
    og = o // group
    for k in range(o):
        g = k // og
        for i in range(ic):
            for dy in range(kh):
                for dx in range(kw):
                    y[:, k] += w[k, i, dy, dx] * xp[:, g * ic + i, dy:dy + oh, dx:dx + ow]
    return y + b.reshape(1, -1, 1, 1)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def weights():
    return {
        "w1": RNG.normal(0, 0.3, (8, 4, 3, 3)).astype(F32), "b1": RNG.normal(0, 0.1, 8).astype(F32),
        "w2": RNG.normal(0, 0.3, (8, 1, 3, 3)).astype(F32), "b2": RNG.normal(0, 0.1, 8).astype(F32),
        "w3": RNG.normal(0, 0.3, (16, 8, 1, 1)).astype(F32), "b3": RNG.normal(0, 0.1, 16).astype(F32),
        "w4": RNG.normal(0, 0.3, (10, 16)).astype(F32), "b4": RNG.normal(0, 0.1, 10).astype(F32),
    }


def forward(x, p):
    """Every activation the quantised graph has, in float."""
    a = {"x": x}
    a["c1"] = np.maximum(conv(x, p["w1"], p["b1"], 1), 0)
    a["c2"] = conv(a["c1"], p["w2"], p["b2"], 1, group=8)
    s = a["sum"] = a["c1"] + a["c2"]
    a["add"] = np.where(s >= 0, s, 0.1 * s)
    a["pool"] = maxpool2(a["add"])
    a["c3"] = np.maximum(conv(a["pool"], p["w3"], p["b3"], 0), 0)
    a["gap"] = a["c3"].mean(axis=(2, 3), keepdims=True)
    a["y"] = a["gap"].reshape(1, 16) @ p["w4"].T + p["b4"]
    return a


# ---- quantisation parameters -------------------------------------------------

def act_params(v, dtype):
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    qmin, qmax = (0, 255) if dtype == np.uint8 else (-128, 127)
    scale = F32((hi - lo) / 255.0 or 1.0)
    zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmax))
    return scale, zp


def quantise(v, scale, zp, dtype):
    qmin, qmax = (0, 255) if dtype == np.uint8 else (-128, 127)
    return np.clip(np.rint(v / scale) + zp, qmin, qmax).astype(dtype)


def weight_params(w, per_channel):
    axes = tuple(range(1, w.ndim))
    m = np.abs(w).max(axis=axes) if per_channel else np.array([np.abs(w).max()])
    s = (m / 127.0).astype(F32)
    q = np.clip(np.rint(w / s.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
    return q, s


# ---- graphs -----------------------------------------------------------------

class Graph:
    def __init__(self, dtype):
        self.nodes, self.inits, self.dtype = [], [], dtype
        self.ttype = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8

    def const(self, name, a):
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(self, op, ins, out, domain="", **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out, domain=domain, **attrs))
        return out

    def qparams(self, name, scale, zp):
        return (self.const(name + "_s", F32(scale)),
                self.const(name + "_z", np.array(zp, self.dtype)))


def quantised(p, a, dtype):
    """Scales, zero points and integer weights shared by both forms."""
    q = {k: act_params(a[k], dtype) for k in ("x", "c1", "c2", "sum", "add", "c3", "gap", "y")}
    q["pool"] = q["add"]  # MaxPool keeps its input's quantisation
    w = {"w1": weight_params(p["w1"], True), "w2": weight_params(p["w2"], False),
         "w3": weight_params(p["w3"], True), "w4": weight_params(p["w4"], False)}
    ins = {"w1": "x", "w2": "c1", "w3": "pool", "w4": "gap"}
    for k, src in ins.items():
        bs = (q[src][0] * w[k][1]).astype(F32)
        b = "b" + k[1]
        w[b] = (np.rint(p[b] / bs).astype(np.int32), bs)
    return q, w


def build_qdq(g, q, w):
    def dq(name, src, s, z, axis=None):
        ins = [src, g.const(name + "_s", s)] + ([g.const(name + "_z", z)] if z is not None else [])
        return g.node("DequantizeLinear", ins, name, **({"axis": axis} if axis is not None else {}))

    def qdq(name, v, key):
        s, z = g.qparams(name + "_q", *q[key])
        qv = g.node("QuantizeLinear", [v, s, z], name + "_q")
        return g.node("DequantizeLinear", [qv, s, z], name + "_dq")

    def wdq(k):
        wq, ws = w[k]
        per = ws.size > 1
        wname = dq(k + "_dq", g.const(k, wq), ws if per else ws[0], np.zeros(ws.size, np.int8) if per else np.int8(0), 0 if per else None)
        b = "b" + k[1]
        bq, bs = w[b]
        bname = dq(b + "_dq", g.const(b, bq), bs if per else bs[0], None, 0 if per else None)
        return wname, bname

    x = dq("x_dq", "X", q["x"][0], np.array(q["x"][1], g.dtype))
    w1, b1 = wdq("w1")
    c1 = qdq("c1", g.node("Relu", [g.node("Conv", [x, w1, b1], "c1", pads=[1, 1, 1, 1])], "r1"), "c1")
    w2, b2 = wdq("w2")
    c2 = qdq("c2", g.node("Conv", [c1, w2, b2], "c2", pads=[1, 1, 1, 1], group=8), "c2")
    s = qdq("sum", g.node("Add", [c1, c2], "sum"), "sum")
    add = qdq("add", g.node("LeakyRelu", [s], "add", alpha=0.1), "add")
    pool = qdq("pool", g.node("MaxPool", [add], "pool", kernel_shape=[2, 2], strides=[2, 2]), "pool")
    w3, b3 = wdq("w3")
    c3 = qdq("c3", g.node("Relu", [g.node("Conv", [pool, w3, b3], "c3")], "r3"), "c3")
    gap = qdq("gap", g.node("GlobalAveragePool", [c3], "gap"), "gap")
    flat = qdq("flat", g.node("Flatten", [gap], "flat"), "gap")
    w4, b4 = wdq("w4")
    y = g.node("Gemm", [flat, w4, b4], "gemm", transB=1)
    s, z = g.qparams("y", *q["y"])
    g.node("QuantizeLinear", [y, s, z], "Y")


def build_qop(g, q, w):
    def qconv(name, src, key, k, **attrs):
        wq, ws = w[k]
        bq, _ = w["b" + k[1]]
        xs, xz = g.qparams(name + "_x", *q[src])
        ys, yz = g.qparams(name + "_y", *q[key])
        wz = np.zeros(ws.size, np.int8) if ws.size > 1 else np.int8(0)
        ins = [src_name[src], xs, xz, g.const(k, wq), g.const(k + "_s", ws if ws.size > 1 else ws[0]),
               g.const(k + "_z", wz), ys, yz, g.const("b" + k[1], bq)]
        src_name[key] = g.node("QLinearConv", ins, name, **attrs)

    ms = "com.microsoft"
    src_name = {"x": "X"}
    qconv("c1", "x", "c1", "w1", pads=[1, 1, 1, 1])
    qconv("c2", "c1", "c2", "w2", pads=[1, 1, 1, 1], group=8)
    ins = [src_name["c1"], *g.qparams("a1", *q["c1"]), src_name["c2"], *g.qparams("a2", *q["c2"]),
           *g.qparams("a3", *q["sum"])]
    s = g.node("QLinearAdd", ins, "sum", domain=ms)
    ins = [s, *g.qparams("l1", *q["sum"]), *g.qparams("l2", *q["add"])]
    add = g.node("QLinearLeakyRelu", ins, "add", domain=ms, alpha=0.1)
    src_name["pool"] = g.node("MaxPool", [add], "pool", kernel_shape=[2, 2], strides=[2, 2])
    qconv("c3", "pool", "c3", "w3")
    ins = [src_name["c3"], *g.qparams("g1", *q["c3"]), *g.qparams("g2", *q["gap"])]
    gap = g.node("QLinearGlobalAveragePool", ins, "gap", domain=ms, channels_last=0)
    flat = g.node("Flatten", [gap], "flat")
    wq, ws = w["w4"]
    bq, _ = w["b4"]
    ins = [flat, *g.qparams("q1", *q["gap"]), g.const("w4", wq), g.const("w4_s", ws[0]),
           g.const("w4_z", np.int8(0)), g.const("b4", bq), *g.qparams("q2", *q["y"])]
    g.node("QGemm", ins, "Y", domain=ms, transB=1)


def build_misc(g, dtype):
    """QLinearSigmoid, QLinearMul (x * sigmoid(x)) and QLinearMatMul."""
    x = RNG.uniform(-3, 3, (1, 4, 6, 6)).astype(F32)
    sig = 1 / (1 + np.exp(-x))
    silu = x * sig
    b = RNG.normal(0, 0.3, (36, 5)).astype(F32)
    bq, bs = weight_params(b, False)
    y = silu.reshape(4, 36) @ b
    q = {k: act_params(v, dtype) for k, v in (("x", x), ("sig", sig), ("silu", silu), ("y", y))}
    ms = "com.microsoft"
    s = g.node("QLinearSigmoid", ["X", *g.qparams("s1", *q["x"]), *g.qparams("s2", *q["sig"])],
               "sig", domain=ms)
    ins = ["X", *g.qparams("m1", *q["x"]), s, *g.qparams("m2", *q["sig"]), *g.qparams("m3", *q["silu"])]
    m = g.node("QLinearMul", ins, "silu", domain=ms)
    r = g.node("Reshape", [m, g.const("shape", np.array([4, 36], np.int64))], "rows")
    ins = [r, *g.qparams("y1", *q["silu"]), g.const("b", bq), g.const("b_s", bs[0]),
           g.const("b_z", np.int8(0)), *g.qparams("y2", *q["y"])]
    g.node("QLinearMatMul", ins, "Y")
    return q["x"], [1, 4, 6, 6], [4, 5]


def write_misc(path, dtype):
    g = Graph(dtype)
    xq, xshape, yshape = build_misc(g, dtype)
    graph = helper.make_graph(g.nodes, "misc", [helper.make_tensor_value_info("X", g.ttype, xshape)],
                              [helper.make_tensor_value_info("Y", g.ttype, yshape)], g.inits)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tinyml onnx_quant/gen.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return xq, xshape


def write_fallback(path):
    """A QDQ Conv the int8 path leaves to float (auto_pad; stride 2, int8
    weights with a non-zero zero point): still within a step."""
    g = Graph(np.int8)
    w = RNG.normal(0, 0.3, (3, 2, 3, 3)).astype(F32)
    ws = F32(np.abs(w).max() / 120)
    wq = np.clip(np.rint(w / ws) + 3, -128, 127).astype(np.int8)
    xf = RNG.uniform(-1, 1, (1, 2, 5, 5)).astype(F32)
    xs, xz = act_params(xf, np.int8)
    x = g.node("DequantizeLinear", ["X", *g.qparams("x", xs, xz)], "x_dq")
    wd = g.node("DequantizeLinear", [g.const("w", wq), g.const("w_s", ws), g.const("w_z", np.int8(3))], "w_dq")
    c = g.node("Conv", [x, wd], "conv", auto_pad="SAME_UPPER", strides=[2, 2])
    g.node("QuantizeLinear", [c, *g.qparams("y", F32(0.05), 2)], "Y")
    graph = helper.make_graph(g.nodes, "fallback", [helper.make_tensor_value_info("X", g.ttype, [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("Y", g.ttype, [1, 3, 3, 3])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tinyml onnx_quant/gen.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return quantise(xf, xs, xz, np.int8)


def write_model(path, form, dtype, q, w):
    g = Graph(dtype)
    (build_qdq if form == "qdq" else build_qop)(g, q, w)
    graph = helper.make_graph(g.nodes, form, [helper.make_tensor_value_info("X", g.ttype, [1, 4, 12, 12])],
                              [helper.make_tensor_value_info("Y", g.ttype, [1, 10])], g.inits)
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid("com.microsoft", 1)] if form == "qop" else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tinyml onnx_quant/gen.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def run_ort(ort, model, x, prefix):
    x.tofile(prefix + "_feed.bin")
    out = subprocess.run(["node", ort, model, "--in", prefix + "_feed.bin", "--out", prefix],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    rec = [json.loads(l) for l in out if l.startswith("{") and '"output"' in l][0]
    return np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"])).reshape(rec["shape"])


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    ort = os.path.join(sys.argv[1], "tools", "reference", "ort_run.js")
    for d in ("models", "data"):
        os.makedirs(os.path.join(HERE, d), exist_ok=True)
    p = weights()
    calib = RNG.uniform(-1, 1, (1, 4, 12, 12)).astype(F32)
    tests = [RNG.uniform(-1, 1, (1, 4, 12, 12)).astype(F32) for _ in range(3)]
    a = forward(calib, p)
    tmp = tempfile.mkdtemp()
    manifest = []
    for dtype, dname in ((np.int8, "int8"), (np.uint8, "uint8")):
        q, w = quantised(p, a, dtype)
        for form in ("qdq", "qop"):
            name = "cnn_%s_%s" % (form, dname)
            path = os.path.join(HERE, "models", name + ".onnx")
            write_model(path, form, dtype, q, w)
            cases = []
            for i, t in enumerate(tests):
                x = quantise(t, *q["x"], dtype)
                y = run_ort(ort, path, x, os.path.join(tmp, "%s_%d" % (name, i)))
                fi, fo = "data/%s_%d_in.bin" % (name, i), "data/%s_%d_out.bin" % (name, i)
                x.tofile(os.path.join(HERE, fi))
                y.tofile(os.path.join(HERE, fo))
                cases.append({"label": "case%d" % i,
                              "inputs": [{"kind": "input", "index": 0, "dtype": dname,
                                          "shape": list(x.shape), "file": fi}],
                              "outputs": [{"kind": "output", "index": 0, "dtype": dname,
                                           "shape": list(y.shape), "file": fo,
                                           "source": "onnxruntime-node (CPU)"}]})
            manifest.append({"model": "models/%s.onnx" % name, "format": "onnx", "cases": cases})
            print(name, "ok")
        name = "misc_%s" % dname
        path = os.path.join(HERE, "models", name + ".onnx")
        xq, xshape = write_misc(path, dtype)
        x = quantise(RNG.uniform(-3, 3, xshape).astype(F32), *xq, dtype)
        y = run_ort(ort, path, x, os.path.join(tmp, name))
        fi, fo = "data/%s_in.bin" % name, "data/%s_out.bin" % name
        x.tofile(os.path.join(HERE, fi))
        y.tofile(os.path.join(HERE, fo))
        manifest.append({"model": "models/%s.onnx" % name, "format": "onnx", "cases": [
            {"label": "case0",
             "inputs": [{"kind": "input", "index": 0, "dtype": dname, "shape": list(x.shape), "file": fi}],
             "outputs": [{"kind": "output", "index": 0, "dtype": dname, "shape": list(y.shape), "file": fo,
                          "source": "onnxruntime-node (CPU)"}]}]})
        print(name, "ok")
    name = "qdq_fallback_int8"
    path = os.path.join(HERE, "models", name + ".onnx")
    x = write_fallback(path)
    y = run_ort(ort, path, x, os.path.join(tmp, name))
    fi, fo = "data/%s_in.bin" % name, "data/%s_out.bin" % name
    x.tofile(os.path.join(HERE, fi))
    y.tofile(os.path.join(HERE, fo))
    manifest.append({"model": "models/%s.onnx" % name, "format": "onnx", "cases": [
        {"label": "case0",
         "inputs": [{"kind": "input", "index": 0, "dtype": "int8", "shape": list(x.shape), "file": fi}],
         "outputs": [{"kind": "output", "index": 0, "dtype": "int8", "shape": list(y.shape), "file": fo,
                      "source": "onnxruntime-node (CPU)"}]}]})
    print(name, "ok")
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
