#!/usr/bin/env python3
"""Cross-checks tfl_read against flatc, the reference FlatBuffer reader.

1. Every .tflite under MODELS is read by tflite_dump (our reader, printing
   JSON) and by `flatc --json --strict-json --raw-binary SCHEMA`; the two
   must agree on counts, names, types, shapes, quantisation, buffer data
   (size and hash), operator codes, inputs and outputs, and every options
   field the schema gives a scalar or int-vector type.
2. Small models written as JSON and built with `flatc -b` probe each
   semantic rule of the reader (indices, shapes, data sizes, quantisation,
   operator codes), which byte-level corruption rarely reaches.

Usage: check_flatc.py FLATC SCHEMA TFLITE_DUMP MODELS_DIR
Exit 77 (skip) when MODELS_DIR or flatc is missing, unless CI=true.
Standard library only.
"""

import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

FLATC = SCHEMA = DUMP = None
OPTION_FIELDS = 16  # tflite_dump prints option fields 0..15


def skip(reason):
    print(f"SKIP: {reason}")
    if os.environ.get("CI") == "true":
        print("CI=true: a skip is a failure")
        sys.exit(1)
    sys.exit(77)


# ---- the schema ------------------------------------------------------------

def parse_schema(path):
    """Returns (enums, unions, tables): enum name -> (base type, {member:
    value}); union name -> [members, NONE first]; table name -> [(field name,
    type, id, deprecated)], where a union field takes two ids."""
    text = re.sub(r"//[^\n]*", "", open(path).read())
    union_names = set(re.findall(r"\bunion\s+(\w+)", text))
    enums, unions, tables = {}, {}, {}
    for kind, name, base, body in re.findall(
            r"\b(enum|union|table)\s+(\w+)\s*(?::\s*(\w+))?\s*(?:\([^)]*\))?\s*\{(.*?)\}",
            text, re.S):
        if kind == "enum":
            values, nxt = {}, 0
            for item in filter(None, (i.strip() for i in body.split(","))):
                member, _, value = re.sub(r"\(.*?\)", "", item).partition("=")
                nxt = int(value) if value.strip() else nxt
                values[member.strip()] = nxt
                nxt += 1
            enums[name] = (base, values)
        elif kind == "union":
            members = [re.sub(r"\(.*?\)", "", m).strip() for m in body.split(",")]
            unions[name] = ["NONE"] + [m for m in members if m]
        else:
            fields, fid = [], 0
            for decl in filter(None, (d.strip() for d in body.split(";"))):
                fname, _, rest = decl.partition(":")
                ftype = re.split(r"[\s=(]", rest.strip(), maxsplit=1)[0]
                fields.append((fname.strip(), ftype, fid, "deprecated" in rest))
                fid += 2 if ftype in union_names else 1
            tables[name] = fields
    return enums, unions, tables


# ---- running the tools -----------------------------------------------------

def flatc_json(model, outdir):
    subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "-o", outdir,
                    SCHEMA, "--", model], check=True, capture_output=True)
    name = os.path.splitext(os.path.basename(model))[0] + ".json"
    with open(os.path.join(outdir, name)) as f:
        return json.load(f)


def flatc_binary(obj, outdir, name):
    src = os.path.join(outdir, name + ".json")
    with open(src, "w") as f:
        json.dump(obj, f)
    subprocess.run([FLATC, "-b", "-o", outdir, SCHEMA, src], check=True,
                   capture_output=True)
    return os.path.join(outdir, name + ".tflite")


def dump(model, subgraph=None):
    """(parsed JSON, None) on success, (None, stderr) on a reader error."""
    args = [] if subgraph is None else ["--subgraph", str(subgraph)]
    p = subprocess.run([DUMP] + args + [model], capture_output=True, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout), None
    if p.returncode == 1:
        return None, p.stderr.strip()
    raise RuntimeError(f"tflite_dump crashed on {model}: {p.returncode} {p.stderr}")


