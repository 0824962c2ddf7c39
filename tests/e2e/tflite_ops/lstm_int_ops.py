"""Integer UNIDIRECTIONAL_SEQUENCE_LSTM test models for gen_ops.py (int8
input, weights and hidden state, int32 biases, int16 cell state; and 16x8:
int16 input and hidden state, int8 weights, int64 biases), and their
expected outputs from a plain-Python model of TFLite Micro's reference
kernel (the 2023+ lstm_eval.h / lstm_eval_common.cc: EvalLstm<int8_t,
int8_t, int16_t, int32_t> and EvalLstm<int16_t, int8_t, int16_t, int64_t>).

TFLite's own integer kernel (EvalInteger8x8_16, what the reference tool
runs) rounds differently from TFLM's, and int8 LSTMs are TFLM models, so
the expected outputs come from this model instead.  It is written from
TFLM's C++ kernels element by element, with Python integers, and shares
nothing with the importer's lowering.  The same model reproduces TFLM's
outputs for the zoo's DTLN bit for bit.
"""
import math
import random

from tflm_fixed import clamp, f32, mbqm, mbqm64, quantize_multiplier

GATES = "ifco"  # TFLite's input order: input, forget, cell, output


class Spec:
    def __init__(self, name, batch=1, time=3, n_in=5, n_cell=7, time_major=False,
                 cell_scale=2.0 ** -11, cell_clip=0.0, x_q=(0.02, -3), h_q=(1 / 128, 5),
                 cifg=False, projection=False, seed=61, act="INT8", big_bias=False,
                 peephole=False, layer_norm=False, bias_type=None, bias_offset=0):
        self.name, self.batch, self.time, self.n_in, self.n_cell = name, batch, time, n_in, n_cell
        self.time_major, self.cell_scale, self.cell_clip = time_major, cell_scale, cell_clip
        self.x_q, self.h_q, self.cifg, self.projection, self.seed = x_q, h_q, cifg, projection, seed
        # act: the input, hidden state and output type.  16x8 only:
        # big_bias puts biases past int32 in the forget and output gates;
        # bias_offset is added to every bias.
        self.act, self.big_bias, self.bias_offset = act, big_bias, bias_offset
        self.peephole, self.layer_norm = peephole, layer_norm  # refused variants
        self.bias_type = bias_type or ("INT32" if act == "INT8" else "INT64")
        self.fmt = "b" if act == "INT8" else "h"  # gen_ops.write_values format
        self.lo, self.hi = (-128, 127) if act == "INT8" else (-32768, 32767)

    def rows(self):
        return [self.time, self.batch] if self.time_major else [self.batch, self.time]


# Odd sizes, and a hidden state with a non-zero zero point.  The clip (0.6
# at cell scale 2^-11: 1228 units) bites on part of the cells; cell scale
# 2^-15 takes tanh(cell)'s rounding right shift and saturates the cell sum.
CASES = [
    Spec("lstm_int8_b1", cell_scale=2.0 ** -12),
    Spec("lstm_int8_b2_clip", batch=2, cell_clip=0.6, seed=62),
    Spec("lstm_int8_cell_shift", cell_scale=2.0 ** -15, seed=64),
    Spec("lstm_int8_time_major", batch=2, time=4, time_major=True, h_q=(0.009, -7), seed=63),
]

# 16x8: int16 activations are symmetric.  Input scale 2^-15 and weight
# scale 0.01 keep the gates' pre-activations around +-1; odd sizes, batch
# and time major, the clip, and cell scale 2^-15, where the cell sum
# saturates (its biases push every gate up); big_bias has int64 biases
# beyond int32 (their gates saturate).
X16, H16 = (2.0 ** -15, 0), (1.1 / 32768, 0)
CASES += [
    Spec("lstm_16x8_b1", n_in=3, n_cell=9, x_q=X16, h_q=H16, act="INT16", seed=71),
    Spec("lstm_16x8_b2_clip", batch=2, time=4, cell_clip=0.6, x_q=X16, h_q=(2.0 ** -14, 0),
         act="INT16", seed=72),
    Spec("lstm_16x8_cell_sat", time=5, n_in=6, n_cell=5, cell_scale=2.0 ** -15, x_q=X16,
         h_q=H16, act="INT16", bias_offset=3000000, seed=73),
    Spec("lstm_16x8_time_major", batch=3, time=3, n_in=7, n_cell=4, time_major=True,
         cell_scale=2.0 ** -12, x_q=(0.7 / 32768, 0), h_q=H16, act="INT16", big_bias=True,
         seed=74),
]


