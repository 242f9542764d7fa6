/*
 * import/event_pipe.c - a ring of event chunks between a producer thread
 * and the writer's thread: the producer fills one chunk while the writer
 * empties the ones before it.  One mutex, two condition variables; the
 * writer and the store are only ever used on the caller's thread.
 */
#include "import/event_pipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_EVENTS 4096
#define N_CHUNKS     4

struct mp_event_pipe {
	pthread_mutex_t mu;
	pthread_cond_t filled;  /* a chunk was queued, or the producer is done */
	pthread_cond_t emptied; /* a chunk was written, or writing failed */
	struct memprof_event *chunks[N_CHUNKS];
	int n[N_CHUNKS]; /* events in each queued chunk */
	int tail;        /* the oldest queued chunk */
	int n_queued;    /* queued chunks, from tail on; the one being written counts */
	int done;        /* the producer has returned */
	int stop;        /* writing failed: the producer should stop */
	/* the producer's own: the chunk it fills */
	int fill, n_fill;
	int (*produce)(void *ctx, struct mp_event_pipe *p);
	void *ctx;
	int rc; /* produce's result */
};

/* Queue the chunk being filled; wait for a free one. */
static int hand_over(struct mp_event_pipe *p)
{
	int stop;

	pthread_mutex_lock(&p->mu);
	p->n[p->fill] = p->n_fill;
	p->n_queued++;
	pthread_cond_signal(&p->filled);
	while (p->n_queued == N_CHUNKS && !p->stop)
		pthread_cond_wait(&p->emptied, &p->mu);
	stop = p->stop;
	p->fill = (p->tail + p->n_queued) % N_CHUNKS;
	pthread_mutex_unlock(&p->mu);
	p->n_fill = 0;
	return stop ? MP_ESTOP : 0;
}

int mp_event_pipe_push(struct mp_event_pipe *p, const struct memprof_event *ev)
{
	p->chunks[p->fill][p->n_fill++] = *ev;
	return p->n_fill == CHUNK_EVENTS ? hand_over(p) : 0;
}

static void *producer(void *arg)
{
	struct mp_event_pipe *p = arg;
	int rc = p->produce(p->ctx, p);

	pthread_mutex_lock(&p->mu);
	if (p->n_fill && !p->stop) { /* the last, partly filled chunk */
		p->n[p->fill] = p->n_fill;
		p->n_queued++;
	}
	p->rc = rc;
	p->done = 1;
	pthread_cond_signal(&p->filled);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Write the queued chunks as they come; 0, or the writer's error. */
static int consume(struct mp_event_pipe *p, struct mp_writer *w, struct mp_error *err)
{
	int i, k, n, rc = 0;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->n_queued == 0 && !p->done)
			pthread_cond_wait(&p->filled, &p->mu);
		if (p->n_queued == 0) { /* and done */
			pthread_mutex_unlock(&p->mu);
			return 0;
		}
		i = p->tail;
		n = p->n[i];
		pthread_mutex_unlock(&p->mu);
		for (k = 0; k < n && rc == 0; k++)
			if (mp_writer_event(w, &p->chunks[i][k]) < 0)
				rc = mp_err_copy(err, mp_writer_error(w));
		pthread_mutex_lock(&p->mu);
		p->tail = (p->tail + 1) % N_CHUNKS;
		p->n_queued--;
		p->stop = rc < 0;
		pthread_cond_signal(&p->emptied);
		pthread_mutex_unlock(&p->mu);
		if (rc < 0)
			return rc;
	}
}

static void pipe_free(struct mp_event_pipe *p)
{
	int i;

	for (i = 0; i < N_CHUNKS; i++)
		free(p->chunks[i]);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->filled);
	pthread_cond_destroy(&p->emptied);
	free(p);
}

int mp_event_pipe_run(struct mp_writer *w, int (*produce)(void *ctx, struct mp_event_pipe *p),
                      void *ctx, struct mp_error *err)
{
	struct mp_event_pipe *p = calloc(1, sizeof(*p));
	pthread_t thread;
	int i, rc, sys;

	if (!p)
		return mp_err(err, MP_ENOMEM, "out of memory");
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->filled, NULL);
	pthread_cond_init(&p->emptied, NULL);
	for (i = 0; i < N_CHUNKS; i++)
		if (!(p->chunks[i] = malloc(CHUNK_EVENTS * sizeof(*p->chunks[i])))) {
			pipe_free(p);
			return mp_err(err, MP_ENOMEM, "out of memory");
		}
	p->produce = produce;
	p->ctx = ctx;
	sys = pthread_create(&thread, NULL, producer, p);
	if (sys != 0) {
		pipe_free(p);
		return mp_err(err, MP_ENOMEM, "cannot start a thread to read the input: %s",
		              strerror(sys));
	}
	rc = consume(p, w, err);
	pthread_join(thread, NULL);
	if (rc == 0)
		rc = p->rc;
	pipe_free(p);
	return rc;
}
