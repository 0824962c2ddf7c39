#!/usr/bin/env python3
"""Checks how the TFLite importer exposes model state (variable tensors).

The contract the compiler and runtime build on: after the model's inputs,
one argument per variable tensor a live operator reads, in order of first
use, with {tinyml.name, tinyml.state, tinyml.state_fill = B : i64} (B: an
int8 tensor's zero point as a byte, else 0; no quantisation attributes);
after the outputs, one result per state, {tinyml.name, tinyml.state},
returning the state's last update or else its argument.  A variable is
never read as a constant, and what is not supported is refused by name.

Small models are built with flatc from gen_ops.py's Model (tests/e2e/
tflite_ops) and imported with `tflite_dump --tosa`.

Usage: check_state.py FLATC SCHEMA TFLITE_DUMP
Exit 77 (skip) when flatc or the schema is missing, unless CI=true.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e", "tflite_ops"))
import gen_ops  # noqa: E402
import lstm_int_ops  # noqa: E402
import lstm_ops  # noqa: E402
import svdf_ops  # noqa: E402
import variable_ops  # noqa: E402

FLATC = SCHEMA = DUMP = TMP = None
FAILURES = []


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def import_model(m):
    """(return code, TOSA text or the error message) for Model m."""
    jpath = os.path.join(TMP, m.name + ".json")
    with open(jpath, "w") as f:
        json.dump(m.json(), f)
    subprocess.run([FLATC, "-b", "-o", TMP, SCHEMA, jpath], check=True)
    r = subprocess.run([DUMP, "--tosa", os.path.join(TMP, m.name + ".tflite")],
                       capture_output=True, text=True)
    return r.returncode, r.stdout if r.returncode == 0 else r.stderr


def signature(text):
    """([(id, type, attrs)] of the arguments, [(type, attrs)] of the results,
    [ids] returned)."""
    head = re.search(r"func\.func @main\((.*)\) -> \((.*)\) \{\n", text)
    args = re.findall(r"%v(\d+): (tensor<[^>]*>)(?: \{([^}]*)\})?", head.group(1))
    results = re.findall(r"(tensor<[^>]*>)(?: \{([^}]*)\})?", head.group(2))
    ret = re.search(r"^\s*return (.*?) :", text, re.M).group(1)
    return ([(int(i), t, a) for i, t, a in args], results,
            [int(v) for v in re.findall(r"%v(\d+)", ret)])


def state_arg(name, fill):
    return 'tinyml.name = "%s", tinyml.state, tinyml.state_fill = %d : i64' % (name, fill)


def state_result(name):
    return 'tinyml.name = "%s", tinyml.state' % name


def check_lstm():
    m = gen_ops.Model("state_lstm", 1)
    lstm_ops.build(m, lstm_ops.Spec("state_lstm", batch=2, n_out=4, projection=True))
    rc, text = import_model(m)
    check(rc == 0, "lstm: imports (%s)" % text.strip().splitlines()[-1] if rc else "lstm: imports")
    if rc:
        return
    args, results, ret = signature(text)
    check([a for _, _, a in args] == ['tinyml.name = "x"', state_arg("output_state", 0),
                                      state_arg("cell_state", 0)],
          "lstm: arguments x, output_state, cell_state with state attributes")
    check([t for _, t, _ in args[1:]] == ["tensor<2x4xf32>", "tensor<2x7xf32>"],
          "lstm: state arguments have the variables' types")
    check(results == [("tensor<2x3x4xf32>", 'tinyml.name = "y"'),
                      ("tensor<2x4xf32>", state_result("output_state")),
                      ("tensor<2x7xf32>", state_result("cell_state"))],
          "lstm: results y, then the states")
    check(len(ret) == 3 and ret[1] != args[1][0] and ret[2] != args[2][0],
          "lstm: the returned states are updates, not the arguments")


def check_svdf():
    """An SVDF's int8 state: filled with its zero point, updated each invoke."""
    m = gen_ops.Model("state_svdf", 5)
    svdf_ops.build(m, svdf_ops.Spec("state_svdf", state="INT8", batch=2, state_zp=-7))
    rc, text = import_model(m)
    check(rc == 0, "svdf: imports (%s)" % text.strip().splitlines()[-1] if rc else "svdf: imports")
    if rc:
        return
    args, results, ret = signature(text)
    check([(t, a) for _, t, a in args[1:]] == [("tensor<2x24xi8>", state_arg("state", 249))],
          "svdf: one int8 state argument [2, 24], filled with its zero point -7")
    check(results[1:] == [("tensor<2x24xi8>", state_result("state"))], "svdf: state result")
    check(len(ret) == 2 and ret[1] != args[1][0], "svdf: the returned state is an update")


