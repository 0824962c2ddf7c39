"""Comparison, logic, SELECT, CAST and ARG_MAX/ARG_MIN models for gen_ops.py.

BOOL and INT64 tensors cannot be a module's inputs or outputs, so each
model turns its masks back into floats with SELECT_V2 and its INT64
indices into INT32 with CAST.  Values are rounded first (ROUND of x * 5)
so that equal elements, and so ties, are common.
"""

CODES = {"CAST": 53, "ARG_MAX": 56, "LESS": 58, "GREATER": 61, "GREATER_EQUAL": 62,
         "LESS_EQUAL": 63, "SELECT": 64, "EQUAL": 71, "NOT_EQUAL": 72, "ARG_MIN": 79,
         "LOGICAL_OR": 84, "LOGICAL_AND": 86, "LOGICAL_NOT": 87, "SELECT_V2": 123}
OPTIONS = {"ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions"}
COMPARISONS = ("LESS", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "EQUAL", "NOT_EQUAL")


def rounded(m, x, shape):
    """ROUND(x * 5): small integers as floats."""
    x5 = m.tensor(shape)
    m.op("MUL", [x, m.tensor([1], data=[5.0])], [x5])
    r = m.tensor(shape, name="rounded")
    m.op("ROUND", [x5], [r])
    return r


def as_float(m, cond, a, b, shape, name):
    y = m.tensor(shape, name=name)
    m.op("SELECT_V2", [cond, a, b], [y])
    return y


def compare_model(Model):
    """Every comparison of rounded floats against a broadcast constant."""
    m = Model("compare_float_broadcast", 51)
    a = m.tensor([2, 3, 5], name="a")
    r = rounded(m, a, [2, 3, 5])
    k = m.tensor([5], data=[-2.0, 0.0, 1.0, 3.0, -1.0])
    ys, conds = [], {}
    for op in COMPARISONS:
        conds[op] = m.tensor([2, 3, 5], "BOOL")
        m.op(op, [r, k], [conds[op]])
        ys.append(as_float(m, conds[op], a, r, [2, 3, 5], op.lower()))
    m.inputs, m.outputs = [a], ys
    return m, conds, (a, r)


def logical_model(Model):
    m, conds, (a, r) = compare_model(Model)
    m.name = "logical_select"
    shape = [2, 3, 5]
    both, either, neither = (m.tensor(shape, "BOOL") for _ in range(3))
    m.op("LOGICAL_AND", [conds["LESS"], conds["NOT_EQUAL"]], [both])
    m.op("LOGICAL_OR", [conds["EQUAL"], conds["GREATER"]], [either])
    m.op("LOGICAL_NOT", [conds["LESS_EQUAL"]], [neither])
    ys = [as_float(m, t, a, r, shape, n)
          for t, n in ((both, "and"), (either, "or"), (neither, "not"))]
    # SELECT (v1) with a 1-D condition picks whole rows.
    v = m.tensor([2], name="v")
    rows = m.tensor([2], "BOOL")
    m.op("GREATER", [v, m.tensor([1], data=[0.0])], [rows])
    picked = m.tensor(shape, name="select_rows")
    m.op("SELECT", [rows, a, r], [picked])
    same = m.tensor(shape, name="select_same_shape")
    m.op("SELECT", [both, r, a], [same])
    m.inputs, m.outputs = [a, v], ys + [picked, same]
    return m


def int8_compare_model(Model, q8):
    m = Model("compare_int8_same_quant", 52)
    q = q8(0.05, 3)
    a = m.tensor([4, 6], "INT8", q, name="a")
    b = m.tensor([6], "INT8", q, data=[3, -20, 40, 3, 100, -128])
    ys = []
    for op in ("GREATER", "EQUAL"):
        cond = m.tensor([4, 6], "BOOL")
        m.op(op, [a, b], [cond])
        y = m.tensor([4, 6], "INT8", q, name=op.lower())
        m.op("SELECT_V2", [cond, a, m.tensor([1], "INT8", q, data=[0])], [y])
        ys.append(y)
    m.inputs, m.outputs = [a], ys
    return m


def int8_scaled_compare_models(Model, q8):
    """TFLite compares 8-bit inputs after scaling each to a common fixed
    point ((x - zp) << 8 times its scale): inputs of different
    quantisations, and a scale so small that neighbouring values compare
    equal even under one quantisation."""
    out = []
    for name, ttype, qa, qb in (("compare_int8_mixed_quant", "INT8", (0.05, 3), (0.1, -7)),
                                ("compare_uint8_mixed_quant", "UINT8", (0.04, 140), (0.06, 120))):
        m = Model(name, 57)
        a = m.tensor([3, 8], ttype, q8(*qa), name="a")
        b = m.tensor([3, 8], ttype, q8(*qb), name="b")
        out.append(scaled_compare(m, q8, ttype, qa, qb, a, b, [3, 8], [a, b]))
    # Every a against each of -64..63: neighbours are sure to meet.
    m = Model("compare_int8_tiny_scale", 58)
    q = (0.001, 0)
    a = m.tensor([1, 32], "INT8", q8(*q), name="a")
    b = m.tensor([128, 1], "INT8", q8(*q), data=list(range(-64, 64)))
    out.append(scaled_compare(m, q8, "INT8", q, q, a, b, [128, 32], [a]))
    return out


