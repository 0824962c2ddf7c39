"""TFLite_Detection_PostProcess (SSD box decoding + fast or regular
non-max suppression) models for gen_ops.py.

The operator is a custom one: its options are a FlexBuffer map, which
flexbuffer_map() below writes.  The inputs are made here rather than drawn
at random, so that the cases hold what the operator must get right: equal
scores (TFLite sorts stably: the lower box index goes first), equal class
scores within a box (the first class wins), a score equal to the threshold
(kept: TFLite keeps score >= threshold), overlapping boxes on both sides of
the IoU threshold, a box of zero area (IoU 0: it neither suppresses nor is
suppressed), fewer candidates than max_detections, and uint8 inputs.
With max_classes_per_detection C > 1 (the fast path's classes per box):
equal class scores within a box, at the cut of its C best too, -inf
class scores, C above num_classes, and the regular path (whose outputs
only grow to max_detections * C rows).

The expected outputs are TFLite's, checked against reference(), an
independent Python version of the operator, every time gen_ops.py runs.
Rows past the detection count: TFLite's fast path leaves them unwritten,
so the expected files hold zeros there, as we write (and as TFLite's
regular path does).  So are the rows of a box past its min(C, num_classes)
classes, and the regular path's rows past max_detections.
"""
import math
import os
import random
import struct
import subprocess

CUSTOM = "custom:TFLite_Detection_PostProcess"

FLEX_INT, FLEX_FLOAT, FLEX_MAP, FLEX_BOOL = 1, 3, 9, 26


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def flexbuffer_map(entries):
    """A FlexBuffer whose root is a map of entries {key: int|float|bool}:
    keys sorted (flexbuffers looks them up by binary search), 4-byte
    values and key offsets, a 4-byte root."""
    out = bytearray()
    keys = sorted(entries, key=lambda k: k.encode())
    at = {}
    for k in keys:
        at[k] = len(out)
        out += k.encode() + b"\0"
    while len(out) % 4:
        out.append(0)
    out += struct.pack("<I", len(keys))
    kvec = len(out)
    for i, k in enumerate(keys):
        out += struct.pack("<I", kvec + 4 * i - at[k])
    out += struct.pack("<I", len(out) - kvec)  # back to the keys vector
    out += struct.pack("<II", 4, len(keys))    # its width, the count
    values = len(out)
    types = []
    for k in keys:
        v = entries[k]
        if isinstance(v, bool):
            out += struct.pack("<I", int(v))
            types.append(FLEX_BOOL << 2 | 2)
        elif isinstance(v, int):
            out += struct.pack("<i", v)
            types.append(FLEX_INT << 2 | 2)
        else:
            out += struct.pack("<f", v)
            types.append(FLEX_FLOAT << 2 | 2)
    out += bytes(types)
    root = len(out)
    out += struct.pack("<I", root - values) + bytes([FLEX_MAP << 2 | 2, 4])
    return bytes(out)


def options(**over):
    o = {"max_detections": 8, "max_classes_per_detection": 1, "detections_per_class": 100,
         "use_regular_nms": False, "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5,
         "num_classes": 3, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0,
         "_output_quantized": True}
    o.update(over)
    return o


class Spec:
    def __init__(self, name, seed, n, enc_width, classes, background, opts, quant=None,
                 shaped_outputs=True):
        self.name, self.seed, self.n, self.enc_width = name, seed, n, enc_width
        self.classes, self.background, self.opts = classes, background, opts
        self.quant = quant  # None, or {"box": (s, zp), "cls": (s, zp), "anchor": (s, zp)}
        self.shaped_outputs = shaped_outputs

    @property
    def width(self):
        return self.classes + (1 if self.background else 0)


# ---- the cases ----------------------------------------------------------

