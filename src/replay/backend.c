/*
 * replay/backend.c - the table of backends, looked up by name.
 */
#include <string.h>

#include "replay/backend.h"

static const struct mp_backend_ops *const backends[] = {
        &mp_backend_sim,
        &mp_backend_host,
        &mp_backend_cuda,
};

const struct mp_backend_ops *mp_backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}
