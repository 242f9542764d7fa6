ALTER TABLE events DROP COLUMN duration_ns;