# ---- comparing one model ---------------------------------------------------

class Mismatch(Exception):
    pass


def expect(cond, where, msg):
    if not cond:
        raise Mismatch(f"{where}: {msg}")


def eq(a, b, where):
    expect(a == b, where, f"reader says {a!r}, flatc says {b!r}")


def close(a, b, where, file_bytes=None):
    """flatc prints floats rounded to 6 decimal places, so the reader's value
    (printed exactly, %.9g) must round to it; with `file_bytes`, its exact
    bits must also occur in the file."""
    if isinstance(a, str):
        expect(str(b) == a, where, f"reader says {a!r}, flatc says {b!r}")
        return
    ok = math.isclose(a, b, rel_tol=1e-6, abs_tol=5.01e-7)
    expect(ok, where, f"reader says {a!r}, flatc says {b!r}")
    if file_bytes is not None:
        expect(struct.pack("<f", a) in file_bytes, where, f"reader's {a!r} is not in the file")


def as_latin1(s):
    # tflite_dump prints each byte as one code point.
    return s.encode("utf-8").decode("latin-1")


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def enum_value(schema, enum, v):
    return schema[0][enum][1][v] if isinstance(v, str) else v


class Checker:
    def __init__(self, schema):
        self.file_bytes = b""  # the model being checked
        self.schema = schema
        self.enums, self.unions, self.tables = schema

    def tensor(self, ours, ref, buffers, where):
        eq(ours["name"], as_latin1(ref.get("name", "")), where + " name")
        eq(ours["type"], enum_value(self.schema, "TensorType", ref.get("type", 0)), where + " type")
        shape = ref.get("shape", [])
        eq(ours["shape"], shape, where + " shape")
        eq(ours["dynamic"], int(-1 in ref.get("shape_signature", [])), where + " dynamic dims")
        eq(ours["sparsity"], int("sparsity" in ref), where + " sparsity")
        eq(ours["variable"], int(ref.get("is_variable", False)), where + " is_variable")
        eq(ours["buffer"], ref.get("buffer", 0), where + " buffer")
        buf = buffers[ref.get("buffer", 0)] if ref.get("buffer", 0) < len(buffers) else {}
        data = buf.get("data", [])
        if buf.get("offset", 0) > 1:  # data outside the FlatBuffer
            eq(ours["data_size"], buf.get("size", 0), where + " data size")
        else:
            eq(ours["data_size"], len(data), where + " data size")
            eq(ours["data_hash"], fnv1a(data) if data else 0, where + " data hash")
        self.quant(ours, ref.get("quantization", {}), shape, where)

    def quant(self, ours, q, shape, where):
        scale = q.get("scale", [])
        eq(len(ours["scale"]), len(scale), where + " scale count")
        for i, (a, b) in enumerate(zip(ours["scale"], scale)):
            close(a, b, f"{where} scale[{i}]", self.file_bytes)
        eq(ours["zero_point"], q.get("zero_point", []), where + " zero_point")
        dim = q.get("quantized_dimension", 0)
        if len(shape) == 1 and len(scale) > 1 and shape[0] == len(scale):
            dim = 0  # the reader's documented correction for 1-D tensors
        eq(ours["quantized_dimension"], dim, where + " quantized_dimension")
        eq(ours["details"], int(q.get("details_type", "NONE") != "NONE"), where + " details")

    def option_field(self, field, ours, value, where):
        name, ftype, fid, _ = field
        base = self.enums[ftype][0] if ftype in self.enums else ftype
        if ftype in self.enums:
            value = enum_value(self.schema, ftype, value)
        if base == "bool":
            eq(ours["bool"], int(bool(value)), where)
        elif base in ("byte", "int8"):
            eq(ours["i8"], value, where)
        elif base in ("ubyte", "uint8"):
            eq(ours["i8"] & 0xFF, value, where)
        elif base in ("int", "int32"):
            eq(ours["i32"], value, where)
        elif base in ("uint", "uint32"):
            eq(ours["i32"] & 0xFFFFFFFF, value, where)
        elif base in ("float", "float32"):
            close(ours["f32"], value, where, self.file_bytes)
        elif ftype in ("[int]", "[int32]"):
            eq(ours["vector"], value, where)
        # other types (long, strings, tables, other vectors): presence only

    def options(self, ours, table_name, ref, where):
        if ref is None:
            eq(ours, None, where + " (absent)")
            return
        expect(ours is not None, where, "flatc has options, the reader none")
        for field in self.tables[table_name]:
            name, ftype, fid, deprecated = field
            if deprecated or fid >= OPTION_FIELDS:
                continue
            key = name + "_type" if ftype in self.unions else name
            if key not in ref:
                expect(str(fid) not in ours, f"{where}.{name}", "reader sees a field flatc does not")
                continue
            expect(str(fid) in ours, f"{where}.{name}", "field missing in the reader's view")
            self.option_field(field, ours[str(fid)], ref[key], f"{where}.{name}")

    def operator(self, ours, ref, codes, where):
        idx = ref.get("opcode_index", 0)
        eq(ours["opcode_index"], idx, where + " opcode_index")
        code = codes[idx]
        builtin = max(code.get("deprecated_builtin_code", 0),
                      enum_value(self.schema, "BuiltinOperator", code.get("builtin_code", 0)))
        eq(ours["builtin_code"], builtin, where + " builtin_code")
        eq(ours["version"], code.get("version", 1), where + " version")
        cc = code.get("custom_code")
        eq(ours["custom_code"], None if cc is None else as_latin1(cc), where + " custom_code")
        eq(ours["inputs"], ref.get("inputs", []), where + " inputs")
        eq(ours["outputs"], ref.get("outputs", []), where + " outputs")
        eq(ours["intermediates"], len(ref.get("intermediates", [])), where + " intermediates")
        eq(ours["custom_options"], int("custom_options" in ref or
                                       ref.get("large_custom_options_offset", 0) > 1),
           where + " custom_options")
        for ours_key, union, key in (("options", "BuiltinOptions", "builtin_options"),
                                     ("options2", "BuiltinOptions2", "builtin_options_2")):
            tname = ref.get(key + "_type", "NONE")
            eq(ours[ours_key + "_type"], self.unions[union].index(tname), f"{where} {key}_type")
            self.options(ours[ours_key], tname, ref.get(key), f"{where} {tname}")

    def model(self, ours, ref, path):
        with open(path, "rb") as f:
            self.file_bytes = f.read()
        eq(ours["version"], ref.get("version", 0), "version")
        eq(ours["description"], as_latin1(ref.get("description", "")), "description")
        eq(ours["subgraphs"], len(ref["subgraphs"]), "subgraph count")
        codes = ref.get("operator_codes", [])
        eq(len(ours["custom_codes"]), len(codes), "operator code count")
        sg = ref["subgraphs"][0]
        eq(len(ours["tensors"]), len(sg.get("tensors", [])), "tensor count")
        buffers = ref.get("buffers", [])
        for i, (a, b) in enumerate(zip(ours["tensors"], sg.get("tensors", []))):
            self.tensor(a, b, buffers, f"tensor {i}")
        eq(ours["inputs"], sg.get("inputs", []), "subgraph inputs")
        eq(ours["outputs"], sg.get("outputs", []), "subgraph outputs")
        eq(len(ours["operators"]), len(sg.get("operators", [])), "operator count")
        for i, (a, b) in enumerate(zip(ours["operators"], sg.get("operators", []))):
            self.operator(a, b, codes, f"operator {i}")


