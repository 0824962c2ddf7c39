"""PACK, UNPACK, SPLIT, SPLIT_V, SLICE, SPACE_TO_DEPTH, DEPTH_TO_SPACE,
BROADCAST_TO, FILL, SHAPE, ZEROS_LIKE, ADD_N and the reductions, for
gen_ops.py: odd sizes, negative axes, -1 sizes, and int8 where the operator
moves raw values.
"""

CODES = {"DEPTH_TO_SPACE": 5, "SPACE_TO_DEPTH": 26, "SPLIT": 49, "SLICE": 65, "SUM": 74,
         "SHAPE": 77, "REDUCE_PROD": 81, "REDUCE_MAX": 82, "PACK": 83, "UNPACK": 88,
         "REDUCE_MIN": 89, "ZEROS_LIKE": 93, "FILL": 94, "SPLIT_V": 102, "ADD_N": 106,
         "BROADCAST_TO": 130, "RESIZE_BILINEAR": 23, "RESIZE_NEAREST_NEIGHBOR": 97,
         "EMBEDDING_LOOKUP": 7, "MIRROR_PAD": 100, "REVERSE_V2": 105, "GATHER_ND": 107}
OPTIONS = {"PACK": "PackOptions", "UNPACK": "UnpackOptions", "SPLIT": "SplitOptions",
           "SPLIT_V": "SplitVOptions", "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions",
           "REDUCE_MIN": "ReducerOptions", "REDUCE_PROD": "ReducerOptions",
           "SPACE_TO_DEPTH": "SpaceToDepthOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
           "SHAPE": "ShapeOptions", "RESIZE_BILINEAR": "ResizeBilinearOptions",
           "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
           "MIRROR_PAD": "MirrorPadOptions", "REVERSE_V2": "ReverseV2Options",
           "GATHER_ND": "GatherNdOptions"}


def pack_unpack(Model):
    m = Model("pack_unpack_float", 61)
    a, b = m.tensor([3, 4], name="a"), m.tensor([3, 4], name="b")
    packed = m.tensor([3, 2, 4], name="packed")
    m.op("PACK", [a, b], [packed], values_count=2, axis=1)
    rows = [m.tensor([4], name="row%d" % i) for i in range(3)]
    m.op("UNPACK", [a], rows, num=3, axis=0)
    cols = [m.tensor([3], name="col%d" % i) for i in range(4)]
    m.op("UNPACK", [b], cols, num=4, axis=-1)
    m.inputs, m.outputs = [a, b], [packed] + rows + cols
    return m


def split(Model):
    m = Model("split_float", 62)
    x = m.tensor([2, 9, 3], name="x")
    thirds = [m.tensor([2, 3, 3], name="third%d" % i) for i in range(3)]
    m.op("SPLIT", [m.ints([1]), x], thirds, num_splits=3)
    parts = [m.tensor([2, n, 3], name="part%d" % i) for i, n in enumerate((2, 3, 4))]
    m.op("SPLIT_V", [x, m.ints([2, -1, 4]), m.ints([-2])], parts, num_splits=3)
    m.inputs, m.outputs = [x], thirds + parts
    return m


def slice_int8(Model, q8):
    m = Model("slice_int8", 63)
    q = q8(0.07, -3)
    x = m.tensor([3, 6, 4], "INT8", q, name="x")
    y = m.tensor([2, 4, 3], "INT8", q, name="y")
    m.op("SLICE", [x, m.ints([1, 2, 0]), m.ints([2, -1, 3])], [y])
    m.inputs, m.outputs = [x], [y]
    return m


def space_depth(Model):
    m = Model("space_depth_float", 64)
    x = m.tensor([1, 4, 6, 3], name="x")
    d = m.tensor([1, 2, 3, 12], name="to_depth")
    m.op("SPACE_TO_DEPTH", [x], [d], block_size=2)
    s = m.tensor([1, 2, 3, 8], name="s")
    back = m.tensor([1, 4, 6, 2], name="to_space")
    m.op("DEPTH_TO_SPACE", [s], [back], block_size=2)
    m.inputs, m.outputs = [x, s], [d, back]
    return m


def broadcast_fill(Model):
    m = Model("broadcast_fill_shape", 65)
    x = m.tensor([3, 1], name="x")
    wide = m.tensor([2, 3, 4], name="broadcast_to")
    m.op("BROADCAST_TO", [x, m.ints([2, 3, 4])], [wide])
    filled = m.tensor([2, 3], name="fill")
    m.op("FILL", [m.ints([2, 3]), m.tensor([], data=[1.5])], [filled])
    shape = m.tensor([3], "INT32", name="shape")
    m.op("SHAPE", [wide], [shape], out_type="INT32")
    zeros = m.tensor([3, 1], name="zeros_like")
    m.op("ZEROS_LIKE", [x], [zeros])
    total = m.tensor([3, 1], name="add_n")
    m.op("ADD_N", [x, x, zeros, x], [total])
    m.inputs, m.outputs = [x], [wide, filled, shape, zeros, total]
    return m


