#!/usr/bin/env python3
"""Writes small ONNX models with uint16, uint32 and uint64 inputs and their
expected outputs, for issue 25: Max, Min, Mod, BitShift (both directions),
Pow with a float32 base and an unsigned exponent, Add, Sub, Mul, Div,
Greater, LessOrEqual, Equal and Casts to float32 and int64 and from int32,
on boundary values
(0, 1, the maximum, values just below and above 2^15 / 2^31 / 2^63, shifts
of the width and more) with a broadcast second operand.

The expected outputs are numpy's (its unsigned arithmetic, and its float64
pow cast to float32, as onnxruntime's std::pow in double), so nothing here
depends on libtinyml.  Needs the onnx Python package and numpy.

Usage: gen.py   (rewrites models/, data/ and manifest.json)
"""
import json
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = [(TensorProto.UINT16, np.uint16, "uint16"), (TensorProto.UINT32, np.uint32, "uint32"),
         (TensorProto.UINT64, np.uint64, "uint64")]
ROWS, COLS = 2, 12


def boundary(t):
    bits = np.iinfo(t).bits
    top = 1 << (bits - 1)
    vals = [0, 1, 2, 3, 7, top - 1, top, top + 1, top + 12345, (1 << bits) - 1,
            (1 << bits) - 2, 0xFFFF * (bits > 16) + 40000 * (bits == 16)]
    return np.array(vals, dtype=t)


def inputs(t):
    bits = np.iinfo(t).bits
    a = np.stack([boundary(t), boundary(t)[::-1]])
    b = boundary(t)[[3, 1, 5, 6, 7, 9, 4, 2, 8, 10, 6, 9]]  # nonzero: Mod's divisor
    s = np.array([0, 1, bits - 1, bits, bits + 3, 1, 7, bits // 2, 3, (1 << bits) - 1, 2, 0],
                 dtype=t)
    x = np.array([2.0, -1.0, -1.0, 0.5, -2.0, 1.0, -0.0, 1.5, -1.0, 3.0, 0.0, -1.0],
                 dtype=np.float32)
    e = np.array([3, (1 << 24) + 1 if bits > 16 else 65535, (1 << 31) + 1 if bits > 16 else 0x7FFF, 10, 3, (1 << bits) - 1,
                  5, 20, 2, 4, 0, (1 << 53) + 1 if bits == 64 else 9], dtype=t)
    n = np.array([-1, -2, 0, 1, -32768, 32767, -2147483648, 2147483647, 65536, -65537, 7, -7],
                 dtype=np.int32)
    return [a, b, s, x, e, n]


def expected(t, a, b, s, x, e, n):
    bits = np.iinfo(t).bits
    shl = np.where(s < bits, np.left_shift(a, np.minimum(s, bits - 1).astype(t)), 0).astype(t)
    shr = np.where(s < bits, np.right_shift(a, np.minimum(s, bits - 1).astype(t)), 0).astype(t)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        pw = np.power(x.astype(np.float64), e.astype(np.float64)).astype(np.float32)
    return [np.maximum(a, b), np.minimum(a, b), np.mod(a, b), shl, shr, pw,
            a + b, a - b, a * b, a // b, a > b, a <= b, a == b,
            a.astype(np.float32), a.astype(np.int64), n.astype(t)]


def model(elem, name):
    nodes = [
        helper.make_node("Max", ["A", "B"], ["max"]),
        helper.make_node("Min", ["A", "B"], ["min"]),
        helper.make_node("Mod", ["A", "B"], ["mod"]),
        helper.make_node("BitShift", ["A", "S"], ["shl"], direction="LEFT"),
        helper.make_node("BitShift", ["A", "S"], ["shr"], direction="RIGHT"),
        helper.make_node("Pow", ["X", "E"], ["pow"]),
        helper.make_node("Add", ["A", "B"], ["add"]),
        helper.make_node("Sub", ["A", "B"], ["sub"]),
        helper.make_node("Mul", ["A", "B"], ["mul"]),
        helper.make_node("Div", ["A", "B"], ["div"]),
        helper.make_node("Greater", ["A", "B"], ["gt"]),
        helper.make_node("LessOrEqual", ["A", "B"], ["le"]),
        helper.make_node("Equal", ["A", "B"], ["eq"]),
        helper.make_node("Cast", ["A"], ["tofloat"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["A"], ["toint64"], to=TensorProto.INT64),
        helper.make_node("Cast", ["N"], ["fromint"], to=elem),
    ]
    ins = [helper.make_tensor_value_info("A", elem, [ROWS, COLS]),
           helper.make_tensor_value_info("B", elem, [COLS]),
           helper.make_tensor_value_info("S", elem, [COLS]),
           helper.make_tensor_value_info("X", TensorProto.FLOAT, [COLS]),
           helper.make_tensor_value_info("E", elem, [COLS]),
           helper.make_tensor_value_info("N", TensorProto.INT32, [COLS])]
    outs = [helper.make_tensor_value_info(n, elem, [ROWS, COLS]) for n in
            ("max", "min", "mod", "shl", "shr")]
    outs.append(helper.make_tensor_value_info("pow", TensorProto.FLOAT, [COLS]))
    outs += [helper.make_tensor_value_info(n, elem, [ROWS, COLS]) for n in
             ("add", "sub", "mul", "div")]
    outs += [helper.make_tensor_value_info(n, TensorProto.BOOL, [ROWS, COLS]) for n in
             ("gt", "le", "eq")]
    outs += [helper.make_tensor_value_info("tofloat", TensorProto.FLOAT, [ROWS, COLS]),
             helper.make_tensor_value_info("toint64", TensorProto.INT64, [ROWS, COLS]),
             helper.make_tensor_value_info("fromint", elem, [COLS])]
    g = helper.make_graph(nodes, name, ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def entry(kind, index, arr, dtype, file, source=None):
    d = {"kind": kind, "index": index, "dtype": dtype, "shape": list(arr.shape), "file": file}
    if source:
        d["source"] = source
    return d


def main():
    os.makedirs(os.path.join(HERE, "models"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    manifest = []
    for elem, t, tname in TYPES:
        name = "unsigned_ops_" + tname
        save(model(elem, name), os.path.join(HERE, "models", name + ".onnx"))
        ins = inputs(t)
        outs = expected(t, *ins)
        case = {"label": "boundary", "exact": True, "inputs": [], "outputs": []}
        for i, arr in enumerate(ins):
            f = "data/%s_in_%d.bin" % (name, i)
            arr.tofile(os.path.join(HERE, f))
            case["inputs"].append(entry("input", i, arr, str(arr.dtype), f))
        for i, arr in enumerate(outs):
            f = "data/%s_out_%d.bin" % (name, i)
            arr.tofile(os.path.join(HERE, f))
            case["outputs"].append(entry("output", i, arr, str(arr.dtype), f,
                                         "numpy %s" % np.__version__))
        manifest.append({"model": "models/%s.onnx" % name, "format": "onnx", "cases": [case]})
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
