/* The locks of the project: two kinds, no more.
 *
 *  - fdv_lock_t (prov_verbs/include/fdv/fdv_lock.h, installed): the verbs
 *    data path's spinlock, inline in the application; it folds to nothing
 *    unless the library was configured for FI_THREAD_SAFE. Short critical
 *    sections only (a queue's head and tail).
 *  - fd_mutex_t (here, not installed): everything else the layers guard
 *    (an rstream endpoint, an RDM domain, ...). One atomic instruction
 *    each way when nobody else holds it, and a private futex to sleep on
 *    when somebody does, so a waiter behind a long operation does not
 *    burn the holder's time slice. A pthread mutex costs ~75 user-space
 *    instructions a pair here (glibc checks kind and robustness on both).
 *
 * state: 0 free, 1 held, 2 held and a thread may be asleep on it (the
 * holder then wakes one on unlock). Acquire on taking it and release on
 * giving it back order the state it guards. Not recursive. */
#ifndef FD_LOCK_H
#define FD_LOCK_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	int state;
} fd_mutex_t;

/* out of line (src/fd_lock.c): the contended halves */
void fd_mutex_wait(fd_mutex_t *m, int seen);
void fd_mutex_wake(fd_mutex_t *m);

static inline void fd_mutex_init(fd_mutex_t *m)
{
	__atomic_store_n(&m->state, 0, __ATOMIC_RELAXED);
}

static inline void fd_mutex_destroy(fd_mutex_t *m)
{
	(void)m;
}

static inline void fd_mutex_lock(fd_mutex_t *m)
{
	int seen = 0;

	if (__builtin_expect(__atomic_compare_exchange_n(&m->state, &seen, 1, false,
							 __ATOMIC_ACQUIRE,
							 __ATOMIC_RELAXED), 1))
		return;
	fd_mutex_wait(m, seen);
}

static inline void fd_mutex_unlock(fd_mutex_t *m)
{
	/* 1 -> 0: nobody sleeps; from 2 somebody may */
	if (__builtin_expect(__atomic_fetch_sub(&m->state, 1, __ATOMIC_RELEASE) != 1, 0))
		fd_mutex_wake(m);
}

#ifdef __cplusplus
}
#endif

#endif
