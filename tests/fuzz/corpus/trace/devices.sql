UPDATE devices SET ordinal = -1; INSERT INTO devices(process, ordinal) VALUES(1, 2147483647);
