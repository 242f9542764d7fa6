/*
 * util/error.h - error codes and the error slot every handle carries.
 *
 * Library layers return 0 or a negative MP_E* code and keep the message in a
 * struct mp_error; they never print or exit.  Messages are lowercase, no final
 * period, subject in single quotes, problem first.
 */
#ifndef MP_UTIL_ERROR_H
#define MP_UTIL_ERROR_H

enum {
	MP_OK = 0,
	MP_EIO = -1,       /* read or write failed */
	MP_EFORMAT = -2,   /* malformed input */
	MP_ENOTTRACE = -3, /* a file that is not a memprof trace */
	MP_ENEWER = -4,    /* written by a newer memprof */
	MP_ENOMEM = -5,
	MP_EFULL = -6,  /* disk or file-size limit full */
	MP_EINVAL = -7, /* bad argument */
	MP_EEXIST = -8, /* output exists */
	MP_ESTOP = -9,  /* a consumer asked to stop early (not a failure) */
};

struct mp_error {
	int code;
	char msg[1024];
};

/* Record code and a printf-style message in e (which may be NULL); returns code. */
int mp_err(struct mp_error *e, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Copy src into dst (both may be the same or NULL); returns src->code. */
int mp_err_copy(struct mp_error *dst, const struct mp_error *src);

void mp_err_clear(struct mp_error *e);

#endif
