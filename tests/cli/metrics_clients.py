#!/usr/bin/env python3
"""metrics_clients.py PORT PID STATE_DIR - hostile clients of 'memprof record
--metrics' (issue 23 item 2), used by tests/cli/metrics-clients.sh.

Holds, on threads, a client that trickles its request one byte at a time, one
that sends a whole request and then trickles bytes after the answer without
reading it, and 12 that connect and send nothing; each reconnects when closed,
so the pressure lasts until STATE_DIR/stop exists.  Meanwhile ordinary
scrapes must be answered (within a socket timeout far above the server's own
deadlines), also after 100 more idle connections, and memprof (PID) must keep
at most 32 client sockets open.  Writes one line per check to stdout ("ok
..." or "FAIL ..."), then STATE_DIR/checked, and keeps the clients going.
"""
import os
import socket
import sys
import threading
import time

PORT, PID, STATE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
SCRAPE_TIMEOUT = 20  # seconds; the server's deadline is 5 s per connection
MAX_CONNS = 32
failed = 0


def stopping():
    return os.path.exists(os.path.join(STATE, "stop"))


def connect():
    s = socket.socket()
    s.settimeout(5)
    s.connect(("127.0.0.1", PORT))
    return s


def hold(first, each, interval):
    """Reconnect forever: send first, then each every interval, never read."""
    while not stopping():
        try:
            s = connect()
            s.sendall(first)
            while not stopping():
                time.sleep(interval)
                if each:
                    s.sendall(each)
                else:  # idle: only notice that the server closed
                    s.setblocking(False)
                    try:
                        if s.recv(1) == b"":
                            break
                    except BlockingIOError:
                        pass
        except OSError:
            time.sleep(0.05)


def check(ok, what):
    global failed
    print(("ok " if ok else "FAIL ") + what, flush=True)
    failed += 0 if ok else 1


def scrape():
    """One ordinary scrape; returns the status line and body, or the error."""
    try:
        s = socket.create_connection(("127.0.0.1", PORT), timeout=SCRAPE_TIMEOUT)
        s.sendall(REQUEST)
        data = b""
        while True:
            k = s.recv(65536)
            if not k:
                break
            data += k
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        return head.split(b"\r\n")[0].decode(), body.decode()
    except OSError as e:
        return "error: %s" % e, ""


def client_sockets():
    n = 0
    for fd in os.listdir("/proc/%d/fd" % PID):
        try:
            if os.readlink("/proc/%d/fd/%s" % (PID, fd)).startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


threads = [threading.Thread(target=hold, args=(b"G", b"E", 0.2), daemon=True),
           threading.Thread(target=hold, args=(REQUEST, b"x", 0.1), daemon=True)]
threads += [threading.Thread(target=hold, args=(b"", None, 0.1), daemon=True)
            for _ in range(12)]
for t in threads:
    t.start()
time.sleep(1)  # every hostile client connected, the trickler answered

for i in range(3):
    status, body = scrape()
    check(status == "HTTP/1.1 200 OK" and "memprof_processes" in body,
          "scrape %d beside trickling and idle clients: %s" % (i + 1, status))

idle = []
for _ in range(100):
    try:
        idle.append(connect())
    except OSError:
        break
time.sleep(0.5)
status, body = scrape()
check(status == "HTTP/1.1 200 OK" and "memprof_processes" in body,
      "scrape beside %d more idle connections: %s" % (len(idle), status))
n = client_sockets()
check(n <= MAX_CONNS + 1, "memprof holds %d sockets (at most %d clients and the listener)"
      % (n, MAX_CONNS))
open(os.path.join(STATE, "checked"), "w").close()
while not stopping():
    time.sleep(0.1)
sys.exit(1 if failed else 0)
