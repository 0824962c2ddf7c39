#!/usr/bin/env python3
"""Graph inputs fixed by the model's declared shapes, as a user sees it.

The models, encoded here by hand (protobuf wire format, standard library
only):
- y = Tile(x, repeats), x float [2, 3], repeats an int64 graph input of
  shape [2], y declared [4, 3].  Only repeats = [2, 1] gives that shape, so
  tinyml-compile compiles it with no option, says on stderr that it fixed
  'repeats' by the declared shape of 'y', and the module still takes both
  inputs (tinyml-run --info).  Run with repeats = [2, 1], the output is x
  tiled (Python's list arithmetic is the reference).  Binding repeats to
  another value contradicts the declared shape: an error naming both.
- y = Reshape(x, shape), shape a graph input: several shapes give y's
  shape (-1, 0), so it is still refused with the hint to bind 'shape'.
- y = Concat(e, x) with e empty: an int64 e is pinned (no elements), a
  float16 e refused by name.

Usage: test_derive_tool.py TINYML_COMPILE TINYML_RUN
"""

import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_wire import (field_bytes, field_varint, main as wire_main,  # noqa: E402
                       model as wire_model, node, run, value_info)

COMPILE = RUN = None  # set from the command line by onnx_wire.main()
# Concat's axis = 0: AttributeProto{name = 1, i = 3, type = 20 (INT)}, node field 5.
AXIS0 = field_bytes(5, field_bytes(1, "axis") + field_varint(3, 0) + field_varint(20, 2))


def model(op, second, second_dims, out_dims):
    return wire_model([node(op, ["x", second], ["y"], "n")],
                      [value_info("x", 1, [2, 3]), value_info(second, 7, second_dims)],
                      [value_info("y", 1, out_dims)])


class DerivedInputs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.module = os.path.join(self.tmp.name, "m.tmod")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_tile_repeats_fixed_by_declared_shape(self):
        onnx = self.write("tile.onnx", model("Tile", "repeats", [2], [4, 3]))
        r = run(COMPILE, onnx, "-o", self.module)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("input 'repeats' fixed to [2, 1] by the declared shape of 'y'", r.stderr)
        r = run(RUN, "--info", self.module)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("repeats", r.stdout)
        x = [0.5 * i - 1 for i in range(6)]
        xin = self.write("x.bin", struct.pack("<6f", *x))
        rin = self.write("r.bin", struct.pack("<2q", 2, 1))
        out = os.path.join(self.tmp.name, "out")
        r = run(RUN, self.module, "--input", xin, "--input", rin, "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "output_0.bin"), "rb") as f:
            data = f.read()
        self.assertEqual(list(struct.unpack("<12f", data)), x + x)

    def test_contradicting_binding_names_both(self):
        onnx = self.write("tile.onnx", model("Tile", "repeats", [2], [4, 3]))
        r = run(COMPILE, onnx, "-o", self.module, "--input-value", "repeats=1,1")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("declared shape of 'y'", r.stderr)
        self.assertIn("--input-value", r.stderr)

    def test_reshape_shape_input_keeps_the_hint(self):
        onnx = self.write("reshape.onnx", model("Reshape", "shape", [2], [3, 2]))
        r = run(COMPILE, onnx, "-o", self.module)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("input 'shape' of the graph", r.stderr)
        self.assertIn("--input-value shape=", r.stderr)
        self.assertNotIn("fixed to", r.stderr)

    def test_empty_inputs(self):
        # An empty int64 input is pinned to its one value (no elements) and
        # stays an input; an empty float16 one is refused by name (its
        # conversion to f32 is a TOSA op, which takes no empty tensor).
        for elem, ok in ((7, True), (10, False)):
            m = wire_model([node("Concat", ["e", "x"], ["y"], "cat", attrs=AXIS0)],
                           [value_info("e", elem, [0]), value_info("x", elem, [3])],
                           [value_info("y", elem, [3])])
            r = run(COMPILE, self.write("empty.onnx", m), "-o", self.module)
            if ok:
                self.assertEqual(r.returncode, 0, r.stderr)
                r = run(RUN, "--info", self.module)
                self.assertIn('"e"', r.stdout)
                self.assertIn("fixed value []", r.stdout)
            else:
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("input 'e' is an empty FLOAT16 tensor", r.stderr)


if __name__ == "__main__":
    sys.exit(wire_main(__doc__, globals(), ["COMPILE", "RUN"]))
