#!/usr/bin/python3
"""Generates tests/conformance/resize_cases: ONNX Resize/Upsample models in
the backend-test layout (model.onnx, test_data_set_0/{input,output}_N.pb)
for what Debian's suite (ONNX 1.12) does not cover: antialias, axes,
keep_aspect_ratio_policy, half_pixel_symmetric, tf_crop_and_resize with
nearest and cubic, more than 3 resized axes,
integer nearest, and constant inputs (folded at compile time).

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours; where onnxruntime
refuses a shape (cubic beyond 2-D/4-D images), ONNX 1.12's own
reference (interpolate_nd in onnx.backend.test.case.node.resize).  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_resize_cases.py OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import helper, mapping, numpy_helper

ORT_RUN = "/work/shared/tools/reference/ort_run.js"
rng = np.random.default_rng(25)


def floats(*shape):
    return (rng.random(shape, dtype=np.float32) * 8 - 4).astype(np.float32)


# name, opset, input array, Resize attributes, constant operands
# (roi, scales, sizes: None = absent), fold (X a constant)
CASES = [
    ("cubic_antialias_down", 18, floats(1, 2, 9, 11), dict(mode="cubic", antialias=1),
     (None, [1, 1, 0.6, 0.45], None), False),
    ("linear_antialias_down_sizes", 18, floats(1, 1, 12, 10), dict(mode="linear", antialias=1),
     (None, None, [1, 1, 3, 5]), False),
    ("linear_antialias_down_quarter", 18, floats(2, 16, 17),
     dict(mode="linear", antialias=1, coordinate_transformation_mode="pytorch_half_pixel"),
     (None, [1, 0.25, 0.3], None), False),
    ("cubic_antialias_up_and_down", 18, floats(1, 1, 7, 9),
     dict(mode="cubic", antialias=1, cubic_coeff_a=-0.5, exclude_outside=1),
     (None, [1, 1, 1.8, 0.55], None), False),
    ("axes_sizes_not_larger_linear", 18, floats(1, 2, 6, 8),
     dict(mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
     (None, None, [4, 5]), False),
    ("axes_sizes_not_smaller_nearest", 18, floats(1, 2, 6, 8),
     dict(mode="nearest", axes=[3, 2], keep_aspect_ratio_policy="not_smaller"),
     (None, None, [5, 3]), False),
    ("axes_scales_cubic_reversed", 18, floats(1, 2, 5, 6),
     dict(mode="cubic", axes=[3, 2]), (None, [1.5, 1.6], None), False),
    ("cubic_rank3_all_axes", 13, floats(3, 5, 6),
     dict(mode="cubic", coordinate_transformation_mode="asymmetric"),
     (None, [2, 0.6, 1.5], None), False),
    ("half_pixel_symmetric_linear", 19, floats(1, 1, 5, 7),
     dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric"),
     (None, [1, 1, 1.7, 0.7], None), False),
    ("half_pixel_symmetric_nearest_ceil", 19, floats(1, 1, 5, 7),
     dict(mode="nearest", coordinate_transformation_mode="half_pixel_symmetric",
          nearest_mode="ceil"), (None, [1, 1, 2.7, 0.6], None), False),
    ("tf_crop_nearest_extrapolation", 13, floats(1, 1, 6, 6),
     dict(mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
          extrapolation_value=7.5),
     ([0, 0, 0.25, -0.2, 1, 1, 1.5, 0.95], None, [1, 1, 5, 7]), False),
    ("tf_crop_cubic_axes", 18, floats(1, 2, 6, 7),
     dict(mode="cubic", coordinate_transformation_mode="tf_crop_and_resize", axes=[2, 3],
          extrapolation_value=-1.0),
     ([0.1, -0.1, 0.8, 1.2], None, [4, 6]), False),
    ("linear_four_axes", 13, floats(2, 3, 4, 5),
     dict(mode="linear", coordinate_transformation_mode="align_corners"),
     (None, [1.5, 2, 0.5, 1.6], None), False),
    ("linear_pytorch_half_pixel_to_one", 13, floats(1, 3, 4, 6),
     dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
     (None, None, [1, 3, 1, 9]), False),
    ("nearest_int8", 13, rng.integers(-128, 128, (1, 2, 3, 4), dtype=np.int8),
     dict(mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="round_prefer_ceil"), (None, [1, 1, 2.3, 1.7], None), False),
    ("nearest_uint8_rank3", 13, rng.integers(0, 256, (3, 4, 5), dtype=np.uint8),
     dict(mode="nearest"), (None, [2, 0.5, 1.5], None), False),
    ("cubic_align_corners_constant", 13, floats(1, 1, 4, 5),
     dict(mode="cubic", coordinate_transformation_mode="align_corners"),
     (None, [1, 1, 1.75, 1.6], None), True),
    ("linear_antialias_constant", 18, floats(1, 1, 9, 6),
     dict(mode="linear", antialias=1), (None, None, [1, 1, 4, 4]), True),
    ("opset10_nearest_up3", 10, floats(1, 1, 2, 5), dict(mode="nearest"),
     (None, [1, 1, 3, 3], None), False),
    ("opset10_nearest_down", 10, floats(1, 1, 4, 5), dict(mode="nearest"),
     (None, [1, 1, 0.5, 0.6], None), False),
]


def model(name, opset, x, attrs, operands, fold):
    roi, scales, sizes = operands
    inits, names = [], ["X"]
    for key, value, dtype in (("roi", roi, np.float32), ("scales", scales, np.float32),
                              ("sizes", sizes, np.int64)):
        if value is None:
            names.append("")
            continue
        inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), key))
        names.append(key)
    while names[-1] == "":
        names.pop()
    if opset == 10:
        names = ["X", "scales"]  # Resize-10 has no roi
    elem = mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
    nodes = [helper.make_node("Resize", names, ["R" if fold else "Y"], **attrs)]
    inputs = [helper.make_tensor_value_info("X", elem, x.shape)]
    if fold:
        # The resized constant plus a run-time zero, so the model has an input.
        inits.append(numpy_helper.from_array(x, "X"))
        nodes.append(helper.make_node("Add", ["R", "Z"], ["Y"]))
        inputs = [helper.make_tensor_value_info("Z", elem, [1])]
    graph = helper.make_graph(nodes, name, inputs,
                              [helper.make_tensor_value_info("Y", elem, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort(model_path, x, tmp):
    inp = os.path.join(tmp, "in.bin")
    x.tofile(inp)
    out = subprocess.run(["node", ORT_RUN, model_path, "--in", inp, "--out",
                          os.path.join(tmp, "ort")], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            y = np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"]))
            return y.reshape(rec["shape"])
    raise RuntimeError("no output from onnxruntime")


def onnx_reference(x, attrs, operands):
    from onnx.backend.test.case.node import resize as ref
    roi, scales, sizes = operands
    coeffs = {"nearest": lambda r: ref.nearest_coeffs(r, attrs.get("nearest_mode",
                                                                    "round_prefer_floor")),
              "linear": ref.linear_coeffs,
              "cubic": lambda r: ref.cubic_coeffs(r, attrs.get("cubic_coeff_a", -0.75))}
    kw = {k: attrs[k] for k in ("coordinate_transformation_mode", "exclude_outside",
                                "extrapolation_value") if k in attrs}
    y = ref.interpolate_nd(x, coeffs[attrs["mode"]],
                           output_size=None if sizes is None else np.array(sizes),
                           scale_factors=None if scales is None else np.array(scales, np.float32),
                           roi=None if roi is None else np.array(roi, np.float32), **kw)
    return y.astype(x.dtype)


def expected(path, x, feed, attrs, operands, tmp):
    try:
        return ort(path, feed, tmp), "onnxruntime"
    except RuntimeError as e:
        if "Exception during initialization" not in str(e):
            raise
        return onnx_reference(x, attrs, operands), "onnx reference"


def main():
    out_dir = os.path.join(sys.argv[1], "resize")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, opset, x, attrs, operands, fold in CASES:
            d = os.path.join(out_dir, "test_resize_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            m = model(name, opset, x, attrs, operands, fold)
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            feed = np.zeros([1], x.dtype) if fold else x
            y, source = expected(path, x, feed, attrs, operands, tmp)
            for kind, name_, arr in (("input", "Z" if fold else "X", feed), ("output", "Y", y)):
                t = numpy_helper.from_array(np.ascontiguousarray(arr), name_)
                with open(os.path.join(d, "test_data_set_0", kind + "_0.pb"), "wb") as f:
                    f.write(t.SerializeToString())
            print(name, x.shape, "->", y.shape, "from", source)


if __name__ == "__main__":
    main()