def check_names(checker):
    """tfl_builtin_name and tfl_type_name against the schema's enums."""
    names = json.loads(subprocess.run([DUMP, "--names"], capture_output=True,
                                      check=True, text=True).stdout)
    failures = 0
    for key, enum in (("builtin", "BuiltinOperator"), ("type", "TensorType")):
        values = checker.enums[enum][1]
        want = [n for n, _ in sorted(values.items(), key=lambda kv: kv[1])]
        if sorted(values.values()) != list(range(len(values))) or names[key] != want:
            failures += 1
            print(f"FAIL {enum} names: reader has {names[key]}, schema {want}")
        else:
            print(f"ok   {len(want)} {enum} names")
    return failures


def check_models(checker, models_dir, tmp):
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(models_dir)
                   for f in fs if f.endswith(".tflite"))
    failures = 0
    for path in paths:
        ours, err = dump(path)
        try:
            expect(err is None, path, f"reader rejects it: {err}")
            checker.model(ours, flatc_json(path, tmp), path)
            print(f"ok   {os.path.relpath(path, models_dir)}: {len(ours['tensors'])} tensors, "
                  f"{len(ours['operators'])} operators")
        except Mismatch as e:
            failures += 1
            print(f"FAIL {os.path.relpath(path, models_dir)}: {e}")
    if not paths:
        print(f"FAIL: no .tflite files under {models_dir}")
        failures += 1
    return failures