def scaled_compare(m, q8, ttype, qa, qb, a, b, shape, inputs):
    ys = []
    for op in COMPARISONS:
        cond = m.tensor(shape, "BOOL")
        m.op(op, [a, b], [cond])
        y = m.tensor(shape, ttype, q8(*qa), name=op.lower())
        m.op("SELECT_V2", [cond, a, m.tensor([1], ttype, q8(*qa), data=[qa[1]])], [y])
        ys.append(y)
    m.inputs, m.outputs = inputs, ys
    return m


def cast_model(Model):
    m = Model("cast_float_int_bool", 53)
    a = m.tensor([3, 7], name="a")
    x5 = m.tensor([3, 7])
    m.op("MUL", [a, m.tensor([1], data=[5.0])], [x5])
    to_int = m.tensor([3, 7], "INT32", name="float_to_int32")  # truncates toward 0
    m.op("CAST", [x5], [to_int])
    back = m.tensor([3, 7], name="int32_to_float")
    m.op("CAST", [to_int], [back])
    flag = m.tensor([3, 7], "BOOL")
    m.op("CAST", [to_int], [flag])
    flag_f = m.tensor([3, 7], name="int32_to_bool_to_float")
    m.op("CAST", [flag], [flag_f])
    i8 = m.tensor([3, 7], "INT8", name="i8")
    i8_wide = m.tensor([3, 7], "INT32", name="int8_to_int32")
    m.op("CAST", [i8], [i8_wide])
    u8 = m.tensor([3, 7], "UINT8", name="u8")
    u8_f = m.tensor([3, 7], name="uint8_to_float")
    m.op("CAST", [u8], [u8_f])
    m.inputs, m.outputs = [a, i8, u8], [to_int, back, flag_f, i8_wide, u8_f]
    return m


def arg_model(Model, q8):
    m = Model("arg_max_min", 54)
    a = m.tensor([2, 5, 7], name="a")
    r = rounded(m, a, [2, 5, 7])  # ties
    amax = m.tensor([2, 7], "INT32", name="argmax_axis1_ties")
    m.op("ARG_MAX", [r, m.ints([1])], [amax], output_type="INT32")
    amin64 = m.tensor([2, 5], "INT64")
    m.op("ARG_MIN", [a, m.ints([-1])], [amin64], output_type="INT64")
    amin = m.tensor([2, 5], "INT32", name="argmin_last_axis_int64")
    m.op("CAST", [amin64], [amin])
    q = m.tensor([3, 9], "INT8", q8(0.1, -4), name="q")
    qmax = m.tensor([3], "INT32", name="argmax_int8")
    m.op("ARG_MAX", [q, m.ints([1])], [qmax], output_type="INT32")
    u = m.tensor([4, 6], "UINT8", q8(0.1, 120), name="u")
    umin = m.tensor([6], "INT32", name="argmin_uint8_axis0")
    m.op("ARG_MIN", [u, m.ints([0])], [umin], output_type="INT32")
    m.inputs, m.outputs = [a, q, u], [amax, amin, qmax, umin]
    return m


def models(Model, q8):
    return [compare_model(Model)[0], logical_model(Model), int8_compare_model(Model, q8),
            cast_model(Model), arg_model(Model, q8)] + int8_scaled_compare_models(Model, q8)


def error_models(Model, q8):
    out = []
    m = Model("err_compare_int16_quant", 55)  # int16 compares raw values
    a = m.tensor([4], "INT16", q8(0.05, 0), name="a")
    b = m.tensor([4], "INT16", q8(0.1, 0), name="b")
    cond = m.tensor([4], "BOOL")
    m.op("LESS", [a, b], [cond])
    y = m.tensor([4], "INT16", q8(0.05, 0), name="y")
    m.op("SELECT_V2", [cond, a, m.tensor([1], "INT16", q8(0.05, 0), data=[0])], [y])
    m.inputs, m.outputs = [a, b], [y]
    out.append((m, "operator 0 (LESS): INT16 inputs of different quantisation"))
    m = Model("err_cast_to_uint8", 56)
    a = m.tensor([4], name="a")
    y = m.tensor([4], "UINT8", name="y")
    m.op("CAST", [a], [y])
    m.inputs, m.outputs = [a], [y]
    out.append((m, "operator 0 (CAST): casting FLOAT32 to UINT8 is not supported"))
    return out
