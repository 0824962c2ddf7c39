#!/usr/bin/env python3
"""Turns an int8 input of the MLPerf Tiny KWS model back into the int16
(Q8.8) MFCC features a fixed-point front end would produce:
feature = (q - zero_point) * scale, stored as round(feature * 256).

usage: make_features.py IN_INT8.bin OUT_INT16.bin [SCALE ZERO_POINT]
(the defaults are kws_ref_model's input parameters)"""
import struct
import sys


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    scale, zp = (float(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) == 5 else (0.584702909, 83)
    q = struct.unpack(f"{len(open(sys.argv[1], 'rb').read())}b", open(sys.argv[1], "rb").read())
    out = [max(-32768, min(32767, round((v - zp) * scale * 256))) for v in q]
    with open(sys.argv[2], "wb") as f:
        f.write(struct.pack(f"<{len(out)}h", *out))


if __name__ == "__main__":
    main()
