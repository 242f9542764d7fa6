/*
 * sys/nvml.h - NVML (the NVIDIA management library) loaded at run time, for
 * 'memprof watch': device names, device memory, and the GPU memory NVML
 * counts for a process.  No nvml.h exists here: the few entry points are
 * declared by hand in nvml.c.  Not thread-safe; one handle per command.
 */
#ifndef MP_SYS_NVML_H
#define MP_SYS_NVML_H

#include <stddef.h>
#include <stdint.h>

#define MP_NVML_UNKNOWN UINT64_MAX /* NVML has no figure (NVML_VALUE_NOT_AVAILABLE) */

struct mp_nvml;

/*
 * dlopen NVML ($MEMPROF_LIBNVML, else libnvidia-ml.so.1), resolve its entry
 * points and initialise it.  Returns 0, or -1 with why set to
 * "cannot load NVML (LIB: REASON)" or "NVML did not start (CALL: REASON)".
 */
int mp_nvml_open(struct mp_nvml **out, char *why, size_t n);
/* nvmlShutdown and free (the library stays loaded: unloading it is not safe). */
void mp_nvml_close(struct mp_nvml *nv);

unsigned mp_nvml_n_devices(const struct mp_nvml *nv);
/* "NAME" of device i, or "?" when NVML did not give it. */
const char *mp_nvml_device_name(const struct mp_nvml *nv, unsigned i);

/* Used and total bytes of device i.  Returns 0, or -1 with why. */
int mp_nvml_memory(struct mp_nvml *nv, unsigned i, uint64_t *used, uint64_t *total, char *why,
                   size_t n);
/*
 * GPU memory NVML counts on device i for the process listed under any of
 * pids (the same process under several pid namespaces).  Returns 1 with
 * *bytes (MP_NVML_UNKNOWN when NVML has no figure), 0 when none of pids is
 * listed, or -1 with why.
 */
int mp_nvml_process_bytes(struct mp_nvml *nv, unsigned i, const unsigned *pids, size_t n_pids,
                          uint64_t *bytes, char *why, size_t n);

#endif