def ties_case():
    """Twelve boxes in designed groups (see the module docstring)."""
    anchors = [[0.2, 0.2, 0.2, 0.2]] * 3 + [
        [0.6, 0.6, 0.2, 0.2], [0.6, 0.6, 0.2, 0.2], [0.66, 0.6, 0.2, 0.2],
        [0.5, 0.2, 0.0, 0.2],  # zero height: area 0
        [0.9, 0.1, 0.1, 0.1], [0.9, 0.4, 0.1, 0.1], [0.9, 0.7, 0.1, 0.1],
        [0.4, 0.9, 0.1, 0.1], [0.1, 0.9, 0.1, 0.1]]
    enc = [[0.0, 0.0, 0.0, 0.0], [0.3, -0.2, 0.1, 0.0], [-0.4, 0.5, -0.3, 0.2],
           [0.0, 0.0, 0.0, 0.0], [0.2, 0.1, 0.0, 0.1], [0.5, 0.0, 0.2, -0.1],
           [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0], [-1.0, 1.0, 0.5, 0.5],
           [0.0, 0.0, -0.5, 0.0], [0.1, 0.1, 0.1, 0.1], [0.0, -0.3, 0.0, 0.3]]
    best = [[0.9, 0.1, 0.2], [0.1, 0.9, 0.9], [0.5, 0.5, 0.1], [0.2, 0.7, 0.7],
            [0.7, 0.0, 0.0], [0.1, 0.1, 0.6], [0.0, 0.8, 0.0], [0.3, 0.2, 0.1],
            [0.45, 0.0, 0.45], [-0.5, -0.6, -0.7], [0.1, 0.45, 0.0], [0.0, 0.0, 0.29]]
    cls = [[0.99] + row for row in best]  # the background scores high; it is ignored
    spec = Spec("detection_float_ties", 91, 12, 4, 3, True, options(max_detections=8))
    return spec, anchors, enc, cls


def random_case(spec, rng, levels=None):
    """Anchors on a coarse grid (so neighbours overlap), random encodings
    and class scores (from `levels` values when given, so scores tie)."""
    anchors = [[rng.choice([0.25, 0.3, 0.5, 0.7]), rng.choice([0.25, 0.3, 0.5, 0.7]),
                rng.choice([0.2, 0.3, 0.4]), rng.choice([0.2, 0.3, 0.4])]
               for _ in range(spec.n)]
    enc = [[rng.uniform(-1.0, 1.0) for _ in range(spec.enc_width)] for _ in range(spec.n)]
    if levels:
        cls = [[rng.choice(levels) for _ in range(spec.width)] for _ in range(spec.n)]
    else:
        cls = [[rng.uniform(0.0, 0.7) for _ in range(spec.width)] for _ in range(spec.n)]
    return anchors, enc, cls


def few_case():
    """No background column, extra encoding columns (keypoints), output
    tensors without a shape (as converters write them), and fewer
    candidates than max_detections."""
    spec = Spec("detection_float_few", 92, 9, 6, 2, False,
                options(max_detections=10, num_classes=2, nms_score_threshold=0.55,
                        nms_iou_threshold=0.35),
                shaped_outputs=False)
    anchors, enc, cls = random_case(spec, random.Random(spec.seed))
    return spec, anchors, enc, cls


def uint8_case():
    quant = {"box": (0.05, 128), "cls": (1.0 / 256, 0), "anchor": (0.01, 0)}
    spec = Spec("detection_uint8", 93, 24, 4, 5, True,
                options(max_detections=6, num_classes=5, nms_score_threshold=0.2,
                        nms_iou_threshold=0.45, y_scale=8.0, x_scale=12.0),
                quant=quant)
    rng = random.Random(spec.seed)
    anchors, enc, cls = random_case(spec, rng, levels=[q / 256 for q in (0, 30, 60, 90, 120)])
    return spec, anchors, enc, cls


