"""ONNX models encoded by hand (protobuf wire format, standard library
only), and the command-line plumbing the tool tests share, so that a test
needs no `onnx` Python package.  Field numbers are onnx.proto's."""

import os
import subprocess
import sys
import unittest

ONNX_FLOAT, ONNX_UINT8, ONNX_INT8, ONNX_INT32, ONNX_INT64 = 1, 2, 3, 6, 7


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
    """ValueInfoProto{name = 1, type = 2}; TypeProto{tensor_type = 1};
    Tensor{elem_type = 1, shape = 2}; TensorShapeProto{dim = 1}; a dim is
    dim_value = 1 (an int) or dim_param = 2 (a str)."""
    shape = b"".join(field_bytes(1, field_varint(1, d) if isinstance(d, int) else field_bytes(2, d))
                     for d in dims)
    tensor_type = field_varint(1, elem) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def tensor(name, elem, dims, raw):
    """TensorProto: dims = 1, data_type = 2, name = 8 (none when ""),
    raw_data = 9."""
    return (b"".join(field_varint(1, d) for d in dims) + field_varint(2, elem) +
            (field_bytes(8, name) if name else b"") + field_bytes(9, raw))


def node(op, inputs, outputs, name, attrs=b"", domain=""):
    """NodeProto: input = 1, output = 2, name = 3, op_type = 4,
    attribute = 5 (attrs: encoded fields), domain = 7."""
    return (b"".join(field_bytes(1, i) for i in inputs) +
            b"".join(field_bytes(2, o) for o in outputs) + field_bytes(3, name) +
            field_bytes(4, op) + attrs + (field_bytes(7, domain) if domain else b""))


def model(nodes, inputs, outputs, initializers=(), opsets=(("", 13),)):
    """ModelProto{ir_version = 1, graph = 7, opset_import = 8} with
    GraphProto{node = 1, name = 2, initializer = 5, input = 11,
    output = 12}; opsets are (domain, version) pairs."""
    graph = (b"".join(field_bytes(1, n) for n in nodes) + field_bytes(2, "g") +
             b"".join(field_bytes(5, t) for t in initializers) +
             b"".join(field_bytes(11, v) for v in inputs) +
             b"".join(field_bytes(12, v) for v in outputs))
    imports = b"".join(field_bytes(8, (field_bytes(1, d) if d else b"") + field_varint(2, v))
                       for d, v in opsets)
    return field_varint(1, 8) + imports + field_bytes(7, graph)


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def compile_bytes(compile_exe, tmp_dir, data):
    """Writes an encoded model to tmp_dir/m.onnx and runs tinyml-compile on it
    (output tmp_dir/m.tmod); the completed process."""
    path = os.path.join(tmp_dir, "m.onnx")
    with open(path, "wb") as f:
        f.write(data)
    return run(compile_exe, path, "-o", os.path.join(tmp_dir, "m.tmod"))


def main(doc, test_globals, names):
    """Sets the test module's globals `names` (COMPILE, RUN, ...) from the
    command line and runs its tests; the exit status."""
    if len(sys.argv) != 1 + len(names):
        print(doc)
        return 2
    test_globals.update(zip(names, sys.argv[1:]))
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1
