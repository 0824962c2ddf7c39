"""IF and WHILE models for gen_ops.py (WHILE's are in while_ops.py).

The importer inlines both branches of an IF and selects per output by the
condition, so each model is built twice, with the condition flipped
(GREATER or LESS_EQUAL of the input's sum and 0), so one model takes each
branch (TFLite's seed-1 input sums to 2.12: if_then_taken takes THEN).  BOOL cannot be a model input, so
the condition is computed.  Expected outputs are TFLite's.
"""
import while_ops
from variable_ops import handle, with_subgraphs

CODES = {"IF": 118, "WHILE": 119, "SUM": 74, "GREATER": 61, "LESS_EQUAL": 63,
         "LOCAL_RESPONSE_NORMALIZATION": 13, "VAR_HANDLE": 142}
OPTIONS = {"IF": "IfOptions", "WHILE": "WhileOptions", "SUM": "ReducerOptions",
           "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions"}
CODES.update(while_ops.CODES)
OPTIONS.update(while_ops.OPTIONS)


def condition(m, x, compare):
    """compare(SUM(x), 0): a BOOL scalar."""
    s = m.tensor([], name="total")
    m.op("SUM", [x, m.ints([0, 1])], [s], keep_dims=False)
    c = m.tensor([], "BOOL", name="cond")
    m.op(compare, [s, m.tensor([], data=[0.0])], [c])
    return c


def bool_const(m, value, name="always"):
    """A BOOL scalar constant (gen_ops' Model packs numbers only)."""
    m.buffers.append({"data": [1 if value else 0]})
    m.tensors.append({"shape": [], "type": "BOOL", "name": name, "buffer": len(m.buffers) - 1})
    return len(m.tensors) - 1


def branch(shape_in, build):
    """A subgraph of two float inputs (x, w) and what build(s, x, w) returns."""
    def make(s):
        x, w = s.tensor(shape_in, name="bx"), s.tensor(shape_in, name="bw")
        s.inputs, s.outputs = [x, w], build(s, x, w)
    return make


def then_branch(s, x, w):
    """(x + w, x): the second output passes an input through."""
    y = s.tensor([2, 3], name="sum")
    s.op("ADD", [x, w], [y], fused_activation_function="RELU")
    return [y, x]


def else_branch(s, x, w):
    """(x, x * w)."""
    y = s.tensor([2, 3], name="product")
    s.op("MUL", [x, w], [y], fused_activation_function="NONE")
    return [x, y]


def if_model(Model, name, compare, seed):
    m = with_subgraphs(Model)(name, seed)
    x = m.tensor([2, 3], name="x")
    w = m.tensor([2, 3], name="w")
    c = condition(m, x, compare)
    then_i = m.subgraph(branch([2, 3], then_branch))
    else_i = m.subgraph(branch([2, 3], else_branch))
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [c, x, w], [a, b], then_subgraph_index=then_i, else_subgraph_index=else_i)
    y = m.tensor([2, 3], name="y")
    m.op("SUB", [a, b], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x, w], [y, b]
    return m


def lrn(s):
    """A branch with an operator the importer does not lower."""
    xx, ww = s.tensor([2, 3], name="bx"), s.tensor([2, 3], name="bw")
    y = s.tensor([1, 1, 2, 3], name="lrn")
    r = s.tensor([1, 1, 2, 3])
    s.op("RESHAPE", [xx, s.ints([1, 1, 2, 3])], [r])
    s.op("LOCAL_RESPONSE_NORMALIZATION", [r], [y], radius=1, bias=1.0, alpha=1.0, beta=0.5)
    out = s.tensor([2, 3], name="lrn2")
    s.op("RESHAPE", [y, s.ints([2, 3])], [out])
    s.inputs, s.outputs = [xx, ww], [out, ww]


def const_if_model(Model):
    """A constant condition: only the branch taken is lowered, so the other
    may hold an operator the importer does not support."""
    m = with_subgraphs(Model)("if_const_cond", 83)
    x, w = m.tensor([2, 3], name="x"), m.tensor([2, 3], name="w")
    then_i = m.subgraph(branch([2, 3], then_branch))
    else_i = m.subgraph(lrn)
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [bool_const(m, True), x, w], [a, b],
         then_subgraph_index=then_i, else_subgraph_index=else_i)
    m.inputs, m.outputs = [x, w], [a, b]
    return m


def models(Model):
    return [if_model(Model, "if_then_taken", "GREATER", 81),
            if_model(Model, "if_else_taken", "LESS_EQUAL", 81),
            const_if_model(Model)] + while_ops.models(with_subgraphs(Model))


def error_models(Model):
    VarModel = with_subgraphs(Model)
    out = []

    def stateful(s, x, w):
        handle(s, "v")
        return [x, w]
    m = VarModel("err_if_stateful", 84)
    x, w = m.tensor([2, 3], name="x"), m.tensor([2, 3], name="w")
    c = condition(m, x, "GREATER")
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [c, x, w], [a, b], then_subgraph_index=m.subgraph(branch([2, 3], then_branch)),
         else_subgraph_index=m.subgraph(branch([2, 3], stateful)))
    m.inputs, m.outputs = [x, w], [a, b]
    out.append((m, "operator 2 (IF): subgraph 2 operator 0 (VAR_HANDLE): a branch with state or "
                   "control flow cannot be inlined"))

    def transposed(s, x, w):
        y = s.tensor([3, 2], name="t")
        s.op("RESHAPE", [x, s.ints([3, 2])], [y])
        return [y, w]
    m = VarModel("err_if_shapes", 85)
    x, w = m.tensor([2, 3], name="x"), m.tensor([2, 3], name="w")
    c = condition(m, x, "GREATER")
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [c, x, w], [a, b], then_subgraph_index=m.subgraph(branch([2, 3], then_branch)),
         else_subgraph_index=m.subgraph(branch([2, 3], transposed)))
    m.inputs, m.outputs = [x, w], [a, b]
    out.append((m, "operator 2 (IF): output 0: the two branches give different shapes or types"))

    m = VarModel("err_if_bad_index", 86)
    x, w = m.tensor([2, 3], name="x"), m.tensor([2, 3], name="w")
    c = condition(m, x, "GREATER")
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [c, x, w], [a, b], then_subgraph_index=m.subgraph(branch([2, 3], then_branch)),
         else_subgraph_index=9)
    m.inputs, m.outputs = [x, w], [a, b]
    out.append((m, "operator 2 (IF): branch subgraph 9 is not another subgraph (the model has 2)"))

    m = VarModel("err_if_branch_op", 88)
    x, w = m.tensor([2, 3], name="x"), m.tensor([2, 3], name="w")
    c = condition(m, x, "GREATER")
    a, b = m.tensor([2, 3], name="a"), m.tensor([2, 3], name="b")
    m.op("IF", [c, x, w], [a, b], then_subgraph_index=m.subgraph(branch([2, 3], then_branch)),
         else_subgraph_index=m.subgraph(lrn))
    m.inputs, m.outputs = [x, w], [a, b]
    out.append((m, "operator 2 (IF): subgraph 2: operator 1 (LOCAL_RESPONSE_NORMALIZATION): "
                   "operator not supported"))

    m = VarModel("err_while", 87)
    x, y = m.tensor([2], name="x"), m.tensor([2], name="y")
    m.op("WHILE", [x], [y], cond_subgraph_index=1, body_subgraph_index=2)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (WHILE): cond_subgraph_index 1 is not another subgraph (the "
                   "model has 1)"))
    return out + while_ops.error_models(VarModel)