def regular_cases():
    """use_regular_nms: the designed ties (equal scores across classes and
    within one), random scores with several boxes per class surviving,
    detections_per_class above max_detections, and uint8 scores from a few
    levels (many ties)."""
    spec, anchors, enc, cls = ties_case()
    ties = Spec("detection_float_regular_ties", 97, 12, 4, 3, True,
                options(max_detections=8, use_regular_nms=True, detections_per_class=2))
    rand = Spec("detection_float_regular", 98, 40, 4, 4, True,
                options(max_detections=10, use_regular_nms=True, detections_per_class=3,
                        num_classes=4, nms_score_threshold=0.25, nms_iou_threshold=0.4))
    many = Spec("detection_float_regular_per_class_100", 99, 30, 4, 2, False,
                options(max_detections=5, use_regular_nms=True, num_classes=2,
                        nms_score_threshold=0.1))
    q = {"box": (0.05, 128), "cls": (1.0 / 256, 0), "anchor": (0.01, 0)}
    u8 = Spec("detection_uint8_regular", 100, 24, 4, 5, True,
              options(max_detections=7, use_regular_nms=True, detections_per_class=3,
                      num_classes=5, nms_score_threshold=0.2, nms_iou_threshold=0.45),
              quant=q)
    out = [(ties, anchors, enc, cls)]
    for sp in (rand, many):
        out.append((sp,) + random_case(sp, random.Random(sp.seed)))
    levels = [v / 256 for v in (0,) * 12 + (40,) * 6 + (80,) * 4 + (120, 120, 160, 200, 240)]
    out.append((u8,) + random_case(u8, random.Random(u8.seed), levels=levels))
    return out


def classes_cases():
    """max_classes_per_detection > 1: the designed ties with C = 3 of 3
    classes (one box's other classes at -inf) and C = 2 (equal scores at
    the cut: box 5's 0.1, 0.1), random scores from a few levels with C = 3
    of 5, C = 3 above num_classes = 2 with fewer candidates than
    max_detections, uint8 with C = 2 of 5, and the regular path with
    C = 2."""
    _, anchors, enc, cls = ties_case()
    inf_cls = [list(row) for row in cls]
    inf_cls[5] = [0.99, -math.inf, -math.inf, 0.6]
    all3 = Spec("detection_float_classes3_ties", 101, 12, 4, 3, True,
                options(max_detections=5, max_classes_per_detection=3))
    cut2 = Spec("detection_float_classes2_ties", 102, 12, 4, 3, True,
                options(max_detections=8, max_classes_per_detection=2))
    rand = Spec("detection_float_classes3_of_5", 103, 30, 4, 5, True,
                options(max_detections=6, max_classes_per_detection=3, num_classes=5,
                        nms_score_threshold=0.25, nms_iou_threshold=0.4))
    few = Spec("detection_float_classes3_few", 104, 9, 6, 2, False,
               options(max_detections=7, max_classes_per_detection=3, num_classes=2,
                       nms_score_threshold=0.55, nms_iou_threshold=0.35),
               shaped_outputs=False)
    q = {"box": (0.05, 128), "cls": (1.0 / 256, 0), "anchor": (0.01, 0)}
    u8 = Spec("detection_uint8_classes2", 105, 24, 4, 5, True,
              options(max_detections=5, max_classes_per_detection=2, num_classes=5,
                      nms_score_threshold=0.2, nms_iou_threshold=0.45),
              quant=q)
    reg = Spec("detection_float_regular_classes2", 106, 12, 4, 3, True,
               options(max_detections=6, max_classes_per_detection=2, use_regular_nms=True,
                       detections_per_class=2))
    out = [(all3, anchors, enc, inf_cls), (cut2, anchors, enc, cls)]
    levels = [v / 256 for v in (0, 0, 40, 40, 80, 120, 160)]
    out.append((rand,) + random_case(rand, random.Random(rand.seed), levels=levels))
    out.append((few,) + random_case(few, random.Random(few.seed)))
    out.append((u8,) + random_case(u8, random.Random(u8.seed), levels=levels))
    out.append((reg, anchors, enc, cls))
    return out


def cases():
    return [ties_case(), few_case(), uint8_case()] + regular_cases() + classes_cases()


def rows(spec):
    """The number of output rows: TFLite's Prepare sizes them
    max_detections * max_classes_per_detection, in either path."""
    return spec.opts["max_detections"] * spec.opts["max_classes_per_detection"]


def written(spec, count):
    """The output rows TFLite writes for `count` detections: the regular
    path's first `count`, the fast path's first min(C, num_classes) of
    each selected box's C rows."""
    if spec.opts["use_regular_nms"]:
        return list(range(count))
    c = spec.opts["max_classes_per_detection"]
    return [g * c + j for g in range(count) for j in range(min(c, spec.classes))]


