#!/usr/bin/env python3
"""Writes the TOSA MLIR models of the end-to-end tests into models/.

Weights are not random: weight(i, seed) below is reproduced bit-exactly by
ref_weights() in reference.c, so the C reference uses the same numbers without
duplicating them.  Each constant names its seed; test_e2e.c uses the same seed.
The outputs are checked in; rerun this script after changing it.

Usage: python3 gen_models.py [OUTPUT_DIR]   (default: models/ next to this file)
"""

import os
import sys

F32_MAX = "3.40282347E+38"


def weight(i, seed):
    # k/32 with |k| <= 15 is exact in f32 and prints exactly in decimal; the
    # modulus 31 is prime so the pattern never lines up with a tensor dimension
    # (a transposed or mis-strided weight read then gives different numbers).
    return float((i * 37 + seed * 13) % 31 - 15) / 32.0


def ttype(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def nested(values, shape):
    """MLIR dense literals need the nesting of the tensor shape."""
    if len(shape) == 1:
        return "[" + ", ".join(repr(v) for v in values) + "]"
    step = len(values) // shape[0]
    parts = [nested(values[i * step:(i + 1) * step], shape[1:])
             for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def window_out(size, kernel, stride, pad_lo, pad_hi):
    # TOSA 1.0 requires the window to tile the padded input exactly.
    span = size + pad_lo + pad_hi - kernel
    assert span % stride == 0, (size, kernel, stride, pad_lo, pad_hi)
    return span // stride + 1


def i64s(values):
    return "array<i64: " + ", ".join(str(v) for v in values) + ">"


class Value:
    def __init__(self, name, shape, type_text):
        self.name, self.shape, self.type = name, list(shape), type_text


class Func:
    """Builds the body of @main one SSA value at a time."""

    def __init__(self, args):
        self.lines, self.counter = [], 0
        self.args = []
        for i, (shape, io_name) in enumerate(args):
            self.args.append((Value(f"%arg{i}", shape, ttype(shape)), io_name))

    def arg(self, i):
        return self.args[i][0]

    def emit(self, rhs, shape, type_text=None):
        v = Value(f"%v{self.counter}", shape, type_text or ttype(shape))
        self.counter += 1
        self.lines.append(f"    {v.name} = {rhs}")
        return v

    def op(self, name, operands, attrs, shape):
        ins = ", ".join(v.name for v in operands)
        types = ", ".join(v.type for v in operands)
        attr_text = " {" + ", ".join(attrs) + "}" if attrs else ""
        return self.emit(f"{name} {ins}{attr_text} : ({types}) -> {ttype(shape)}",
                         shape)

    # -- constants ---------------------------------------------------------
    def const(self, shape, literal, dtype="f32"):
        t = ttype(shape, dtype)
        return self.emit(f'"tosa.const"() <{{values = dense<{literal}> : {t}}}> '
                         f": () -> {t}", shape, t)

    def weights(self, shape, seed):
        values = [weight(i, seed) for i in range(count(shape))]
        return self.const(shape, nested(values, shape))

    def zero_point(self):
        return self.const([1], "0.0")

    def shift(self):
        return self.const([1], "0", "i8")

    def const_shape(self, shape):
        dims = ", ".join(str(d) for d in shape)
        t = f"!tosa.shape<{len(shape)}>"
        return self.emit(f"tosa.const_shape {{values = dense<[{dims}]> : "
                         f"tensor<{len(shape)}xindex>}} : () -> {t}", shape, t)

    # -- ops ---------------------------------------------------------------
    def _conv(self, name, x, w, b, out_c, kernel, stride, pad):
        zp = self.zero_point()
        n, h, wd, _ = x.shape
        oh = window_out(h, kernel[0], stride[0], pad[0], pad[1])
        ow = window_out(wd, kernel[1], stride[1], pad[2], pad[3])
        attrs = ["acc_type = f32", f"dilation = {i64s([1, 1])}",
                 f"pad = {i64s(pad)}", f"stride = {i64s(stride)}"]
        return self.op(name, [x, w, b, zp, zp], attrs, [n, oh, ow, out_c])

    def conv2d(self, x, out_c, kernel, stride, pad, seed):
        """Weights OHWI (seed), bias (seed + 1)."""
        w = self.weights([out_c, kernel[0], kernel[1], x.shape[3]], seed)
        b = self.weights([out_c], seed + 1)
        return self._conv("tosa.conv2d", x, w, b, out_c, kernel, stride, pad)

    def depthwise(self, x, mult, kernel, stride, pad, seed):
        """Weights HWCM (seed), bias C*M (seed + 1)."""
        c = x.shape[3]
        w = self.weights([kernel[0], kernel[1], c, mult], seed)
        b = self.weights([c * mult], seed + 1)
        return self._conv("tosa.depthwise_conv2d", x, w, b, c * mult, kernel,
                          stride, pad)

    def dense(self, x, n, seed):
        """Fully connected on [1, 1, k]: weights [1, k, n] (seed), bias
        [1, 1, n] (seed + 1)."""
        y = self.matmul(x, self.weights([1, x.shape[2], n], seed))
        return self.binary("tosa.add", y, self.weights([1, 1, n], seed + 1))

    def relu(self, x):
        return self.op("tosa.clamp", [x],
                       ["min_val = 0.0 : f32", f"max_val = {F32_MAX} : f32"],
                       x.shape)

    def _pool_shape(self, x, kernel, stride, pad):
        n, h, w, c = x.shape
        return [n, window_out(h, kernel[0], stride[0], pad[0], pad[1]),
                window_out(w, kernel[1], stride[1], pad[2], pad[3]), c]

    def max_pool(self, x, kernel, stride, pad):
        attrs = [f"kernel = {i64s(kernel)}", f"pad = {i64s(pad)}",
                 f"stride = {i64s(stride)}"]
        return self.op("tosa.max_pool2d", [x], attrs,
                       self._pool_shape(x, kernel, stride, pad))

    def avg_pool(self, x, kernel, stride, pad):
        zp = self.zero_point()
        attrs = ["acc_type = f32", f"kernel = {i64s(kernel)}",
                 f"pad = {i64s(pad)}", f"stride = {i64s(stride)}"]
        return self.op("tosa.avg_pool2d", [x, zp, zp], attrs,
                       self._pool_shape(x, kernel, stride, pad))

    def matmul(self, a, b):
        zp = self.zero_point()
        batch, m, _ = a.shape
        return self.op("tosa.matmul", [a, b, zp, zp], [],
                       [batch, m, b.shape[2]])

    def binary(self, name, a, b):
        shape = [max(x, y) for x, y in zip(a.shape, b.shape)]
        return self.op(name, [a, b], [], shape)

    def mul(self, a, b):
        shape = [max(x, y) for x, y in zip(a.shape, b.shape)]
        return self.op("tosa.mul", [a, b, self.shift()], [], shape)

    def unary(self, name, x):
        return self.op(name, [x], [], x.shape)

    def reduce(self, name, x, axis):
        shape = list(x.shape)
        shape[axis] = 1
        return self.op(name, [x], [f"axis = {axis} : i32"], shape)

    def reshape(self, x, shape):
        assert count(shape) == count(x.shape)
        return self.op("tosa.reshape", [x, self.const_shape(shape)], [], shape)

    def transpose(self, x, perms):
        perm_text = "array<i32: " + ", ".join(str(p) for p in perms) + ">"
        return self.op("tosa.transpose", [x], [f"perms = {perm_text}"],
                       [x.shape[p] for p in perms])

    def concat(self, values, axis):
        shape = list(values[0].shape)
        shape[axis] = sum(v.shape[axis] for v in values)
        return self.op("tosa.concat", values, [f"axis = {axis} : i32"], shape)

    def softmax(self, x):
        """Softmax over the last axis, the way TOSA front ends spell it."""
        axis = len(x.shape) - 1
        shifted = self.binary("tosa.sub", x, self.reduce("tosa.reduce_max", x, axis))
        e = self.unary("tosa.exp", shifted)
        inv = self.unary("tosa.reciprocal", self.reduce("tosa.reduce_sum", e, axis))
        return self.mul(e, inv)

    # -- output ------------------------------------------------------------
    def text(self, results):
        """`results` is a list of (Value, io_name or None)."""
        def named(t, io_name):
            return f'{t} {{tinyml.name = "{io_name}"}}' if io_name else t
        params = ", ".join(f"{v.name}: {named(v.type, n)}" for v, n in self.args)
        rtypes = ", ".join(named(v.type, n) for v, n in results)
        rnames = ", ".join(v.name for v, _ in results)
        plain = ", ".join(v.type for v, _ in results)
        # The note goes inside the module so the file still starts with
        # `module`, whatever the model-format sniffing looks for.
        return ("module {\n"
                "  // Generated by tests/e2e/gen_models.py; do not edit.\n"
                f"  func.func @main({params}) -> ({rtypes}) {{\n"
                + "\n".join(self.lines) + "\n"
                f"    return {rnames} : {plain}\n"
                "  }\n}\n")


# -- models: shapes and seeds must match the cases in test_e2e.c -----------

def model_conv2d():
    # Non-square input, asymmetric padding on both axes, stride 2, 5 channels.
    f = Func([([1, 9, 8, 3], None)])
    y = f.conv2d(f.arg(0), 5, [3, 3], [2, 2], [1, 1, 0, 1], seed=1)
    return f.text([(f.relu(y), None)])


def model_depthwise_conv2d():
    f = Func([([1, 8, 7, 4], None)])
    y = f.depthwise(f.arg(0), 1, [3, 3], [1, 1], [1, 1, 1, 1], seed=3)
    return f.text([(y, None)])


def model_depthwise_conv2d_mult2():
    # Channel multiplier 2: output channel c * 2 + m.
    f = Func([([1, 7, 6, 3], None)])
    y = f.depthwise(f.arg(0), 2, [3, 3], [1, 1], [1, 1, 1, 1], seed=5)
    return f.text([(y, None)])


def model_matmul():
    # Batch 2 and sizes that are not multiples of any vector width.
    f = Func([([2, 7, 13], None), ([2, 13, 5], None)])
    return f.text([(f.matmul(f.arg(0), f.arg(1)), None)])


def model_fully_connected():
    f = Func([([1, 2, 3, 4], None)])
    y = f.dense(f.reshape(f.arg(0), [1, 1, 24]), 10, seed=7)
    return f.text([(f.reshape(y, [1, 10]), None)])


def model_avg_pool():
    # Padding is excluded from the divisor (TOSA 1.0 avg_pool2d).
    f = Func([([1, 9, 9, 3], None)])
    y = f.avg_pool(f.arg(0), [3, 3], [2, 2], [1, 1, 1, 1])
    return f.text([(y, None)])


def model_max_pool():
    f = Func([([1, 8, 6, 4], None)])
    y = f.max_pool(f.arg(0), [2, 2], [2, 2], [0, 0, 0, 0])
    return f.text([(y, None)])


def model_add_mul_broadcast():
    # (a + b) * c with b broadcast over N,H,W and c broadcast over N,H,C.
    f = Func([([1, 4, 5, 3], None), ([1, 1, 1, 3], None), ([1, 1, 5, 1], None)])
    s = f.binary("tosa.add", f.arg(0), f.arg(1))
    return f.text([(f.mul(s, f.arg(2)), None)])


def mul_in_place(shape):
    # The product is placed over the conv's output (its last read).  The
    # x86-64 strategy vectorizes it in place (lib/compiler/linalg/
    # inplace.h): 96 elements as 6 vectors of 16, 105 as 6 of 16 and one
    # of 9.  tests/compiler/test_elementwise_vec.py checks the step's code
    # is vector, e2e that both are right.
    f = Func([(shape, None)])
    y = f.conv2d(f.arg(0), 3, [3, 3], [1, 1], [1, 1, 1, 1], seed=21)
    p = f.mul(y, f.arg(0))
    return f.text([(f.depthwise(p, 1, [3, 3], [1, 1], [1, 1, 1, 1], seed=23), None)])


def model_mul_in_place():
    return mul_in_place([1, 5, 7, 3])


def model_mul_in_place16():
    return mul_in_place([1, 4, 8, 3])


def model_reshape_transpose_concat():
    f = Func([([2, 12], None), ([4, 5, 3], None)])
    r = f.reshape(f.arg(0), [2, 3, 4])
    t = f.transpose(r, [2, 0, 1])
    return f.text([(f.concat([t, f.arg(1)], 1), None)])


def model_transpose_sink():
    # NHWC values taken to NCHW, as the ONNX importer does around every conv,
    # then ops that work in any layout: the compiler moves the transposes
    # below them (layout_sink.c), renumbering concat and reduction axes and
    # reshaping the per-channel constant.
    f = Func([([1, 4, 5, 3], None), ([1, 4, 5, 3], None), ([1, 4, 5, 2], None)])
    nchw = [0, 3, 1, 2]
    a, b, c = (f.transpose(f.arg(i), nchw) for i in range(3))
    y = f.relu(f.mul(f.binary("tosa.add", a, b), f.weights([1, 3, 1, 1], seed=21)))
    cat = f.concat([y, c], 1)
    pooled = f.reduce("tosa.reduce_sum", f.reduce("tosa.reduce_sum", cat, 2), 3)
    return f.text([(cat, None), (f.reshape(pooled, [1, 5]), None)])


def model_softmax():
    f = Func([([2, 3, 10], None)])
    return f.text([(f.softmax(f.arg(0)), None)])


def model_cnn_two_results():
    f = Func([([1, 16, 16, 3], "image")])
    y = f.relu(f.conv2d(f.arg(0), 8, [3, 3], [2, 2], [0, 1, 0, 1], seed=11))
    y = f.relu(f.depthwise(y, 1, [3, 3], [1, 1], [1, 1, 1, 1], seed=13))
    y = f.max_pool(y, [2, 2], [2, 2], [0, 0, 0, 0])
    y = f.transpose(y, [0, 3, 1, 2])  # NCHW flattening order, as PyTorch does
    y = f.dense(f.reshape(y, [1, 1, 128]), 10, seed=15)
    logits = f.reshape(y, [1, 10])
    return f.text([(logits, "logits"), (f.softmax(logits), "probs")])


def model_matmul_tiles():
    # Every remainder of x86-64's cache and register tiles (n 256, k 256,
    # m 48; 6 x 16, or 8 x 32 with AVX-512): m 37, k 300, n 290.
    f = Func([([2, 37, 300], None), ([2, 300, 290], None)])
    return f.text([(f.matmul(f.arg(0), f.arg(1)), None)])


def model_matmul512():
    f = Func([([1, 512, 512], None), ([1, 512, 512], None)])
    return f.text([(f.matmul(f.arg(0), f.arg(1)), None)])


MODELS = {
    "conv2d": model_conv2d,
    "depthwise_conv2d": model_depthwise_conv2d,
    "depthwise_conv2d_mult2": model_depthwise_conv2d_mult2,
    "matmul": model_matmul,
    "fully_connected": model_fully_connected,
    "avg_pool": model_avg_pool,
    "max_pool": model_max_pool,
    "add_mul_broadcast": model_add_mul_broadcast,
    "mul_in_place": model_mul_in_place,
    "mul_in_place16": model_mul_in_place16,
    "reshape_transpose_concat": model_reshape_transpose_concat,
    "transpose_sink": model_transpose_sink,
    "softmax": model_softmax,
    "cnn_two_results": model_cnn_two_results,
    "matmul512": model_matmul512,
    "matmul_tiles": model_matmul_tiles,
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "models")
    os.makedirs(out_dir, exist_ok=True)
    for name, build in MODELS.items():
        with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
            f.write(build())


if __name__ == "__main__":
    main()
