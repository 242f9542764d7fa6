CREATE INDEX i ON events(ts_ns);
