#!/usr/bin/env python3
"""tinyml-compile --input-value, as a user drives it.

The model, encoded here by hand (protobuf wire format, standard library
only): y = Slice(x, starts, ends), x a float input of shape [6], starts
and ends int64 inputs of shape [1].  Unbound, the compile fails naming
the input to bind and the flag; with --input-value starts=1 and ends=4
it compiles, the module takes x alone, and tinyml-run gives x[1:4]
(Python's slice of the same values is the reference).  Malformed flags
are usage errors (exit 2); a binding the library rejects (a name that is
no input, text that does not read as int64) fails the compile (exit 1).

Usage: test_input_value_tool.py TINYML_COMPILE TINYML_RUN
"""

import os
import struct
import sys
import tempfile
import unittest

from onnx_wire import ONNX_FLOAT, ONNX_INT64, main, model, node, run, value_info

COMPILE = RUN = None  # set from the command line in main()


def slice_model():
    return model(nodes=[node("Slice", ["x", "starts", "ends"], ["y"], "slice")],
                 inputs=[value_info("x", ONNX_FLOAT, [6]), value_info("starts", ONNX_INT64, [1]),
                         value_info("ends", ONNX_INT64, [1])],
                 outputs=[value_info("y", ONNX_FLOAT, [3])])


class InputValueTool(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.model = os.path.join(self.tmp.name, "slice.onnx")
        with open(self.model, "wb") as f:
            f.write(slice_model())
        self.module = os.path.join(self.tmp.name, "slice.tmod")

    def tearDown(self):
        self.tmp.cleanup()

    def test_unbound_input_is_named(self):
        r = run(COMPILE, self.model, "-o", self.module)
        self.assertEqual(r.returncode, 1)
        self.assertIn("input 'starts' of the graph", r.stderr)
        self.assertIn("--input-value starts=", r.stderr)

    def test_bound_inputs_leave_the_module(self):
        r = run(COMPILE, self.model, "-o", self.module, "--input-value", "starts=1",
                "--input-value", "ends=4")
        self.assertEqual(r.returncode, 0, r.stderr)
        values = [0.25 * i - 0.5 for i in range(6)]
        inp = os.path.join(self.tmp.name, "x.bin")
        with open(inp, "wb") as f:
            f.write(struct.pack("<6f", *values))
        out = os.path.join(self.tmp.name, "out")
        r = run(RUN, self.module, "--input", inp, "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "output_0.bin"), "rb") as f:
            data = f.read()
        self.assertEqual(len(data), 12)
        self.assertEqual(list(struct.unpack("<3f", data)), values[1:4])

    def test_bad_command_lines(self):
        for args in (["--input-value", "starts"], ["--input-value", "=1"],
                     ["--input-value", "starts="]):
            r = run(COMPILE, self.model, "-o", self.module, *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
        for value, why in (("zz=1", "names no input"), ("starts=a", "does not read"),
                           ("starts=1,2", "element count")):
            r = run(COMPILE, self.model, "-o", self.module, "--input-value", value,
                    "--input-value", "ends=4")
            self.assertEqual(r.returncode, 1, (value, r.stderr))
            self.assertIn(why, r.stderr)


if __name__ == "__main__":
    sys.exit(main(__doc__, globals(), ("COMPILE", "RUN")))
