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

The limits of the contract (docs/SECURITY.md, "Limits (the contract)")
are tested the same way, each through tinyml-compile, each refused within
seconds under the same address-space limit, naming the tensor or node:
a real 1 GiB constant (written sparse into a temporary directory, so it
costs no disk), constants over --max-constant-bytes, a broadcast and an
attention-like MatMul whose intermediates would take 4 GiB, a deep chain
over --max-ops, a planned arena over --max-arena-bytes, a TOSA text graph
(the driver's own check), and two TFLite files patched from a shared model:
an intermediate claiming 2 GiB, and a 1 KiB file whose buffer claims 1 GiB.

Usage: test_resource_limits.py TINYML_COMPILE [MODELS_DIR]
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


def binary_model(op_type, name, a_dims, b_dims, y_dims):
    """y = op(a, b), a and b float inputs: Add for a broadcast, MatMul
    for an attention-like product."""
    return model(nodes=[node(op_type, name, ["a", "b"], ["y"])], initializers=[],
                 inputs=[value_info("a", ONNX_FLOAT, a_dims),
                         value_info("b", ONNX_FLOAT, b_dims)],
                 outputs=[value_info("y", ONNX_FLOAT, y_dims)])


def chain_model(count, width=16):
    """count Relu nodes one after another on a float [1, width] input."""
    names = ["x"] + [f"r{i}" for i in range(count)]
    nodes = [node("Relu", f"relu_{i}", [names[i]], [names[i + 1]]) for i in range(count)]
    return model(nodes=nodes, initializers=[],
                 inputs=[value_info("x", ONNX_FLOAT, [1, width])],
                 outputs=[value_info(names[-1], ONNX_FLOAT, [1, width])])


def matmul_pair_model(width):
    """y = (x W1) W2, x float [1, width]: the product in between lives in
    the arena."""
    w = struct.pack(f"<{width * width}f", *([0.5] * (width * width)))
    return model(
        nodes=[node("MatMul", "mm1", ["x", "w1"], ["h"]), node("MatMul", "mm2", ["h", "w2"], ["y"])],
        initializers=[tensor("w1", ONNX_FLOAT, [width, width], w),
                      tensor("w2", ONNX_FLOAT, [width, width], w)],
        inputs=[value_info("x", ONNX_FLOAT, [1, width])],
        outputs=[value_info("y", ONNX_FLOAT, [1, width])])


def write_sparse_weights_model(path, sizes):
    """y = x + w0 + w1 + ..., each wK a float initializer of sizes[K]
    elements whose raw data are zeros.  The data are not written but
    skipped over (a sparse file), so a gigabyte costs neither disk nor
    time here, while tinyml-compile reads every byte of it."""
    count = sizes[0]
    names = ["x"] + [f"s{i}" for i in range(len(sizes))]
    nodes = [node("Add", f"add_w{i}", [names[i], f"w{i}"], [names[i + 1]])
             for i in range(len(sizes))]
    # Each initializer is encoded around its raw data: prefix, data, suffix.
    inits = []
    for i, n in enumerate(sizes):
        head = (field_varint(1, n) + field_varint(2, ONNX_FLOAT) + field_bytes(8, f"w{i}") +
                varint(9 << 3 | 2) + varint(4 * n))
        inits.append((head, 4 * n))
    nodes_b = b"".join(field_bytes(1, n) for n in nodes) + field_bytes(2, "g")
    tail = (field_bytes(11, value_info("x", ONNX_FLOAT, [count])) +
            field_bytes(12, value_info(names[-1], ONNX_FLOAT, [count])))
    graph_len = len(nodes_b) + len(tail)
    for head, n in inits:
        graph_len += len(varint(5 << 3 | 2)) + len(varint(len(head) + n)) + len(head) + n
    with open(path, "wb") as f:
        f.write(field_varint(1, 8) + varint(7 << 3 | 2) + varint(graph_len) + nodes_b)
        for head, n in inits:
            f.write(varint(5 << 3 | 2) + varint(len(head) + n) + head)
            f.seek(n, os.SEEK_CUR)
        f.write(tail + field_bytes(8, field_bytes(1, "") + field_varint(2, 13)))
    return path


# ---- TFLite: a minimal FlatBuffer reader, to patch a shared model --------


class FlatBuffer:
    """Reads tables and vectors of a FlatBuffer (the offsets the schema
    needs: Model.subgraphs = 2, Model.buffers = 4, SubGraph.tensors = 0,
    SubGraph.operators = 3, Tensor.shape = 0, Tensor.buffer = 2,
    Tensor.name = 3, Operator.outputs = 2, Buffer.data = 0)."""

    def __init__(self, data):
        self.b = bytearray(data)

    def u32(self, pos):
        return struct.unpack_from("<I", self.b, pos)[0]

    def field(self, table, index):
        """Position of field `index` of the table at `table`, or None."""
        vt = table - struct.unpack_from("<i", self.b, table)[0]
        vsize = struct.unpack_from("<H", self.b, vt)[0]
        if 4 + 2 * index >= vsize:
            return None
        off = struct.unpack_from("<H", self.b, vt + 4 + 2 * index)[0]
        return table + off if off else None

    def ref(self, table, index):
        """The table, vector or string field `index` points at, or None."""
        f = self.field(table, index)
        return f + self.u32(f) if f is not None else None

    def vector(self, table, index):
        """(position of the length, element positions) of a vector field."""
        v = self.ref(table, index)
        if v is None:
            return None, []
        return v, [v + 4 + 4 * i for i in range(self.u32(v))]

    def table_at(self, elem):
        return elem + self.u32(elem)

    def root(self):
        return self.u32(0)


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT_KIB * 1024, AS_LIMIT_KIB * 1024))


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def compile_limited(model_path, out_path, *flags):
    """Runs tinyml-compile under the limits; returns (result, seconds,
    this child's max RSS in KiB).  The child is reaped with wait4, so the
    RSS is its own, not the largest of every compile so far."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([COMPILE, model_path, "-o", out_path, *flags], stdout=out,
                             stderr=err, preexec_fn=limit_address_space)
        deadline = start + 60
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        r = Result(p.returncode, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"))
    return r, seconds, usage.ru_maxrss


class TempDirTest(unittest.TestCase):
    """A temporary directory per test class, for models and modules."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tinyml-limits-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p


