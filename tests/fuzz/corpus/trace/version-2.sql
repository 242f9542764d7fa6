ALTER TABLE events DROP COLUMN duration_ns; ALTER TABLE devices DROP COLUMN numa_node; DROP TABLE host_buffer_nodes; DROP TABLE host_buffers; PRAGMA user_version=2;
