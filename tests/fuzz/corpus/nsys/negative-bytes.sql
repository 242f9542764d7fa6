INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType) VALUES
	(10, 1 << 24, 0, 1, 0x1000, 0, 64, 2, 0),
	(20, 1 << 24, 0, 1, 0x2000, 0, -5, 2, 0);
