#!/usr/bin/env python3
"""make_hostile_text.py OUT.csv - a memprof CSV whose strings are hostile
text (issue 23 items 6 and 7): a phase, frame names, files and an API name
holding bytes that are not UTF-8 (a lone 0xff, a cut sequence, an encoded
surrogate as Python's surrogateescape leaves it in paths, 0xfe), terminal
escapes (ESC[2J clears the screen, OSC 0 sets the window title, OSC 8 makes
a link), CR, BEL, DEL and a GitHub mention '@'.  One allocation is live at
the end (a leak), so every report lists its stack.
"""
import sys

PHASE = b"ph\xff\xc3(\x1b[2J\x1b]0;pwned\x07\rend @team"
FUNC = b"f\xed\xa0\x80x\x1b]8;;http://e.example\x1b\\click\x1b]8;;\x1b\\\x7f\xc2\x9b @team"
FILE = b"mod\xfe\x1b[31m.py"


def frame_text(func, file, line):
    """One frame of the CSV stack column, escaped as memprof reads it."""
    def esc(b):
        for c in (b"\\", b";", b"@", b":"):
            b = b.replace(c, b"\\" + c)
        return b
    return esc(func) + b"@" + esc(file) + b":" + str(line).encode()


def main():
    stack = b"main@train.py:1;" + frame_text(FUNC, FILE, 3)
    pid = b"4242"
    rows = [b"ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,device_free,"
            b"thread,stack"]
    rows.append(b"1000,phase_begin,0,0,0,0x0,0,0," + pid + b"," + PHASE + b",,,,")
    rows.append(b"1100,alloc,1,4096,4096,0x7f0000000000,0,0," + pid + b"," + PHASE +
                b",cudaMalloc,,1," + stack)
    rows.append(b"1200,alloc,2,8192,8192,0x7f0000010000,0,0," + pid + b"," + PHASE +
                b",cudaMalloc,,1," + frame_text(FUNC, FILE, 4))
    rows.append(b"1300,free,1,4096,4096,0x7f0000000000,0,0," + pid + b"," + PHASE +
                b",cudaFree,,1,")
    rows.append(b"1400,phase_end,0,0,0,0x0,0,0," + pid + b"," + PHASE + b",,,,")
    with open(sys.argv[1], "wb") as f:
        f.write(b"\n".join(rows) + b"\n")


main()
