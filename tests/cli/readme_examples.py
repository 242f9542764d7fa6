#!/usr/bin/env python3
"""readme_examples.py README MEMPROF DATADIRS... [--update] - the example outputs in the
README are the tool's own: every code block that follows a line '<!-- example -->' is
a session of '$ COMMAND' lines, each followed by what it prints (stdout, then stderr).
Each command is run with bash in a fresh directory where 'memprof' is MEMPROF and every
file the commands name by basename is linked from DATADIRS (searched recursively); lines
over 120 characters are cut to 117 and '...', as the README says.  Exit 0 when every
block matches; 1 with a diff per block that does not; with --update, rewrite the blocks
from the tool instead (make readme-examples)."""
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARK = "<!-- example -->"
WIDTH = 120


def cut(line):
    return line if len(line) <= WIDTH else line[:WIDTH - 3] + "..."


def blocks(lines):
    """(first, last) line indexes of each marked block's body (between its fences)."""
    out = []
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            sys.exit("readme_examples: line %d: '%s' is not followed by a code block" % (i + 1, MARK))
        j = i + 2
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j == len(lines):
            sys.exit("readme_examples: line %d: the code block never ends" % (i + 2))
        out.append((i + 2, j))
    return out


def find_files(datadirs):
    found = {}
    for d in datadirs:
        for root, _, files in os.walk(d):
            for f in files:
                found.setdefault(f, os.path.join(root, f))
    return found


def run_session(body, memprof, files):
    """The block as the tool prints it: each '$ ' line, then its output."""
    out = []
    with tempfile.TemporaryDirectory(prefix="readme-ex-") as tmp:
        bindir = os.path.join(tmp, ".bin")
        os.mkdir(bindir)
        os.symlink(memprof, os.path.join(bindir, "memprof"))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        env.pop("TERM", None)
        for line in body:
            if not line.startswith("$ "):
                continue
            cmd = line[2:]
            for word in shlex.split(cmd, comments=True):
                if word in files and not os.path.exists(os.path.join(tmp, word)):
                    os.symlink(files[word], os.path.join(tmp, word))
            r = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=300)
            out.append(line)
            text = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
            out += [cut(x) for x in text.splitlines()]
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    readme, memprof = args[0], os.path.abspath(args[1])
    datadirs = [os.path.abspath(d) for d in args[2:]]
    lines = open(readme, encoding="utf-8").read().split("\n")
    files = find_files(datadirs)
    bad = 0
    for first, last in reversed(blocks(lines)):
        body = lines[first:last]
        got = run_session(body, memprof, files)
        if got == body:
            continue
        if update:
            lines[first:last] = got
            continue
        bad += 1
        print("README.md line %d: the example differs from what the tool prints:" % first)
        sys.stdout.writelines(x + "\n" for x in difflib.unified_diff(
            body, got, "README.md", "memprof", lineterm="", n=1))
    if update:
        open(readme, "w", encoding="utf-8").write("\n".join(lines))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