def svdf_mixed_state(m):
    """int16 weights_time with an int8 state: TFLM reads both as one type."""
    ins = svdf_ops.build(m, svdf_ops.Spec("svdf_mixed", state="INT16"))
    m.tensors[ins[4]]["type"] = "INT8"


def check_int_lstm():
    """The integer LSTM's states: int8 hidden state reset to its zero point
    (-7: byte 249), int16 cell state to 0, as TFLite Micro resets them."""
    m = gen_ops.Model("state_int_lstm", 2)
    lstm_int_ops.build(m, lstm_int_ops.Spec("state_int_lstm", batch=2, h_q=(0.009, -7)))
    rc, text = import_model(m)
    check(rc == 0, "int lstm: imports (%s)" % text.strip().splitlines()[-1] if rc
          else "int lstm: imports")
    if rc:
        return
    args, results, ret = signature(text)
    check([(t, a) for _, t, a in args[1:]] ==
          [("tensor<2x7xi8>", state_arg("output_state", 249)),
           ("tensor<2x7xi16>", state_arg("cell_state", 0))],
          "int lstm: int8 and int16 states, filled with the zero point and 0")
    check(results[1:] == [("tensor<2x7xi8>", state_result("output_state")),
                          ("tensor<2x7xi16>", state_result("cell_state"))] and
          len(ret) == 3 and ret[1] != args[1][0] and ret[2] != args[2][0],
          "int lstm: the states are updated results")


def quant_add(m, a, b, name):
    y = m.tensor([4], "INT8", ([0.1], [0]), name=name)
    m.op("ADD", [a, b], [y])
    return y


def check_order_fill_and_unchanged():
    """Tensor order differs from use order; int8 fills are zero points."""
    m = gen_ops.Model("state_order", 2)
    var_a = m.tensor([4], "INT8", ([0.1], [5]), name="var_a", variable=True)
    var_b = m.tensor([4], "INT8", ([0.1], [-1]), name="var_b", variable=True)
    x = m.tensor([4], "INT8", ([0.1], [0]), name="x")
    t = quant_add(m, x, var_b, "t")
    y = quant_add(m, t, var_a, "y")
    m.inputs, m.outputs = [x], [y]
    rc, text = import_model(m)
    check(rc == 0, "order: imports")
    if rc:
        return
    args, results, ret = signature(text)
    check([a for _, _, a in args[1:]] == [state_arg("var_b", 255), state_arg("var_a", 5)],
          "order: states by first use; fill = zero point as a byte (-1 -> 255, 5)")
    check([a for _, a in results[1:]] == [state_result("var_b"), state_result("var_a")],
          "order: state results in the same order")
    check(ret[1:] == [args[1][0], args[2][0]], "order: a state nobody updates returns its argument")


def check_dead_and_constant():
    m = gen_ops.Model("state_dead", 3)
    x = m.tensor([4], name="x")
    dead_var = m.tensor([4], name="dead_var", variable=True)
    with_data = m.tensor([4], data=[1.5, 2.5, 3.5, 4.5], name="with_data", variable=True)
    dead, t, y = m.tensor([4], name="dead"), m.tensor([4], name="t"), m.tensor([4], name="y")
    m.op("ADD", [x, dead_var], [dead], fused_activation_function="NONE")
    m.op("ADD", [x, with_data], [t], fused_activation_function="NONE")
    m.op("RELU", [t], [y])
    m.inputs, m.outputs = [x], [y]
    rc, text = import_model(m)
    check(rc == 0, "dead: imports")
    if rc:
        return
    args, _, _ = signature(text)
    check([a for _, _, a in args[1:]] == [state_arg("with_data", 0)],
          "dead: only variables live operators read are state")
    check("0000C03F" not in text.upper(), "dead: a variable's bytes are never a constant")


