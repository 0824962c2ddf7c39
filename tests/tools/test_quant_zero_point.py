#!/usr/bin/env python3
"""A zero point must have the type of the tensor it quantises (ONNX's
type constraints: x and x_zero_point are both T1, w and w_zero_point T2).
Read as another type, an INT32 zero point on UINT8 data was silently
truncated to 8 bits; tinyml-compile must refuse it, naming the node and
the input.  Each case is compiled twice from models encoded here by hand:
with the zero point of the right type it compiles (so the model is
otherwise one we take), with an INT32 zero point it fails with the
reason.

Usage: test_quant_zero_point.py TINYML_COMPILE
"""

import struct
import sys
import tempfile
import unittest

from onnx_wire import (compile_bytes, ONNX_FLOAT, ONNX_INT8, ONNX_INT32, ONNX_UINT8, main, model, node,
                       tensor, value_info)

COMPILE = None  # set from the command line in main()

PACK = {ONNX_UINT8: "B", ONNX_INT8: "b", ONNX_INT32: "i", ONNX_FLOAT: "f"}


def const(name, elem, dims, values):
    return tensor(name, elem, dims, struct.pack("<%d%s" % (len(values), PACK[elem]), *values))


def scale(name):
    return const(name, ONNX_FLOAT, [], [0.05])


def qlinear_matmul(a_zp_type):
    """y = QLinearMatMul(a [2, 3] uint8, constant b [3, 2] uint8)."""
    inits = [scale("a_s"), const("a_zp", a_zp_type, [], [3]),
             const("b", ONNX_UINT8, [3, 2], [1, 2, 3, 4, 5, 6]), scale("b_s"),
             const("b_zp", ONNX_UINT8, [], [2]), scale("y_s"), const("y_zp", ONNX_UINT8, [], [10])]
    return model(nodes=[node("QLinearMatMul", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "y_s", "y_zp"],
                             ["y"], "qmm")],
                 inputs=[value_info("a", ONNX_UINT8, [2, 3])],
                 outputs=[value_info("y", ONNX_UINT8, [2, 2])], initializers=inits)


def qlinear_conv(w_zp_type):
    """y = QLinearConv(x [1, 1, 3, 3] uint8, constant w [2, 1, 1, 1] uint8)."""
    inits = [scale("x_s"), const("x_zp", ONNX_UINT8, [], [3]),
             const("w", ONNX_UINT8, [2, 1, 1, 1], [7, 9]), scale("w_s"),
             const("w_zp", w_zp_type, [], [8]), scale("y_s"), const("y_zp", ONNX_UINT8, [], [10])]
    return model(nodes=[node("QLinearConv", ["x", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s", "y_zp"],
                             ["y"], "qconv")],
                 inputs=[value_info("x", ONNX_UINT8, [1, 1, 3, 3])],
                 outputs=[value_info("y", ONNX_UINT8, [1, 2, 3, 3])], initializers=inits)


def qgemm(b_zp_type):
    """y = com.microsoft QGemm(a [2, 3] uint8, constant b [3, 2] int8)."""
    inits = [scale("a_s"), const("a_zp", ONNX_UINT8, [], [3]),
             const("b", ONNX_INT8, [3, 2], [1, -2, 3, -4, 5, -6]), scale("b_s"),
             const("b_zp", b_zp_type, [], [0]), scale("y_s"), const("y_zp", ONNX_UINT8, [], [10])]
    return model(nodes=[node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "", "y_s", "y_zp"],
                             ["y"], "qgemm", domain="com.microsoft")],
                 inputs=[value_info("a", ONNX_UINT8, [2, 3])],
                 outputs=[value_info("y", ONNX_UINT8, [2, 2])], initializers=inits,
                 opsets=(("", 13), ("com.microsoft", 1)))


def dequantize(zp_type):
    """y = DequantizeLinear(x [4] uint8)."""
    inits = [scale("s"), const("zp", zp_type, [], [3])]
    return model(nodes=[node("DequantizeLinear", ["x", "s", "zp"], ["y"], "dq")],
                 inputs=[value_info("x", ONNX_UINT8, [4])],
                 outputs=[value_info("y", ONNX_FLOAT, [4])], initializers=inits)


class ZeroPointType(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def compile(self, data):
        return compile_bytes(COMPILE, self.tmp.name, data)

    def check(self, build, good_type, where, input_index, data_type):
        r = self.compile(build(good_type))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.compile(build(ONNX_INT32))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(where, r.stderr)
        self.assertIn("input %d (zero point): type INT32 differs from %s" % (input_index, data_type),
                      r.stderr)

    def test_qlinear_matmul_input_zero_point(self):
        self.check(qlinear_matmul, ONNX_UINT8, "(QLinearMatMul 'qmm')", 2, "UINT8")

    def test_qlinear_conv_weight_zero_point(self):
        self.check(qlinear_conv, ONNX_UINT8, "(QLinearConv 'qconv')", 5, "UINT8")

    def test_qgemm_weight_zero_point(self):
        self.check(qgemm, ONNX_INT8, "(QGemm 'qgemm')", 5, "INT8")

    def test_dequantize_zero_point(self):
        self.check(dequantize, ONNX_UINT8, "(DequantizeLinear 'dq')", 2, "UINT8")


if __name__ == "__main__":
    sys.exit(main(__doc__, globals(), ("COMPILE",)))
