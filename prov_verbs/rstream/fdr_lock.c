/* The contended halves of the rstream endpoint lock (fdr_lock.h). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdr_lock.h"

static void fdr_futex(int *addr, int op, int val)
{
	/* EAGAIN (the word changed before we slept) and EINTR just send
	 * the caller round its loop again */
	(void)syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void fdr_lock_wait(fdr_lock_t *l, int seen)
{
	/* Mark the lock contended (2) and sleep while it stays held; a
	 * thread that gets it this way leaves it at 2, so its unlock wakes
	 * the next sleeper, if any (at worst one wake-up too many). */
	if (seen != 2)
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	while (seen != 0) {
		fdr_futex(&l->state, FUTEX_WAIT, 2);
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	}
}

void fdr_lock_wake(fdr_lock_t *l)
{
	__atomic_store_n(&l->state, 0, __ATOMIC_RELEASE);
	fdr_futex(&l->state, FUTEX_WAKE, 1);
}
