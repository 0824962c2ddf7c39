#!/usr/bin/python3
"""Generates tests/conformance/sample_cases: GridSample and RoiAlign models
in the backend-test layout (model.onnx, test_data_set_0/
{input,output}_N.pb) for what Debian's suite (ONNX 1.12) does not cover:
every GridSample mode with every padding mode and both align_corners
values, on grids that reach well outside [-1, 1] (so border clamps and
reflection folds more than once), opset 20's mode names, a 1-pixel axis,
and constant inputs (folded at compile time); RoiAlign with both
coordinate transformation modes, several sampling ratios, a spatial scale,
rois partly or wholly outside the image, several images, and
sampling_ratio 0 on constant rois.

The expected outputs are onnxruntime's (onnxruntime-node through
/work/shared/tools/reference/ort_run.js), never ours.  Run with Debian's
python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 tests/conformance/gen_sample_cases.py OUT_DIR
"""
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, mapping, numpy_helper

from ort_ref import ort  # noqa: E402  onnxruntime via ort_run.js, shared by the generators
rng = np.random.default_rng(2026)
F = TensorProto.FLOAT


def floats(lo, hi, *shape):
    return (rng.random(shape, dtype=np.float32) * (hi - lo) + lo).astype(np.float32)


def grid_cases():
    cases = []
    x = floats(-4, 4, 2, 3, 5, 4)
    # Up to 3.5 normalised units out: several reflections on the 4-wide axis.
    grid = floats(-3.5, 3.5, 2, 3, 4, 2)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                if mode == "bicubic" and pad == "border":
                    continue  # refused: onnxruntime and the ONNX reference differ
                name = "grid_%s_%s_align%d" % (mode, pad, align)
                attrs = dict(mode=mode, padding_mode=pad, align_corners=align)
                cases.append((name, "GridSample", 16, attrs, [("X", x), ("grid", grid)], []))
    for mode in ("linear", "cubic"):
        cases.append(("grid_opset20_" + mode, "GridSample", 20,
                      dict(mode=mode, padding_mode="reflection"),
                      [("X", x), ("grid", grid)], []))
    one_row = floats(-4, 4, 1, 2, 1, 6)
    cases.append(("grid_one_row_reflection", "GridSample", 16,
                  dict(mode="bilinear", padding_mode="reflection"),
                  [("X", one_row), ("grid", floats(-2.5, 2.5, 1, 2, 5, 2))], []))
    cases.append(("grid_bicubic_folded", "GridSample", 16, dict(mode="bicubic", padding_mode="reflection"),
                  [], [("X", floats(-4, 4, 1, 2, 4, 3)), ("grid", floats(-1.5, 1.5, 1, 2, 3, 2))]))
    return cases


def roi_cases():
    cases = []
    x = floats(-4, 4, 2, 3, 9, 7)
    rois = np.array([[0.5, 1.0, 5.5, 7.0], [-2.0, -1.5, 3.0, 2.5], [4.0, 6.0, 9.5, 11.0],
                     [1.2, 2.7, 1.9, 3.1], [6.8, -3.0, 8.5, -1.2]], np.float32)
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    for ctm in ("half_pixel", "output_half_pixel"):
        for sr in (1, 2, 3):
            attrs = dict(coordinate_transformation_mode=ctm, output_height=3, output_width=4,
                         sampling_ratio=sr)
            cases.append(("roi_%s_sr%d" % (ctm, sr), "RoiAlign", 16, attrs,
                          [("X", x), ("rois", rois), ("batch_indices", batch)], []))
    attrs = dict(output_height=2, output_width=3, sampling_ratio=2, spatial_scale=0.5)
    cases.append(("roi_scale_half", "RoiAlign", 16, attrs,
                  [("X", x), ("rois", rois * 2), ("batch_indices", batch)], []))
    attrs = dict(output_height=2, output_width=2, sampling_ratio=0)
    same = np.array([[0.0, 0.0, 4.0, 6.0], [1.5, 2.0, 5.0, 7.5]], np.float32)
    cases.append(("roi_adaptive_const_rois", "RoiAlign", 16, attrs, [("X", x)],
                  [("rois", same), ("batch_indices", np.array([1, 0], np.int64))]))
    cases.append(("roi_opset10", "RoiAlign", 10, dict(output_height=2, output_width=2, sampling_ratio=2),
                  [("X", x), ("rois", rois), ("batch_indices", batch)], []))
    cases.append(("roi_folded", "RoiAlign", 16, dict(output_height=2, output_width=3, sampling_ratio=2),
                  [], [("X", x), ("rois", rois), ("batch_indices", batch)]))
    return cases


def model(name, op, opset, attrs, inputs, consts):
    names = [n for n, _ in inputs + consts]
    fold = not inputs
    nodes = [helper.make_node(op, names, ["S" if fold else "Y"], **attrs)]
    inits = [numpy_helper.from_array(a, n) for n, a in consts]
    graph_inputs = [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
                    for n, a in inputs]
    if fold:
        # The constant result plus a run-time zero, so the model has an input.
        nodes.append(helper.make_node("Add", ["S", "Z"], ["Y"]))
        graph_inputs = [helper.make_tensor_value_info("Z", F, [1])]
    graph = helper.make_graph(nodes, name, graph_inputs, [helper.make_tensor_value_info("Y", F, None)],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def main():
    out_dir = os.path.join(sys.argv[1], "sample")
    shutil.rmtree(out_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, opset, attrs, inputs, consts in grid_cases() + roi_cases():
            d = os.path.join(out_dir, "test_" + name)
            os.makedirs(os.path.join(d, "test_data_set_0"))
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(model(name, op, opset, attrs, inputs, consts).SerializeToString())
            feeds = inputs if inputs else [("Z", np.zeros([1], np.float32))]
            y = ort(path, [a for _, a in feeds], tmp)
            files = [("input_%d" % i, n, a) for i, (n, a) in enumerate(feeds)]
            for kind, name_, arr in files + [("output_0", "Y", y)]:
                t = numpy_helper.from_array(np.ascontiguousarray(arr), name_)
                with open(os.path.join(d, "test_data_set_0", kind + ".pb"), "wb") as f:
                    f.write(t.SerializeToString())
            print(name, "->", y.shape)


if __name__ == "__main__":
    main()
