"""The tensor types TFLite Micro takes for its data-movement operators
(PACK, SPLIT, PAD, FILL, GATHER_ND...), comparisons and a few others, for
gen_ops.py: one model per type, each operator on one input and the
results as separate outputs.  These kernels move or compare raw values,
so TFLite's outputs are exact.

INT64 and BOOL tensors cannot be a module's inputs or outputs: the int64
and bool operators work on CASTs of an int32 input (bool through a
comparison) and are cast back to int32.
"""
from tflm_fixed import f32, mbqm, quantize_multiplier

CODES = {"SQUEEZE": 43, "PADV2": 60, "EXPAND_DIMS": 70}
OPTIONS = {"SQUEEZE": "SqueezeOptions", "PADV2": "PadV2Options",
           "EXPAND_DIMS": "ExpandDimsOptions"}
SHAPE = [2, 3, 4]
PADDING = [0, 1, 1, 0, 2, 1]  # -> [3, 4, 7]


def scalar(m, ttype, q, value):
    return m.tensor([], ttype, q, data=[value])


def moves(m, x, ttype, q, ops):
    """Each of `ops` on x ([2, 3, 4]); returns its outputs."""
    t = lambda shape, name: m.tensor(shape, ttype, q, name=name)
    ys = []
    if "PACK" in ops:
        ys.append(t([2, 2, 3, 4], "pack"))
        m.op("PACK", [x, x], [ys[-1]], values_count=2, axis=1)
    if "UNPACK" in ops:
        ys += [t([2, 4], "unpack%d" % i) for i in range(3)]
        m.op("UNPACK", [x], ys[-3:], num=3, axis=1)
    if "SPLIT" in ops:
        ys += [t([2, 3, 2], "split%d" % i) for i in range(2)]
        m.op("SPLIT", [m.ints([-1]), x], ys[-2:], num_splits=2)
    if "SPLIT_V" in ops:
        ys += [t([2, n, 4], "split_v%d" % i) for i, n in enumerate((1, 2))]
        m.op("SPLIT_V", [x, m.ints([1, -1]), m.ints([1])], ys[-2:], num_splits=2)
    if "EXPAND_DIMS" in ops:
        ys.append(t([2, 1, 3, 4], "expand_dims"))
        m.op("EXPAND_DIMS", [x, m.ints([1])], [ys[-1]])
    if "SQUEEZE" in ops:
        one = t([2, 3, 1, 4], "unsqueezed")
        m.op("RESHAPE", [x, m.ints([2, 3, 1, 4])], [one], new_shape=[2, 3, 1, 4])
        ys.append(t([2, 3, 4], "squeeze"))
        m.op("SQUEEZE", [one], [ys[-1]], squeeze_dims=[2])
    if "RESHAPE" in ops:
        ys.append(t([4, 6], "reshape"))
        m.op("RESHAPE", [x, m.ints([4, 6])], [ys[-1]], new_shape=[4, 6])
    if "TRANSPOSE" in ops:
        ys.append(t([4, 2, 3], "transpose"))
        m.op("TRANSPOSE", [x, m.ints([2, 0, 1])], [ys[-1]])
    ys += more_moves(m, x, ttype, q, ops, t)
    return ys


