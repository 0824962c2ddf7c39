#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the bytes of a text file,
so backends carry their transform scripts without reading files at run time.
With --binary, writes `const unsigned char NAME[]` with the file's exact
bytes and `const unsigned long NAME_size` (for the microkernels' bitcode)."""
import sys

args = sys.argv[1:]
binary = args[:1] == ['--binary']
src, dst, name = args[1:4] if binary else args[0:3]
data = open(src, 'rb').read()
if not binary:
    data = data.strip()
with open(dst, 'w') as out:
    out.write('/* Generated from %s; do not edit. */\n' % src.split('/')[-1])
    out.write('const %s %s[] = {\n' % ('unsigned char' if binary else 'char', name))
    for i in range(0, len(data), 16):
        out.write('  ' + ', '.join(str(b) for b in data[i:i + 16]) + ',\n')
    out.write('  0};\n')
    if binary:
        out.write('const unsigned long %s_size = %d;\n' % (name, len(data)))
