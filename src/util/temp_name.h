/*
 * util/temp_name.h - temporary file names for outputs written whole or not
 * at all: PATH.tmp-HOST-PID-XXXXXX (for mkstemp), so that a temporary left by
 * a killed memprof (SIGKILL cannot be caught) is known as such, and swept.
 */
#ifndef MP_UTIL_TEMP_NAME_H
#define MP_UTIL_TEMP_NAME_H

/* "PATH.tmp-HOST-PID-XXXXXX", malloc'd, for mkstemp; NULL when out of memory. */
char *mp_temp_template(const char *path);

/*
 * Remove PATH's temporaries that this host's processes left behind and that
 * are gone (no such process): the leftovers of a memprof killed while writing
 * PATH.  Another host's, and a running process's, are left alone.  Returns how
 * many were removed.
 */
int mp_temp_sweep(const char *path);

#endif
