"""BATCH_MATMUL, PRELU, LOG_SOFTMAX and L2_NORMALIZATION in float32 for
gen_ops.py: broadcast batch axes, both adjoint flags, odd sizes."""

CODES = {"L2_NORMALIZATION": 11, "LOG_SOFTMAX": 50, "PRELU": 54, "BATCH_MATMUL": 126}
OPTIONS = {"BATCH_MATMUL": "BatchMatMulOptions", "LOG_SOFTMAX": "LogSoftmaxOptions",
           "L2_NORMALIZATION": "L2NormOptions"}


def batch_matmul(Model):
    m = Model("batch_matmul_float", 81)
    a = m.tensor([2, 3, 4, 5], name="a")
    y1 = m.tensor([2, 3, 4, 6], name="broadcast_rhs")
    m.op("BATCH_MATMUL", [a, m.const([5, 6])], [y1])
    x = m.tensor([3, 5, 4], name="x")
    y2 = m.tensor([3, 4, 2], name="adj_x")
    m.op("BATCH_MATMUL", [x, m.const([3, 5, 2])], [y2], adj_x=True)
    p = m.tensor([1, 4, 5], name="p")
    y3 = m.tensor([2, 4, 3], name="adj_y_batch_broadcast")
    m.op("BATCH_MATMUL", [p, m.const([2, 3, 5])], [y3], adj_y=True)
    m.inputs, m.outputs = [a, x, p], [y1, y2, y3]
    return m


def normalisations(Model):
    m = Model("prelu_logsoftmax_l2norm", 82)
    x = m.tensor([1, 4, 4, 3], name="x")
    y1 = m.tensor([1, 4, 4, 3], name="prelu")
    m.op("PRELU", [x, m.const([1, 1, 3], lo=0.05, hi=0.5)], [y1])
    s = m.tensor([3, 7], name="s")
    s4 = m.tensor([3, 7])
    m.op("MUL", [s, m.tensor([1], data=[4.0])], [s4])
    y2 = m.tensor([3, 7], name="log_softmax")
    m.op("LOG_SOFTMAX", [s4], [y2])
    y3 = m.tensor([3, 7], name="l2_normalization")
    m.op("L2_NORMALIZATION", [s], [y3])
    m.inputs, m.outputs = [x, s], [y1, y2, y3]
    return m


def models(Model, q8):
    return [batch_matmul(Model), normalisations(Model)]


def error_models(Model, q8):
    m = Model("err_prelu_int16_alpha_int16", 83)  # TFLM's int16 PRELU wants an int8 alpha
    x = m.tensor([4], "INT16", q8(0.1, 0), name="x")
    y = m.tensor([4], "INT16", q8(0.1, 0), name="y")
    m.op("PRELU", [x, m.tensor([1], "INT16", q8(0.01, 0), data=[20])], [y])
    m.inputs, m.outputs = [x], [y]
    return [(m, "operator 0 (PRELU): unsupported types INT16, alpha INT16 -> INT16")]
