/*
 * replay/driver_model.c - the modelled reservation granularity of the CUDA
 * driver (replay/driver_model.h): large requests in whole 2 MiB pages,
 * small ones rounded to 512 B and packed into shared 2 MiB pages.  Counts
 * bytes only; the engine applies it to every backend's reservations.
 */
#include "replay/driver_model.h"

static uint64_t round_up(uint64_t n, uint64_t a)
{
	return n > UINT64_MAX - (a - 1) ? UINT64_MAX / a * a : (n + a - 1) / a * a;
}

static int is_small(uint64_t n)
{
	return n < MP_DRIVER_PAGE_BYTES;
}

uint64_t mp_driver_granted(uint64_t n)
{
	return round_up(n ? n : 1, is_small(n) ? MP_DRIVER_ALIGN_BYTES : MP_DRIVER_PAGE_BYTES);
}

/* The shared pages that hold small_bytes. */
static uint64_t pages(uint64_t small_bytes)
{
	return round_up(small_bytes, MP_DRIVER_PAGE_BYTES);
}

uint64_t mp_driver_growth(const struct mp_driver_model *m, uint64_t n)
{
	if (!is_small(n))
		return mp_driver_granted(n);
	return pages(m->small_bytes + mp_driver_granted(n)) - pages(m->small_bytes);
}

uint64_t mp_driver_add(struct mp_driver_model *m, uint64_t n)
{
	uint64_t grow = mp_driver_growth(m, n);

	if (is_small(n))
		m->small_bytes += mp_driver_granted(n);
	return grow;
}

uint64_t mp_driver_remove(struct mp_driver_model *m, uint64_t n)
{
	uint64_t before, g = mp_driver_granted(n);

	if (!is_small(n))
		return g;
	before = pages(m->small_bytes);
	m->small_bytes -= g < m->small_bytes ? g : m->small_bytes;
	return before - pages(m->small_bytes);
}