# ---- small models probing each rule ---------------------------------------

def base_model():
    """ADD of an input and a 16-byte constant."""
    return {
        "version": 3,
        "operator_codes": [{"builtin_code": "ADD"}],
        "subgraphs": [{
            "tensors": [
                {"name": "a", "shape": [1, 4], "type": "FLOAT32"},
                {"name": "b", "shape": [1, 4], "type": "FLOAT32", "buffer": 1},
                {"name": "out", "shape": [1, 4], "type": "FLOAT32"}],
            "inputs": [0], "outputs": [2],
            "operators": [{"opcode_index": 0, "inputs": [0, 1], "outputs": [2],
                           "builtin_options_type": "AddOptions",
                           "builtin_options": {"fused_activation_function": "RELU"}}]}],
        "buffers": [{}, {"data": list(range(16))}],
    }


def sg(m):
    return m["subgraphs"][0]


def tensor(i, **fields):
    return lambda m: sg(m)["tensors"][i].update(fields)


def op(**fields):
    return lambda m: sg(m)["operators"][0].update(fields)


def buffer(i, **fields):
    def f(m):
        m["buffers"][i] = fields
    return f


def const(i, data, **fields):
    """Tensor i becomes a constant with `data` in buffer 1."""
    def f(m):
        sg(m)["tensors"][i].update(fields, buffer=1)
        m["buffers"][1] = {"data": data}
    return f


def model(**fields):
    return lambda m: m.update(fields)


def sub(**fields):
    return lambda m: sg(m).update(fields)


def quant(i, **q):
    return tensor(i, quantization=q)


def opcodes(*codes):
    return lambda m: m.update(operator_codes=list(codes))


def has(path, value):
    """Expects dump[path...] == value, path like ("tensors", 1, "dynamic")."""
    def check(d):
        for key in path:
            d = d[key]
        return d == value, f"{'.'.join(map(str, path))} is {d!r}, expected {value!r}"
    return check


PER_CHANNEL = dict(scale=[1.0, 2.0, 3.0, 4.0], zero_point=[0, 0, 0, 0])
OK = None  # expected: success and agreement with the JSON

