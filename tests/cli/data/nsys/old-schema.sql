-- old-schema.sql - an export with only the columns memprof needs (no
-- streamId, pool or correlationId columns) and no enum tables: Nsight's own
-- numbering applies (2 Device, 3 Array, 1 Pinned, 6 Managed Static).
DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
DROP TABLE ENUM_CUDA_MEM_KIND;
DROP TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER;
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
	deviceId INTEGER NOT NULL, address INTEGER NOT NULL, bytes INTEGER NOT NULL,
	memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES
	(10, 3 << 24, 2, 0xa000, 1000, 2, 0),
	(20, 3 << 24, 2, 0xb000, 3000, 3, 0),
	(30, 3 << 24, 2, 0xc000, 5, 1, 0),
	(40, 3 << 24, 2, 0xa000, 0, 2, 1),
	(50, 3 << 24, 2, 0xd000, 16, 6, 0);
