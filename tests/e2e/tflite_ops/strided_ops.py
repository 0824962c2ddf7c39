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
# Masks with negative strides and shrunk axes together: a masked begin or
# end ignores its (here out-of-range) value and goes to the far end in the
# stride's direction; a shrunk axis ignores its end and end mask.
MASK_CASES = [
    ("ss_mask_begin_neg", [6, 5], [2, 3], [0, 0], [-1, -2], 1, 0, 0, [5, 2]),
    ("ss_mask_end_neg", [6, 5], [4, -1], [0, 0], [-2, -1], 0, 3, 0, [3, 5]),
    ("ss_mask_shrink_mix", [3, 4, 5], [-1, 0, 1], [0, 0, 0], [1, -1, 2], 2, 6, 1, [4, 2]),
    ("ss_mask_ignores_begin", [5, 6], [99, -99], [3, 1], [1, -3], 3, 0, 0, [3, 2]),
    ("ss_mask_nhwc_shrink", [1, 4, 6, 3], [0, -2, 0, 0], [1, 0, 0, 0], [1, 1, -2, 1], 12, 12, 3,
     [3, 3]),
    ("ss_mask_rank1_neg", [7], [-3], [0], [-3], 0, 1, 0, [2]),
    ("ss_mask_shrink_end_mask", [4, 5], [1, 3], [0, 0], [2, 1], 0, 3, 2, [2]),
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
    for label, ttype, q in TYPES[:4]:  # TFLM's types; bool below
        for i, case in enumerate(MASK_CASES):
            m = Model("%s_%s" % (case[0], label), 970 + i)
            qq = q8(*q) if q else None
            x = m.tensor(case[1], ttype, qq, name="x")
            m.inputs, m.outputs = [x], [slice_op(m, x, case, ttype, qq, "y")]
            m.exact = True
            out.append(m)
    out.append(int64_bool_model(Model))
    out.append(int64_bool_model(Model, "ss_masks_int64_bool", 951, MASK_CASES))
    return out


def as_int32(m, t, shape, name):
    y = m.tensor(shape, "INT32", name=name)
    m.op("CAST", [t], [y])
    return y


def int64_bool_model(Model, name="ss_int64_bool", seed=950, cases=CASES):
    """Every case on int64 (CAST of x) and bool (x > 0), cast back to int32."""
    m = Model(name, seed)
    ys, xs = [], []
    for case in cases:
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
    """A zero stride (TFLM: "stride value has to be non-zero"), a shrunk
    axis with a negative stride (begin + 1 as its stop selects nothing:
    TFLM would leave the output unwritten) and the options and run-time
    operands TFLM does not support (unsupported_models)."""
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
    return out + unsupported_models(Model)


# What TFLite Micro's kernel does not support either: it sets ellipsis_mask
# and new_axis_mask to 0, never sets offset, and needs constant begin, end
# and strides.  Output shapes are desktop TFLite's.
UNSUPPORTED = [
    ("err_ss_ellipsis", [2, 4, 6], [0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}, [2, 4, 2],
     "ellipsis_mask 0x1 is not supported: TFLite Micro does not support it either"),
    ("err_ss_new_axis", [4, 6], [0, 0, 0], [0, 4, 6], [1, 1, 1], {"new_axis_mask": 1},
     [1, 4, 6], "new_axis_mask 0x1 is not supported: TFLite Micro does not support it either"),
    ("err_ss_offset", [4, 6], [1, 2], [2, 3], [1, 1], {"offset": True}, [2, 3],
     "offset (end relative to begin) is not supported: TFLite Micro does not support it"),
    ("err_ss_masks_shrink", [4, 6], [0, 0, 0], [0, 4, 6], [1, 1, 1],
     {"new_axis_mask": 2, "ellipsis_mask": 4, "shrink_axis_mask": 1}, [4, 6],
     "ellipsis_mask 0x4 is not supported"),
]


def unsupported_models(Model):
    out = []
    for name, shape, b, e, s, opts, oshape, text in UNSUPPORTED:
        m = Model(name, 961)
        x = m.tensor(shape, "FLOAT32", name="x")
        y = m.tensor(oshape, "FLOAT32", name="y")
        m.op("STRIDED_SLICE", [x, m.ints(b), m.ints(e), m.ints(s)], [y], **opts)
        m.inputs, m.outputs = [x], [y]
        out.append((m, "operator 0 (STRIDED_SLICE): " + text))
    for name, which in (("err_ss_runtime_begin", 1), ("err_ss_runtime_strides", 3)):
        m = Model(name, 962)
        x = m.tensor([4, 6], "FLOAT32", name="x")
        operands = [x, m.ints([1, 0]), m.ints([3, 6]), m.ints([1, 2])]
        operands[which] = m.tensor([2], "INT32", name="runtime")
        y = m.tensor([2, 3], "FLOAT32", name="y")
        m.op("STRIDED_SLICE", operands, [y])
        m.inputs, m.outputs = [x, operands[which]], [y]
        what = "begin" if which == 1 else "strides"
        out.append((m, "operator 0 (STRIDED_SLICE): %s (input %d) is computed at run time: "
                       "TFLite Micro does not support that either" % (what, which)))
    return out
