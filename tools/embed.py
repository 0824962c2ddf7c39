#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the bytes of a text file,
so backends carry their transform scripts without reading files at run time."""
import sys

src, dst, name = sys.argv[1:4]
data = open(src, 'rb').read().strip()
with open(dst, 'w') as out:
    out.write('/* Generated from %s; do not edit. */\n' % src.split('/')[-1])
    out.write('const char %s[] = {\n' % name)
    for i in range(0, len(data), 16):
        out.write('  ' + ', '.join(str(b) for b in data[i:i + 16]) + ',\n')
    out.write('  0};\n')