def more_moves(m, x, ttype, q, ops, t):
    ys = []
    if "REVERSE_V2" in ops:
        ys.append(t(SHAPE, "reverse_v2"))
        m.op("REVERSE_V2", [x, m.ints([1])], [ys[-1]])
    if "SLICE" in ops:
        ys.append(t([2, 2, 3], "slice"))
        m.op("SLICE", [x, m.ints([0, 1, 1]), m.ints([2, 2, -1])], [ys[-1]])
    if "STRIDED_SLICE" in ops:
        # Unit strides here; other strides are strided_ops.py's.
        ys.append(t([2, 2], "strided_slice"))
        m.op("STRIDED_SLICE", [x, m.ints([0, 1, -2]), m.ints([2, 3, 4]), m.ints([1, 1, 1])],
             [ys[-1]], begin_mask=1, end_mask=2, shrink_axis_mask=4)
    if "CONCATENATION" in ops:
        ys.append(t([2, 3, 8], "concatenation"))
        m.op("CONCATENATION", [x, x], [ys[-1]], axis=-1)
    if "PAD" in ops:
        ys.append(t([3, 4, 7], "pad"))
        m.op("PAD", [x, m.tensor([3, 2], "INT32", data=PADDING)], [ys[-1]])
    if "PADV2" in ops:
        ys.append(t([3, 4, 7], "padv2"))
        m.op("PADV2", [x, m.tensor([3, 2], "INT32", data=PADDING),
                       scalar(m, ttype, q, 3 if ttype != "FLOAT32" else 2.5)], [ys[-1]])
    if "BROADCAST_TO" in ops:
        ys.append(t([2, 2, 3, 4], "broadcast_to"))
        m.op("BROADCAST_TO", [x, m.ints([2, 2, 3, 4])], [ys[-1]])
    if "ZEROS_LIKE" in ops:
        ys.append(t(SHAPE, "zeros_like"))
        m.op("ZEROS_LIKE", [x], [ys[-1]])
    if "FILL" in ops:
        ys.append(t([2, 3], "fill"))
        m.op("FILL", [m.ints([2, 3]), scalar(m, ttype, q, 7 if ttype != "FLOAT32" else 1.5)],
             [ys[-1]])
    if "SHAPE" in ops:
        ys.append(m.tensor([3], "INT32", name="shape"))
        m.op("SHAPE", [x], [ys[-1]], out_type="INT32")
    if "GATHER_ND" in ops:
        ys.append(t([2, 4], "gather_nd"))
        m.op("GATHER_ND", [x, m.tensor([2, 2], "INT32", data=[1, 0, 0, 2])], [ys[-1]])
    if "EMBEDDING_LOOKUP" in ops:
        ys.append(t([3, 3, 4], "embedding_lookup"))
        m.op("EMBEDDING_LOOKUP", [m.ints([1, 0, 1]), x], [ys[-1]])
    return ys


def space_depth(m, ttype, q):
    z = m.tensor([1, 2, 4, 4], ttype, q, name="z")
    d2s = m.tensor([1, 4, 8, 1], ttype, q, name="depth_to_space")
    m.op("DEPTH_TO_SPACE", [z], [d2s], block_size=2)
    s2d = m.tensor([1, 1, 2, 16], ttype, q, name="space_to_depth")
    m.op("SPACE_TO_DEPTH", [z], [s2d], block_size=2)
    return z, [d2s, s2d]


INT8_OPS = ("PACK", "UNPACK", "SPLIT", "SPLIT_V", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE",
            "REVERSE_V2", "PADV2", "FILL", "SHAPE", "GATHER_ND",
            "EMBEDDING_LOOKUP", "BROADCAST_TO")
INT16_OPS = ("PACK", "UNPACK", "SPLIT", "SPLIT_V", "SQUEEZE", "EXPAND_DIMS", "RESHAPE",
             "TRANSPOSE", "REVERSE_V2", "PAD", "PADV2", "FILL", "SHAPE", "STRIDED_SLICE")
INT32_OPS = ("PACK", "UNPACK", "SPLIT", "SPLIT_V", "REVERSE_V2", "CONCATENATION", "PAD",
             "PADV2", "FILL", "ZEROS_LIKE", "BROADCAST_TO", "SLICE", "STRIDED_SLICE")
FLOAT_OPS = ("EXPAND_DIMS", "PAD", "PADV2", "STRIDED_SLICE", "BROADCAST_TO")


def int8_model(Model, q8):
    m = Model("types_int8_moves", 401)
    q = q8(0.05, -3)
    x = m.tensor(SHAPE, "INT8", q, name="x")
    ys = moves(m, x, "INT8", q, INT8_OPS)
    z, zs = space_depth(m, "INT8", q)
    m.inputs, m.outputs = [x, z], ys + zs
    return m


