#!/usr/bin/env python3
"""The examples users copy, run on the real data in ../shared:

- classify (built in-tree from examples/classify) on TFLite Micro's person
  and no-person pictures, as 8-bit 96x96 BMPs and enlarged to 24-bit
  160x120 (resized and colour-converted by the fused pre-processing): class
  1 (person) first and class 0.

  ../shared/reference/person_detect/*.bmp do not hold gray levels: their
  bytes are the model's int8 input (real-*_in_0.bin) stored as uint8, so
  bright areas wrap to dark.  The photo is byte ^ 0x80 (= input + 128), and
  the model takes [-1, 1] (input scale 2/255, zero point -1), so the right
  options are --mean 127.5 --std 127.5; the test writes the photos and uses
  those.  It also prints, without asserting, what the shared files give
  with --mean 0 --std 255 (the command issue 6 names).
- keyword: the MLPerf Tiny KWS real sample, turned into int16 Q8.8 features
  by examples/keyword/make_features.py, is the word "on" (class 5, what
  TFLite Micro's reference output says); the seeded cases give the class of
  their reference outputs.

usage: test_examples.py CLASSIFY KEYWORD SHARED_DIR WORK_DIR
"""
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> {p.returncode}: {p.stdout.strip()}")
    return p.stdout


def read_bmp8(path):
    d = open(path, "rb").read()
    off, w, h = struct.unpack_from("<I", d, 10)[0], *struct.unpack_from("<ii", d, 18)
    pal = d[54:54 + 1024]
    row = (w + 3) & ~3
    rows = [[pal[4 * d[off + r * row + x] + 2] for x in range(w)] for r in range(abs(h))]
    return w, abs(h), rows[::-1] if h > 0 else rows  # top row first


def write_bmp24(path, w, h, pixel):
    row = (3 * w + 3) & ~3
    data = bytearray()
    for y in reversed(range(h)):  # bottom-up
        line = bytearray()
        for x in range(w):
            r, g, b = pixel(x, y)
            line += bytes((b, g, r))
        data += line + bytes(row - len(line))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(data), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(header + info + data)


def write_bmp8(path, w, h, gray):
    row = (w + 3) & ~3
    data = b"".join(bytes(gray(x, y) for x in range(w)) + bytes(row - w)
                    for y in reversed(range(h)))
    palette = b"".join(bytes((i, i, i, 0)) for i in range(256))
    header = struct.pack("<2sIHHI", b"BM", 54 + 1024 + len(data), 0, 0, 54 + 1024)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 8, 0, len(data), 2835, 2835, 256, 0)
    with open(path, "wb") as f:
        f.write(header + info + palette + data)


def photo(src, dst, w, h, bits=24):
    """The picture behind `src` (bytes ^ 0x80) as a w x h BMP."""
    sw, sh, rows = read_bmp8(src)
    def gray(x, y):
        return rows[y * sh // h][x * sw // w] ^ 0x80
    if bits == 8:
        write_bmp8(dst, w, h, gray)
    else:
        write_bmp24(dst, w, h, lambda x, y: (gray(x, y),) * 3)


def first_class(out):
    return int(out.splitlines()[0].split()[0])


def classify(exe, model, image, mean, std):
    labels = os.path.join(ROOT, "examples", "classify", "person_labels.txt")
    return run([exe, model, image, "--mean", mean, "--std", std, "--top", "2", "--labels", labels])


def check_classify(exe, shared, work):
    model = os.path.join(shared, "models", "tflm", "person_detect.tflite")
    failures = 0
    for name, want in (("person", 1), ("no_person", 0)):
        bmp = os.path.join(shared, "reference", "person_detect", name + ".bmp")
        out = classify(exe, model, bmp, "0", "255")
        print(f"INFO classify {name}.bmp as stored, --mean 0 --std 255: "
              + out.strip().replace("\n", " | "))
        for w, h, bits in ((96, 96, 8), (160, 120, 24)):
            image = os.path.join(work, f"{name}_{w}x{h}_{bits}bit.bmp")
            photo(bmp, image, w, h, bits)
            out = classify(exe, model, image, "127.5", "127.5")
            got = first_class(out)
            print(f"{'PASS' if got == want else 'FAIL'} classify {os.path.basename(image)} "
                  f"--mean 127.5 --std 127.5: " + out.strip().replace("\n", " | "))
            failures += got != want
    return failures


def check_keyword(exe, shared, work):
    model = os.path.join(shared, "models", "mlperf-tiny", "kws_ref_model.tflite")
    ref = os.path.join(shared, "reference", "kws_ref_model")
    failures = 0
    for case in ("real-kws-sample0", "seed1", "seed2", "seed3"):
        features = os.path.join(work, case + "_features.bin")
        run([sys.executable, os.path.join(ROOT, "examples", "keyword", "make_features.py"),
             os.path.join(ref, case + "_in_0.bin"), features])
        expected = struct.unpack("12b", open(os.path.join(ref, case + "_out_0.bin"), "rb").read())
        want = max(range(12), key=lambda i: (expected[i], -i))
        out = run([exe, model, features]).strip()
        got = int(out.split()[1])
        ok = got == want and (case != "real-kws-sample0" or out.split()[0] == "on")
        print(f"{'PASS' if ok else 'FAIL'} keyword {case}: {out} (reference class {want})")
        failures += not ok
    return failures


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    classify, keyword, shared, work = sys.argv[1:]
    if not os.path.isdir(shared):
        print(f"SKIP: {shared} is missing (the shared models and references)")
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    failures = check_classify(classify, shared, work) + check_keyword(keyword, shared, work)
    print(f"examples: {'OK' if not failures else f'{failures} failure(s)'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
