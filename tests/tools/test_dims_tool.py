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


def value_info(name, dims):
    # TensorShapeProto.Dimension: dim_value = 1, dim_param = 2
    shape = b"".join(field_bytes(1, field_varint(1, d) if isinstance(d, int) else field_bytes(2, d))
                     for d in dims)
    tensor_type = field_varint(1, 1) + field_bytes(2, shape)  # FLOAT
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def node(op, inputs, output, attrs=b""):
    return (b"".join(field_bytes(1, i) for i in inputs) + field_bytes(2, output) +
            field_bytes(3, output) + field_bytes(4, op) + attrs)


def neg_model():
    """y = Neg(x) + ConstantOfShape(Shape(x), 1.5): the shape arithmetic
    must fold once the dimensions are bound."""
    # AttributeProto: name = 1, t = 5, type = 20 (TENSOR = 4); TensorProto:
    # dims = 1, data_type = 2, raw_data = 9.
    value = field_varint(1, 1) + field_varint(2, 1) + field_bytes(9, struct.pack("<f", 1.5))
    attr = field_bytes(1, "value") + field_bytes(5, value) + field_varint(20, 4)
    nodes = (field_bytes(1, node("Neg", ["x"], "n")) + field_bytes(1, node("Shape", ["x"], "s")) +
             field_bytes(1, node("ConstantOfShape", ["s"], "c", field_bytes(5, attr))) +
             field_bytes(1, node("Add", ["n", "c"], "y")))
    graph = (nodes + field_bytes(2, "g") +
             field_bytes(11, value_info("x", ["batch", "n"])) +
             field_bytes(12, value_info("y", ["batch", "n"])))
    opset = field_varint(2, 13)
    return field_varint(1, 8) + field_bytes(8, opset) + field_bytes(7, graph)


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
