-- null-device.sql - a table without nsys's NOT NULL constraints, whose row 3
-- has no deviceId.
DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER,
	contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER,
	memoryOperationType INTEGER);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES
	(10, 1 << 24, 0, 1, 0x1000, 0, 64, 2, 0),
	(20, 1 << 24, 0, 1, 0x1000, 0, 64, 2, 1),
	(30, 1 << 24, NULL, 1, 0x2000, 0, 64, 2, 0);
