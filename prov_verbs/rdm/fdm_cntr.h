/* Completion counters (fi_cntr) for the RDM layer.
 *
 * A counter is two numbers (successes, errors) plus what waiting needs:
 * the progress functions of the endpoints bound to it, because the RDM
 * layer's progress is manual (fi_cntr_read / readerr / wait drive it), and
 * an optional eventfd that becomes readable when the counter changes.
 *
 * Contract with the endpoints that count into it:
 *  - fdm_cntr_inc / fdm_cntr_inc_err from the progress path, one per
 *    event; inline, no lock, one atomic add (an AUTO progress thread may
 *    count while the application adds);
 *  - fdm_cntr_add_progress once per (counter, endpoint) binding and a
 *    matching fdm_cntr_del_progress when the endpoint closes; the same arg
 *    added twice is counted twice and must be deleted twice;
 *  - fi_close of the counter answers -FI_EBUSY while any binding remains.
 * The counter never dereferences the domain it was opened on. */
#ifndef FDM_CNTR_H
#define FDM_CNTR_H

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_domain.h>

#include <fdv/fdv_compiler.h>
#include <fdv/fdv_config.h>
#include <fdv/fdv_lock.h>

#include "fd_sets.h"

FDV_EXTERN_C_BEGIN

struct fdm_cntr_progress {
	void (*progress)(void *arg);
	void *arg;
	unsigned refs;
};

struct fdm_cntr {
	struct fid_cntr cntr_fid;	/* first: the user's handle */
	uint64_t value;
	uint64_t errors;
	/* Non-zero while the eventfd must hear about changes: always for
	 * FI_WAIT_FD and once FI_GETWAIT has handed the fd out, else only
	 * while a thread sleeps in fi_cntr_wait. */
	int listeners;
	/* Set when the eventfd holds an unread signal, so a burst of
	 * events costs one write(2) until the next read drains it. */
	int signalled;
	int efd;			/* -1 for FI_WAIT_NONE */
	enum fi_wait_obj wait_obj;
	struct fid_domain *domain;
	/* The domain's side of waiting (fdm_cntr_set_waiter): wepfd holds
	 * efd and the domain's fd set, trywait arms the domain's endpoints
	 * (0: safe to sleep on wepfd). Without, waits with endpoints bound
	 * spin. */
	int wepfd;
	int (*trywait)(void *arg);
	void *trywait_arg;
	fdv_lock_t lock;		/* guards the progress list */
	struct fdm_cntr_progress *prog;
	unsigned nprog, prog_cap;
	unsigned bindings;		/* sum of prog[].refs */
	struct fd_waitable waitable;	/* wait and poll sets (fd_sets.h) */
};

int fdm_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
int fdm_cntr_add_progress(struct fid_cntr *cntr, void (*progress)(void *arg),
			  void *arg);
void fdm_cntr_del_progress(struct fid_cntr *cntr, void *arg);
/* Let waits sleep: domain_fd turns readable when progress may find
 * something, trywait(arg) arms it (fi_trywait's answer). A counter
 * without a wait object (FI_WAIT_NONE) ignores it. */
int fdm_cntr_set_waiter(struct fid_cntr *cntr, int domain_fd, int (*trywait)(void *arg),
			void *arg);
/* fi_trywait of a counter. */
int fdm_cntr_trywait(struct fid_cntr *cntr);
/* wait_obj FI_WAIT_SET: into the wait set, once fdm_cntr_set_waiter has
 * completed the counter's fd. */
int fdm_cntr_join(struct fid_cntr *cntr, struct fid_wait *ws);

/* Out of line and cold: wakes pollers of the eventfd. */
void fdm_cntr_signal(struct fdm_cntr *c);

/* Atomic in every build: even where the application serialises its
 * calls (FI_THREAD_DOMAIN), an FI_PROGRESS_AUTO domain's progress thread
 * counts completions while the application calls fi_cntr_add or
 * fi_cntr_set. A plain load and store lost updates there (TSan saw it,
 * rdm_auto part 5). The release/acquire pair orders a completion's data
 * before the count that reports it; on x86 the load and store are plain
 * moves and the add is one locked instruction. */
#define FDM_CNTR_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#define FDM_CNTR_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define FDM_CNTR_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

FDV_INLINE struct fdm_cntr *fdm_cntr_of(struct fid_cntr *cntr)
{
	return fdv_container_of(cntr, struct fdm_cntr, cntr_fid);
}

FDV_INLINE void fdm_cntr_inc(struct fid_cntr *cntr)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_ADD(&c->value, 1);
	if (fdv_unlikely(__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE)))
		fdm_cntr_signal(c);
}

FDV_INLINE void fdm_cntr_inc_err(struct fid_cntr *cntr)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_ADD(&c->errors, 1);
	if (fdv_unlikely(__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE)))
		fdm_cntr_signal(c);
}

FDV_EXTERN_C_END

#endif /* FDM_CNTR_H */
