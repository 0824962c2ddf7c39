#!/usr/bin/env python3
"""Writes opset-23 Attention cases in the ONNX backend suite's layout
(node/<test>/model.onnx, test_data_set_0/{input,output}_N.pb).  Debian's
suite (onnx 1.12) predates Attention and onnxruntime-node may lack it, so
the expected outputs come from `reference` below: a numpy port of
onnx/reference/ops/op_attention.py (the version with the fully-masked-row
guard: a query row whose additive bias is all -inf gives 0, not NaN).

Run by hand (Debian's python3-onnx for /usr/bin/python3); the output is
committed:
  /usr/bin/python3 gen_attention_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper


def softmax(x):
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)


def to_heads(x, h):
    b, s, hd = x.shape
    return x.reshape(b, s, h, hd // h).transpose(0, 2, 1, 3)


def causal(base, offset):
    q, t = base.shape[-2:]
    allowed = np.arange(t).reshape(1, t) <= np.arange(q).reshape(q, 1) + offset
    return base + np.where(allowed, np.float32(0), np.float32(-np.inf))


def make_bias(mask, q_len, total, is_causal, past):
    if mask is not None and mask.shape[-1] < total:
        pad = [(0, 0)] * (mask.ndim - 1) + [(0, total - mask.shape[-1])]
        mask = np.pad(mask, pad, constant_values=False if mask.dtype == np.bool_ else -np.inf)
    if mask is not None and mask.dtype == np.bool_:
        mask = np.where(mask, np.float32(0), np.float32(-np.inf))
    bias = np.zeros((q_len, total), np.float32)
    if is_causal:
        return causal(bias if mask is None else mask.copy(), past)
    return bias if mask is None else bias + mask


def reference(Q, K, V, mask=None, past_k=None, past_v=None, scale=None, is_causal=0,
              q_heads=None, kv_heads=None, softcap=None, mode=0):
    three_d = Q.ndim == 3
    if three_d:
        Q, K, V = to_heads(Q, q_heads), to_heads(K, kv_heads), to_heads(V, kv_heads)
    if scale is None:
        scale = 1 / np.sqrt(Q.shape[3])
    scale = np.sqrt(scale)
    if past_k is not None:
        K = np.concatenate((past_k, K), axis=2)
        V = np.concatenate((past_v, V), axis=2)
    present_k, present_v = K, V
    past = 0 if past_k is None else past_k.shape[2]
    bias = make_bias(mask, Q.shape[2], K.shape[2], is_causal, past)
    r = Q.shape[1] // K.shape[1]
    K, V = np.repeat(K, r, axis=1), np.repeat(V, r, axis=1)
    qk = np.matmul(Q * scale, np.transpose(K, (0, 1, 3, 2)) * scale)
    if softcap is not None and softcap > 0:
        qk = np.tanh(qk / softcap) * softcap
    with_bias = qk + bias
    if mode == 2:
        qk = with_bias.copy()
    p = softmax(with_bias)
    p = np.where(np.isneginf(np.max(bias, axis=-1, keepdims=True)), 0, p)
    if mode == 3:
        qk = p
    y = np.matmul(p, V).astype(np.float32)
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y, present_k.astype(np.float32), present_v.astype(np.float32), qk.astype(np.float32)


def tp(a):
    return TP.BOOL if a.dtype == np.bool_ else TP.FLOAT


def write_case(out_dir, name, ins, attrs, n_out):
    """ins: list of (name, array or None); outputs Y, present_key,
    present_value, qk_matmul_output, the first n_out of them."""
    arrays = {k: v for k, v in ins}
    kw = {"past_k": arrays.get("past_key"), "past_v": arrays.get("past_value"),
          "mask": arrays.get("attn_mask")}
    ref_attrs = {"scale": attrs.get("scale"), "is_causal": attrs.get("is_causal", 0),
                 "q_heads": attrs.get("q_num_heads"), "kv_heads": attrs.get("kv_num_heads"),
                 "softcap": attrs.get("softcap"), "mode": attrs.get("qk_matmul_output_mode", 0)}
    outs = reference(arrays["Q"], arrays["K"], arrays["V"], **kw, **ref_attrs)[:n_out]
    out_names = ["Y", "present_key", "present_value", "qk_matmul_output"][:n_out]
    if n_out == 4 and "past_key" not in arrays:
        out_names[1:3] = ["", ""]
    node = helper.make_node("Attention", [k if v is not None else "" for k, v in ins],
                            out_names, **attrs)
    g_ins = [helper.make_tensor_value_info(k, tp(v), v.shape) for k, v in ins if v is not None]
    g_outs = [helper.make_tensor_value_info(n, TP.FLOAT, o.shape) for n, o in zip(out_names, outs) if n]
    graph = helper.make_graph([node], name, g_ins, g_outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    kept = [o for n, o in zip(out_names, outs) if n]
    for kind, arrs, names in (("input", [v for _, v in ins if v is not None], [i.name for i in g_ins]),
                              ("output", kept, [o.name for o in g_outs])):
        for i, (a, n) in enumerate(zip(arrs, names)):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(name, "nan" if any(np.isnan(o).any() for o in kept) else "ok")


def main():
    out = sys.argv[1]
    rs = np.random.RandomState(23)
    f = lambda *s: rs.rand(*s).astype(np.float32)
    Q, K, V = f(2, 3, 4, 8), f(2, 3, 6, 8), f(2, 3, 6, 8)
    write_case(out, "test_attn_4d", [("Q", Q), ("K", K), ("V", V)], {}, 1)
    write_case(out, "test_attn_4d_causal_scaled", [("Q", Q), ("K", K), ("V", V)],
               {"is_causal": 1, "scale": 0.1}, 1)
    Qg = f(2, 9, 4, 8)
    write_case(out, "test_attn_4d_gqa_diff_v", [("Q", Qg), ("K", K), ("V", f(2, 3, 6, 10))], {}, 1)
    m = f(4, 6)
    write_case(out, "test_attn_4d_float_mask_softcap_qk2", [("Q", Q), ("K", K), ("V", V), ("attn_mask", m)],
               {"softcap": 2.0, "qk_matmul_output_mode": 2}, 4)
    # Fully masked rows: row 1 of a bool mask all false, and a float mask
    # row of -inf in one batch only.
    mb = rs.rand(2, 1, 4, 6) > 0.4
    mb[:, :, 1, :] = False
    mb[0, 0, 2, :] = False
    write_case(out, "test_attn_4d_bool_mask_fully_masked_rows", [("Q", Q), ("K", K), ("V", V), ("attn_mask", mb)],
               {"qk_matmul_output_mode": 3}, 4)
    mf = f(2, 3, 4, 6)
    mf[1, 2, 3, :] = -np.inf
    write_case(out, "test_attn_4d_float_mask_fully_masked_row", [("Q", Q), ("K", K), ("V", V), ("attn_mask", mf)],
               {}, 1)
    # Causal with a mask that removes the one key row 0 may see.
    mc = np.ones((4, 6), np.bool_)
    mc[0, 0] = False
    write_case(out, "test_attn_4d_causal_bool_mask_fully_masked_row",
               [("Q", Q), ("K", K), ("V", V), ("attn_mask", mc)], {"is_causal": 1}, 1)
    # 3-D with GQA, a short bool mask padded to the total length, KV cache.
    Q3, K3, V3 = f(2, 4, 9 * 8), f(2, 6, 3 * 8), f(2, 6, 3 * 10)
    pk, pv = f(2, 3, 5, 8), f(2, 3, 5, 10)
    m3 = rs.rand(4, 9) > 0.3
    write_case(out, "test_attn_3d_gqa_past_present_short_mask_causal",
               [("Q", Q3), ("K", K3), ("V", V3), ("attn_mask", m3), ("past_key", pk), ("past_value", pv)],
               {"q_num_heads": 9, "kv_num_heads": 3, "is_causal": 1}, 4)
    write_case(out, "test_attn_3d_past_present_float_mask",
               [("Q", f(2, 4, 24)), ("K", f(2, 6, 24)), ("V", f(2, 6, 24)), ("attn_mask", f(2, 3, 4, 11)),
                ("past_key", f(2, 3, 5, 8)), ("past_value", f(2, 3, 5, 8))],
               {"q_num_heads": 3, "kv_num_heads": 3}, 3)


def write_rms_case(out_dir, name, x, scale, attrs):
    """RMSNormalization: x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale,
    as onnx/reference/ops/op_rms_normalization.py."""
    axis = attrs.get("axis", -1) % x.ndim
    ms = np.mean(np.square(x), axis=tuple(range(axis, x.ndim)), keepdims=True)
    y = (x / np.sqrt(ms + attrs.get("epsilon", 1e-5)) * scale).astype(np.float32)
    node = helper.make_node("RMSNormalization", ["X", "Scale"], ["Y"], **attrs)
    ins = [helper.make_tensor_value_info("X", TP.FLOAT, x.shape),
           helper.make_tensor_value_info("Scale", TP.FLOAT, scale.shape)]
    graph = helper.make_graph([node], name, ins, [helper.make_tensor_value_info("Y", TP.FLOAT, y.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    d = os.path.join(out_dir, "node", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, a, n in (("input", x, "X"), ("input", scale, "Scale"), ("output", y, "Y")):
        k = 1 if n == "Scale" else 0
        with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(name, "ok")


def main_rms(out):
    rs = np.random.RandomState(24)
    x = rs.randn(2, 3, 4, 5).astype(np.float32)
    write_rms_case(out, "test_rms_norm_default_axis", x, rs.randn(5).astype(np.float32), {})
    write_rms_case(out, "test_rms_norm_axis1_eps", x, rs.randn(4, 5).astype(np.float32),
                   {"axis": 1, "epsilon": 0.1})


if __name__ == "__main__":
    main()
    main_rms(sys.argv[1])
