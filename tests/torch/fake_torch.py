#!/usr/bin/env python3
"""fake_torch.py DIR - write a fake 'torch' package into DIR for the tests of memprof record's
PyTorch history (tests/cli/record-torch-history.sh): just the calls memprof's sitecustomize makes,
each appended as a JSON line to $FAKE_TORCH_LOG.  torch.cuda.init() runs the calls queued with
_lazy_call (as CUDA's lazy initialisation does); torch._C._fake_oom() calls the out-of-memory
observers; torch.cuda.memory._snapshot() returns a small snapshot of plain data."""
import os
import sys

FILES = {
    "torch/__init__.py": '''
import json, os
def _log(call, **kw):
    with open(os.environ["FAKE_TORCH_LOG"], "a") as f:
        f.write(json.dumps(dict(call=call, pid=os.getpid(), **kw)) + "\\n")
from . import _C, cuda
''',
    "torch/_C.py": '''
_observers = []
def _cuda_attach_out_of_memory_observer(fn):
    import torch
    torch._log("attach_oom_observer")
    _observers.append(fn)
def _fake_oom():
    for fn in _observers:
        fn(0, 1 << 40, 1 << 30, 1 << 20)
''',
    "torch/cuda/__init__.py": '''
_initialized = False
_queued = []
def _lazy_call(fn):
    if _initialized:
        fn()
    else:
        _queued.append(fn)
def init():
    global _initialized
    import torch
    torch._log("cuda_init")
    _initialized = True
    for fn in _queued:
        fn()
from . import memory
''',
    "torch/cuda/memory.py": '''
import sys
def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None):
    import torch
    torch._log("record_memory_history", enabled=enabled, context=context, stacks=stacks,
               max_entries=max_entries)
def _snapshot(device=None):
    import torch
    torch._log("snapshot")
    seg = {"device": 0, "address": 0x7f0000000000, "total_size": 2097152, "stream": 0,
           "segment_type": "large", "allocated_size": 1024, "active_size": 1024,
           "blocks": [{"size": 1024, "requested_size": 1000, "state": "active_allocated",
                       "address": 0x7f0000000000, "frames": []},
                      {"size": 2096128, "state": "inactive", "address": 0x7f0000000400}]}
    trace = [{"action": "segment_alloc", "addr": 0x7f0000000000, "size": 2097152, "stream": 0,
              "time_us": 1000, "frames": []},
             {"action": "alloc", "addr": 0x7f0000000000, "size": 1000, "stream": 0,
              "time_us": 1001, "frames": []}]
    return {"segments": [seg], "device_traces": [trace]}
''',
}

for name, text in FILES.items():
    path = os.path.join(sys.argv[1], name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text.lstrip())
