#!/usr/bin/env python3
"""have_gpu.py - is a CUDA GPU usable here?  Loads libcuda.so.1 (the driver), calls cuInit
and cuDeviceGetCount.  Exit 0 and print "N device(s)" when one is; else exit 77 and print
why (no driver, cuInit failed with CUresult N, no device).  Used by the tests/gpu scripts
to skip cheaply before building or running anything."""
import ctypes
import sys


def main():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print("no NVIDIA driver found (libcuda.so.1: %s)" % e)
        return 77
    r = cuda.cuInit(0)
    if r != 0:
        print("cuInit failed with CUresult %d" % r)
        return 77
    n = ctypes.c_int(0)
    r = cuda.cuDeviceGetCount(ctypes.byref(n))
    if r != 0 or n.value == 0:
        print("no CUDA device (cuDeviceGetCount: CUresult %d, %d devices)" % (r, n.value))
        return 77
    print("%d device(s)" % n.value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
