-- pairing.sql - a deallocation whose allocation is not in the report, an
-- allocation at an address still live, kinds memprof does not know (7 is
-- Unknown, 42 is in no enum), and a runtime table that repeats
-- correlationId 2 (the row is imported once, with the first call).
INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cudaFree_v3020');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
		nameId, returnValue) VALUES
	(5, 9, 0, (9 << 24) | 9, 1, 2, 0),
	(15, 19, 0, (9 << 24) | 9, 2, 1, 0),
	(16, 19, 0, (9 << 24) | 10, 2, 2, 0);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType, correlationId) VALUES
	(10, 9 << 24, 0, 1, 0x5000, 0, 64, 2, 1, 1),
	(20, 9 << 24, 0, 1, 0x6000, 0, 128, 2, 0, 2),
	(30, 9 << 24, 0, 1, 0x6000, 0, 256, 3, 0, NULL),
	(40, 9 << 24, 0, 1, 0x6000, 0, 0, 3, 1, NULL),
	(50, 9 << 24, 0, 1, 0x7000, 0, 8, 7, 0, NULL),
	(60, 9 << 24, 0, 1, 0x8000, 0, 8, 42, 0, NULL);
