"""int8/uint8 RESIZE_BILINEAR for gen_ops.py, and TFLite's integer kernel
(ResizeBilinearInteger, which TFLite Micro runs) in plain Python for their
expected outputs: the TFLite build behind tflite_run.js runs it through
XNNPACK, which rounds differently.  Odd sizes, up and down, each of the
three coordinate modes; gen_ops checks the port stays within a step of
TFLite's outputs."""

CODES = {"RESIZE_BILINEAR": 23}
OPTIONS = {"RESIZE_BILINEAR": "ResizeBilinearOptions"}

# name, type, (scale, zero point), input NHWC, output (h, w), align_corners, half_pixel
CASES = [
    ("resize_bilinear_int8_half_pixel_up", "INT8", (0.05, 3), [1, 3, 5, 2], (7, 9), False, True),
    ("resize_bilinear_int8_align_down", "INT8", (0.05, -9), [2, 9, 7, 3], (4, 5), True, False),
    ("resize_bilinear_int8_plain_up", "INT8", (0.1, 0), [1, 4, 3, 2], (9, 7), False, False),
    ("resize_bilinear_uint8_half_pixel", "UINT8", (0.02, 128), [1, 5, 6, 2], (8, 3), False, True),
]


def models(Model, q8):
    out = []
    for seed, (name, ttype, q, shape, hw, align, half) in enumerate(CASES, 331):
        m = Model(name, seed)
        x = m.tensor(shape, ttype, q8(*q), name="x")
        y = m.tensor([shape[0], hw[0], hw[1], shape[3]], ttype, q8(*q), name="y")
        m.op("RESIZE_BILINEAR", [x, m.ints(list(hw))], [y], align_corners=align,
             half_pixel_centers=half)
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def _cdiv(a, b):
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _axis(o, n_in, n_out, align, half):
    if align and n_out > 1:
        scale = _cdiv(1024 * (n_in - 1) + (n_out - 1) // 2, n_out - 1)
    else:
        scale = _cdiv(1024 * n_in + n_out // 2, n_out)
    v = o * scale + (scale // 2 - 512 if half else 0)
    lo = max(_cdiv(v, 1024), 0)
    hi = min(_cdiv(v + 1023, 1024), n_in - 1)
    return v, lo, hi


def reference(case, values):
    """ResizeBilinearInteger on the stored values (uint8 as 0..255)."""
    _, ttype, _, shape, (oh, ow), align, half = case
    n, h, w, ch = shape
    at = lambda b, y, x, c: values[((b * h + y) * w + x) * ch + c]
    out = []
    for b in range(n):
        for y in range(oh):
            iy, y0, y1 = _axis(y, h, oh, align, half)
            for x in range(ow):
                ix, x0, x1 = _axis(x, w, ow, align, half)
                dy, dx = iy - 1024 * y0, ix - 1024 * x0
                for c in range(ch):
                    o = (at(b, y0, x0, c) * (1024 - dy) * (1024 - dx) +
                         at(b, y1, x0, c) * dy * (1024 - dx) +
                         at(b, y0, x1, c) * (1024 - dy) * dx +
                         at(b, y1, x1, c) * dy * dx)
                    out.append(_cdiv(o + ((1 << 19) if o > 0 else -(1 << 19)), 1 << 20))
    return out
