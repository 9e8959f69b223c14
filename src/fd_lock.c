/* The contended halves of fd_mutex_t (src/include/fd_lock.h). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_lock.h"

static void fd_futex(int *addr, int op, int val)
{
	/* EAGAIN (the word changed before we slept) and EINTR just send
	 * the caller round its loop again */
	(void)syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void fd_mutex_wait(fd_mutex_t *m, int seen)
{
	/* Mark the lock contended (2) and sleep while it stays held; a
	 * thread that gets it this way leaves it at 2, so its unlock wakes
	 * the next sleeper, if any (at worst one wake-up too many). */
	if (seen != 2)
		seen = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	while (seen != 0) {
		fd_futex(&m->state, FUTEX_WAIT, 2);
		seen = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	}
}

void fd_mutex_wake(fd_mutex_t *m)
{
	__atomic_store_n(&m->state, 0, __ATOMIC_RELEASE);
	fd_futex(&m->state, FUTEX_WAKE, 1);
}
