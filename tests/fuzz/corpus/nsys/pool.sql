INSERT INTO StringIds VALUES (1, 'cudaMallocAsync_v11020'), (2, 'cudaFreeAsync_v11020'),
	(3, 'cudaMalloc_v3020');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,
		nameId, returnValue) VALUES
	(95, 99, 0, (7 << 24) | 8, 1, 1, 0),
	(195, 199, 0, (7 << 24) | 8, 2, 1, 0),
	(295, 299, 0, (7 << 24) | 8, 3, 1, 0),
	(395, 399, 0, (7 << 24) | 8, 4, 2, 0),
	(495, 499, 0, (7 << 24) | 8, 5, 2, 0),
	(595, 599, 0, (7 << 24) | 8, 6, 2, 0),
	(645, 649, 0, (7 << 24) | 8, 7, 3, 0);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType, correlationId, streamId,
		localMemoryPoolAddress, localMemoryPoolReleaseThreshold, localMemoryPoolSize,
		localMemoryPoolUtilizedSize) VALUES
	(100, 7 << 24, 0, 1, 0x7f1000000000, 0, 1048576, 2, 0, 1, 13,
		0x7f1000000000, 0, 2097152, 1048576),
	(200, 7 << 24, 0, 1, 0x7f1000100000, 0, 1048576, 2, 0, 2, 13,
		0x7f1000000000, 0, 2097152, 2097152),
	(300, 7 << 24, 0, 1, 0x7f1000200000, 0, 2097152, 2, 0, 3, 13,
		0x7f1000000000, 0, 4194304, 4194304),
	(400, 7 << 24, 0, 1, 0x7f1000000000, 0, 1048576, 2, 1, 4, 13,
		0x7f1000000000, 0, 4194304, 3145728),
	(500, 7 << 24, 0, 1, 0x7f1000100000, 0, 1048576, 2, 1, 5, 13,
		0x7f1000000000, 0, 4194304, 2097152),
	(600, 7 << 24, 0, 1, 0x7f1000200000, 0, 2097152, 2, 1, 6, 13,
		0x7f1000000000, 0, 1048576, 0),
	(650, 7 << 24, 0, 1, 0x7e0000000000, 0, 65536, 2, 0, 7, 0, NULL, NULL, NULL, NULL),
	(660, 7 << 24, 0, 1, 0x7e0000100000, 0, 65536, 2, 0, NULL, 0, 0, 0, 0, 0);