class ResourceLimitTest(TempDirTest):
    def write_model(self, name, side):
        return self.write(name, huge_fill_model(side))

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


class LimitsContractTest(TempDirTest):
    """Each limit of the contract, refused early and named."""

    def refused(self, what, model_path, needles, *flags, max_rss_kib=AS_LIMIT_KIB):
        """Compiles under the limits; asserts exit 1 within TIME_LIMIT_S,
        a max RSS under `max_rss_kib`, no output file, each of `needles`
        in the message and no "out of memory"."""
        out = model_path + ".refused.tmlm"
        r, seconds, rss = compile_limited(model_path, out, *flags)
        print(f"{what}: exit {r.returncode} in {seconds:.2f} s, max RSS {rss // 1024} MiB\n"
              f"  {r.stderr.strip()}", file=sys.stderr)
        self.assertEqual(r.returncode, 1, r.stderr)
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertNotIn("out of memory", r.stderr.lower())
        self.assertLess(seconds, TIME_LIMIT_S)
        self.assertLess(rss, max_rss_kib)
        self.assertFalse(os.path.exists(out))
        return r

    def compiles(self, what, model_path, *flags):
        out = model_path + ".tmlm"
        r, seconds, rss = compile_limited(model_path, out, *flags)
        print(f"{what}: exit {r.returncode} in {seconds:.2f} s, max RSS {rss // 1024} MiB",
              file=sys.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(out) > 0)

    # -- constants ----------------------------------------------------------

    def test_one_gib_constant_refused_before_any_copy(self):
        """A real constant of 2^28 + 16 floats (just over 1 GiB): refused
        by the default max_tensor_bytes on the raw bytes, before protobuf
        unpacks (copies) them.  tinyml-compile maps the file, so a peak
        RSS under half the constant shows that nothing read, let alone
        copied, its data."""
        n = (1 << 28) + 16
        p = write_sparse_weights_model(self.path("gib.onnx"), [n])
        size = os.path.getsize(p)
        self.assertGreater(size, 1 << 30)
        self.refused("1 GiB constant", p,
                     ["initializer 'w0'", f"{4 * n} bytes", "max_tensor_bytes (1073741824)"],
                     max_rss_kib=size // 2048)

    def test_constants_over_max_constant_bytes(self):
        """Three constants of 200 MiB each, each under every per-tensor
        limit, together over --max-constant-bytes 512M."""
        n = 50 << 20
        p = write_sparse_weights_model(self.path("three.onnx"), [n, n, n])
        self.refused("constants over 512M", p,
                     ["initializer 'w2'", "max_constant_bytes (536870912)"],
                     "--max-constant-bytes", "512M", max_rss_kib=300 * 1024)

    # -- intermediates ------------------------------------------------------

    def test_broadcast_intermediate(self):
        """Add of [N, 1] and [1, N], N = 2^15: a 4 GiB result from two
        128 KiB inputs."""
        n = 1 << 15
        p = self.write("bcast.onnx", binary_model("Add", "bcast", [n, 1], [1, n], [n, n]))
        self.refused("broadcast [2^15, 2^15]", p,
                     ["Add 'bcast'", "output 0 'y'", f"{4 * n * n} bytes",
                      "max_tensor_bytes (1073741824)"])

    def test_attention_matmul_intermediate(self):
        """Q [S, 64] x K^T [64, S], S = 2^15: the score matrix of an
        attention of 32k tokens, 4 GiB."""
        s_ = 1 << 15
        p = self.write("attn.onnx", binary_model("MatMul", "scores", [s_, 64], [64, s_], [s_, s_]))
        self.refused("attention scores [2^15, 2^15]", p,
                     ["MatMul 'scores'", f"{4 * s_ * s_} bytes", "max_tensor_bytes"])

    def test_max_tensor_bytes_flag(self):
        """The same kind of model, small, passes at the default and is
        refused under a lowered --max-tensor-bytes."""
        p = self.write("small_bcast.onnx", binary_model("Add", "bcast", [64, 1], [1, 64], [64, 64]))
        self.compiles("broadcast [64, 64]", p)
        self.refused("broadcast [64, 64] over 8K", p,
                     ["Add 'bcast'", "16384 bytes", "max_tensor_bytes (8192)"],
                     "--max-tensor-bytes", "8K")

    def test_tosa_text_intermediate(self):
        """TOSA text has no importer: the driver's check on the TOSA graph
        refuses it, naming the op by its line."""
        n = 1 << 15
        t1, t2, t3 = f"tensor<{n}x1xf32>", f"tensor<1x{n}xf32>", f"tensor<{n}x{n}xf32>"
        text = (f"func.func @main(%a: {t1}, %b: {t2}) -> {t3} {{\n"
                f"  %y = tosa.add %a, %b : ({t1}, {t2}) -> {t3}\n"
                f"  return %y : {t3}\n}}\n")
        p = self.write("bcast.mlir", text.encode())
        self.refused("TOSA add [2^15, 2^15]", p,
                     ["tosa.add line 2", f"{4 * n * n} bytes", "max_tensor_bytes"])

    # -- the graph ----------------------------------------------------------

    def test_deep_chain_over_max_ops(self):
        """5,000 unfused nodes under --max-ops 1000: refused on the raw
        bytes, before anything is unpacked or lowered."""
        p = self.write("chain.onnx", chain_model(5000))
        self.refused("5,000-node chain, --max-ops 1000", p,
                     ["more than max_ops (1000)"], "--max-ops", "1000")

    def test_tosa_chain_over_max_ops(self):
        """The driver's count, for TOSA text: 300 ops under --max-ops 200."""
        t = "tensor<1x16xf32>"
        lines = [f"func.func @main(%v0: {t}) -> {t} {{"]
        for i in range(300):
            lines.append(f"  %v{i + 1} = tosa.abs %v{i} : ({t}) -> {t}")
        lines.append(f"  return %v300 : {t}\n}}\n")
        p = self.write("chain.mlir", "\n".join(lines).encode())
        self.refused("300-op TOSA chain, --max-ops 200", p,
                     ["more than max_ops (200)"], "--max-ops", "200")

    def test_arena_over_max_arena_bytes(self):
        """Two MatMuls whose product in between needs arena: compiles at
        the default, refused under --max-arena-bytes 64."""
        p = self.write("mm2.onnx", matmul_pair_model(256))
        self.compiles("two MatMuls", p)
        self.refused("two MatMuls, --max-arena-bytes 64", p,
                     ["memory plan needs an arena of", "max_arena_bytes (64)"],
                     "--max-arena-bytes", "64")

    def test_flag_values(self):
        """A limit must be a positive number: 0 would silently mean the
        default."""
        p = self.write("flags.onnx", chain_model(2))
        for flag, value in [("--max-ops", "0"), ("--max-tensor-bytes", "1X"),
                            ("--max-arena-bytes", "-5"), ("--max-constant-bytes", "")]:
            r, _, _ = compile_limited(p, p + ".tmlm", flag, value)
            self.assertEqual(r.returncode, 2, f"{flag} {value!r}: {r.stderr}")
            self.assertIn(flag, r.stderr)

    # -- TFLite, patched from a shared model ---------------------------------

    def tflite_model(self):
        if not MODELS or not os.path.isdir(MODELS):
            if os.environ.get("CI") == "true":
                self.fail(f"{MODELS} is missing")
            self.skipTest(f"{MODELS} is missing")
        with open(os.path.join(MODELS, "tflm", "hello_world_float.tflite"), "rb") as f:
            return FlatBuffer(f.read())

    def test_tflite_intermediate_claims_2gib(self):
        """An operator output whose shape is patched to [1, 2^29] floats."""
        fb = self.tflite_model()
        sg = fb.table_at(fb.vector(fb.root(), 2)[1][0])
        tensors = fb.vector(sg, 0)[1]
        op0 = fb.table_at(fb.vector(sg, 3)[1][0])
        out = struct.unpack_from("<i", fb.b, fb.vector(op0, 2)[1][0])[0]
        t = fb.table_at(tensors[out])
        _, dims = fb.vector(t, 0)
        struct.pack_into("<i", fb.b, dims[-1], 1 << 29)
        for d in dims[:-1]:
            struct.pack_into("<i", fb.b, d, 1)
        name_pos = fb.ref(t, 3)
        name = bytes(fb.b[name_pos + 4:name_pos + 4 + fb.u32(name_pos)]).decode()
        p = self.write("claims.tflite", bytes(fb.b))
        self.refused("TFLite intermediate [1, 2^29]", p,
                     [f"tensor {out} '{name}'", "operator 0 (FULLY_CONNECTED)",
                      f"{4 << 29} bytes", "max_tensor_bytes"])

    def test_tflite_buffer_claims_1gib_in_small_file(self):
        """A buffer whose data vector claims 2^30 bytes in a file of a few
        KiB: the reader's bounds check refuses it, allocating nothing."""
        fb = self.tflite_model()
        for elem in fb.vector(fb.root(), 4)[1]:
            v, _ = fb.vector(fb.table_at(elem), 0)
            if v is not None and fb.u32(v) > 0:
                struct.pack_into("<I", fb.b, v, 1 << 30)
                break
        else:
            self.fail("no buffer with data")
        self.assertLess(len(fb.b), 1 << 16)
        p = self.write("buffer.tflite", bytes(fb.b))
        r = self.refused("TFLite buffer claiming 1 GiB", p, ["tflite:", "buffer"])
        self.assertNotIn("max_", r.stderr)


MODELS = None  # the shared models directory, when given


def main():
    global COMPILE, MODELS
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    COMPILE = sys.argv.pop(1)
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        MODELS = sys.argv.pop(1)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
