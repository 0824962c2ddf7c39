#!/usr/bin/env python3
"""Trains the quick-start digits model and exports it to .tflite.

Data: the 8x8 handwritten digits that Debian's python3-sklearn ships
(1,797 images, pixel values 0..16).  A fixed 80/20 split keeps 360 digits
back; the network never sees them.

Model: 64 -> 32 (ReLU) -> 10 -> softmax, float32, trained with sklearn's
MLPClassifier (fixed seed).  Export is our own: the script writes the
model as TFLite's JSON form and `flatc -b` turns it into the FlatBuffer,
against the TFLite schema in ../shared/schema/tflite (schema_flatc2.fbs, the
form Debian's flatc 2 reads; the only use of
../shared; the outputs are committed).

Writes, next to this script:
  digits.tflite    the model; its input is 64 floats, pixel / 16
  digits_test.bin  the held-back digits: 360 records of 64 pixel bytes
                   (0..16) followed by the label byte
and prints the held-back accuracy of the exported weights.

usage: train.py [SCHEMA_DIR]   (default ../../../shared/schema/tflite)
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

HERE = os.path.dirname(os.path.abspath(__file__))


def f32_bytes(a):
    return list(np.ascontiguousarray(a, dtype="<f4").tobytes())


def tensor(name, shape, buffer):
    return {"name": name, "shape": shape, "type": "FLOAT32", "buffer": buffer}


def fc(inputs, output, relu):
    return {"opcode_index": 0, "inputs": inputs, "outputs": [output],
            "builtin_options_type": "FullyConnectedOptions",
            "builtin_options": {"fused_activation_function": "RELU" if relu else "NONE"}}


def model_json(w1, b1, w2, b2):
    # TFLite FULLY_CONNECTED weights are [out, in]; sklearn's coefs are [in, out].
    buffers = [{}, {"data": f32_bytes(w1.T)}, {"data": f32_bytes(b1)},
               {"data": f32_bytes(w2.T)}, {"data": f32_bytes(b2)}]
    tensors = [tensor("pixels", [1, 64], 0), tensor("fc1/weights", [32, 64], 1),
               tensor("fc1/bias", [32], 2), tensor("hidden", [1, 32], 0),
               tensor("fc2/weights", [10, 32], 3), tensor("fc2/bias", [10], 4),
               tensor("logits", [1, 10], 0), tensor("probabilities", [1, 10], 0)]
    ops = [fc([0, 1, 2], 3, True), fc([3, 4, 5], 6, False),
           {"opcode_index": 1, "inputs": [6], "outputs": [7],
            "builtin_options_type": "SoftmaxOptions", "builtin_options": {"beta": 1.0}}]
    return {"version": 3,
            "operator_codes": [
                {"deprecated_builtin_code": 9, "builtin_code": "FULLY_CONNECTED", "version": 1},
                {"deprecated_builtin_code": 25, "builtin_code": "SOFTMAX", "version": 1}],
            "subgraphs": [{"tensors": tensors, "inputs": [0], "outputs": [7],
                           "operators": ops, "name": "main"}],
            "description": "libtinyml quick-start digits MLP (examples/digits/train.py)",
            "buffers": buffers}


def export(schema_dir, w1, b1, w2, b2):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "digits.json")
        with open(src, "w") as f:
            json.dump(model_json(w1, b1, w2, b2), f)
        subprocess.run(["flatc", "-b", "-o", tmp, os.path.join(schema_dir, "schema_flatc2.fbs"), src],
                       check=True)
        with open(os.path.join(tmp, "digits.tflite"), "rb") as f:
            data = f.read()
    with open(os.path.join(HERE, "digits.tflite"), "wb") as f:
        f.write(data)
    return len(data)


def main():
    schema_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "..", "..", "shared", "schema", "tflite")
    digits = load_digits()
    x, y = digits.data.astype(np.float32), digits.target.astype(np.uint8)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y)
    net = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", max_iter=2000,
                        random_state=0, tol=1e-6)
    net.fit(x_train / 16.0, y_train)
    w1, b1 = net.coefs_[0].astype(np.float32), net.intercepts_[0].astype(np.float32)
    w2, b2 = net.coefs_[1].astype(np.float32), net.intercepts_[1].astype(np.float32)
    size = export(schema_dir, w1, b1, w2, b2)
    with open(os.path.join(HERE, "digits_test.bin"), "wb") as f:
        for pixels, label in zip(x_test.astype(np.uint8), y_test):
            f.write(bytes(pixels) + struct.pack("B", label))
    hidden = np.maximum(x_test / 16.0 @ w1 + b1, 0)
    accuracy = float(np.mean(np.argmax(hidden @ w2 + b2, axis=1) == y_test))
    print(f"digits.tflite: {size} bytes; held-back digits: {len(y_test)}; "
          f"accuracy of the exported float32 weights: {accuracy:.4f}")


if __name__ == "__main__":
    main()
