-- multi.sql - two processes: pid 100 (globalPid 100 << 24) on devices 0 and 1,
-- and pid 200 whose globalPid also has hardware id 1 in bits 56..63.  Both
-- allocate at 0x1000 on device 0; both processes use correlationId 1, for
-- different runtime calls.
INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cuMemAlloc_v2'),
	(3, 'cudaFree_v3020'), (4, 'cuMemFree_v2');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
		nameId, returnValue) VALUES
	(5, 9, 0, (100 << 24) | 101, 1, 1, 0),
	(15, 19, 1, (1 << 56) | (200 << 24) | 201, 1, 2, 0),
	(25, 29, 0, (100 << 24) | 102, 2, 1, 0),
	(35, 39, 1, (1 << 56) | (200 << 24) | 201, 2, 4, 0),
	(45, 49, 0, (100 << 24) | 102, 3, 3, 0),
	(55, 59, 0, (100 << 24) | 101, 4, 3, 0);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType, correlationId, streamId) VALUES
	(10, 100 << 24, 0, 1, 0x1000, 0, 100, 2, 0, 1, 0),
	(20, (1 << 56) | (200 << 24), 0, 1, 0x1000, 0, 200, 2, 0, 1, 0),
	(30, 100 << 24, 1, 2, 0x2000, 0, 300, 2, 0, 2, 0),
	(40, (1 << 56) | (200 << 24), 0, 1, 0x1000, 0, 0, 2, 1, 2, 0),
	(50, 100 << 24, 1, 2, 0x2000, 0, 300, 2, 1, 3, 0),
	(60, 100 << 24, 0, 1, 0x1000, 0, 100, 2, 1, 4, 0);
