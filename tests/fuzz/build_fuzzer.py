#!/usr/bin/env python3
"""Builds a libFuzzer target with a compiler other than the project's.

Meson may be configured with gcc, which has no libFuzzer, so the fuzzer is
a custom_target that runs this script.  Each source is compiled to its own
object with -MD, and the dependency files are merged into one depfile for
the output, so that editing any header rebuilds the fuzzer.

Usage: build_fuzzer.py CC OUTPUT DEPFILE OBJDIR FLAGS... -- SOURCES...
FLAGS are used both to compile and to link.
"""

import os
import re
import subprocess
import sys


def parse_deps(path):
    """Prerequisites listed in a make-style .d file."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    _, _, prereqs = text.partition(": ")
    # Split on unescaped spaces, then undo make's escapes.
    return [p.replace("\\ ", " ") for p in re.split(r"(?<!\\)\s+", prereqs.strip()) if p]


def main():
    cc, output, depfile, objdir = sys.argv[1:5]
    rest = sys.argv[5:]
    split = rest.index("--")
    flags, sources = rest[:split], rest[split + 1:]
    os.makedirs(objdir, exist_ok=True)
    objects, deps = [], set()
    for i, src in enumerate(sources):
        base = os.path.join(objdir, f"{i}_{os.path.splitext(os.path.basename(src))[0]}")
        subprocess.run([cc, *flags, "-c", src, "-o", base + ".o", "-MD", "-MF", base + ".d"],
                       check=True)
        objects.append(base + ".o")
        deps.update(parse_deps(base + ".d"))
    subprocess.run([cc, *flags, *objects, "-o", output, "-lm"], check=True)
    with open(depfile, "w") as f:
        escaped = (d.replace(" ", "\\ ") for d in sorted(deps))
        f.write(output.replace(" ", "\\ ") + ": " + " \\\n  ".join(escaped) + "\n")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode or 1)
