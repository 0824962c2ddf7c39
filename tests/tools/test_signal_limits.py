#!/usr/bin/env python3
"""MelWeightMatrix's edge frequencies come from the model: an infinite
one, or one so large that its spectrogram bin overflows int64, must be
refused by name, never cast (undefined in C) into an index.  The same
model with ordinary edges compiles, so the refusals are about the edges.

Usage: test_signal_limits.py TINYML_COMPILE
"""

import math
import struct
import sys
import tempfile
import unittest

from onnx_wire import (compile_bytes, ONNX_FLOAT, field_bytes, field_varint, main, model, node, tensor,
                       value_info)

COMPILE = None  # set from the command line in main()
ONNX_INT64 = 7


def attr_int(name, value):
    """AttributeProto{name = 1, i = 3, type = 20 (INT = 2)}, as node field 5."""
    return field_bytes(5, field_bytes(1, name) + field_varint(3, value) + field_varint(20, 2))


def mel(lower, upper):
    """MelWeightMatrix(8 bins, dft_length 64, 16 kHz, lower, upper) -> [33, 8]."""
    def i64(name, v):
        return tensor(name, ONNX_INT64, [], struct.pack("<q", v))

    def f32(name, v):
        return tensor(name, ONNX_FLOAT, [], struct.pack("<f", v))

    inits = [i64("bins", 8), i64("dft", 64), i64("rate", 16000), f32("lo", lower),
             f32("hi", upper)]
    return model(nodes=[node("MelWeightMatrix", ["bins", "dft", "rate", "lo", "hi"], ["y"],
                             "mel", attrs=attr_int("output_datatype", ONNX_FLOAT))],
                 inputs=[], outputs=[value_info("y", ONNX_FLOAT, [33, 8])],
                 initializers=inits, opsets=(("", 17),))


class MelEdges(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def compile(self, data):
        return compile_bytes(COMPILE, self.tmp.name, data)

    def test_ordinary_edges_compile(self):
        r = self.compile(mel(100.0, 4000.0))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_infinite_edge_refused(self):
        r = self.compile(mel(100.0, math.inf))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("'mel'", r.stderr)
        self.assertIn("upper_edge_hertz inf must be finite", r.stderr)

    def test_overflowing_bin_refused(self):
        # 3e38 Hz is 2595 * log10(...) mels; back in Hz its bins overflow.
        r = self.compile(mel(100.0, 3e38))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("outside [0, 33)", r.stderr)


if __name__ == "__main__":
    sys.exit(main(__doc__, globals(), ["COMPILE"]))
