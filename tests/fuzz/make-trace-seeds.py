#!/usr/bin/env python3
"""make-trace-seeds.py - the seeds of fuzz_trace (tests/fuzz/corpus/trace/).

usage: make-trace-seeds.py MEMPROF [OUTDIR]

SQL seeds (*.sql): statements fuzz_trace runs on its base trace, one kind of
mutation each (views, triggers, tables and columns dropped, added or
retyped, odd values in every column, stack chains and loops, versions).
Database seeds (*.db): small traces written by MEMPROF from a CSV, shrunk to
512-byte pages (one of today's schema with replay results, one of schema
v0, and deep.db, whose 200 events fill a table b-tree of interior and leaf
pages for the reader's page decoder), so that byte mutations reach every page.
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SQL = {
    "view-events": "DROP TABLE events; CREATE VIEW events AS WITH RECURSIVE r(seq) AS"
                   " (SELECT 1 UNION ALL SELECT seq + 1 FROM r) SELECT seq, 1 AS ts_ns, 1 AS op,"
                   " seq AS alloc_id, 16 AS size, 16 AS requested, seq AS address, 0 AS device,"
                   " 0 AS stream, 1 AS process, NULL AS phase, NULL AS stack, NULL AS api,"
                   " NULL AS device_free, NULL AS thread, NULL AS duration_ns FROM r;",
    "view-meta": "ALTER TABLE meta RENAME TO m2; CREATE VIEW meta AS SELECT * FROM m2;",
    "trigger": "CREATE TRIGGER t AFTER INSERT ON replay_runs BEGIN DELETE FROM events; END;",
    "extra-table": "CREATE TABLE notes(x); INSERT INTO notes VALUES(1);",
    "extra-index": "CREATE INDEX i ON events(ts_ns);",
    "drop-column": "ALTER TABLE events DROP COLUMN duration_ns;",
    "add-column": "ALTER TABLE frames ADD COLUMN g AS (name || file) VIRTUAL;",
    "drop-table": "DROP TABLE stacks;",
    "version-0": "PRAGMA user_version=0;",
    "version-2": "ALTER TABLE events DROP COLUMN duration_ns; ALTER TABLE devices DROP COLUMN"
                 " numa_node; DROP TABLE host_buffer_nodes; DROP TABLE host_buffers;"
                 " PRAGMA user_version=2;",
    "version-99": "PRAGMA user_version=99;",
    "version-neg": "PRAGMA user_version=-1;",
    "ops": "UPDATE events SET op = 99 WHERE seq = 3;",
    "sizes": "UPDATE events SET size = 72057594037927936, requested = -5 WHERE seq = 4;",
    "times": "UPDATE events SET ts_ns = CASE seq WHEN 1 THEN -9223372036854775808"
             " ELSE 9223372036854775807 - seq END;",
    "types": "UPDATE events SET ts_ns = 'x', address = X'00ff', stream = 1.5e300,"
             " device = 2147483648 WHERE seq = 2;",
    "nulls": "UPDATE events SET process = NULL, phase = NULL, stack = 999 WHERE seq = 5;",
    "seq-order": "UPDATE events SET seq = 100 + seq WHERE seq > 3;",
    "stack-loop": "UPDATE stacks SET parent = id;",
    "stack-chain": "WITH RECURSIVE r(n) AS (SELECT 10 UNION ALL SELECT n + 1 FROM r LIMIT 3000)"
                   " INSERT INTO stacks SELECT n, n - 1, 1 FROM r;"
                   " UPDATE stacks SET parent = 0 WHERE id = 10;"
                   " UPDATE events SET stack = 3009;",
    "stack-missing-frame": "UPDATE stacks SET frame = 12345;",
    "names": "UPDATE phases SET name = X'66770078'; UPDATE frames SET name = char(27) || '[2J';",
    "processes": "UPDATE processes SET pid = -1, rank = 9223372036854775807, host = NULL;",
    "devices": "UPDATE devices SET ordinal = -1; INSERT INTO devices(process, ordinal)"
               " VALUES(1, 2147483647);",
    "metrics": "UPDATE replay_metrics SET value = 1e308; UPDATE replay_runs SET device = -7;",
    "meta": "UPDATE meta SET value = 'other' WHERE key = 'format';",
    "no-meta": "DELETE FROM meta;",
    "host-buffers": "INSERT INTO host_buffers VALUES(1, 1, 0, 4096, 65536, 100, NULL, NULL, 2,"
                    " 11); INSERT INTO host_buffer_nodes VALUES(1, 0, 65536, 16);"
                    " INSERT INTO host_buffer_nodes VALUES(1, 1, -1, 9223372036854775807);",
}


def shrink(path):
    db = sqlite3.connect(path)
    db.executescript("PRAGMA page_size=512; VACUUM;")
    db.close()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    memprof = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "corpus", "trace")
    data = os.path.join(here, "..", "cli", "data")
    os.makedirs(out, exist_ok=True)
    for name, sql in SQL.items():
        with open(os.path.join(out, name + ".sql"), "w") as f:
            f.write(sql + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "small.db")
        subprocess.check_call([memprof, "import", "-q", "-o", db, os.path.join(data, "small.csv")],
                              stderr=subprocess.DEVNULL)
        subprocess.check_call([memprof, "replay", "--pool=direct", "--backend=sim", db],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shrink(db)
        shutil.copyfile(db, os.path.join(out, "small.db"))
        deep_csv = os.path.join(tmp, "deep.csv")
        with open(deep_csv, "w") as f:
            f.write("ts_ns,op,id,size,requested,address,device,stream,pid,phase,api,"
                    "device_free,thread,stack\n")
            for i in range(100):
                f.write("%d,alloc,%d,%d,%d,0x%x,%d,%d,4242,fwd,cudaMalloc,,%d,main@t.py:1\n"
                        % (1000 + 10 * i, i + 1, 512 << (i % 20), 500 << (i % 20),
                           0x7f0000000000 + (i << 24), i % 2, i % 3, 11 + i % 2))
            for i in range(100):
                f.write("%d,free,%d,%d,%d,0x%x,%d,%d,4242,,cudaFree,,%d,\n"
                        % (5000 + 10 * i, i + 1, 512 << (i % 20), 500 << (i % 20),
                           0x7f0000000000 + (i << 24), i % 2, i % 3, 11 + i % 2))
        deep = os.path.join(tmp, "deep.db")
        subprocess.check_call([memprof, "import", "-q", "-o", deep, deep_csv],
                              stderr=subprocess.DEVNULL)
        shrink(deep)
        shutil.copyfile(deep, os.path.join(out, "deep.db"))
        v0 = os.path.join(tmp, "v0.db")
        conn = sqlite3.connect(v0)
        with open(os.path.join(here, "..", "unit", "fixtures", "trace-v0.sql")) as f:
            conn.executescript(f.read())
        conn.close()
        shrink(v0)
        shutil.copyfile(v0, os.path.join(out, "v0.db"))


if __name__ == "__main__":
    main()
