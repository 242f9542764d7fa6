/*
 * util/op_names.h - the names of event operations as they appear in traces,
 * CSV files and reports ("alloc", "phase_begin", ...).
 */
#ifndef MP_UTIL_OP_NAMES_H
#define MP_UTIL_OP_NAMES_H

#include <stddef.h>

/* The op's name, or NULL for an unknown op. */
const char *mp_op_name(int op);
/* The op named by len bytes of name, or 0 when none is. */
int mp_op_from_name(const char *name, size_t len);
/* All names, separated by ", ", for messages. */
const char *mp_op_name_list(void);

#endif
