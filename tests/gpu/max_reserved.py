#!/usr/bin/env python3
"""max_reserved.py SCRIPT [ARGS...] - run a PyTorch script as __main__ and, when it
ends, print "MAX_RESERVED N" (torch.cuda.max_memory_reserved(): the peak bytes the
caching allocator held from CUDA) on stderr.  tests/gpu/tune-check.sh runs the same
training under the setting memprof tune recommends and compares this with the
prediction."""
import atexit
import runpy
import sys

import torch


def report():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        print("MAX_RESERVED %d" % torch.cuda.max_memory_reserved(), file=sys.stderr, flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: max_reserved.py SCRIPT [ARGS...]")
    atexit.register(report)
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
