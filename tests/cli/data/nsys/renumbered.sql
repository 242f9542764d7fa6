-- renumbered.sql - enum tables that number kinds and operations unlike
-- Nsight's usual values: the export's own tables decide.  Here 10 is Device,
-- 11 Pinned, 2 Managed; 5 is Allocation and 6 Deallocation.
DELETE FROM ENUM_CUDA_MEM_KIND;
DELETE FROM ENUM_CUDA_DEV_MEM_EVENT_OPER;
INSERT INTO ENUM_CUDA_MEM_KIND VALUES
	(10, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
	(11, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
	(2, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed');
INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES
	(5, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION', 'Allocation'),
	(6, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation');
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc,
		bytes, memKind, memoryOperationType) VALUES
	(10, 5 << 24, 0, 1, 0x1000, 0, 100, 10, 5),
	(20, 5 << 24, 0, 1, 0x2000, 0, 200, 2, 5),
	(30, 5 << 24, 0, 1, 0x3000, 0, 300, 11, 5),
	(40, 5 << 24, 0, 1, 0x1000, 0, 100, 10, 6);
