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

Usage: test_derive_tool.py TINYML_COMPILE TINYML_RUN
"""

import os
import struct
import subprocess
import sys
import tempfile
import unittest

COMPILE = RUN = None  # set from the command line in main()


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, data):
    data = data.encode() if isinstance(data, str) else data
    return varint(number << 3 | 2) + varint(len(data)) + data


def value_info(name, elem, dims):
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    tensor_type = field_varint(1, elem) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def model(op, second, second_dims, out_dims):
    node = (field_bytes(1, "x") + field_bytes(1, second) + field_bytes(2, "y") +
            field_bytes(3, "n") + field_bytes(4, op))
    graph = (field_bytes(1, node) + field_bytes(2, "g") +
             field_bytes(11, value_info("x", 1, [2, 3])) +
             field_bytes(11, value_info(second, 7, second_dims)) +
             field_bytes(12, value_info("y", 1, out_dims)))
    return field_varint(1, 8) + field_bytes(8, field_varint(2, 13)) + field_bytes(7, graph)


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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


def main():
    global COMPILE, RUN
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    COMPILE, RUN = sys.argv[1:]
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