def build(m, s):
    """Writes s's LSTM into gen_ops Model m; returns the operator's inputs."""
    x_scale, x_zp = s.x_q
    w_scale = 0.01
    ins = [-1] * (24 if s.layer_norm else 20)
    ins[0] = m.tensor(s.rows() + [s.n_in], s.act, ([x_scale], [x_zp]), name="x")
    for k, gate in enumerate(GATES):
        if gate == "i" and s.cifg:
            continue
        ins[1 + k] = m.const([s.n_cell, s.n_in], "INT8", ([w_scale], [0]))
        ins[5 + k] = m.const([s.n_cell, s.n_cell], "INT8", ([w_scale * 1.3], [0]))
        ins[12 + k] = bias(m, s, gate, ([x_scale * w_scale], [0]))
    if s.projection:
        ins[16] = m.const([s.n_cell, s.n_cell], "INT8", ([w_scale], [0]))
    for k in range(3 if s.peephole else 0):
        ins[9 + k] = m.const([s.n_cell], "INT16", ([w_scale], [0]))
    for k in range(4 if s.layer_norm else 0):
        ins[20 + k] = m.const([s.n_cell], "INT16", ([w_scale], [0]))
    hq = ([s.h_q[0]], [s.h_q[1]])
    ins[18] = m.tensor([s.batch, s.n_cell], s.act, hq, name="output_state", variable=True)
    ins[19] = m.tensor([s.batch, s.n_cell], "INT16", ([s.cell_scale], [0]), name="cell_state",
                       variable=True)
    y = m.tensor(s.rows() + [s.n_cell], s.act, hq, name="y")
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], fused_activation_function="TANH",
         cell_clip=s.cell_clip, time_major=s.time_major)
    m.inputs, m.outputs = [ins[0]], [y]
    return ins


def bias(m, s, gate, q):
    """A gate's bias.  int16 inputs are some 256 times int8's, and so are
    their biases; big_bias adds +-2^33 to two of the cells."""
    if s.bias_type == "INT32":
        return m.const([s.n_cell], "INT32", q, lo=-2000, hi=2000)
    data = [m.rng.randint(-500000, 500000) + s.bias_offset for _ in range(s.n_cell)]
    if s.big_bias and gate in "fo":
        data[0] += 2 ** 33 if gate == "f" else -2 ** 33
    return m.tensor([s.n_cell], s.bias_type, q, data)


def input_values(s):
    rng = random.Random(s.seed * 7 + 1)
    return [rng.randint(s.lo, s.hi) for _ in range(s.batch * s.time * s.n_in)]


# ---- TFLM's integer arithmetic -----------------------------------------------

# sigmoid_table_uint16 (tensorflow/lite/kernels/internal/common.h).
TABLE = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535]
assert len(TABLE) == 256


def scaled_input(x, mult, left):
    """The input step of reference_integer_ops::Logistic and Tanh (int16)."""
    if mult == 0:
        mult, left = 3 << left, 0
    rnd = (1 << (left - 1)) if left > 0 else 0
    return (x * mult + rnd) >> left


def logistic16(x, mult=0, left=0):
    d = scaled_input(x, mult, left)
    a = abs(d)
    uh = a >> 9
    if uh >= 255:
        r = 0x7FFF << 10
    else:
        ua, ub = TABLE[uh], TABLE[uh + 1]
        r = ((ua << 9) + (a & 0x1FF) * (ub - ua)) & 0xFFFFFFFF
    r = (r + (1 << 9)) if d >= 0 else ((1 << 25) - r + (1 << 9) - 1)
    return to_i16((r & 0xFFFFFFFF) >> 10)


def tanh16(x, mult=0, left=0):
    d = scaled_input(x, mult, left)
    a = abs(d)
    uh = a >> 8
    if uh >= 255:
        r = 0xFFFF << 8
    else:
        ua, ub = TABLE[uh], TABLE[uh + 1]
        r = (ua << 8) + (a & 0xFF) * (ub - ua)
    r = (r - (1 << 23) + (1 << 7)) if d >= 0 else (-r + (1 << 23) + (1 << 7) - 1)
    return to_i16(r >> 8)


def to_i16(v):
    return ((v + 32768) & 0xFFFF) - 32768


def lstm_tanh(cell_scale_power, x):
    """lstm_eval's Tanh(cell_state_scale_power, ...)."""
    left = 15 + cell_scale_power - 3
    return tanh16(x, 3, -left) if left < 0 else tanh16(x, 0, left)


# ---- the kernel ---------------------------------------------------------------

class Params:
    """TFLM's Prepare (PrepareGateParametersInteger, CreateLstmCellStateInfo)."""

    def __init__(self, s, data, ins, scales):
        self.x_zp, self.h_zp = s.x_q[1], s.h_q[1]
        # The gate FC's accumulator is the bias type: int64 for 16x8, which
        # takes the int64 MultiplyByQuantizedMultiplier.
        self.fc_mbqm = mbqm if s.act == "INT8" else mbqm64
        self.lo, self.hi = s.lo, s.hi
        x_scale, h_scale, cs = scales[ins[0]], scales[ins[18]], scales[ins[19]]
        self.gates = {}
        for k, g in enumerate(GATES):
            # GetQuantizedConvolutionMultipler: the product in float32.
            mx = quantize_multiplier(f32(x_scale * scales[ins[1 + k]]) / 2.0 ** -12)
            mh = quantize_multiplier(f32(h_scale * scales[ins[5 + k]]) / 2.0 ** -12)
            self.gates[g] = (data[ins[1 + k]], data[ins[5 + k]], data[ins[12 + k]], mx, mh)
        self.cpow = round(math.log2(cs))
        self.qclip = int(clamp(f32(s.cell_clip) / cs, -32768.0, 32767.0)) if s.cell_clip > 0 else 0
        self.fc_mul = quantize_multiplier(2.0 ** -15 * cs / cs)
        self.ig_mul = quantize_multiplier(2.0 ** -30 / cs)
        self.hidden_mul = quantize_multiplier(2.0 ** -30 / h_scale)


