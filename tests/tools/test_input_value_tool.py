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


def slice_model():
    node = (b"".join(field_bytes(1, i) for i in ("x", "starts", "ends")) + field_bytes(2, "y") +
            field_bytes(3, "slice") + field_bytes(4, "Slice"))
    graph = (field_bytes(1, node) + field_bytes(2, "g") +
             field_bytes(11, value_info("x", 1, [6])) +
             field_bytes(11, value_info("starts", 7, [1])) +
             field_bytes(11, value_info("ends", 7, [1])) +
             field_bytes(12, value_info("y", 1, [3])))
    opset = field_varint(2, 13)
    return field_varint(1, 8) + field_bytes(8, opset) + field_bytes(7, graph)


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
