#!/usr/bin/python3
"""Generates tests/conformance/signal_cases: DFT, STFT, HannWindow,
HammingWindow, BlackmanWindow and MelWeightMatrix models in the
backend-test layout (model.onnx, test_data_set_0/{input,output}_N.pb) for
what Debian's suite (ONNX 1.12) does not cover: DFT lengths that are not a
power of two, inverse and onesided transforms, dft_length that pads or
truncates, an axis with dimensions after it, complex input, opset 20's
axis input, STFT with a constant and a run-time window, windows and
MelWeightMatrix of other sizes, and all-constant operands (folded at
compile time).

The expected outputs are never ours.  For the windows and MelWeightMatrix
they are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js).  For DFT and STFT they are a
numpy port of onnx/reference/ops/op_dft.py and op_stft.py (np.fft in
double, rounded once to float32): onnxruntime's own FFT is off by a few
1e-6 (2.6e-6 where the exact value is 0), more than the runner's atol, so
it only cross-checks the port here (shapes, axes, scaling) to 1e-4 of the
largest magnitude.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_signal_cases.py OUT_DIR
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ort_ref import ort  # noqa: E402  onnxruntime via ort_run.js, shared by the generators
rng = np.random.default_rng(2026)
F = TensorProto.FLOAT


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 8 - 4).astype(np.float32)


def i64(v):
    return np.array(v, np.int64)


def hann(n):
    return (np.sin(np.pi * np.arange(n) / n) ** 2).astype(np.float32)


def ref_dft(x, n=None, axis=1, inverse=0, onesided=0):
    """op_dft.py's _cfft / _cifft; a negative axis counts from the back of
    the input, as the spec and onnxruntime read it."""
    axis = axis + x.ndim if axis < 0 else axis
    sig = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        sig = sig + 1j * x[..., 1]
    n = x.shape[axis] if n is None else n
    y = np.fft.ifft(sig, n, axis=axis) if inverse else np.fft.fft(sig, n, axis=axis)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], axis=-1).astype(np.float32)


def ref_stft(x, step, window=None, length=None, onesided=1):
    """op_stft.py: frames weighted by the window in float32, then _cfft."""
    length = length or (len(window) if window is not None else x.shape[1])
    window = np.ones(length, np.float32) if window is None else window
    frames = 1 + (x.shape[1] - length) // step
    fr = np.stack([x[:, f * step:f * step + length, :] for f in range(frames)], axis=1)
    return ref_dft(fr * window.reshape(1, 1, length, 1), length, axis=2, onesided=onesided)


def node(op, inputs, out="Y", **attrs):
    return helper.make_node(op, inputs, [out], **attrs)


# name, opset, nodes, constants {name: array}, run-time inputs [(name, array)],
# and the reference (of every value by name), or None to take onnxruntime's
CASES = [
    ("dft_real_len7", 17, [node("DFT", ["x"], axis=1)], {}, [("x", floats(2, 7, 1))],
     lambda v: ref_dft(v["x"])),
    ("dft_inverse_complex_len6", 17, [node("DFT", ["x"], axis=1, inverse=1)], {},
     [("x", floats(3, 6, 2))], lambda v: ref_dft(v["x"], inverse=1)),
    ("dft_onesided_len9", 17, [node("DFT", ["x"], axis=1, onesided=1)], {},
     [("x", floats(2, 9, 1))], lambda v: ref_dft(v["x"], onesided=1)),
    ("dft_length_pads", 17, [node("DFT", ["x", "n"], axis=1)], {"n": i64(8)},
     [("x", floats(2, 5, 1))], lambda v: ref_dft(v["x"], 8)),
    ("dft_length_truncates", 17, [node("DFT", ["x", "n"], axis=1)], {"n": i64(3)},
     [("x", floats(2, 5, 2))], lambda v: ref_dft(v["x"], 3)),
    ("dft_axis1_of_rank4", 17, [node("DFT", ["x"], axis=1)], {}, [("x", floats(2, 5, 3, 2))],
     lambda v: ref_dft(v["x"])),
    ("dft_axis0", 17, [node("DFT", ["x"], axis=0)], {}, [("x", floats(6, 4, 1))],
     lambda v: ref_dft(v["x"], axis=0)),
    ("dft_opset20_default_axis", 20, [node("DFT", ["x"])], {}, [("x", floats(3, 2, 11, 1))],
     lambda v: ref_dft(v["x"], axis=-2)),
    ("dft_opset20_axis_input", 20, [node("DFT", ["x", "", "a"], inverse=1)], {"a": i64(1)},
     [("x", floats(2, 12, 3, 2))], lambda v: ref_dft(v["x"], inverse=1)),
    ("dft_folded", 17, [node("DFT", ["c"], "S", axis=1), node("Add", ["S", "Z"])],
     {"c": floats(2, 10, 1)}, [("Z", np.zeros([1], np.float32))], lambda v: ref_dft(v["c"])),
    ("stft_hann_window", 17, [node("STFT", ["s", "step", "w"])], {"step": i64(5), "w": hann(12)},
     [("s", floats(2, 40, 1))], lambda v: ref_stft(v["s"], 5, v["w"])),
    ("stft_runtime_window", 17, [node("STFT", ["s", "step", "w"])], {"step": i64(3)},
     [("s", floats(1, 30, 1)), ("w", hann(10))], lambda v: ref_stft(v["s"], 3, v["w"])),
    ("stft_complex_two_sided", 17, [node("STFT", ["s", "step", "", "len"], onesided=0)],
     {"step": i64(4), "len": i64(7)}, [("s", floats(2, 25, 2))],
     lambda v: ref_stft(v["s"], 4, length=7, onesided=0)),
    ("stft_folded", 17, [node("STFT", ["c", "step", "w"], "S"), node("Add", ["S", "Z"])],
     {"c": floats(1, 33, 1), "step": i64(6), "w": hann(9)}, [("Z", np.zeros([1], np.float32))],
     lambda v: ref_stft(v["c"], 6, v["w"])),
]

WINDOWS = [("HannWindow", "hann"), ("HammingWindow", "hamming"), ("BlackmanWindow", "blackman")]
for op, short in WINDOWS:
    for size, periodic in ((7, 1), (7, 0), (16, 0), (33, 1)):
        CASES.append(("%s_%d_%s" % (short, size, "periodic" if periodic else "symmetric"), 17,
                      [node(op, ["n"], "S", periodic=periodic), node("Add", ["S", "Z"])],
                      {"n": i64(size)}, [("Z", np.zeros([1], np.float32))], None))

for bins, dft, rate, lo, hi in ((10, 64, 16000, 100.0, 7000.0), (6, 30, 8000, 0.0, 4000.0)):
    CASES.append(("mel_%d_%d_%d" % (bins, dft, rate), 17,
                  [node("MelWeightMatrix", ["b", "d", "r", "lo", "hi"], "S"),
                   node("Add", ["S", "Z"])],
                  {"b": i64(bins), "d": i64(dft), "r": i64(rate),
                   "lo": np.array(lo, np.float32), "hi": np.array(hi, np.float32)},
                  [("Z", np.zeros([1], np.float32))], None))


def model(name, opset, nodes, consts, inputs):
    inits = [numpy_helper.from_array(a, n) for n, a in consts.items()]
    vis = [helper.make_tensor_value_info(n, F, a.shape) for n, a in inputs]
    graph = helper.make_graph(nodes, name, vis, [helper.make_tensor_value_info("Y", F, None)],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 20 else 9
    return m


def main():
    out_dir = os.path.join(sys.argv[1], "signal")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, opset, nodes, consts, inputs, ref in CASES:
            d = os.path.join(out_dir, "test_signal_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(model(name, opset, nodes, consts, inputs).SerializeToString())
            y = ort(path, [a for _, a in inputs], tmp)
            if ref:
                r = ref(dict(consts, **dict(inputs)))
                tol = 1e-4 * float(np.abs(r).max())
                if r.shape != y.shape or not np.allclose(y, r, rtol=0, atol=tol):
                    raise RuntimeError("%s: onnxruntime and the reference differ" % name)
                y = r
            files = [("input_%d" % i, n, a) for i, (n, a) in enumerate(inputs)]
            for kind, name_, arr in files + [("output_0", "Y", y)]:
                t = numpy_helper.from_array(np.ascontiguousarray(arr), name_)
                with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
                    f.write(t.SerializeToString())
            print(name, [a.shape for _, a in inputs], "->", y.shape)


if __name__ == "__main__":
    main()