def reductions(Model, q8):
    m = Model("reduce_float_int8", 66)
    x = m.tensor([2, 3, 5], name="x")
    ys = []
    for op, axes, keep, shape in (("SUM", [1], False, [2, 5]),
                                  ("REDUCE_MAX", [0, 2], True, [1, 3, 1]),
                                  ("REDUCE_MIN", [-1], False, [2, 3]),
                                  ("REDUCE_PROD", [1, 1], False, [2, 5])):
        ys.append(m.tensor(shape, name=op.lower()))
        m.op(op, [x, m.ints(axes)], [ys[-1]], keep_dims=keep)
    q = q8(0.05, 7)
    xi = m.tensor([4, 7], "INT8", q, name="xi")
    yi = m.tensor([4], "INT8", q, name="reduce_max_int8")
    m.op("REDUCE_MAX", [xi, m.ints([1])], [yi], keep_dims=False)
    m.inputs, m.outputs = [x, xi], ys + [yi]
    return m


def resize(Model, q8, op, ttype, name, seed):
    """Down and up, odd sizes, each of TFLite's coordinate conventions."""
    m = Model(name, seed)
    q = q8(0.06, -5) if ttype == "INT8" else None
    x = m.tensor([1, 5, 7, 3], ttype, q, name="x")
    ys = []
    for (h, w), opts in (((9, 4), {}), ((8, 13), {"align_corners": True}),
                         ((3, 10), {"half_pixel_centers": True})):
        ys.append(m.tensor([1, h, w, 3], ttype, q, name="to_%dx%d" % (h, w)))
        m.op(op, [x, m.ints([h, w])], [ys[-1]], **opts)
    m.inputs, m.outputs = [x], ys
    return m


def reverse_mirror(Model, q8):
    m = Model("reverse_mirror_pad", 72)
    x = m.tensor([2, 5, 3], name="x")
    # One axis each: the TFLite the expected outputs come from reverses
    # only the first of several axes.
    rev = m.tensor([2, 5, 3], name="reverse_v2_axis1")
    m.op("REVERSE_V2", [x, m.ints([1])], [rev])
    rev_last = m.tensor([2, 5, 3], name="reverse_v2_last")
    m.op("REVERSE_V2", [x, m.ints([-1])], [rev_last])
    refl = m.tensor([4, 10, 4], name="reflect")
    m.op("MIRROR_PAD", [x, m.tensor([3, 2], "INT32", data=[1, 1, 2, 3, 1, 0])], [refl],
         mode="REFLECT")
    sym = m.tensor([4, 11, 6], name="symmetric")
    m.op("MIRROR_PAD", [x, m.tensor([3, 2], "INT32", data=[2, 0, 1, 5, 0, 3])], [sym],
         mode="SYMMETRIC")
    q = q8(0.1, 4)
    xi = m.tensor([3, 4], "INT8", q, name="xi")
    symi = m.tensor([5, 7], "INT8", q, name="symmetric_int8")
    m.op("MIRROR_PAD", [xi, m.tensor([2, 2], "INT32", data=[1, 1, 3, 0])], [symi],
         mode="SYMMETRIC")
    m.inputs, m.outputs = [x, xi], [rev, rev_last, refl, sym, symi]
    return m


def gathers(Model):
    m = Model("gather_nd_embedding", 73)
    p = m.tensor([4, 5, 3], name="params")
    pairs = m.tensor([3, 3], name="gather_nd_k2")
    m.op("GATHER_ND", [p, m.tensor([3, 2], "INT32", data=[1, 2, 3, 0, 0, 4])], [pairs])
    rows = m.tensor([2, 5, 3], name="gather_nd_k1")
    m.op("GATHER_ND", [p, m.tensor([2, 1], "INT32", data=[2, 0])], [rows])
    table = m.tensor([4, 6], name="table")
    looked = m.tensor([3, 6], name="embedding_lookup")
    m.op("EMBEDDING_LOOKUP", [m.ints([3, 0, 3]), table], [looked])
    m.inputs, m.outputs = [p, table], [pairs, rows, looked]
    return m


def models(Model, q8):
    return [pack_unpack(Model), split(Model), slice_int8(Model, q8), space_depth(Model),
            broadcast_fill(Model), reductions(Model, q8),
            resize(Model, q8, "RESIZE_BILINEAR", "FLOAT32", "resize_bilinear_float", 69),
            resize(Model, q8, "RESIZE_NEAREST_NEIGHBOR", "FLOAT32", "resize_nearest_float", 70),
            resize(Model, q8, "RESIZE_NEAREST_NEIGHBOR", "INT8", "resize_nearest_int8", 71),
            reverse_mirror(Model, q8), gathers(Model)]


def error_models(Model, q8):
    out = []
    m = Model("err_split_v_sizes", 67)
    x = m.tensor([7], name="x")
    parts = [m.tensor([n], name="p%d" % i) for i, n in enumerate((3, 3))]
    m.op("SPLIT_V", [x, m.ints([3, 3]), m.ints([0])], parts, num_splits=2)
    m.inputs, m.outputs = [x], parts
    out.append((m, "operator 0 (SPLIT_V): the sizes do not add up to dimension 7"))
    m = Model("err_sum_uint8", 68)  # TFLM has no uint8 SUM
    x = m.tensor([4, 3], "UINT8", q8(0.1, 128), name="x")
    y = m.tensor([4], "UINT8", q8(0.3, 128), name="y")
    m.op("SUM", [x, m.ints([1])], [y], keep_dims=False)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (SUM): unsupported types UINT8 -> UINT8"))
    return out