# ---- quantisation -------------------------------------------------------

def quantize(rows, q):
    s, zp = q
    return [[max(0, min(255, int(round(v / s)) + zp)) for v in row] for row in rows]


def dequantize(rows, q):
    s, zp = q
    return [[f32(f32(v - zp) * f32(s)) for v in row] for row in rows]


def flat(rows):
    return [v for row in rows for v in row]


# ---- the model ------------------------------------------------------------

def build(m, spec, anchors):
    """The single-operator model; anchors as stored (floats or uint8)."""
    q = spec.quant
    ttype = "UINT8" if q else "FLOAT32"
    qs = (lambda k: ([q[k][0]], [q[k][1]])) if q else (lambda k: None)
    box = m.tensor([1, spec.n, spec.enc_width], ttype, qs("box"), name="box_encodings")
    cls = m.tensor([1, spec.n, spec.width], ttype, qs("cls"), name="class_predictions")
    anc = m.tensor([spec.n, 4], ttype, qs("anchor"), data=flat(anchors), name="anchors")
    d = rows(spec)
    shapes = ([1, d, 4], [1, d], [1, d], [1]) if spec.shaped_outputs else ([],) * 4
    names = ("boxes", "classes", "scores", "num_detections")
    outs = [m.tensor(s, name=n) for s, n in zip(shapes, names)]
    m.op(CUSTOM, [box, cls, anc], outs)
    m.ops[-1]["custom_options"] = list(flexbuffer_map(spec.opts))
    m.inputs, m.outputs = [box, cls], outs
    return m


def stored(spec, anchors, enc, cls):
    """The anchors and inputs as the model stores them, and as floats."""
    q = spec.quant
    if not q:
        rows = [[[f32(v) for v in r] for r in x] for x in (anchors, enc, cls)]
        return rows, rows
    raw = [quantize(anchors, q["anchor"]), quantize(enc, q["box"]), quantize(cls, q["cls"])]
    return raw, [dequantize(raw[0], q["anchor"]), dequantize(raw[1], q["box"]),
                 dequantize(raw[2], q["cls"])]


# ---- the reference --------------------------------------------------------

def decode(opts, anchor, e):
    """TFLite computes the centre and half sizes in double, then rounds."""
    ay, ax, ah, aw = anchor
    yc = f32(e[0] / opts["y_scale"] * ah + ay)
    xc = f32(e[1] / opts["x_scale"] * aw + ax)
    hh = f32(0.5 * math.exp(e[2] / opts["h_scale"]) * ah)
    hw = f32(0.5 * math.exp(e[3] / opts["w_scale"]) * aw)
    return [f32(yc - hh), f32(xc - hw), f32(yc + hh), f32(xc + hw)]


def iou(a, b):
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= 0 or area_b <= 0:
        return 0.0
    h = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0)
    w = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
    return h * w / (area_a + area_b - h * w)


def single_class(boxes, scores, threshold, iou_threshold, limit):
    """TFLM's NonMaxSuppressionSingleClassHelper: the kept candidates in a
    stable descending sort, then greedy; the selected box indices."""
    keep = [i for i, v in enumerate(scores) if v >= threshold]
    keep.sort(key=lambda i: -scores[i])  # stable: equal scores by index
    active = [True] * len(keep)
    picked = []
    for a, i in enumerate(keep):
        if len(picked) >= limit or not any(active):
            break
        if not active[a]:
            continue
        picked.append(i)
        active[a] = False
        for b in range(a + 1, len(keep)):
            if active[b] and iou(boxes[i], boxes[keep[b]]) > iou_threshold:
                active[b] = False
    return picked