def fc16(w, v, zp, bias, q, rows, multiply):
    """reference_integer_ops::FullyConnected to int16 (weight zero point 0):
    `multiply` is the MultiplyByQuantizedMultiplier of its accumulator."""
    n = len(v)
    out = []
    for r in range(rows):
        acc = sum(w[r * n + k] * (v[k] - zp) for k in range(n))
        if bias is not None:
            acc += bias[r]
        out.append(clamp(multiply(acc, *q), -32768, 32767))
    return out


def gate(p, g, x, h, act):
    w, r, b, mx, mh = p.gates[g]
    a = fc16(w, x, p.x_zp, b, mx, len(b), p.fc_mbqm)
    z = fc16(r, h, p.h_zp, None, mh, len(b), p.fc_mbqm)
    pre = [clamp(u + v, -32768, 32767) for u, v in zip(a, z)]
    return [act(v) for v in pre]


def step(p, x, h, c):
    """LstmStep for one batch row: returns the new (h, c)."""
    f = gate(p, "f", x, h, logistic16)
    i = gate(p, "i", x, h, logistic16)
    g = gate(p, "c", x, h, lambda v: lstm_tanh(-12, v))
    o = gate(p, "o", x, h, logistic16)  # the old h: h changes last
    cn = []
    for ff, cc, ii, gg in zip(f, c, i, g):
        v = clamp(mbqm(ff * cc, *p.fc_mul), -32768, 32767) + \
            clamp(mbqm(ii * gg, *p.ig_mul), -32768, 32767)
        v = clamp(v, -32768, 32767)
        cn.append(clamp(v, -p.qclip, p.qclip) if p.qclip > 0 else v)
    hn = [clamp(mbqm(lstm_tanh(p.cpow, cc) * oo, *p.hidden_mul) + p.h_zp, p.lo, p.hi)
          for cc, oo in zip(cn, o)]
    return hn, cn


def reference(s, data, ins, scales, x, invokes=1):
    """The int8 (int16) output of the last of `invokes` invokes on input x, from the
    reset state (h = its zero point, c = 0), the state carrying over."""
    p = Params(s, data, ins, scales)
    h = [[p.h_zp] * s.n_cell for _ in range(s.batch)]
    c = [[0] * s.n_cell for _ in range(s.batch)]
    for _ in range(invokes):
        y = [0] * (s.batch * s.time * s.n_cell)
        for b in range(s.batch):
            for t in range(s.time):
                row = t * s.batch + b if s.time_major else b * s.time + t
                h[b], c[b] = step(p, x[row * s.n_in:(row + 1) * s.n_in], h[b], c[b])
                y[row * s.n_cell:(row + 1) * s.n_cell] = h[b]
    return y


# ---- what TFLite Micro refuses -------------------------------------------------

LSTM = "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): "
S16 = dict(x_q=X16, h_q=H16, act="INT16")


def error_models(Model):
    """(model, expected error) pairs: the 16x8 variants TFLM's
    LstmTensors::ValidateTensorStatus refuses, and int16 input with the
    int8 kernel's int32 biases, which TFLM's BiasType (int64) misreads."""
    cases = [
        (Spec("err_lstm_16x8_cifg", cifg=True, **S16),
         "integer LSTM without the input gate (CIFG)"),
        (Spec("err_lstm_16x8_peephole", peephole=True, **S16),
         "integer LSTM with peephole weights is not supported"),
        (Spec("err_lstm_16x8_projection", projection=True, **S16),
         "integer LSTM with a projection is not supported"),
        (Spec("err_lstm_16x8_layer_norm", layer_norm=True, **S16),
         "integer LSTM with layer norm is not supported"),
        (Spec("err_lstm_16x8_bias32", bias_type="INT32", **S16),
         "integer LSTM with INT16 input needs constant INT64 [n_cell] biases (got INT32)"),
        (Spec("err_lstm_16x8_zero_point", x_q=(2.0 ** -15, 3), h_q=H16, act="INT16"),
         "INT16 input and output state need zero point 0 (got 3 and 0)"),
    ]
    out = []
    for k, (spec, text) in enumerate(cases):
        m = Model(spec.name, 80 + k)
        build(m, spec)
        out.append((m, LSTM + text))
    return out
