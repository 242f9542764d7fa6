#!/usr/bin/env python3
"""snapshot_test.py - the kind of test a project runs before its memory gate:
a few training steps (samples/torch/train_gpt.py) with PyTorch's allocator
history recorded, written out as a CUDA memory snapshot that
'memprof import' reads.  In your project, keep the three
torch.cuda.memory calls around your own test step.

usage: snapshot_test.py SNAPSHOT.pickle [train_gpt.py options]
       (default options: --steps 3)

Exit status: 0 written, 1 the training failed, 77 no PyTorch or no CUDA
device (nothing written: a memory snapshot needs a GPU).
"""
import os
import sys


def main(argv):
    if len(argv) < 1 or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, train_args = argv[0], argv[1:] or ["--steps", "3"]
    try:
        import torch
    except ImportError as e:
        print("snapshot_test: PyTorch is not installed (%s): no snapshot" % e, file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("snapshot_test: no CUDA device: no snapshot", file=sys.stderr)
        return 77
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
    import train_gpt

    # record every allocation with its Python and C++ stack from here on
    torch.cuda.memory._record_memory_history(max_entries=1000000)
    status = train_gpt.main(train_args)
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(out)
    torch.cuda.memory._record_memory_history(enabled=None)
    if status == 0:
        print("snapshot_test: wrote %s" % out)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
