#!/usr/bin/env python3
"""tinyml-compile --dim and --input-shape (issue 25), as a user drives them.

The model, encoded here by hand (protobuf wire format, standard library
only): y = Neg(x) + ConstantOfShape(Shape(x), 1.5), x a float input of
shape [batch, n].  Without bindings
the compile fails naming 'n' and the input using it; with --dim n=4 it
compiles, the unbound batch becomes 1 and tinyml-compile says so on stderr
(the library's note, printed by the tool); --input-shape sets the whole
shape and leaves nothing to note.  tinyml-run then computes -x + 1.5 exactly (the 1.5 from a
ConstantOfShape of Shape(x), which folds once the shape is bound).

Usage: test_dims_tool.py TINYML_COMPILE TINYML_RUN
"""

import os
import struct
import sys
import tempfile
import unittest

from onnx_wire import (ONNX_FLOAT, field_bytes, field_varint, main, model, node, run, tensor,
                       value_info)

COMPILE = RUN = None  # set from the command line in main()


def neg_model():
    """y = Neg(x) + ConstantOfShape(Shape(x), 1.5): the shape arithmetic
    must fold once the dimensions are bound."""
    # AttributeProto: name = 1, t = 5, type = 20 (TENSOR = 4)
    value = tensor("", ONNX_FLOAT, [1], struct.pack("<f", 1.5))
    attr = field_bytes(5, field_bytes(1, "value") + field_bytes(5, value) + field_varint(20, 4))
    return model(nodes=[node("Neg", ["x"], ["n"], "n"), node("Shape", ["x"], ["s"], "s"),
                        node("ConstantOfShape", ["s"], ["c"], "c", attr),
                        node("Add", ["n", "c"], ["y"], "y")],
                 inputs=[value_info("x", ONNX_FLOAT, ["batch", "n"])],
                 outputs=[value_info("y", ONNX_FLOAT, ["batch", "n"])])


class DimsTool(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.model = os.path.join(self.tmp.name, "neg.onnx")
        with open(self.model, "wb") as f:
            f.write(neg_model())
        self.module = os.path.join(self.tmp.name, "neg.tmod")

    def tearDown(self):
        self.tmp.cleanup()

    def check_negates(self, count):
        values = [0.5 * i - 1.25 for i in range(count)]
        inp = os.path.join(self.tmp.name, "x.bin")
        with open(inp, "wb") as f:
            f.write(struct.pack("<%df" % count, *values))
        out = os.path.join(self.tmp.name, "out")
        r = run(RUN, self.module, "--input", inp, "--output-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "output_0.bin"), "rb") as f:
            got = struct.unpack("<%df" % count, f.read())
        self.assertEqual(list(got), [-v + 1.5 for v in values])

    def test_unbound_dim_is_named(self):
        r = run(COMPILE, self.model, "-o", self.module)
        self.assertEqual(r.returncode, 1)
        self.assertIn("'n' (input 'x' dim 1)", r.stderr)
        self.assertIn("--dim NAME=N", r.stderr)
        self.assertNotIn("'batch'", r.stderr)  # the batch has its default

    def test_dim_binds_and_batch_note(self):
        r = run(COMPILE, self.model, "-o", self.module, "--dim", "n=4")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tinyml-compile: note: ", r.stderr)
        self.assertIn("'batch' (input 'x' dim 0)", r.stderr)
        self.assertIn("compiled as 1", r.stderr)
        self.check_negates(4)

    def test_input_shape(self):
        r = run(COMPILE, self.model, "-o", self.module, "--input-shape", "x=3,5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("note", r.stderr)
        self.check_negates(15)

    def test_bad_command_lines(self):
        for args in (["--dim", "n"], ["--dim", "n=0"], ["--dim", "=3"], ["--input-shape", "x=3,"],
                     ["--input-shape", "x=a"]):
            r = run(COMPILE, self.model, "-o", self.module, *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
        r = run(COMPILE, self.model, "-o", self.module, "--dim", "m=3")
        self.assertEqual(r.returncode, 1)
        self.assertIn("'m'", r.stderr)


if __name__ == "__main__":
    sys.exit(main(__doc__, globals(), ("COMPILE", "RUN")))
