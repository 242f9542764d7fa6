-- basic.sql - one process (pid 4242) on device 0: cudaMalloc and cudaFree on
-- two threads, a free recorded with 0 bytes, pinned host memory (skipped),
-- managed memory and a device-static variable (no runtime call).  Rows are
-- inserted out of time order: the importer orders them by start.
INSERT INTO PROCESSES VALUES (4242 << 24, 4242, 'train');
INSERT INTO StringIds VALUES
	(1, 'cudaMalloc_v3020'),
	(2, 'cudaFree_v3020'),
	(3, 'cudaMallocManaged_v6000'),
	(4, 'cudaMallocHost_v3020'),
	(5, 'cudaFreeHost_v3020');
-- start, end (the call's duration is end - start: 9, 40, 2, 5, 1000 ns for the
-- device calls), eventClass, globalTid (pid << 24 | tid), correlationId, nameId, returnValue
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
		nameId, returnValue) VALUES
	(90, 99, 0, (4242 << 24) | 4250, 11, 1, 0),
	(190, 230, 0, (4242 << 24) | 4251, 12, 1, 0),
	(290, 292, 0, (4242 << 24) | 4250, 13, 2, 0),
	(390, 399, 0, (4242 << 24) | 4250, 14, 4, 0),
	(490, 495, 0, (4242 << 24) | 4251, 15, 3, 0),
	(690, 1690, 0, (4242 << 24) | 4251, 16, 2, 0),
	(790, 799, 0, (4242 << 24) | 4250, 17, 5, 0);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType, name, correlationId, streamId) VALUES
	(100, 4242 << 24, 0, 1, 0x7f0000000000, 0, 1024, 2, 0, NULL, 11, 7),
	(200, 4242 << 24, 0, 1, 0x7f0000100000, 0, 4096, 2, 0, NULL, 12, 7),
	(300, 4242 << 24, 0, 1, 0x7f0000000000, 0, 0, 2, 1, NULL, 13, 7),
	(400, 4242 << 24, 0, 1, 0x600000, 0, 2048, 1, 0, NULL, 14, NULL),
	(500, 4242 << 24, 0, 1, 0x7f0000200000, 0, 512, 4, 0, NULL, 15, NULL),
	(700, 4242 << 24, 0, 1, 0x7f0000100000, 0, 4096, 2, 1, NULL, 16, 7),
	(600, 4242 << 24, 0, 1, 0x7f0000300000, 0, 256, 5, 0, 'g_table', NULL, NULL),
	(800, 4242 << 24, 0, 1, 0x600000, 0, 2048, 1, 1, NULL, 17, NULL);