def int16_model(Model, q8):
    """Also SELECT_V2 (on a mask cast from int32) and RESIZE_NEAREST_NEIGHBOR."""
    m = Model("types_int16_moves", 402)
    q = q8(0.001, 0)
    x = m.tensor(SHAPE, "INT16", q, name="x")
    ys = moves(m, x, "INT16", q, INT16_OPS)
    mask = m.tensor([3, 4], "INT32", name="mask")
    cond = m.tensor([3, 4], "BOOL")
    m.op("GREATER", [mask, m.tensor([1], "INT32", data=[0])], [cond])
    sel = m.tensor(SHAPE, "INT16", q, name="select_v2")
    m.op("SELECT_V2", [cond, x, m.tensor([1], "INT16", q, data=[-5])], [sel])
    z = m.tensor([1, 2, 4, 4], "INT16", q, name="z")
    nearest = m.tensor([1, 3, 5, 4], "INT16", q, name="resize_nearest")
    m.op("RESIZE_NEAREST_NEIGHBOR", [z, m.ints([3, 5])], [nearest], half_pixel_centers=True)
    m.inputs, m.outputs = [x, mask, z], ys + [sel, nearest]
    return m


def as_int32(m, t, shape, name):
    y = m.tensor(shape, "INT32", name=name)
    m.op("CAST", [t], [y])
    return y


def clamped(m, x, shape):
    """x clamped to [-300, 300] (MAXIMUM and MINIMUM): against x, equal
    where x is inside, less or greater outside."""
    lo, y = m.tensor(shape, "INT32"), m.tensor(shape, "INT32")
    m.op("MAXIMUM", [x, m.tensor([1], "INT32", data=[-300])], [lo])
    m.op("MINIMUM", [lo, m.tensor([1], "INT32", data=[300])], [y])
    return y


def comparisons(m, a, b, shape, prefix):
    """Every comparison of a and b, each cast to int32."""
    ys = []
    for op in ("LESS", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "EQUAL", "NOT_EQUAL"):
        cond = m.tensor(shape, "BOOL")
        m.op(op, [a, b], [cond])
        ys.append(as_int32(m, cond, shape, "%s_%s" % (prefix, op.lower())))
    return ys


def int32_model(Model):
    """Also MUL and the comparisons (of x and x clamped: TFLite's int32
    inputs are in [-1000, 1000])."""
    m = Model("types_int32_moves", 403)
    x = m.tensor(SHAPE, "INT32", name="x")
    ys = moves(m, x, "INT32", None, INT32_OPS)
    sq = m.tensor(SHAPE, "INT32", name="mul")
    m.op("MUL", [x, x], [sq])
    m.inputs, m.outputs = [x], ys + [sq] + comparisons(m, x, clamped(m, x, SHAPE), SHAPE, "i32")
    return m


