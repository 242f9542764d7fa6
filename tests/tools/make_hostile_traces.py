#!/usr/bin/env python3
"""make_hostile_traces.py - hostile trace databases for the tests of issue 23
(tests/cli/trace-hostile.sh): each is a copy of a good trace changed so that
opening it would run SQL of its own, or whose schema is not memprof's, or
whose stack chain is crafted.

usage: make_hostile_traces.py GOOD.db OUTDIR [NAME...]
       make_hostile_traces.py --stacks chain|comb N GOOD.db OUT.db

The first writes OUTDIR/NAME.db for every case (or the NAMEs given) and
prints, one per line, "NAME<TAB>TEXT": TEXT is what memprof's refusal must
name.  Cases whose SQLite module is missing here (fts5) are left out.

The second writes a valid trace whose N allocations each have a stack of
its own: a chain (stack k is stack k - 1 plus one frame, so depths 1 to N)
or a comb (the chain, and beside each of its nodes a leaf of one more
frame).  Read naively, such stacks take memory and time quadratic in N.
"""
import os
import shutil
import sqlite3
import sys

# The events table of schema v3 with one column's type changed (size TEXT).
EVENTS_SIZE_TEXT = (
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, ts_ns INTEGER NOT NULL,"
    " op INTEGER NOT NULL, alloc_id INTEGER NOT NULL, size TEXT NOT NULL,"
    " requested INTEGER NOT NULL, address INTEGER NOT NULL, device INTEGER NOT NULL,"
    " stream INTEGER NOT NULL, process INTEGER NOT NULL, phase INTEGER, stack INTEGER,"
    " api INTEGER, device_free INTEGER, thread INTEGER, duration_ns INTEGER)")

# Each case: name -> (SQL run on the copy, the text the refusal names).
CASES = {
    # a view that recurses forever stands in for a table every command reads
    "view-events": ("DROP TABLE events;"
                    "CREATE VIEW events AS WITH RECURSIVE r(seq, ts_ns, op, alloc_id, size,"
                    " requested, address, device, stream, process, phase, stack, api,"
                    " device_free, thread, duration_ns) AS (SELECT 1,1,1,1,1,1,1,0,0,1,"
                    "NULL,NULL,NULL,NULL,NULL,NULL UNION ALL SELECT seq + 1, ts_ns, op,"
                    " alloc_id, size, requested, address, device, stream, process, phase,"
                    " stack, api, device_free, thread, duration_ns FROM r) SELECT * FROM r;",
                    "a view 'events'"),
    "view-meta": ("ALTER TABLE meta RENAME TO meta_real;"
                  "CREATE VIEW meta AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL"
                  " SELECT n + 1 FROM r) SELECT 'format' AS key, 'memprof-trace' AS value"
                  " FROM r;",
                  "a view 'meta'"),
    # triggers that fire when replay saves its results
    "trigger-delete": ("CREATE TRIGGER wipe AFTER INSERT ON replay_runs"
                       " BEGIN DELETE FROM events; END;", "a trigger 'wipe'"),
    "trigger-grow": ("CREATE TABLE replay_pad(x);"
                     "CREATE TRIGGER grow AFTER INSERT ON replay_metrics BEGIN"
                     " INSERT INTO replay_pad WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL"
                     " SELECT n + 1 FROM r LIMIT 100000) SELECT zeroblob(65536) FROM r;"
                     " END;", "a trigger 'grow'"),
    "trigger-only": ("CREATE TRIGGER t0 BEFORE DELETE ON events BEGIN SELECT 1; END;",
                     "a trigger 't0'"),
    "virtual-table": ("CREATE VIRTUAL TABLE notes USING fts5(text);", "a virtual table 'notes'"),
    "extra-table": ("CREATE TABLE notes(text);", "a table 'notes'"),
    "extra-index": ("CREATE INDEX events_ts ON events(ts_ns);", "an index 'events_ts'"),
    "missing-table": ("DROP TABLE host_buffer_nodes;", "table 'host_buffer_nodes' is missing"),
    "missing-column": ("ALTER TABLE events DROP COLUMN duration_ns;",
                       "table 'events' has no column 'duration_ns'"),
    "extra-column": ("ALTER TABLE events ADD COLUMN note TEXT;",
                     "table 'events' has a column 'note'"),
    "generated-column": ("ALTER TABLE frames ADD COLUMN g AS (name || file) VIRTUAL;",
                         "table 'frames' has a column 'g'"),
    "column-type": ("ALTER TABLE events RENAME TO events_old;" + EVENTS_SIZE_TEXT + ";"
                    "INSERT INTO events SELECT * FROM events_old; DROP TABLE events_old;",
                    "column 5 of table 'events'"),
}


def make(good, outdir, name):
    sql, text = CASES[name]
    path = os.path.join(outdir, name + ".db")
    shutil.copyfile(good, path)
    db = sqlite3.connect(path)
    try:
        db.executescript(sql)
        db.commit()
    except sqlite3.OperationalError as e:
        db.close()
        os.unlink(path)
        if "no such module" in str(e):
            return None
        raise
    db.close()
    return text


def make_stacks(shape, n, good, out):
    shutil.copyfile(good, out)
    db = sqlite3.connect(out)
    db.executescript("DELETE FROM events; DELETE FROM stacks; DELETE FROM frames;"
                     "INSERT INTO frames VALUES(1, 'deep', 'chain.py', 1);"
                     "INSERT INTO frames VALUES(2, 'leaf', 'chain.py', 2);")
    stacks, events, chain = [], [], 0
    for k in range(1, n + 1):
        node = len(stacks) + 1
        stacks.append((node, chain, 1))
        chain = node
        if shape == "comb":
            stacks.append((node + 1, node, 2))
    for seq, (node, _, _) in enumerate(stacks, 1):
        events.append((seq, 1000 + seq, 1, seq, 256, 256, 4096 * seq, 0, 0, 1, node))
    db.executemany("INSERT INTO stacks VALUES(?, ?, ?)", stacks)
    db.executemany("INSERT INTO events(seq, ts_ns, op, alloc_id, size, requested, address,"
                   " device, stream, process, stack) VALUES(?,?,?,?,?,?,?,?,?,?,?)", events)
    db.commit()
    db.execute("VACUUM")
    db.close()


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--stacks":
        make_stacks(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    good, outdir = sys.argv[1], sys.argv[2]
    for name in sys.argv[3:] or sorted(CASES):
        text = make(good, outdir, name)
        if text is not None:
            print(name + "\t" + text)


if __name__ == "__main__":
    main()
