-- no-memory.sql - a report recorded without --cuda-memory-usage=true: nsys
-- creates CUDA_GPU_MEMORY_USAGE_EVENTS only when there are memory events.
DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
