#!/usr/bin/env python3
"""Operator-by-type coverage of TFLite Micro's operator set.

Reads ../shared/zoo/TFLM-OPS.md (the operators TFLM registers and the
tensor types its kernels take) and what the tests check: the op-test
manifest and errors.json written by gen_ops.py, the shared models of
../shared/reference/manifest.json and the zoo models zoo_status.json says
run.  Every model is read from its .tflite (a small FlatBuffers reader
below; operator and type names come from TFLite's schema), and each live
operator (one whose result reaches an output: the importer prunes the
others) is counted under one (operator, activation type) pair, as
strictly as the strictest output it feeds is checked:

  exact      integer outputs that must equal the reference;
  within 1   integer outputs that may be one step off;
  float tol  float outputs, |d| <= 1e-4 + 1e-3 |expected| (a float
             operator is never better than this);
  network    only inside a zoo network (within 1 of TFLM's outputs, or
             48 steps of TFLite's);
  refused    an errors.json model whose error names that operator;
  gap        none of these, and not in coverage_exceptions.json (a
             refused pair TFLM supports is a gap too).

The activation type is the output's for most operators; the first
input's for those whose output type says nothing about the kernel used
(QUANTIZE, DEQUANTIZE, CAST, comparisons, ARG_MAX/MIN, SHAPE);
ASSIGN_VARIABLE's value; "control" for control flow.  TFLM's type column
is a union over inputs and outputs: filter types (int4), "No uint8"
remarks and parenthesised notes are dropped; "A -> B" and "in:/out:"
cells keep the input side; an "any" kernel (a byte copy) must be covered
for float32, int8 and int16.  A pair TFLM lists but no kernel takes as
an activation (int32 that is only an index) belongs in the exceptions
file, with the reason.

Usage:
  coverage.py SHARED_DIR OPS_DIR [--flatc FLATC] [--check] [--markdown FILE]
--flatc first writes OPS_DIR with gen_ops.py (about 10 s).  --check exits 1
when a pair is neither covered nor excepted (or an exception is stale:
covered, or not a TFLM pair) and prints the gap list; --markdown writes the table (docs/TFLITE-OPS.md).
Without either it prints one line per pair.
"""
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXCEPTIONS = os.path.join(HERE, "coverage_exceptions.json")
TYPES = ("float32", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool")
ANY_TYPES = ("float32", "int8", "int16")
INPUT_KEYED = {"QUANTIZE", "DEQUANTIZE", "CAST", "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL",
               "GREATER", "GREATER_EQUAL", "ARG_MAX", "ARG_MIN", "SHAPE"}
CONTROL = {"IF", "WHILE", "CALL_ONCE"}
LEVELS = ("exact", "within 1", "float tol", "network")  # best first


# --- TFLM's table ---------------------------------------------------------

def table_types(cell):
    """The activation types a TFLM type cell names (a set), or the
    pseudo-types "any", "control", "resource", "opaque"."""
    low = cell.lower()
    if low.startswith("any"):
        return {"any"}
    if "control flow" in low:
        return {"control"}
    if low.startswith("resource variable"):
        return {"any"}
    if low.startswith("resource"):
        return {"resource"}
    if re.search(r"\)\s*;?\s*see kernel", low):
        low = low.replace("(", " ").replace(")", " ")  # signal ops: "integer (int16/int32)"
    low = re.sub(r"\([^)]*\)", " ", low)         # notes: filter types, axis
    low = re.split(r"\bno uint8\b", low)[0]      # "No uint8 (...)" remarks
    if low.strip().startswith("in:"):
        low = low.split(";")[0][3:]              # CAST: keyed by its input
    sides = [part.split("->")[0] for part in low.split(";")]
    sides = [re.sub(r"\b(\w+) (?:act )?x \w+", r"\1", s) for s in sides]  # 16x8: int16
    found = {t for s in sides for t in re.findall(r"[a-z]+\d*", s) if t in TYPES}
    return found or {"opaque"}


def read_table(path):
    """[(operator, TFLM type cell, set of types)] in the table's order."""
    rows = []
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("operator", "") or set(cells[0]) <= set("-"):
            continue
        m = re.match(r"custom `([^`]+)`", cells[0])
        op = m.group(1) if m else cells[0]
        rows.append((op, cells[3], table_types(cells[3])))
    return rows


def check_table(path, rows, schema):
    """The table must hold as many operators as its header counts, and
    every builtin row must name one of the schema's operators, so that a
    reformatted table cannot silently drop some.  (The header's split, 97
    builtins and 21 custom, is not the rows': 100 and 18.)"""
    text = open(path).read()
    m = re.search(r"(\d+) ops: \d+ builtins", text)
    if m and int(m.group(1)) != len(rows):
        raise SystemExit("%s: read %d operators, its header says %s" % (path, len(rows), m.group(1)))
    custom = set(re.findall(r"^\| custom `([^`]+)`", text, re.M))
    for op, cell, types in rows:
        if op not in custom and op not in schema.ops.values():
            raise SystemExit("%s: %s is not a TFLite builtin operator" % (path, op))
        if "opaque" in types and op in schema.ops.values():
            raise SystemExit("%s: no tensor type read for %s from %r" % (path, op, cell))


def expand(types):
    return set(ANY_TYPES) if "any" in types else set(types)


# --- a minimal FlatBuffers reader for .tflite -----------------------------

def schema_enum(schema_text, name):
    """{value: NAME} of `enum name` in a .fbs file."""
    body = re.search(r"enum %s\s*:\s*\w+\s*\{(.*?)\}" % name, schema_text, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return {int(v): k for k, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", body)}


class Table:
    """One FlatBuffers table: fields by their index in the schema."""

    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]

    def _off(self, field):
        vt_size = struct.unpack_from("<H", self.buf, self.vt)[0]
        o = 4 + 2 * field
        return struct.unpack_from("<H", self.buf, self.vt + o)[0] if o < vt_size else 0

    def scalar(self, field, fmt, default=0):
        o = self._off(field)
        return struct.unpack_from("<" + fmt, self.buf, self.pos + o)[0] if o else default

    def _target(self, field):
        o = self._off(field)
        if not o:
            return None
        p = self.pos + o
        return p + struct.unpack_from("<I", self.buf, p)[0]

    def vector(self, field, fmt):
        p = self._target(field)
        if p is None:
            return []
        n = struct.unpack_from("<I", self.buf, p)[0]
        return list(struct.unpack_from("<%d%s" % (n, fmt), self.buf, p + 4))

    def tables(self, field):
        p = self._target(field)
        if p is None:
            return []
        n = struct.unpack_from("<I", self.buf, p)[0]
        elems = [p + 4 + 4 * i for i in range(n)]
        return [Table(self.buf, e + struct.unpack_from("<I", self.buf, e)[0]) for e in elems]

    def string(self, field):
        p = self._target(field)
        if p is None:
            return ""
        n = struct.unpack_from("<I", self.buf, p)[0]
        return self.buf[p + 4:p + 4 + n].decode("utf-8", "replace")


class Schema:
    def __init__(self, path):
        text = open(path).read()
        self.ops = schema_enum(text, "BuiltinOperator")
        self.types = {k: v.lower() for k, v in schema_enum(text, "TensorType").items()}


def read_tflite(path, schema):
    """[subgraph] with subgraph = {"types": [tensor type], "variable":
    set of variable tensors, "outputs": [...], "ops": [(name, ins, outs)]}."""
    buf = open(path, "rb").read()
    if buf[4:8] != b"TFL3":
        raise SystemExit("%s: not a .tflite file" % path)
    model = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    names = []
    for code in model.tables(1):  # operator_codes
        n = max(code.scalar(0, "b"), code.scalar(3, "i"))
        names.append(code.string(1) if schema.ops.get(n) == "CUSTOM" else schema.ops.get(n, str(n)))
    graphs = []
    for sg in model.tables(2):
        tensors = sg.tables(0)
        ops = [(names[op.scalar(0, "I")], op.vector(1, "i"), op.vector(2, "i"))
               for op in sg.tables(3)]
        graphs.append({"types": [schema.types.get(t.scalar(1, "b"), "?") for t in tensors],
                       "variable": {i for i, t in enumerate(tensors) if t.scalar(5, "B")},
                       "outputs": sg.vector(2, "i"), "ops": ops})
    return graphs


# --- which pair each operator instance counts under -----------------------

def live_ops(graph):
    """Indices of the operators whose results reach an output (the
    importer prunes the others, so they test nothing); operators without
    outputs or writing variables have effects and stay."""
    live, keep = set(graph["outputs"]), set()
    for k in range(len(graph["ops"]) - 1, -1, -1):
        name, ins, outs = graph["ops"][k]
        if not outs or name in CONTROL or live & set(outs) or graph["variable"] & set(outs):
            keep.add(k)
            live.update(i for i in ins if i >= 0)
    return keep


def activation_type(graph, name, ins, outs):
    types = graph["types"]
    if name in CONTROL:
        return "control"
    if name == "ASSIGN_VARIABLE" and len(ins) > 1:
        return types[ins[1]]
    if name in INPUT_KEYED or not outs:
        return types[ins[0]] if ins and ins[0] >= 0 else "?"
    return types[outs[0]]


def reached_outputs(graph, keep):
    """{operator index: positions of the graph outputs its results feed}.
    An operator with effects only (a variable write) counts for them all."""
    everything = set(range(len(graph["outputs"])))
    reach = {}
    for pos, t in enumerate(graph["outputs"]):
        reach.setdefault(t, set()).add(pos)
    out = {}
    for k in sorted(keep, reverse=True):
        name, ins, outs = graph["ops"][k]
        r = set().union(*(reach.get(t, set()) for t in outs)) or everything
        out[k] = r
        for t in ins:
            if t >= 0:
                reach.setdefault(t, set()).update(r)
    return out


def instances(path, schema):
    """[(operator index in subgraph 0 or -1, (operator, type), output
    positions it feeds)] of the live operators."""
    out = []
    for g, graph in enumerate(read_tflite(path, schema)):
        reach = reached_outputs(graph, live_ops(graph))
        for k in sorted(reach):
            name, ins, outs = graph["ops"][k]
            out.append((k if g == 0 else -1, (name, activation_type(graph, name, ins, outs)),
                        reach[k] if g == 0 else None))
    return out


def output_levels(entry):
    """{output index: how strictly the entry's cases check it}."""
    levels = {}
    for case in entry["cases"]:
        for o in case["outputs"]:
            if o["dtype"] in ("float32", "float16"):
                level = "float tol"
            else:
                level = "exact" if case.get("exact") else "within 1"
            levels[o["index"]] = min(levels.get(o["index"], level), level, key=LEVELS.index)
    return levels


def instance_level(levels, positions, ttype):
    """The strictest check among the outputs an operator feeds; a float
    operator is checked to float tolerance at best, even when an integer
    output (ARG_MAX, CAST) follows it."""
    reached = [levels[p] for p in (positions if positions is not None else levels)
               if p in levels] or list(levels.values())
    level = min(reached, key=LEVELS.index)
    return "float tol" if ttype == "float32" and level in LEVELS[:2] else level


def zoo_models(shared, status_path):
    """The zoo's .tflite models that test_zoo.py runs and compares."""
    if not os.path.exists(status_path):
        return []
    paths = [os.path.join(shared, "zoo", k) for k, v in json.load(open(status_path)).items()
             if v == "runs" and k.endswith(".tflite")]
    return [p for p in paths if os.path.exists(p)]  # test_zoo.py reports missing ones


# --- collecting what the tests check --------------------------------------

def collect(ops_dir, shared, schema):
    """{(operator, type): {"tested": {case: level}, "refused": {model: error}}}."""
    found = {}

    def slot(pair):
        return found.setdefault(pair, {"tested": {}, "refused": {}})

    sources = [("", os.path.join(ops_dir, "manifest.json"), ops_dir)]
    shared_manifest = os.path.join(shared, "reference", "manifest.json")
    if os.path.exists(shared_manifest):
        sources.append(("shared:", shared_manifest, shared))
    models = []  # (case name, .tflite, {output index: level})
    for prefix, manifest, base in sources:
        for entry in json.load(open(manifest)):
            if entry["format"] == "tflite":
                path = os.path.join(base, entry["model"])
                models.append((prefix + os.path.splitext(os.path.basename(path))[0], path,
                               output_levels(entry)))
    # A zoo network compares outputs only: within 1 of TFLM, or 48 steps of TFLite.
    models += [("zoo:" + os.path.splitext(os.path.basename(p))[0], p, {0: "network"})
               for p in zoo_models(shared, os.path.join(os.path.dirname(HERE), "zoo_status.json"))]
    for name, path, levels in models:
        for _, pair, positions in instances(path, schema):
            level = instance_level(levels, positions, pair[1])
            old = slot(pair)["tested"].get(name, level)
            slot(pair)["tested"][name] = min(old, level, key=LEVELS.index)
    errors = os.path.join(ops_dir, "errors.json")
    for e in json.load(open(errors)) if os.path.exists(errors) else []:
        m = re.search(r"operator (\d+) \(", e["error"])
        name = os.path.splitext(os.path.basename(e["model"]))[0]
        for k, pair, _ in instances(e["model"], schema):
            if m and k == int(m.group(1)):
                slot(pair)["refused"][name] = e["error"]
    return found


def load_exceptions(path):
    """{(operator, type): reason}; type "*" stands for every TFLM type."""
    out = {}
    for e in json.load(open(path)):
        if not e.get("reason"):
            raise SystemExit("%s: %s/%s has no reason" % (path, e["op"], e["type"]))
        out[(e["op"], e["type"])] = e["reason"]
    return out


def best_level(tested):
    return min(tested.values(), key=LEVELS.index) if tested else None


def pair_rows(table, found, exceptions):
    """A row (pair_row) for every TFLM pair, each operator's followed by its
    tested or refused pairs beyond TFLM's list."""
    rows, listed = [], {}
    for op, _, types in table:
        listed.setdefault(op, set()).update(expand(types))
    for op, _, types in table:
        for t in sorted(expand(types), key=type_order):
            rows.append(pair_row(op, t, True, found.get((op, t)), exceptions))
        extra = {t for (o, t) in found if o == op} - listed[op]
        for t in sorted(extra, key=type_order):
            rows.append(pair_row(op, t, False, found[(op, t)], exceptions))
            rows[-1]["any"] = "any" in types  # a byte copy: still a type TFLM takes
    return rows


ORDER = TYPES + ("control", "resource", "opaque")


def type_order(t):
    return ORDER.index(t) if t in ORDER else len(ORDER)


def pair_row(op, t, listed, info, exceptions):
    """{"op", "type", "listed" (by TFLM), "status", "info" (what tests it),
    "reason" (its exception's)}."""
    info = info or {"tested": {}, "refused": {}}
    level = best_level(info["tested"])
    reason = exceptions.get((op, t)) or exceptions.get((op, "*"))
    if level:
        status = level
    elif info["refused"]:
        status = "refused"
    elif reason:
        status = "excepted"
    else:
        status = "gap"
    return {"op": op, "type": t, "listed": listed, "status": status, "info": info,
            "reason": reason}


# --- the modes ------------------------------------------------------------

def check(rows, exceptions):
    """The gap list and stale exceptions; 0 when there are none."""
    gaps = [r for r in rows if r["listed"] and r["status"] in ("gap", "refused")
            and not r["reason"]]
    stale = [r for r in rows if r["listed"] and r["status"] in LEVELS
             and exceptions.get((r["op"], r["type"]))]
    known = {(r["op"], r["type"]) for r in rows if r["listed"]} | {(r["op"], "*") for r in rows}
    unknown = [k for k in exceptions if k not in known]
    by_op = {}
    for r in gaps:  # one line per operator: its missing types
        why = " (refused: %s)" % next(iter(r["info"]["refused"].values())) \
            if r["info"]["refused"] else ""
        by_op.setdefault(r["op"], []).append(r["type"] + why)
    for op, types in by_op.items():
        print("GAP %s: %s" % (op, ", ".join(types)))
    for r in stale:
        print("STALE exception %s %s: covered by %s" % (r["op"], r["type"],
                                                        ", ".join(sorted(r["info"]["tested"]))))
    for op, t in unknown:
        print("UNKNOWN exception %s %s: not a TFLM pair" % (op, t))
    print(summary(rows))
    return 1 if gaps or stale or unknown else 0


def summary(rows):
    listed = [r for r in rows if r["listed"]]
    count = {s: sum(r["status"] == s for r in listed)
             for s in LEVELS + ("refused", "excepted", "gap")}
    return ("coverage: %d TFLM (operator, type) pairs: %d exact, %d within 1, %d float tol, "
            "%d only in zoo networks, %d refused, %d excepted, %d not covered; "
            "%d pairs beyond TFLM's list"
            % ((len(listed),) + tuple(count.values()) + (len(rows) - len(listed),)))


def names(r, limit=6):
    tested = sorted(r["info"]["tested"])
    text = ", ".join("`%s`" % n for n in tested[:limit])
    if len(tested) > limit:
        text += " and %d more" % (len(tested) - limit)
    return text


def describe(r):
    if r["status"] in LEVELS:
        what = {"exact": "bit-exact", "within 1": "within 1 step",
                "float tol": "float tolerance", "network": "in a zoo network"}[r["status"]]
        cases = names(r)
    elif r["status"] == "refused":
        what, cases = "refused", "; ".join("`%s`: %s" % kv for kv in sorted(
            r["info"]["refused"].items()))
    elif r["status"] == "excepted":
        what, cases = "not covered (excepted)", r["reason"]
    else:
        what, cases = "**not covered**", ""
    if r["status"] in LEVELS and r["info"]["refused"]:
        cases += "; refuses " + ", ".join("`%s`" % n for n in sorted(r["info"]["refused"]))
    if not r["listed"]:
        what += " (any type: beyond the three required)" if r.get("any") else \
            " (not a TFLM type)"
    return what, cases


def markdown(rows, table, path):
    cells = {op: cell for op, cell, _ in table}
    lines = ["# TFLite operators by tensor type", "",
             "Generated by `python3 tests/e2e/tflite_ops/coverage.py ../shared OPS_DIR "
             "--flatc FLATC --markdown docs/TFLITE-OPS.md` (OPS_DIR: any scratch folder); "
             "do not edit by hand.  The meson test `tflite_ops_coverage` runs it with "
             "`--check`, which fails on every pair below marked not covered or refused "
             "without a reason.  For every operator TFLite Micro "
             "registers (../shared/zoo/TFLM-OPS.md) and every tensor type its kernel takes, "
             "what the tests check: bit-exact (integer outputs equal TFLM's reference), "
             "within 1 step, float tolerance (|d| <= 1e-4 + 1e-3 |expected|), refused with "
             "a named error (errors.json), or not covered (with the reason kept in "
             "tests/e2e/tflite_ops/coverage_exceptions.json).  Case names are the op-test "
             "models of gen_ops.py; `shared:` ones are ../shared/reference's models and `zoo:` "
             "ones the zoo networks test_zoo.py runs (\"in a zoo network\": outputs within 1 of "
             "TFLM or 48 steps of TFLite).  A type "
             "is the operator's output type, or its input's for QUANTIZE, DEQUANTIZE, CAST, "
             "comparisons, ARG_MAX/MIN and SHAPE.  An operator whose TFLM kernel takes any "
             "type (a byte copy: RESHAPE, SQUEEZE, SHAPE, the variables) must be covered for "
             "float32, int8 and int16.", "", summary(rows), "",
             "| operator | TFLM types | type | what we do | test cases or reason |",
             "|---|---|---|---|---|"]
    last = None
    for r in rows:
        what, cases = describe(r)
        first = r["op"] != last
        lines.append("| %s | %s | %s | %s | %s |" % (
            r["op"] if first else "", cells[r["op"]] if first else "", r["type"], what,
            cases.replace("|", "\\|")))
        last = r["op"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def option(args, name):
    if name not in args:
        return None
    k = args.index(name)
    if k + 1 >= len(args):
        raise SystemExit("%s needs a value" % name)
    return args[k + 1]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    shared, ops_dir = (os.path.abspath(p) for p in sys.argv[1:3])
    args = sys.argv[3:]
    table_path = os.path.join(shared, "zoo", "TFLM-OPS.md")
    schema_path = os.path.join(shared, "schema", "tflite", "schema_flatc2.fbs")
    if not (os.path.exists(table_path) and os.path.exists(schema_path)):
        print("SKIP: %s or %s is missing (../shared not provided)" % (table_path, schema_path))
        return 1 if os.environ.get("CI") == "true" else 77
    flatc = option(args, "--flatc")
    if flatc:
        subprocess.run([sys.executable, os.path.join(HERE, "gen_ops.py"), flatc, schema_path,
                        ops_dir], check=True, stdout=subprocess.DEVNULL)
    schema = Schema(schema_path)
    table = read_table(table_path)
    check_table(table_path, table, schema)
    exceptions = load_exceptions(EXCEPTIONS)
    rows = pair_rows(table, collect(ops_dir, shared, schema), exceptions)
    if option(args, "--markdown"):
        markdown(rows, table, option(args, "--markdown"))
    if "--check" in args:
        return check(rows, exceptions)
    if not option(args, "--markdown"):
        for r in rows:
            print("%-32s %-8s %-10s %s" % (r["op"], r["type"], r["status"], describe(r)[1]))
        print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