def int64_bool_model(Model):
    """int64 from CAST(int32), bool from GREATER; everything back to int32."""
    m = Model("types_int64_bool", 404)
    x = m.tensor(SHAPE, "INT32", name="x")
    x64 = m.tensor(SHAPE, "INT64")
    m.op("CAST", [x], [x64])
    ys = [as_int32(m, y, m.tensors[y]["shape"], m.tensors[y]["name"] + "_i64")
          for y in moves(m, x64, "INT64", None, ("PACK", "REVERSE_V2", "CONCATENATION",
                                                 "FILL", "ZEROS_LIKE", "BROADCAST_TO",
                                                 "SLICE"))]
    k64 = m.tensor(SHAPE, "INT64")
    m.op("CAST", [clamped(m, x, SHAPE)], [k64])
    ys += comparisons(m, x64, k64, SHAPE, "i64")
    for op in ("MAXIMUM", "MINIMUM"):
        r = m.tensor(SHAPE, "INT64")
        m.op(op, [x64, k64], [r])
        ys.append(as_int32(m, r, SHAPE, op.lower() + "_i64"))
    flag, other = m.tensor(SHAPE, "BOOL"), m.tensor(SHAPE, "BOOL")
    m.op("GREATER", [x, m.tensor([4], "INT32", data=[0, -300, 300, 0])], [flag])
    m.op("LESS", [x, m.tensor([3, 1], "INT32", data=[0, 500, -500])], [other])
    ys += [as_int32(m, y, m.tensors[y]["shape"], m.tensors[y]["name"] + "_bool")
           for y in moves(m, flag, "BOOL", None, ("REVERSE_V2", "CONCATENATION", "SLICE",
                                                  "STRIDED_SLICE"))]
    for op in ("EQUAL", "NOT_EQUAL"):
        cond = m.tensor(SHAPE, "BOOL")
        m.op(op, [flag, other], [cond])
        ys.append(as_int32(m, cond, SHAPE, "bool_" + op.lower()))
    m.inputs, m.outputs = [x], ys
    return m


def float_model(Model, q8):
    """float32 moves and RELU6; BROADCAST_TO of float32 and int8 data."""
    m = Model("types_float_moves", 405)
    x = m.tensor(SHAPE, name="x")
    ys = moves(m, x, "FLOAT32", None, FLOAT_OPS)
    x6 = m.tensor(SHAPE)
    m.op("MUL", [x, m.tensor([1], data=[8.0])], [x6])
    ys.append(m.tensor(SHAPE, name="relu6"))
    m.op("RELU6", [x6], [ys[-1]])
    m.inputs, m.outputs = [x], ys
    return m


def misc_model(Model, q8):
    """DEQUANTIZE uint8, ARG_MIN and REDUCE_MIN int8, CAST to and from
    int16 (wrapping), REVERSE_V2 uint8."""
    m = Model("types_misc", 406)
    u = m.tensor([3, 5], "UINT8", q8(0.05, 130), name="u")
    deq = m.tensor([3, 5], name="dequantize_uint8")
    m.op("DEQUANTIZE", [u], [deq])
    rev = m.tensor([3, 5], "UINT8", q8(0.05, 130), name="reverse_v2_uint8")
    m.op("REVERSE_V2", [u, m.ints([-1])], [rev])
    q = q8(0.1, -4)
    a = m.tensor([4, 6], "INT8", q, name="a")
    amin = m.tensor([4], "INT32", name="arg_min_int8")
    m.op("ARG_MIN", [a, m.ints([1])], [amin], output_type="INT32")
    rmin = m.tensor([6], "INT8", q, name="reduce_min_int8")
    m.op("REDUCE_MIN", [a, m.ints([0])], [rmin], keep_dims=False)
    h = m.tensor([3, 5], "INT16", name="h")
    wide = m.tensor([3, 5], "INT32", name="cast_int16_int32")
    m.op("CAST", [h], [wide])
    i = m.tensor([3, 5], "INT32", name="i")
    big = m.tensor([3, 5], "INT32")
    m.op("MUL", [i, m.tensor([1], "INT32", data=[100])], [big])  # past int16's range
    narrow = m.tensor([3, 5], "INT16", name="cast_int32_int16")
    m.op("CAST", [big], [narrow])
    back = m.tensor([3, 5], name="cast_int16_float")
    m.op("CAST", [narrow], [back])
    m.inputs = [u, a, h, i]
    m.outputs = [deq, rev, amin, rmin, wide, narrow, back]
    return m


def models(Model, q8):
    """Integer outputs must equal TFLite's: these kernels only move,
    compare or cast values."""
    ms = [int8_model(Model, q8), int16_model(Model, q8), int32_model(Model),
          int64_bool_model(Model), float_model(Model, q8), misc_model(Model, q8)]
    for m in ms:
        m.exact = True
    return ms


