"""TFLite Micro's fixed-point primitives in plain Python, shared by the
independent references of the integer kernels (*_ops.py): ports of
gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT and
of TFLite's QuantizeMultiplier and MultiplyByQuantizedMultiplier.  Nothing here is
the importer's code."""
import math
import struct

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


def f32(v):
    """v rounded to float32, as the C++ kernels hold it."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def clamp(v, lo, hi):
    return lo if v < lo else hi if v > hi else v


def srdhm(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    q = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    return abs(q) // (1 << 31) * (1 if q >= 0 else -1)  # C division truncates


def rdbpot(x, e):
    """gemmlowp RoundingDivideByPOT."""
    mask = (1 << e) - 1
    return (x >> e) + (1 if (x & mask) > (mask >> 1) + (1 if x < 0 else 0) else 0)


def wrap32(v):
    """v as the int32 that a C++ int32 expression wraps it to."""
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def mbqm(x, m, shift):
    """TFLite's MultiplyByQuantizedMultiplier(int32_t, int32_t, int): a
    double-rounding fixed-point multiply; x << left wraps as int32 does."""
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(wrap32(x * (1 << left)), m), right)


def mbqm64(x, m, shift):
    """TFLite's MultiplyByQuantizedMultiplier(int64_t, int32_t, int): the
    multiplier rounded to 16 bits, one rounding shift, cast to int32."""
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    total = 15 - shift
    return wrap32((x * reduced + (1 << (total - 1))) >> total)


def quantize_multiplier(d):
    """TFLite's QuantizeMultiplier: (Q31 multiplier, shift)."""
    if d == 0.0:
        return 0, 0
    frac, shift = math.frexp(d)
    qf = int(math.floor(abs(frac * (1 << 31)) + 0.5))  # std::round
    if qf == 1 << 31:
        qf //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return qf, shift