def check_resource_variables():
    """Resource variables come after the variable tensors: CALL_ONCE's
    constant as tinyml.state_init, a variable it leaves filled with TFLite
    Micro's default (the int8 zero point), a dead read no state at all."""
    m = variable_ops.with_subgraphs(gen_ops.Model)("state_resource", 6)
    variable_ops.initialiser(m, [("acc", [4], "INT8", ([0.1], [0]), [1, -2, 3, 127])])
    x = m.tensor([4], "INT8", ([0.1], [0]), name="x")
    var_a = m.tensor([4], "INT8", ([0.1], [5]), name="var_a", variable=True)
    h = variable_ops.handle(m, "acc")
    t = quant_add(m, x, variable_ops.read(m, h, [4], "INT8", ([0.1], [0])), "t")
    m.op("ASSIGN_VARIABLE", [h, t], [])
    zz = m.tensor([4], "INT8", ([0.1], [-5]), name="zz")
    m.op("ADD", [t, t], [zz])
    m.op("ASSIGN_VARIABLE", [variable_ops.handle(m, "z"), zz], [])
    variable_ops.read(m, variable_ops.handle(m, "dead"), [4], "INT8", ([0.1], [0]))
    y = quant_add(m, t, var_a, "y")
    m.inputs, m.outputs = [x], [y]
    rc, text = import_model(m)
    check(rc == 0, "resource: imports (%s)" % text.strip().splitlines()[-1] if rc
          else "resource: imports")
    if rc:
        return
    args, results, ret = signature(text)
    check([a for _, _, a in args[1:]] ==
          [state_arg("var_a", 5),
           'tinyml.name = "acc", tinyml.state, tinyml.state_init = dense<"0x01FE037F"> : '
           'tensor<4xi8>',
           state_arg("z", 251)],
          "resource: variable tensor, then acc = CALL_ONCE's value, z = zero point -5")
    check([a for _, a in results[1:]] ==
          [state_result("var_a"), state_result("acc"), state_result("z")],
          "resource: state results in the same order, the dead variable in none")
    check(ret[2] != args[2][0] and ret[3] != args[3][0], "resource: assigned values returned")


def check_refused(name, build, message):
    m = gen_ops.Model(name, 4)
    build(m)
    rc, text = import_model(m)
    check(rc != 0 and message in text, "%s: refused with '%s' (%s)"
          % (name, message, text.strip().splitlines()[-1] if text.strip() else "imported"))


def uint8_state(m):
    x = m.tensor([4], "UINT8", ([0.1], [128]), name="x")
    v = m.tensor([4], "UINT8", ([0.1], [128]), name="v", variable=True)
    y = m.tensor([4], "UINT8", ([0.1], [128]), name="y")
    m.op("ADD", [x, v], [y])
    m.inputs, m.outputs = [x], [y]


def variable_input(m):
    x = m.tensor([4], name="x", variable=True)
    y = m.tensor([4], name="y")
    m.op("RELU", [x], [y])
    m.inputs, m.outputs = [x], [y]


def main():
    global FLATC, SCHEMA, DUMP, TMP
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    FLATC, SCHEMA, DUMP = sys.argv[1:4]
    if not FLATC or not os.path.exists(SCHEMA):
        skip("flatc or %s is missing" % SCHEMA)
    with tempfile.TemporaryDirectory() as TMP:
        check_lstm()
        check_int_lstm()
        check_order_fill_and_unchanged()
        check_dead_and_constant()
        check_svdf()
        check_resource_variables()
        check_refused("svdf_mixed", svdf_mixed_state,
                      "(SVDF): unsupported types INT8, INT8, INT16, state INT8 -> INT8")
        check_refused("state_uint8", uint8_state,
                      "variable tensor 'v' is UINT8 (uint8 state is not supported)")
        check_refused("state_input", variable_input,
                      "variable tensor 'x' is also a model input")
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