# (name, mutations, expected): expected is OK, a check on the dump, or a
# substring of the error.
CASES = [
    ("base", [], OK),
    ("negative dim", [tensor(0, shape=[1, -4])], "tensor 0: dimension 1 is negative (-4)"),
    ("rank 9", [tensor(0, shape=[1] * 9)], "tensor 0: rank 9 exceeds the maximum 8"),
    ("rank 8", [tensor(0, shape=[1] * 8)], OK),
    ("dynamic batch", [tensor(0, shape_signature=[-1, 4])], has(("tensors", 0, "dynamic"), 1)),
    ("signature -2", [tensor(0, shape_signature=[-2, 4])], "tensor 0: shape_signature[0] is -2"),
    ("buffer index", [tensor(0, buffer=5)], "tensor 0: buffer 5 is out of range (2 buffers)"),
    ("short data", [const(1, [0] * 15)],
     "tensor 1: 15 data bytes do not match its shape and type FLOAT32 (16 bytes)"),
    ("long data", [const(1, [0] * 17)], "tensor 1: 17 data bytes do not match"),
    ("dynamic const", [const(1, [0] * 5, shape_signature=[-1, 4])], OK),
    ("huge constant", [const(1, [0] * 16, shape=[2 ** 30, 2 ** 30, 2 ** 30, 16])],
     "tensor 1: shape has more than 2^59 elements"),
    ("huge input", [tensor(0, shape=[1, 2 ** 24, 687865856, 13330642])],
     "tensor 0: shape has more than 2^59 elements"),
    ("2^59 elements", [tensor(0, shape=[2 ** 29, 2 ** 30])], OK),
    ("2^59 + 2^30 elements", [tensor(0, shape=[2 ** 29 + 1, 2 ** 30])],
     "tensor 0: shape has more than 2^59 elements"),
    ("huge but empty", [tensor(0, shape=[2 ** 30, 2 ** 30, 2 ** 30, 0])], OK),
    ("int8 data", [const(1, [1, 2, 3, 4], type="INT8")], OK),
    ("int64 data", [const(1, [0] * 32, type="INT64")], OK),
    ("int4 packed", [const(1, [0, 0], type="INT4")], OK),
    ("int4 unpacked", [const(1, [0] * 4, type="INT4")], OK),
    ("int4 wrong", [const(1, [0] * 3, type="INT4")], "3 data bytes do not match"),
    ("string data", [const(1, [1, 2, 3, 4, 5], type="STRING")], OK),
    ("empty tensor", [const(1, [], shape=[0, 4])], has(("tensors", 1, "data_size"), 0)),
    ("scalar", [const(1, [0] * 4, shape=[])], OK),
    ("scalar wrong", [const(1, [0] * 8, shape=[])], "8 data bytes do not match"),
    ("scale count", [quant(0, scale=[1.0, 2.0], zero_point=[0])],
     "tensor 0: 2 scales but 1 zero points"),
    ("scale only", [quant(0, scale=[0.5])], OK),
    ("nan scale", [quant(0, scale=[0.5, float("nan")], quantized_dimension=1)],
     "tensor 0: scale[1] is not finite"),
    ("infinite scale", [quant(0, scale=[float("-inf")])], "tensor 0: scale[0] is not finite"),
    ("zero point only", [quant(0, zero_point=[3])], OK),
    ("per channel", [quant(1, quantized_dimension=1, **PER_CHANNEL)], OK),
    ("per channel dim", [quant(1, quantized_dimension=2, **PER_CHANNEL)],
     "tensor 1: quantized_dimension 2 is out of range for rank 2"),
    ("per channel size", [quant(1, quantized_dimension=0, **PER_CHANNEL)],
     "tensor 1: 4 scales but dimension 0 has size 1"),
    ("1-D bias dim 3", [const(1, [0] * 16, shape=[4]), quant(1, quantized_dimension=3, **PER_CHANNEL)],
     has(("tensors", 1, "quantized_dimension"), 0)),
    ("quant details", [quant(0, details_type="CustomQuantization", details={"custom": [1, 2]})],
     has(("tensors", 0, "details"), 1)),
    ("sparsity", [tensor(1, sparsity={"traversal_order": [0, 1]})], has(("tensors", 1, "sparsity"), 1)),
    ("variable", [tensor(0, is_variable=True)], has(("tensors", 0, "variable"), 1)),
    ("external buffer", [tensor(1, external_buffer=1)],
     "UNSUPPORTED: tflite: subgraph 0 tensor 1: external buffer 1 is not supported"),
    ("offset data", [buffer(1, offset=8, size=16)], has(("tensors", 1, "data_size"), 16)),
    ("offset data outside", [buffer(1, offset=8, size=1 << 40)],
     "buffer 1: 1099511627776 bytes at offset 8 lie outside the file"),
    ("opcode index", [op(opcode_index=1)], "operator 0: opcode_index 1 is out of range (1 operator codes)"),
    ("optional input", [op(inputs=[0, -1])], OK),
    ("input -2", [op(inputs=[-2, 1])], "operator 0: inputs[0] = -2 is not a tensor index (3 tensors)"),
    ("input 3", [op(inputs=[0, 3])], "operator 0: inputs[1] = 3 is not a tensor index"),
    ("output -1", [op(outputs=[-1])], "operator 0: outputs[0] = -1 is not a tensor index"),
    ("intermediates", [op(intermediates=[0, 2])], has(("operators", 0, "intermediates"), 2)),
    ("bad intermediate", [op(intermediates=[9])], "operator 0: intermediates[0] = 9"),
    ("graph input", [sub(inputs=[3])], "subgraph 0: inputs[0] = 3 is not a tensor index"),
    ("graph output", [sub(outputs=[0, -1])], "subgraph 0: outputs[1] = -1"),
    ("extended code", [opcodes({"deprecated_builtin_code": 127, "builtin_code": "GELU"})],
     has(("operators", 0, "builtin_code"), 150)),
    ("deprecated code only", [opcodes({"deprecated_builtin_code": 9})],
     has(("operators", 0, "builtin_code"), 9)),
    ("negative deprecated code", [opcodes({"deprecated_builtin_code": -3, "builtin_code": "MUL"})],
     has(("operators", 0, "builtin_code"), 18)),
    ("version", [opcodes({"builtin_code": "ADD", "version": 4})], has(("operators", 0, "version"), 4)),
    ("custom op", [opcodes({"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                            "custom_code": "MyOp", "version": 2}),
                   op(builtin_options_type="NONE", builtin_options=None, custom_options=[1, 2, 3])],
     has(("operators", 0, "custom_code"), "MyOp")),
    ("large custom options", [op(large_custom_options_offset=8, large_custom_options_size=4)],
     has(("operators", 0, "custom_options"), 1)),
    ("large custom options outside", [op(large_custom_options_offset=8, large_custom_options_size=1 << 33)],
     "custom option bytes at offset 8 lie outside the file"),
    ("conv options", [op(builtin_options_type="Conv2DOptions",
                         builtin_options={"padding": "VALID", "stride_w": 2, "stride_h": 3,
                                          "fused_activation_function": "RELU6",
                                          "dilation_w_factor": 2, "dilation_h_factor": -7,
                                          "quantized_bias_type": "INT32"})], OK),
    ("bool options", [op(builtin_options_type="FullyConnectedOptions",
                         builtin_options={"keep_num_dims": True,
                                          "weights_format": "SHUFFLED4x16INT8"})], OK),
    ("reshape options", [op(builtin_options_type="ReshapeOptions",
                            builtin_options={"new_shape": [1, -1, 4]})], OK),
    ("float options", [op(builtin_options_type="LeakyReluOptions", builtin_options={"alpha": 0.125})], OK),
    ("options2", [op(builtin_options_2_type="StablehloCompareOptions",
                     builtin_options_2={"comparison_direction": "STABLEHLO_COMPARISON_DIRECTION_GT"})], OK),
    ("description", [model(description="a \"quoted\" caf\u00e9")], OK),
    ("no subgraphs", [model(subgraphs=[])], "model: no subgraphs"),
    ("no buffers", [model(buffers=[]), tensor(1, buffer=0)], OK),
]


def check_case(checker, tmp, i, name, mutations, expected):
    m = base_model()
    for mutate in mutations:
        mutate(m)
    m = json.loads(json.dumps(m))  # drop None values set to remove a field
    path = flatc_binary(drop_none(m), tmp, f"case{i}")
    ours, err = dump(path)
    if isinstance(expected, str):
        expect(err is not None, name, f"accepted, expected error {expected!r}")
        expect(expected in err, name, f"error {err!r} lacks {expected!r}")
        return
    expect(err is None, name, f"rejected: {err}")
    checker.model(ours, m, path)
    if expected is not OK:
        good, msg = expected(ours)
        expect(good, name, msg)


def drop_none(x):
    if isinstance(x, dict):
        return {k: drop_none(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [drop_none(v) for v in x]
    return x


def two_subgraphs():
    """base_model, then a second subgraph (RELU of tensor 1) as CALL_ONCE's
    initialiser or IF's branches would be."""
    m = base_model()
    m["operator_codes"].append({"builtin_code": "RELU", "deprecated_builtin_code": 19})
    m["subgraphs"].append({
        "tensors": [{"name": "in1", "shape": [2, 3], "type": "INT8"},
                    {"name": "out1", "shape": [2, 3], "type": "INT8"}],
        "inputs": [0], "outputs": [1],
        "operators": [{"opcode_index": 1, "inputs": [0], "outputs": [1]}]})
    return m


def check_subgraphs(checker, tmp):
    """tfl_read_subgraph: subgraph 1 reads as flatc reads it, with the same
    checks, messages naming it; an index out of range is refused."""
    failures = 0
    m = two_subgraphs()
    path = flatc_binary(m, tmp, "subgraphs")
    try:
        ours, err = dump(path, 1)
        expect(err is None, "subgraph 1", f"rejected: {err}")
        expect(ours["subgraphs"] == 2, "subgraph 1", f"subgraph count {ours['subgraphs']}")
        alone = dict(m, subgraphs=[m["subgraphs"][1]])
        checker.model(dict(ours, subgraphs=1), alone, path)
        for index, want in ((2, "model: subgraph 2 is out of range (2 subgraphs)"),
                            (4294967295, "subgraph 4294967295 is out of range")):
            _, err = dump(path, index)
            expect(err and want in err, f"subgraph {index}", f"error {err!r} lacks {want!r}")
        m["subgraphs"][1]["inputs"] = [5]
        _, err = dump(flatc_binary(m, tmp, "subgraphs_bad"), 1)
        want = "subgraph 1: inputs[0] = 5 is not a tensor index"
        expect(err and want in err, "bad subgraph 1", f"error {err!r} lacks {want!r}")
    except Mismatch as e:
        failures += 1
        print(f"FAIL subgraphs: {e}")
    print("subgraph cases: %s" % ("FAIL" if failures else "pass"))
    return failures


def check_cases(checker, tmp):
    failures = 0
    for i, (name, mutations, expected) in enumerate(CASES):
        try:
            check_case(checker, tmp, i, name, mutations, expected)
        except Mismatch as e:
            failures += 1
            print(f"FAIL case {name}: {e}")
    print(f"{len(CASES) - failures}/{len(CASES)} rule cases pass")
    return failures


def main():
    global FLATC, SCHEMA, DUMP
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    FLATC, SCHEMA, DUMP, models_dir = sys.argv[1:]
    if not FLATC or not os.path.exists(FLATC):
        skip("flatc not found")
    if not os.path.isdir(models_dir):
        skip(f"{models_dir} missing")
    checker = Checker(parse_schema(SCHEMA))
    with tempfile.TemporaryDirectory() as tmp:
        failures = check_names(checker)
        failures += check_models(checker, models_dir, tmp)
        failures += check_cases(checker, tmp)
        failures += check_subgraphs(checker, tmp)
    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
