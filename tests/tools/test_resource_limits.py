#!/usr/bin/env python3
"""Resource limits (issue 29, "Hostile input"): a model that asks for an
absurd amount of memory must be refused early, with a message naming the
node, without the compiler ever coming near that memory.

The model: y = x + ConstantOfShape([2^20, 2^20]), x a float [1, 1] input.
The constant would hold 2^40 floats (4 TiB).  tinyml-compile runs under an
address-space limit of 2,000,000 KiB (what `ulimit -v 2000000` sets) and a
timeout; it must exit 1 within seconds, naming the node.

The ONNX bytes are encoded here by hand (protobuf wire format, standard
library only), so the test needs no `onnx` Python package.

Usage: test_resource_limits.py TINYML_COMPILE
"""

import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import unittest

COMPILE = None  # set from the command line in main()

AS_LIMIT_KIB = 2000000  # ulimit -v 2000000
TIME_LIMIT_S = 10.0

# ---- protobuf wire format ------------------------------------------------


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3 | 0) + varint(value)


def field_bytes(number, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(number << 3 | 2) + varint(len(data)) + data


# ---- ONNX messages (field numbers from onnx.proto) -----------------------

ONNX_FLOAT, ONNX_INT64 = 1, 7
ATTR_TENSOR = 4


def tensor(name, data_type, dims, raw):
    # TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9
    return (b"".join(field_varint(1, d) for d in dims) + field_varint(2, data_type) +
            field_bytes(8, name) + field_bytes(9, raw))


def value_info(name, elem_type, dims):
    # ValueInfoProto{name = 1, type = 2}; TypeProto{tensor_type = 1};
    # Tensor{elem_type = 1, shape = 2}; TensorShapeProto{dim = 1};
    # Dimension{dim_value = 1}
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    tensor_type = field_varint(1, elem_type) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def node(op_type, name, inputs, outputs, attributes=b""):
    # NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5
    return (b"".join(field_bytes(1, i) for i in inputs) +
            b"".join(field_bytes(2, o) for o in outputs) + field_bytes(3, name) +
            field_bytes(4, op_type) + attributes)


def tensor_attribute(name, t):
    # AttributeProto: name = 1, t = 5, type = 20
    return field_bytes(5, field_bytes(1, name) + field_bytes(5, t) + field_varint(20, ATTR_TENSOR))


def model(nodes, initializers, inputs, outputs, opset=13):
    # GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12
    graph = (b"".join(field_bytes(1, n) for n in nodes) + field_bytes(2, "g") +
             b"".join(field_bytes(5, t) for t in initializers) +
             b"".join(field_bytes(11, v) for v in inputs) +
             b"".join(field_bytes(12, v) for v in outputs))
    # ModelProto: ir_version = 1, graph = 7, opset_import = 8
    # (OperatorSetIdProto: domain = 1, version = 2)
    return (field_varint(1, 8) + field_bytes(7, graph) +
            field_bytes(8, field_bytes(1, "") + field_varint(2, opset)))


def huge_fill_model(side):
    """y = x + ConstantOfShape([side, side]) with value 1.0."""
    shape = tensor("fill_shape", ONNX_INT64, [2], struct.pack("<2q", side, side))
    one = tensor("one", ONNX_FLOAT, [1], struct.pack("<f", 1.0))
    return model(
        nodes=[node("ConstantOfShape", "huge_fill", ["fill_shape"], ["big"],
                    tensor_attribute("value", one)),
               node("Add", "add_big", ["x", "big"], ["y"])],
        initializers=[shape],
        inputs=[value_info("x", ONNX_FLOAT, [1, 1])],
        outputs=[value_info("y", ONNX_FLOAT, [side, side])])


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT_KIB * 1024, AS_LIMIT_KIB * 1024))


def compile_limited(model_path, out_path):
    """Runs tinyml-compile under the limits; returns (result, seconds,
    the largest child's max RSS in KiB)."""
    start = time.monotonic()
    r = subprocess.run([COMPILE, model_path, "-o", out_path], capture_output=True,
                       text=True, timeout=60, preexec_fn=limit_address_space)
    seconds = time.monotonic() - start
    rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r, seconds, rss_kib


class ResourceLimitTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tinyml-limits-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write_model(self, name, side):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(huge_fill_model(side))
        return p

    def test_small_fill_compiles(self):
        """The same graph at [4, 4] compiles under the same limits, so the
        refusal below is about the size, not the encoding or the limits."""
        r, seconds, rss = compile_limited(self.write_model("small.onnx", 4),
                                          self.path("small.tmlm"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(self.path("small.tmlm")) > 0)
        print(f"[4, 4] fill: compiled in {seconds:.2f} s, max RSS {rss // 1024} MiB",
              file=sys.stderr)

    def test_huge_fill_refused_early(self):
        r, seconds, rss = compile_limited(self.write_model("huge.onnx", 1 << 20),
                                          self.path("huge.tmlm"))
        print(f"[2^20, 2^20] fill: exit {r.returncode} in {seconds:.2f} s, "
              f"max RSS {rss // 1024} MiB (address space limit {AS_LIMIT_KIB} KiB)\n"
              f"stderr: {r.stderr.strip()}", file=sys.stderr)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("ConstantOfShape", r.stderr)
        self.assertIn("huge_fill", r.stderr)
        self.assertIn("too large", r.stderr)
        self.assertIn(f"{1 << 40} elements", r.stderr)
        self.assertNotIn("out of memory", r.stderr.lower())
        self.assertLess(seconds, TIME_LIMIT_S)
        self.assertLess(rss, AS_LIMIT_KIB)
        self.assertFalse(os.path.exists(self.path("huge.tmlm")))


def main():
    global COMPILE
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    COMPILE = sys.argv.pop(1)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
