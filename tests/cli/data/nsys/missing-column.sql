-- missing-column.sql - a memory events table without its bytes column.
DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
	deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL,
	memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL);
