#!/usr/bin/env python3
"""Writes a C file defining `const char NAME[]` with the bytes of a text file,
so backends carry their transform scripts without reading files at run time.
With --binary, writes `const unsigned char NAME[]` with the file's exact
bytes and `const unsigned long NAME_size` (for the microkernels' bitcode).

  embed.py [--binary] SRC DST NAME [--replace OLD NEW]...

Each --replace (text files only) replaces OLD in SRC by NEW before
embedding, and fails the build unless OLD is there exactly once: a variant
of a transform script (e.g. x86-64's wider register tile for AVX-512) stays
one file whose variant cannot silently drift from it, and a later sequence
that happens to use the same text cannot be rewritten with it unseen."""
import sys

args = sys.argv[1:]
binary = args[:1] == ['--binary']
if binary:
    args = args[1:]
src, dst, name = args[0:3]
rest = args[3:]
if len(rest) % 3 or any(flag != '--replace' for flag in rest[0::3]):
    sys.exit('embed.py: expected --replace OLD NEW after SRC DST NAME')
if binary and rest:
    sys.exit('embed.py: --replace is for text files, not --binary')
data = open(src, 'rb').read()
for old, new in zip(rest[1::3], rest[2::3]):
    count = data.count(old.encode())
    if count != 1:
        sys.exit('embed.py: %s: %r is there %d times, not once' % (src, old, count))
    data = data.replace(old.encode(), new.encode())
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
