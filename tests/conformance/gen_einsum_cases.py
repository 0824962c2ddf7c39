#!/usr/bin/python3
"""Generates tests/conformance/einsum_cases: Einsum and TfIdfVectorizer
models in the backend-test layout (model.onnx, test_data_set_0/
{input,output}_N.pb) for what Debian's suite (ONNX 1.12) does not cover:
Einsum with several operands, ellipsis broadcasting, diagonals, traces,
implicit outputs (sorted letters), upper-case letters, int32 and folded constants; TfIdfVectorizer
with trigrams, IDF/TFIDF weights, int64 tokens, columns
shared by n-grams, 1-D input and a folded constant input.

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours; for the two Einsum
equations onnxruntime refuses, numpy.einsum's.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_einsum_cases.py OUT_DIR
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, mapping, numpy_helper

from ort_ref import ort  # noqa: E402  onnxruntime via ort_run.js, shared by the generators
rng = np.random.default_rng(2026)


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 4 - 2).astype(np.float32)


def ints(*shape):
    return rng.integers(-20, 20, shape).astype(np.int32)


# name, equation, operands, fold
EINSUM = [
    ("bilinear", "bn,anm,bm->ba", [floats(2, 3), floats(4, 3, 5), floats(2, 5)], False),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [floats(2, 1, 3, 4), floats(1, 5, 4, 2)], False),
    ("ellipsis_middle", "i...j,j->...i", [floats(3, 2, 4, 5), floats(5)], False),
    ("diagonal", "ii->i", [floats(4, 4)], False),
    ("trace", "ii", [floats(5, 5)], False),
    ("outer", "i,j->ij", [floats(3), floats(4)], False),
    ("three_operands", "ij,jk,kl->il", [floats(2, 3), floats(3, 4), floats(4, 5)], False),
    ("four_operands_scalar", "a,ab,bc,c->", [floats(3), floats(3, 4), floats(4, 2), floats(2)], False),
    ("implicit_sorted", "cb,ba", [floats(4, 3), floats(3, 2)], False),
    ("uppercase_explicit", "bA,bc->cA", [floats(3, 2), floats(3, 4)], False),
    ("diagonal_then_contract", "iij,jk->ik", [floats(3, 3, 4), floats(4, 2)], False),
    ("sum_all", "ijk->", [floats(2, 3, 4)], False),
    ("batch_int32", "bij,bjk->bik", [ints(2, 3, 4), ints(2, 4, 3)], False),
    ("transpose_3d", "ijk->kij", [floats(2, 3, 4)], False),
    ("folded_matmul", "ij,jk->ik", [floats(3, 4), floats(4, 2)], True),
]
# Valid numpy.einsum equations that onnxruntime refuses (ellipses of
# different ranks, upper-case letters in an implicit output): numpy, whose
# semantics ONNX's Einsum names, gives the expected output.
EINSUM_NUMPY = [
    ("numpy_ellipsis_ranks", "...ij,...jk->...ik", [floats(2, 1, 3, 4), floats(5, 4, 2)]),
    ("numpy_implicit_upper", "bA,bc", [floats(3, 2), floats(3, 4)]),
]

POOL = np.array([2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 4], np.int64)
# name, attributes, input, fold
TFIDF = [
    ("tf_uni_bi_tri_skip2", dict(mode="TF", min_gram_length=1, max_gram_length=3, max_skip_count=2,
                                 ngram_counts=[0, 4, 10], ngram_indexes=list(range(8)),
                                 pool_int64s=POOL.tolist()),
     np.array([[2, 3, 5, 4, 2, 3, 4, 5, 6, 7], [5, 6, 7, 8, 6, 7, 2, 3, 4, 4]], np.int32), False),
    ("idf_weights", dict(mode="IDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                         ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                         pool_int64s=POOL[:10].tolist(),
                         weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.25, 0.75]),
     np.array([[2, 3, 5, 6, 7, 7, 8], [4, 4, 5, 1, 6, 0, 7]], np.int32), False),
    ("tfidf_weights_int64", dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=3,
                                 ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                                 pool_int64s=POOL[:10].tolist(),
                                 weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.25, 0.75]),
     np.array([[2, 3, 5, 6, 7, 5, 6, 2, 7, 8], [6, 7, 6, 7, 1, 6, 2, 7, 5, 3]], np.int64), False),
    ("tfidf_no_weights", dict(mode="TFIDF", min_gram_length=2, max_gram_length=2, max_skip_count=0,
                              ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                              pool_int64s=POOL[:10].tolist()),
     np.array([[5, 6, 7, 8, 6, 7, 5, 6]], np.int32), False),
    ("idf_no_weights_1d", dict(mode="IDF", min_gram_length=1, max_gram_length=2, max_skip_count=2,
                               ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                               pool_int64s=POOL[:10].tolist()),
     np.array([2, 9, 5, 6, 1, 7, 4, 4], np.int32), False),
    ("shared_columns", dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                            ngram_counts=[0, 4], ngram_indexes=[3, 0, 0, 2, 1, 3, 1],
                            pool_int64s=POOL[:10].tolist()),
     np.array([[2, 3, 5, 4, 5, 6, 7, 8, 6, 7], [3, 3, 3, 5, 7, 6, 8, 2, 2, 2]], np.int32), False),
    ("idf_shared_columns", dict(mode="IDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                                ngram_counts=[0, 4], ngram_indexes=[3, 0, 0, 2, 1, 3, 1],
                                pool_int64s=POOL[:10].tolist()),
     np.array([[2, 9, 5, 9, 9, 6, 7, 8, 6, 7], [3, 3, 3, 5, 7, 6, 8, 2, 2, 2]], np.int32), False),
    ("long_row_skip4", dict(mode="TF", min_gram_length=2, max_gram_length=3, max_skip_count=4,
                            ngram_counts=[0, 4, 10], ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7],
                            pool_int64s=POOL.tolist()),
     rng.integers(2, 9, (3, 30)).astype(np.int32), False),
    ("folded_tf", dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=2,
                       ngram_counts=[0, 4], ngram_indexes=list(range(7)),
                       pool_int64s=POOL[:10].tolist()),
     np.array([[2, 3, 5, 6, 7, 7, 8], [4, 4, 5, 1, 6, 0, 7]], np.int32), True),
]


def tfidf_numpy(attrs, x):
    """A second reference: onnx/reference/ops/op_tfidf_vectorizer.py's
    semantics (ids in pool order, unigrams counted at skip distance 1
    only; onnxruntime rejects a repeated n-gram, so none is generated)."""
    pool, counts, idx = attrs["pool_int64s"], attrs["ngram_counts"], attrs["ngram_indexes"]
    lo, hi, skip = attrs["min_gram_length"], attrs["max_gram_length"], attrs["max_skip_count"]
    grams, gid = {}, 0
    for i, start in enumerate(counts):
        size, end = i + 1, counts[i + 1] if i + 1 < len(counts) else len(pool)
        for g in range((end - start) // size):
            if lo <= size <= hi:
                grams[tuple(pool[start + g * size:start + (g + 1) * size])] = idx[gid]
            gid += 1
    rows = x.reshape(-1, x.shape[-1])
    f = np.zeros((rows.shape[0], max(idx) + 1), np.float32)
    for r, row in enumerate(rows):
        for gram, col in grams.items():
            for d in range(1, 2 if len(gram) == 1 else skip + 2):
                for s in range(len(row) - d * (len(gram) - 1)):
                    f[r, col] += all(row[s + j * d] == gram[j] for j in range(len(gram)))
    w = np.array(attrs.get("weights", [1.0] * f.shape[1]), np.float32)[:f.shape[1]]
    y = {"TF": f, "IDF": np.where(f > 0, w, 0), "TFIDF": f * w}[attrs["mode"]]
    return y.reshape(x.shape[:-1] + (f.shape[1],))


def save(m):
    m.ir_version = 8
    return m


def elem(a):
    return mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def folded_graph(node, name, arrays, out_elem):
    """The node on initializers, plus a run-time zero so the model has an input."""
    inits = [numpy_helper.from_array(a, n) for n, a in arrays]
    add = helper.make_node("Add", ["S", "Z"], ["Y"])
    return helper.make_graph([node, add], name, [helper.make_tensor_value_info("Z", out_elem, [1])],
                             [helper.make_tensor_value_info("Y", out_elem, None)], inits)


def einsum_model(name, eq, operands, fold):
    names = ["x%d" % i for i in range(len(operands))]
    node = helper.make_node("Einsum", names, ["S" if fold else "Y"], equation=eq)
    out_elem = elem(operands[0])
    if fold:
        graph = folded_graph(node, name, list(zip(names, operands)), out_elem)
    else:
        inputs = [helper.make_tensor_value_info(n, elem(a), a.shape) for n, a in zip(names, operands)]
        graph = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("Y", out_elem, None)])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])), names


def tfidf_model(name, attrs, x, fold):
    node = helper.make_node("TfIdfVectorizer", ["X"], ["S" if fold else "Y"], **attrs)
    if fold:
        graph = folded_graph(node, name, [("X", x)], TensorProto.FLOAT)
    else:
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", elem(x), x.shape)],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)]))


def write_case(d, model, names, feeds, tmp, y=None):
    os.makedirs(os.path.join(d, "test_data_set_0"))
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    if y is None:
        y = ort(path, feeds, tmp)
    files = [("input_%d" % i, n, a) for i, (n, a) in enumerate(zip(names, feeds))]
    for kind, name_, arr in files + [("output_0", "Y", y)]:
        t = numpy_helper.from_array(np.ascontiguousarray(arr), name_)
        with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
            f.write(t.SerializeToString())
    return y


def main():
    root = sys.argv[1]
    for sub in ("einsum", "tfidf"):
        shutil.rmtree(os.path.join(root, sub), ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, eq, operands, fold in EINSUM:
            model, names = einsum_model(name, eq, operands, fold)
            feeds = [np.zeros([1], operands[0].dtype)] if fold else operands
            d = os.path.join(root, "einsum", "test_einsum_" + name)
            y = write_case(d, model, ["Z"] if fold else names, feeds, tmp)
            ref = np.einsum(eq, *operands)  # a second reference: numpy, which ONNX follows
            assert np.allclose(y, ref, rtol=1e-4, atol=1e-4), name
            print(name, eq, "->", y.shape)
        for name, eq, operands in EINSUM_NUMPY:
            model, names = einsum_model(name, eq, operands, False)
            y = np.einsum(eq, *operands).astype(np.float32)
            write_case(os.path.join(root, "einsum", "test_einsum_" + name), model, names, operands, tmp, y)
            print(name, eq, "->", y.shape, "(numpy)")
        for name, attrs, x, fold in TFIDF:
            model = tfidf_model(name, attrs, x, fold)
            feeds = [np.zeros([1], np.float32)] if fold else [x]
            d = os.path.join(root, "tfidf", "test_tfidf_" + name)
            y = write_case(d, model, ["Z"] if fold else ["X"], feeds, tmp)
            assert np.array_equal(y, tfidf_numpy(attrs, x)), (name, y, tfidf_numpy(attrs, x))
            print(name, x.shape, "->", y.shape)


if __name__ == "__main__":
    main()