def reference_regular(spec, boxes, cls):
    """TFLM's NonMaxSuppressionMultiClassRegularHelper, class by class:
    the running best list plus this class's selections, partially sorted
    on (score descending, position ascending), cut to max_detections."""
    o = spec.opts
    first = spec.width - spec.classes
    d = o["max_detections"]
    kept = []  # (score, box, class)
    for k in range(spec.classes):
        scores = [row[first + k] for row in cls]
        sel = single_class(boxes, scores, o["nms_score_threshold"], o["nms_iou_threshold"],
                           o["detections_per_class"])
        merged = kept + [(scores[i], i, k) for i in sel]
        order = sorted(range(len(merged)), key=lambda p: (-merged[p][0], p))
        kept = [merged[p] for p in order[:min(len(merged), d)]]
    pad = rows(spec) - len(kept)
    return ([v for _, i, _ in kept for v in boxes[i]] + [0.0] * 4 * pad,
            [float(k) for _, _, k in kept] + [0.0] * pad,
            [v for v, _, _ in kept] + [0.0] * pad,
            [float(len(kept))])


def fast_picks(spec, boxes, cls):
    """The fast path's selected boxes: greedy on each box's best score."""
    o = spec.opts
    first = spec.width - spec.classes
    best = []
    for row in cls:
        scores = row[first:]
        k = scores.index(max(scores))  # the first maximum
        best.append((scores[k], k))
    order = sorted((i for i in range(spec.n) if best[i][0] >= o["nms_score_threshold"]),
                   key=lambda i: (-best[i][0], i))
    picked = []
    for i in order:
        if len(picked) == o["max_detections"]:
            break
        if all(iou(boxes[j], boxes[i]) <= o["nms_iou_threshold"] for j in picked):
            picked.append(i)
    return picked


def picked_scores(spec, anchors, enc, cls):
    """The class scores (after the background) of the fast path's selected
    boxes, in order."""
    boxes = [decode(spec.opts, a, e) for a, e in zip(anchors, enc)]
    return [cls[i][spec.width - spec.classes:] for i in fast_picks(spec, boxes, cls)]


def reference(spec, anchors, enc, cls):
    """(boxes, classes, scores, count) for float anchors/inputs."""
    o = spec.opts
    boxes = [decode(o, a, e) for a, e in zip(anchors, enc)]
    if o["use_regular_nms"]:
        return reference_regular(spec, boxes, cls)
    first = spec.width - spec.classes
    picked = fast_picks(spec, boxes, cls)
    # TFLM's DecreasingPartialArgSort: score descending, equal scores by class.
    c = o["max_classes_per_detection"]
    out = []  # (box, class, score) rows
    for i in picked:
        scores = cls[i][first:]
        order = sorted(range(spec.classes), key=lambda k: (-scores[k], k))
        out += [(boxes[i], float(k), scores[k]) for k in order[:c]]
        out += [([0.0] * 4, 0.0, 0.0)] * (c - min(c, spec.classes))
    pad = rows(spec) - len(out)
    return ([v for b, _, _ in out for v in b] + [0.0] * 4 * pad,
            [k for _, k, _ in out] + [0.0] * pad,
            [v for _, _, v in out] + [0.0] * pad,
            [float(len(picked))])


# ---- generation -------------------------------------------------------------

