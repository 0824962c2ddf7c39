#!/usr/bin/env python3
"""Builds a libFuzzer target with a compiler other than the project's.

Meson may be configured with gcc, which has no libFuzzer, so the fuzzer is
a custom_target that runs this script.  Each source is compiled to its own
object with -MD, and the dependency files are merged into one depfile for
the output, so that editing any header rebuilds the fuzzer.

Usage: build_fuzzer.py CC OUTPUT DEPFILE OBJDIR FLAGS... -- SOURCES...
FLAGS are used both to compile and to link.  An OUTPUT ending in .a is an
archive of the objects (made with AR, from the environment, default
llvm-ar-22), for several fuzzers to link; SOURCES may then include .a
files, which are linked as they are.  Sources compile two at a time.
"""

import concurrent.futures
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


def compile_one(cc, flags, src, base):
    subprocess.run([cc, *flags, "-c", src, "-o", base + ".o", "-MD", "-MF", base + ".d"],
                   check=True)
    return base


def main():
    cc, output, depfile, objdir = sys.argv[1:5]
    rest = sys.argv[5:]
    split = rest.index("--")
    flags, sources = rest[:split], rest[split + 1:]
    os.makedirs(objdir, exist_ok=True)
    archives = [s for s in sources if s.endswith(".a")]
    # Headers are inputs only so that they exist first (generated ones).
    sources = [s for s in sources if not s.endswith((".a", ".h"))]
    bases = [os.path.join(objdir, f"{i}_{os.path.splitext(os.path.basename(src))[0]}")
             for i, src in enumerate(sources)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda sb: compile_one(cc, flags, *sb), zip(sources, bases)))
    objects = [b + ".o" for b in bases]
    deps = set(archives)
    for b in bases:
        deps.update(parse_deps(b + ".d"))
    if output.endswith(".a"):
        if os.path.exists(output):
            os.remove(output)
        subprocess.run([os.environ.get("AR", "llvm-ar-22"), "rcs", output, *objects], check=True)
    else:
        # The flags may hold link options (-l, -Wl), which go after the objects.
        subprocess.run([cc, *objects, *archives, *flags, "-o", output, "-lm"], check=True)
    with open(depfile, "w") as f:
        escaped = (d.replace(" ", "\\ ") for d in sorted(deps))
        f.write(output.replace(" ", "\\ ") + ": " + " \\\n  ".join(escaped) + "\n")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode or 1)
