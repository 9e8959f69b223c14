/* The rstream endpoint's lock. Every fi_send and fi_recv on a stream takes
 * it, so what it costs when nobody else holds it is data-path cost: a
 * pthread mutex lock/unlock pair ran ~75 user-space instructions per call
 * here (glibc checks the mutex kind and robustness on both), a fifth of a
 * 64 B round trip's work. This lock is one atomic instruction each way
 * when uncontended and sleeps in the kernel (a private futex) when it is
 * not, so a thread waiting behind a long operation does not spin.
 *
 * state: 0 free, 1 held, 2 held and a thread may be asleep on it (the
 * holder then wakes one on unlock). Acquire on taking it and release on
 * giving it back order the endpoint state it guards. */
#ifndef FDR_LOCK_H
#define FDR_LOCK_H

#include <stdbool.h>

#include <fdv/fdv_compiler.h>

typedef struct {
	int state;
} fdr_lock_t;

/* out of line (fdr_lock.c): the contended halves */
void fdr_lock_wait(fdr_lock_t *l, int seen);
void fdr_lock_wake(fdr_lock_t *l);

static inline void fdr_lock_init(fdr_lock_t *l)
{
	__atomic_store_n(&l->state, 0, __ATOMIC_RELAXED);
}

static inline void fdr_lock(fdr_lock_t *l)
{
	int seen = 0;

	if (fdv_likely(__atomic_compare_exchange_n(&l->state, &seen, 1, false,
						   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return;
	fdr_lock_wait(l, seen);
}

static inline void fdr_unlock(fdr_lock_t *l)
{
	/* 1 -> 0: nobody sleeps; from 2 somebody may */
	if (fdv_unlikely(__atomic_fetch_sub(&l->state, 1, __ATOMIC_RELEASE) != 1))
		fdr_lock_wake(l);
}

#endif /* FDR_LOCK_H */