def write_values(path, fmt, values):
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def read_f32(path):
    data = open(path, "rb").read()
    return list(struct.unpack("<%df" % (len(data) // 4), data))


def detections(out, count):
    return sorted((out[2][i], out[1][i], tuple(out[0][4 * i:4 * i + 4])) for i in range(count))


def tied_classes(spec, got, want, picked):
    """The fast path's classes of a box where TFLite's partial sort put
    equal scores in another order than TFLM's (or cut them elsewhere):
    each such class of TFLite's must be a distinct class of that box
    (`picked`: the selected boxes' class scores) with exactly the row's
    score; those rows then take the reference's class."""
    c, count = spec.opts["max_classes_per_detection"], int(want[3][0])
    got = [list(v) for v in got]
    for g in range(count):
        rows_g = [r for r in written(spec, count) if r // c == g]
        ks = [got[1][r] for r in rows_g]
        for r in rows_g:
            k = got[1][r]
            if k == want[1][r]:
                continue
            if not (k == int(k) and 0 <= k < spec.classes and ks.count(k) == 1 and
                    picked[g][int(k)] == got[2][r] == want[2][r]):
                raise SystemExit("%s: TFLite's class %r in row %d is not one of the "
                                 "reference's equal scores" % (spec.name, k, r))
            got[1][r] = want[1][r]
    return got


def check(spec, got, want, picked=None):
    """TFLite's outputs against the reference: classes, scores and the
    count exactly, boxes within float rounding; rows past the count (and
    a box's rows past its classes) are TFLite's to leave unwritten.  With
    max_classes_per_detection > 1 (fast path), TFLite's partial sort may
    order a box's equal class scores either way (see tied_classes;
    `picked` is given when checking TFLite).  For the
    regular path, TFLite's partial
    sort may order equal scores either way, and so keep any of those tied
    at the cut (TFLM's does not: the reference follows TFLM), so TFLite
    must find the same detections above the cut's score and agree on every
    row whose score is unique."""
    count = int(want[3][0])
    if spec.opts["use_regular_nms"] and got[3] == want[3]:
        cut = want[2][count - 1] if count == spec.opts["max_detections"] else -1.0
        a, b = ([x for x in detections(v, count) if x[0] > cut] for v in (got, want))
        if any(x[:2] != y[:2] or max(abs(p - q) for p, q in zip(x[2], y[2])) > 1e-6
               for x, y in zip(a, b)):
            raise SystemExit("%s: TFLite and the reference find different detections"
                             % spec.name)
        if got[2][:count] != want[2][:count]:
            raise SystemExit("%s: TFLite's scores differ from the reference's" % spec.name)
        tied = {v for v in want[2][:count] if want[2][:count].count(v) > 1} | {cut}
        got = [list(v) for v in got]
        for i in range(count):
            if want[2][i] in tied:
                got[0][4 * i:4 * i + 4], got[1][i], got[2][i] = \
                    want[0][4 * i:4 * i + 4], want[1][i], want[2][i]
    if got[3] != want[3]:
        raise SystemExit("%s: TFLite found %s detections, the reference %s"
                         % (spec.name, got[3], want[3]))
    if picked is not None and not spec.opts["use_regular_nms"] and \
            spec.opts["max_classes_per_detection"] > 1:
        got = tied_classes(spec, got, want, picked)
    rows_written = written(spec, count)
    for k, per in ((0, 4), (1, 1), (2, 1)):
        for i in (r * per + j for r in rows_written for j in range(per)):
            tol = 1e-6 if k == 0 else 0.0
            if abs(got[k][i] - want[k][i]) > tol:
                raise SystemExit("%s: output %d[%d] is %r in TFLite, %r in the reference"
                                 % (spec.name, k, i, got[k][i], want[k][i]))


def entry(Model, spec, anchors, enc, cls, write_model, io_entry, flatc, schema, outdir,
          expected, refresh):
    """Builds the model, its inputs and expected outputs; the manifest entry."""
    raw, real = stored(spec, anchors, enc, cls)
    m = build(Model(spec.name, spec.seed), spec, raw[0])
    model = write_model(m, flatc, schema, outdir)
    prefix = os.path.join(expected, spec.name)
    fmt = "B" if spec.quant else "f"
    ins = [prefix + "_in_0.bin", prefix + "_in_1.bin"]
    write_values(ins[0], fmt, flat(raw[1]))
    write_values(ins[1], fmt, flat(raw[2]))
    want = reference(spec, real[0], real[1], real[2])
    outs = [prefix + "_out_%d.bin" % i for i in range(4)]
    if refresh:
        ref = os.path.join(os.path.dirname(schema), "..", "..", "tools", "reference",
                           "tflite_run.js")
        subprocess.run(["node", ref, model, "--in", ins[0], "--in", ins[1], "--out",
                        prefix + "_tflite"], check=True, stdout=subprocess.DEVNULL)
        got = [read_f32(prefix + "_tflite_out_%d.bin" % i) for i in range(4)]
        for p in ["_tflite_in_0.bin", "_tflite_in_1.bin"] + \
                 ["_tflite_out_%d.bin" % i for i in range(4)]:
            os.remove(prefix + p)
        check(spec, got, want, picked_scores(spec, *real))
        kept = set(written(spec, int(want[3][0])))
        if spec.opts["use_regular_nms"] or spec.opts["max_classes_per_detection"] > 1:
            got = want  # TFLM's order of equal scores (check() allows TFLite's)
        for path, values, per in zip(outs, got, (4, 1, 1, 1)):
            if per == 4 or len(values) > 1:  # zeros in rows TFLite leaves, as we write
                values = [v if i // per in kept else 0.0 for i, v in enumerate(values)]
            write_values(path, "f", values)
    got = [read_f32(p) for p in outs]
    check(spec, got, want)
    d = rows(spec)
    shapes = ([1, d, 4], [1, d], [1, d], [1])
    outputs = [dict(io_entry(m, t, "output", i, outs[i]), shape=list(shapes[i]))
               for i, t in enumerate(m.outputs)]
    case = {"label": "seed1",
            "inputs": [io_entry(m, t, "input", i, ins[i]) for i, t in enumerate(m.inputs)],
            "outputs": outputs}
    return {"model": model, "format": "tflite", "cases": [case]}


def entries(Model, write_model, io_entry, flatc, schema, outdir, expected, refresh):
    return [entry(Model, spec, a, e, c, write_model, io_entry, flatc, schema, outdir,
                  expected, refresh) for spec, a, e, c in cases()]


# ---- the SSD backbone's uint8 arithmetic ------------------------------------------

def conv_legacy_multiplier(Model, q8):
    """uint8 convolutions rescale with TFLite's legacy per-tensor
    multiplier: input scale * filter scale in float, then / output scale
    in double.  For these scales it is 1910582652 * 2^-11, not the
    all-double 1910582747 * 2^-11, and accumulators of +-208325 (here the
    bias alone: the weights sit at their zero point) give +-90 rather than
    +-91.  The bias's per-channel scales keep TFLite off XNNPACK."""
    a, b, c = 0.01261047087609768, 0.009846830740571022, 0.28583917021751404
    m = Model("conv_uint8_legacy_multiplier", 96)
    x = m.tensor([1, 2, 2, 1], "UINT8", q8(a, 128), name="x")
    w = m.tensor([4, 1, 1, 1], "UINT8", q8(b, 128), data=[128] * 4)
    bias = m.tensor([4], "INT32", ([a * b] * 4, [0] * 4), data=[208325, -208325, 1000, 0])
    y = m.tensor([1, 2, 2, 4], "UINT8", q8(c, 128), name="y")
    m.op("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1, stride_h=1)
    m.inputs, m.outputs = [x], [y]
    return m


def models(Model, q8):
    return [conv_legacy_multiplier(Model, q8), concat_rescale(Model, q8)]


def concat_rescale(Model, q8):
    """SSD joins its heads' outputs with a uint8 CONCATENATION whose inputs
    differ in scale and zero point: TFLite's kernel requantises them in
    float (ConcatenationWithScaling), clamping to 0..255.  The XNNPACK
    delegate of the reference build copies such inputs' raw bytes instead,
    so the model also holds a dead uint8 CONV_2D with per-channel bias
    scales, which the delegate claims and then fails to prepare: TFLite
    then runs the whole model on its own kernels.  (We drop the dead
    operator.)"""
    m = Model("concat_uint8_rescale", 95)
    a = m.tensor([1, 5, 1, 3], "UINT8", q8(0.05, 130), name="a")
    b = m.tensor([1, 4, 1, 3], "UINT8", q8(0.03, 100), name="b")
    c = m.tensor([1, 2, 1, 3], "UINT8", q8(0.2, 0), name="c")  # reaches the clamp
    same = m.tensor([1, 3, 1, 3], "UINT8", q8(0.07, 120), name="same")
    y = m.tensor([1, 14, 1, 3], "UINT8", q8(0.07, 120), name="y")
    m.op("CONCATENATION", [a, b, c, same], [y], axis=1)
    dead = m.tensor([1, 5, 1, 2], "UINT8", q8(0.1, 128), name="dead")
    w = m.tensor([2, 1, 1, 3], "UINT8", q8(0.01, 128), data=[130] * 6)
    bias = m.tensor([2], "INT32", ([0.0005, 0.0005], [0, 0]), data=[0, 0])
    m.op("CONV_2D", [a, w, bias], [dead], padding="SAME", stride_w=1, stride_h=1)
    m.inputs, m.outputs = [a, b, c, same], [y]
    return m


# ---- refusals ----------------------------------------------------------------

def error_model(Model, name, seed, opts=None, raw=None, ttype="FLOAT32"):
    """A small detection model whose options are `opts` as a FlexBuffer,
    or the bytes `raw` (None: no custom options at all)."""
    m = Model(name, seed)
    q = ([0.05], [0]) if ttype != "FLOAT32" else None
    box = m.tensor([1, 3, 4], ttype, q, name="box_encodings")
    cls = m.tensor([1, 3, 4], ttype, q, name="class_predictions")
    anc = m.tensor([3, 4], ttype, q, data=[1] * 12, name="anchors")
    outs = [m.tensor(s, name="out%d" % i) for i, s in enumerate(([1, 2, 4], [1, 2], [1, 2], [1]))]
    m.op(CUSTOM, [box, cls, anc], outs)
    if opts is not None:
        raw = flexbuffer_map(opts)
    if raw is not None:
        m.ops[-1]["custom_options"] = list(raw)
    m.inputs, m.outputs = [box, cls], outs
    return m


def corrupt(from_end, value):
    """Valid options with byte len - from_end replaced."""
    raw = bytearray(flexbuffer_map(options(max_detections=2)))
    raw[len(raw) - from_end] = value
    return bytes(raw)


def key0_high_byte(opts):
    """The distance from the end of flexbuffer_map(opts) to the top byte
    of key 0's offset: past the root (6), the types (n), the values (4n),
    the map header (12) and the keys vector (4n)."""
    n = len(opts)
    return 6 + n + 4 * n + 12 + 4 * n - 3


def error_models(Model):
    prefix = "operator 0 (TFLite_Detection_PostProcess): "
    good = options(max_detections=2)
    no_y = dict(good)
    del no_y["y_scale"]
    cases = [
        ("err_detection_no_options", None, None, "FLOAT32", "the custom options are missing"),
        ("err_detection_truncated", None, b"\x01\x02", "FLOAT32",
         "custom options: the options are empty or truncated"),
        ("err_detection_root_width", None, corrupt(1, 3), "FLOAT32",
         "custom options: the root width 3 is invalid"),
        ("err_detection_not_map", None, corrupt(2, 1 << 2 | 2), "FLOAT32",
         "custom options: the root is not a map (type 1)"),
        ("err_detection_root_offset", None, corrupt(3, 0x7f), "FLOAT32",
         "custom options: the root map's offset points outside the options"),
        ("err_detection_key_offset", None, corrupt(key0_high_byte(good), 0xff), "FLOAT32",
         "custom options: key 0 of the options map lies outside the options"),
        ("err_detection_missing_option", no_y, None, "FLOAT32",
         "custom options: option 'y_scale' is missing"),
        ("err_detection_regular_nms", options(max_detections=2, use_regular_nms=True,
                                              detections_per_class=0), None,
         "FLOAT32", "detections_per_class 0 must be positive"),
        ("err_detection_max_classes", options(max_detections=2, max_classes_per_detection=0),
         None, "FLOAT32", "max_classes_per_detection 0 must be positive"),
        ("err_detection_iou", options(max_detections=2, nms_iou_threshold=1.5), None,
         "FLOAT32", "nms_iou_threshold 1.5 must be in (0, 1]"),
        ("err_detection_int8", good, None, "INT8",
         "box encodings INT8 with anchors INT8: need both FLOAT32"),
        ("err_detection_max_rows", options(max_detections=5000, max_classes_per_detection=3),
         None, "FLOAT32",
         "max_detections 5000 times max_classes_per_detection 3 is more than 10000 output rows"),
    ]
    return [(error_model(Model, name, 94 + i, opts, raw, ttype), prefix + text)
            for i, (name, opts, raw, ttype, text) in enumerate(cases)]
