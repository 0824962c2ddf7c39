#!/usr/bin/env python3
"""Pinned inputs (`tinyml.fixed_value`) through the tools, as a user meets them.

The model, TOSA MLIR written here: y = Reshape(x, shape) with `shape` an
int64 [2] input pinned to [3, 2] (what the ONNX importer emits when a
static-shape compile fixes a graph input), and an empty int64 [0] input
`axes`, pinned too, that the body ignores.  `tinyml-run --info` prints the
fixed values; random inputs (--bench) use them, so the run succeeds; with
input files, the right value gives y = x (Reshape keeps row-major order,
Python's own bytes are the reference) and any other value fails naming
the input.

Usage: test_pinned_tool.py TINYML_COMPILE TINYML_RUN
"""

import os
import struct
import subprocess
import sys
import tempfile
import unittest

COMPILE = RUN = None  # set from the command line in main()

MODEL = """func.func @main(%x: tensor<2x3xf32> {tinyml.name = "x"},
    %shape: tensor<2xi64> {tinyml.name = "shape",
                           tinyml.fixed_value = dense<[3, 2]> : tensor<2xi64>},
    %axes: tensor<0xi64> {tinyml.name = "axes", tinyml.fixed_value = dense<> : tensor<0xi64>})
    -> (tensor<3x2xf32> {tinyml.name = "y"}) {
  %s = tosa.const_shape {values = dense<[3, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %y = tosa.reshape %x, %s : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
"""


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class PinnedTool(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        model = os.path.join(self.tmp.name, "pinned.mlir")
        with open(model, "w") as f:
            f.write(MODEL)
        self.module = os.path.join(self.tmp.name, "pinned.tmod")
        r = run(COMPILE, model, "-o", self.module)
        self.assertEqual(r.returncode, 0, r.stderr)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_info_prints_the_fixed_values(self):
        r = run(RUN, self.module, "--info")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('input 0 "x": float32 [2, 3], 24 bytes\n', r.stdout)
        self.assertIn('input 1 "shape": int64 [2], 16 bytes, fixed value [3, 2]\n', r.stdout)
        self.assertIn('input 2 "axes": int64 [0], 0 bytes, fixed value []\n', r.stdout)
        self.assertIn('output 0 "y": float32 [3, 2], 24 bytes\n', r.stdout)

    def test_random_inputs_use_the_fixed_values(self):
        r = run(RUN, self.module, "--bench", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_input_files_are_checked(self):
        values = [1.5, -2.0, 3.25, 0.0, 7.0, -0.5]
        x = self.write("x.bin", struct.pack("<6f", *values))
        axes = self.write("axes.bin", b"")
        out = os.path.join(self.tmp.name, "out")
        right = self.write("right.bin", struct.pack("<2q", 3, 2))
        r = run(RUN, self.module, "--input", x, "--input", right, "--input", axes,
                "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "output_0.bin"), "rb") as f:
            self.assertEqual(list(struct.unpack("<6f", f.read())), values)
        wrong = self.write("wrong.bin", struct.pack("<2q", 2, 3))
        r = run(RUN, self.module, "--input", x, "--input", wrong, "--input", axes,
                "--output-dir", out)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("input 1 'shape' must equal the value fixed at compile time", r.stderr)
        self.assertIn("element 0 is 2, the fixed value has 3", r.stderr)


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