def zeros_like_int8_entry(Model, q8, write_model, write_values, io_entry, outdir):
    """ZEROS_LIKE int8, which desktop TFLite lacks: TFLM's kernel
    (zeros_like.cc) writes raw zeros whatever the zero point (here -3, so
    an importer that writes the real value 0 fails).  Input from a fixed
    seed; expected output: raw zeros."""
    m = Model("types_zeros_like_int8", 407)
    q = q8(0.05, -3)
    x = m.tensor(SHAPE, "INT8", q, name="x")
    y = m.tensor(SHAPE, "INT8", q, name="zeros_like")
    m.op("ZEROS_LIKE", [x], [y])
    m.inputs, m.outputs = [x], [y]
    model = write_model(m, outdir)
    prefix = outdir + "/" + m.name
    n = SHAPE[0] * SHAPE[1] * SHAPE[2]
    write_values(prefix + "_in_0.bin", [m.rng.randint(-128, 127) for _ in range(n)])
    write_values(prefix + "_out_0.bin", [0] * n)
    case = {"label": "seed1", "exact": True,
            "inputs": [io_entry(m, x, "input", 0, prefix + "_in_0.bin")],
            "outputs": [io_entry(m, y, "output", 0, prefix + "_out_0.bin")]}
    return {"model": model, "format": "tflite", "cases": [case]}


def greater16_reference(x, y, qx, qy):
    """TFLM's GreaterWithScaling for int16 (comparisons.cc): each input
    ((v - zp) << 8) times its scale by QuantizeMultiplierSmallerThanOneExp."""
    def scaled(v, q):
        m, shift = quantize_multiplier(f32(q[0]))
        return mbqm((v - q[1]) * 256, m, shift)
    return [int(scaled(a, qx) > scaled(b, qy)) for a, b in zip(x, y)]


def greater_int16_entry(Model, q8, write_model, write_values, io_entry, outdir):
    """GREATER int16, which TFLM compares scaled (neighbours merge at int16
    scales, unlike a raw compare) and desktop TFLite does not: inputs
    made here, expected outputs from the port above.  Two quantisations
    (a against b), and one (a against c, c a step or two below a)."""
    m = Model("types_greater_int16", 408)
    qa, qb = (0.0011, 0), (0.0007, 3)
    n = 48
    a_v = [m.rng.randint(-3000, 3000) for _ in range(n)]
    b_v = [max(-32768, min(32767, round(v * qa[0] / qb[0]) + qb[1] + m.rng.randint(-2, 2)))
           for v in a_v]
    c_v = [v - m.rng.randint(0, 2) for v in a_v]
    a = m.tensor([n], "INT16", q8(*qa), name="a")
    b = m.tensor([n], "INT16", q8(*qb), name="b")
    cc = m.tensor([n], "INT16", q8(*qa), name="c")
    ys = []
    for other in (b, cc):
        cond = m.tensor([n], "BOOL")
        m.op("GREATER", [a, other], [cond])
        ys.append(as_int32(m, cond, [n], "greater_%s" % m.tensors[other]["name"]))
    m.inputs, m.outputs = [a, b, cc], ys
    want = [greater16_reference(a_v, b_v, qa, qb), greater16_reference(a_v, c_v, qa, qa)]
    if want[1] == [int(x > y) for x, y in zip(a_v, c_v)]:
        raise SystemExit("types_greater_int16: the scaled and raw comparisons agree")
    model = write_model(m, outdir)
    prefix = outdir + "/" + m.name
    ins = [io_entry(m, t, "input", i, write_values("%s_in_%d.bin" % (prefix, i), v, "h"))
           for i, (t, v) in enumerate(zip(m.inputs, (a_v, b_v, c_v)))]
    outs = [io_entry(m, t, "output", i, write_values("%s_out_%d.bin" % (prefix, i), v, "i"))
            for i, (t, v) in enumerate(zip(ys, want))]
    return {"model": model, "format": "tflite",
            "cases": [{"label": "seed1", "exact": True, "inputs": ins, "outputs": outs}]}
