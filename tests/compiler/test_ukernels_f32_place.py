#!/usr/bin/env python3
"""The AVX-512 f32 max pool's 16-, 32- and 64-channel pixels off a 64-byte
line (pool_f32_avx512.c: pool_lines, each line loaded once per row of taps),
bit for bit against the Linalg path at every tinyml-run --offset of
test_ukernels_f32.check_offsets, on plain values, signed zeros, NaNs and
infinities (pool_inputs).  The cases: 3x3/2 with an odd number of
columns (pairs of pixels and a last one alone) and clipped windows (rows of
2 taps, fewer rows); 3x3/1 (pixels one column apart); 2x2/2 (rows of 2);
16 and 32 channels, pairs and clipped windows.

  test_ukernels_f32_place.py TINYML_COMPILE TINYML_RUN NM WORKDIR
"""
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_ukernels_f32 import check_maxpool, maxpool_case  # noqa: E402
from uk_common import host_avx512, run_cases  # noqa: E402


def cases():
    c = maxpool_case
    return [
        c("maxpool_3x3s2_c64_place_odd", 1, 11, 15, 64, (3, 3), (2, 2), (0, 0, 0, 0)),
        c("maxpool_3x3s2_c64_place_pad", 2, 9, 10, 64, (3, 3), (2, 2), (1, 1, 1, 0)),
        c("maxpool_3x3s1_c64_place", 1, 6, 7, 64, (3, 3), (1, 1), (1, 1, 1, 1)),
        c("maxpool_2x2s2_c64_place", 1, 6, 8, 64, (2, 2), (2, 2), (0, 0, 0, 0)),
        c("maxpool_3x3s2_c32_place_pad", 1, 9, 11, 32, (3, 3), (2, 2), (1, 1, 1, 1)),
        c("maxpool_3x3s2_c16_place_pad", 2, 8, 10, 16, (3, 3), (2, 2), (0, 1, 1, 0)),
    ]


def main():
    compile_exe, run_exe, nm, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    have_avx512, _ = host_avx512()
    failures = run_cases(check_maxpool, cases(), (compile_exe, run_exe, nm), work,
                         random.Random(27), have_avx512)
    print(f"ukernels (max pools off a line): {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
