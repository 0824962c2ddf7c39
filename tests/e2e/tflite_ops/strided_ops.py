"""STRIDED_SLICE with strides other than 1 (positive and negative), with
TFLite's begin/end clamping, masks and negative indices, for gen_ops.py.
The kernel only moves values, so desktop TFLite's outputs are exact
(TFLM's kernel shares StartForAxis/StopForAxis with it).

INT64 and BOOL cannot be a module's inputs or outputs: they are sliced
after a CAST (bool: a GREATER) of an int32 input, and cast back.
"""

# name, input shape, begin, end, strides, begin_mask, end_mask, shrink_mask,
# output shape
CASES = [
    ("ss_stride2_odd", [7, 5], [0, 1], [7, 5], [2, 3], 0, 0, 0, [4, 2]),
    ("ss_stride3_end_mask", [1, 10, 4], [0, 1, 0], [1, 0, 4], [1, 3, 1], 0, 2, 0, [1, 3, 4]),
    ("ss_reverse_masks", [5, 3], [0, 0], [0, 0], [-1, 1], 3, 3, 0, [5, 3]),
    ("ss_reverse_neg_idx", [6, 4], [4, -1], [0, -5], [-1, -2], 0, 0, 0, [4, 2]),
    ("ss_neg_begin_end", [2, 9], [0, -8], [2, -1], [1, 2], 0, 0, 0, [2, 4]),
    ("ss_shrink_stride", [4, 6, 5], [1, 0, -1], [2, 6, 0], [2, 2, 1], 0, 0, 5, [3]),
    ("ss_clamped", [5, 4], [100, -100], [-100, 100], [-2, 7], 0, 0, 0, [3, 1]),
    ("ss_nhwc_stride2", [1, 9, 7, 3], [0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 2, 1], 15, 15, 0,
     [1, 5, 4, 3]),
]
# Each case runs on these types; the quantisation is only carried.
TYPES = [("float", "FLOAT32", None), ("int8", "INT8", (0.05, -3)),
         ("int32", "INT32", None), ("int16", "INT16", (0.001, 0)),
         ("uint8", "UINT8", (0.05, 128))]


def slice_op(m, x, case, ttype, q, name):
    _, _, b, e, s, bm, em, sm, oshape = case
    y = m.tensor(oshape, ttype, q, name=name)
    m.op("STRIDED_SLICE", [x, m.ints(b), m.ints(e), m.ints(s)], [y], begin_mask=bm,
         end_mask=em, shrink_axis_mask=sm)
    return y


def models(Model, q8):
    out = []
    for label, ttype, q in TYPES:
        for i, case in enumerate(CASES):
            if ttype in ("INT16", "UINT8") and i % 3:
                continue  # a few cases suffice for the types of the same kernel
            m = Model("%s_%s" % (case[0], label), 900 + i)
            qq = q8(*q) if q else None
            x = m.tensor(case[1], ttype, qq, name="x")
            m.inputs, m.outputs = [x], [slice_op(m, x, case, ttype, qq, "y")]
            m.exact = True
            out.append(m)
    out.append(int64_bool_model(Model))
    return out


def as_int32(m, t, shape, name):
    y = m.tensor(shape, "INT32", name=name)
    m.op("CAST", [t], [y])
    return y


def int64_bool_model(Model):
    """Every case on int64 (CAST of x) and bool (x > 0), cast back to int32."""
    m = Model("ss_int64_bool", 950)
    ys, xs = [], []
    for case in CASES:
        x = m.tensor(case[1], "INT32", name="x_" + case[0])
        x64, flag = m.tensor(case[1], "INT64"), m.tensor(case[1], "BOOL")
        m.op("CAST", [x], [x64])
        m.op("GREATER", [x, m.tensor([1], "INT32", data=[0])], [flag])
        for t, ttype in ((x64, "INT64"), (flag, "BOOL")):
            y = slice_op(m, t, case, ttype, None, None)
            ys.append(as_int32(m, y, case[-1], "%s_%s" % (case[0], ttype.lower())))
        xs.append(x)
    m.inputs, m.outputs = xs, ys
    m.exact = True
    return m


def error_models(Model, q8):
    """A zero stride (TFLM: "stride value has to be non-zero") and a shrunk
    axis with a negative stride (begin + 1 as its stop selects nothing:
    TFLM would leave the output unwritten)."""
    out = []
    for name, s, shrink, text in (
            ("err_ss_zero_stride", [1, 0], 0, "stride along dimension 1 is 0"),
            ("err_ss_shrink_negative", [-1, 1], 1, "a shrunk dimension (0) with a negative")):
        m = Model(name, 960)
        x = m.tensor([4, 6], "INT8", q8(0.1, 0), name="x")
        y = m.tensor([6] if shrink else [4, 6], "INT8", q8(0.1, 0), name="y")
        m.op("STRIDED_SLICE", [x, m.ints([2, 0]), m.ints([4, 6]), m.ints(s)], [y],
             begin_mask=0, end_mask=0, shrink_axis_mask=shrink)
        m.inputs, m.outputs = [x], [y]
        out.append((m, "operator 0 (STRIDED_SLICE): " + text))
    return out
