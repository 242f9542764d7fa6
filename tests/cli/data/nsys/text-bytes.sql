-- text-bytes.sql - row 1 has text where bytes needs an integer (SQLite keeps
-- 'lots' as text even in an INTEGER column).
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType) VALUES
	(10, 1 << 24, 0, 1, 0x1000, 0, 'lots', 2, 0);
