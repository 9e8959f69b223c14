/* fi_cntr for RDM endpoints: everything but the per-event increment, which
 * is inline in fdm_cntr.h. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* A layer over verbs: the core's logging, no verbs private state. */
#define FD_LOG_PROV "verbs"
#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm_cntr.h"

/* Busy polling is what manual progress needs, but a waiter that sees no
 * event for this many rounds gives the CPU away between rounds. */
#define FDM_CNTR_SPIN_ROUNDS 4096

void fdm_cntr_signal(struct fdm_cntr *c)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&c->signalled, 1, __ATOMIC_ACQ_REL))
		return;		/* an unread signal is already pending */
	if (write(c->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FD_WARN(FD_LOG_CNTR, "eventfd write: %s", strerror(errno));
}

/* Clear the fd's readiness: it means "changed since the last read". */
static void fdm_cntr_drain(struct fdm_cntr *c)
{
	uint64_t v;

	if (!__atomic_exchange_n(&c->signalled, 0, __ATOMIC_ACQ_REL))
		return;
	if (read(c->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		FD_WARN(FD_LOG_CNTR, "eventfd read: %s", strerror(errno));
}

/* Drive the bound endpoints; returns whether there were any. */
static int fdm_cntr_progress(struct fdm_cntr *c)
{
	unsigned i, n;

	fdv_lock(&c->lock);
	n = c->nprog;
	for (i = 0; i < n; i++)
		c->prog[i].progress(c->prog[i].arg);
	fdv_unlock(&c->lock);
	return n != 0;
}

static uint64_t fdm_cntr_read(struct fid_cntr *cntr)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	fdm_cntr_progress(c);
	if (fdv_unlikely(__atomic_load_n(&c->signalled, __ATOMIC_RELAXED)))
		fdm_cntr_drain(c);
	return FDM_CNTR_LOAD(&c->value);
}

static uint64_t fdm_cntr_readerr(struct fid_cntr *cntr)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	fdm_cntr_progress(c);
	if (fdv_unlikely(__atomic_load_n(&c->signalled, __ATOMIC_RELAXED)))
		fdm_cntr_drain(c);
	return FDM_CNTR_LOAD(&c->errors);
}

static int fdm_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_ADD(&c->value, value);
	if (__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE))
		fdm_cntr_signal(c);
	return 0;
}

static int fdm_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_STORE(&c->value, value);
	if (__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE))
		fdm_cntr_signal(c);
	return 0;
}

static int fdm_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_ADD(&c->errors, value);
	if (__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE))
		fdm_cntr_signal(c);
	return 0;
}

static int fdm_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	FDM_CNTR_STORE(&c->errors, value);
	if (__atomic_load_n(&c->listeners, __ATOMIC_ACQUIRE))
		fdm_cntr_signal(c);
	return 0;
}

/* 0 once the value reaches threshold; -FI_EAVAIL as soon as the error
 * count moves while waiting (fi_cntr(3)); -FI_ETIMEDOUT after timeout ms
 * (negative: forever). With endpoints bound, their progress must run:
 * the wait drives them, and sleeps on wepfd once the domain's trywait
 * says every endpoint is idle and armed (else it calls in again); with
 * none, nothing in this thread can move the counter and it sleeps on the
 * eventfd until another thread does. */
static int fdm_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);
	uint64_t errors_at_start = FDM_CNTR_LOAD(&c->errors);
	int64_t deadline = timeout >= 0 ? fd_now_ms() + timeout : -1;
	unsigned idle = 0;
	int ret;

	if (c->efd < 0)
		return -FI_ENOSYS;	/* FI_WAIT_NONE: the user said it never waits */
	__atomic_add_fetch(&c->listeners, 1, __ATOMIC_ACQ_REL);
	for (;;) {
		struct pollfd pfd;
		int64_t left;
		int bound = fdm_cntr_progress(c);

		if (FDM_CNTR_LOAD(&c->value) >= threshold) {
			ret = 0;
			break;
		}
		if (FDM_CNTR_LOAD(&c->errors) != errors_at_start) {
			ret = -FI_EAVAIL;
			break;
		}
		left = deadline < 0 ? -1 : deadline - fd_now_ms();
		if (deadline >= 0 && left <= 0) {
			ret = -FI_ETIMEDOUT;
			break;
		}
		if (bound) {
			int rc = c->trywait ? c->trywait(c->trywait_arg) : -FI_EAGAIN;

			if (rc) {
				/* nothing to sleep on, or work no fd announces */
				if (++idle >= FDM_CNTR_SPIN_ROUNDS)
					sched_yield();
				continue;
			}
			/* armed: a verbs event or a change (listeners is up,
			 * so efd hears of it) wakes us */
			pfd.fd = c->wepfd;
		} else {
			pfd.fd = c->efd;
		}
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, left < 0 ? -1 : (int)left) < 0 && errno != EINTR) {
			ret = -FI_EOTHER;
			break;
		}
		fdm_cntr_drain(c);
	}
	__atomic_sub_fetch(&c->listeners, 1, __ATOMIC_ACQ_REL);
	return ret;
}

static int fdm_cntr_set_trywait(struct fid *fid)
{
	return fdm_cntr_trywait(fdv_container_of(fid, struct fid_cntr, fid));
}

static struct fi_ops_cntr fdm_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = fdm_cntr_read,
	.readerr = fdm_cntr_readerr,
	.add = fdm_cntr_add,
	.set = fdm_cntr_set,
	.wait = fdm_cntr_wait,
	.adderr = fdm_cntr_adderr,
	.seterr = fdm_cntr_seterr,
};

static int fdm_cntr_close(struct fid *fid)
{
	struct fdm_cntr *c = fdm_cntr_of(fdv_container_of(fid, struct fid_cntr, fid));

	fdv_lock(&c->lock);
	if (c->bindings) {
		fdv_unlock(&c->lock);
		FD_INFO(FD_LOG_CNTR, "counter still bound to %u endpoint(s)",
			c->bindings);
		return -FI_EBUSY;
	}
	fdv_unlock(&c->lock);
	if (fd_waitable_busy(&c->waitable)) {
		FD_INFO(FD_LOG_CNTR, "counter still in a poll set");
		return -FI_EBUSY;
	}
	fd_waitable_fini(&c->waitable, fid);
	if (c->efd >= 0)
		close(c->efd);
	if (c->wepfd >= 0)
		close(c->wepfd);
	fdv_lock_destroy(&c->lock);
	free(c->prog);
	free(c);
	return 0;
}

static int fdm_cntr_control(struct fid *fid, int command, void *arg)
{
	struct fdm_cntr *c = fdm_cntr_of(fdv_container_of(fid, struct fid_cntr, fid));

	/* From the fd's first handing out, someone may poll it at any time. */
	if (command == FI_GETWAIT && arg && c->efd >= 0 && c->wait_obj != FI_WAIT_FD) {
		c->wait_obj = FI_WAIT_FD;
		__atomic_add_fetch(&c->listeners, 1, __ATOMIC_ACQ_REL);
	}
	return fd_waitable_control(command, arg, &c->waitable,
				   c->efd < 0 ? -1 : c->wepfd >= 0 ? c->wepfd : c->efd,
				   c->efd < 0 ? FI_WAIT_NONE : FI_WAIT_FD);
}

/* No bind: endpoints bind to counters, not the reverse. */
static struct fi_ops fdm_cntr_fid_ops =
	FD_FI_OPS(fdm_cntr_close, fd_no_fid_bind, fdm_cntr_control, NULL);

int fdm_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context)
{
	enum fi_wait_obj wait = FI_WAIT_UNSPEC;
	struct fdm_cntr *c;

	if (!domain || !cntr)
		return -FI_EINVAL;
	if (attr) {
		if (attr->events != FI_CNTR_EVENTS_COMP)
			return -FI_ENOSYS;
		if (attr->flags)
			return -FI_EINVAL;	/* fi_cntr(3) defines none */
		/* FI_WAIT_SET: an fd as for FI_WAIT_FD; the domain puts the
		 * counter into the set once its fd is complete
		 * (fdm_cntr_join). No mutexes or yield. */
		int ret = fd_wait_obj_check(attr->wait_obj, attr->wait_set, false);

		if (ret)
			return ret;
		wait = attr->wait_obj == FI_WAIT_SET ? FI_WAIT_FD : attr->wait_obj;
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->efd = c->wepfd = -1;
	if (wait != FI_WAIT_NONE) {
		c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (c->efd < 0) {
			int err = errno;

			FD_WARN(FD_LOG_CNTR, "eventfd: %s", strerror(err));
			free(c);
			return -err;	/* fi errno values are the system's */
		}
	}
	c->wait_obj = wait;
	/* An fd the user polls must hear about every change. */
	c->listeners = wait == FI_WAIT_FD;
	c->domain = domain;
	fdv_lock_init(&c->lock);
	fd_fid_init(&c->cntr_fid.fid, FI_CLASS_CNTR, context, &fdm_cntr_fid_ops);
	c->cntr_fid.ops = &fdm_cntr_ops;
	if (fd_waitable_init(&c->waitable, &c->cntr_fid.fid, NULL, fdm_cntr_set_trywait)) {
		fdv_lock_destroy(&c->lock);
		if (c->efd >= 0)
			close(c->efd);
		free(c);
		return -FI_ENOMEM;
	}
	*cntr = &c->cntr_fid;
	return 0;
}

int fdm_cntr_join(struct fid_cntr *cntr, struct fid_wait *ws)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	return fd_wait_join(&c->waitable, ws, &c->cntr_fid.fid);
}

int fdm_cntr_add_progress(struct fid_cntr *cntr, void (*progress)(void *arg),
			  void *arg)
{
	struct fdm_cntr *c;
	unsigned i;
	int ret = 0;

	if (!cntr || !progress)
		return -FI_EINVAL;
	c = fdm_cntr_of(cntr);
	fdv_lock(&c->lock);
	for (i = 0; i < c->nprog; i++) {
		if (c->prog[i].arg == arg && c->prog[i].progress == progress) {
			c->prog[i].refs++;
			c->bindings++;
			goto out;
		}
	}
	if (c->nprog == c->prog_cap) {
		unsigned cap = c->prog_cap ? c->prog_cap * 2 : 4;
		struct fdm_cntr_progress *grown =
			realloc(c->prog, cap * sizeof(*grown));

		if (!grown) {
			ret = -FI_ENOMEM;
			goto out;
		}
		c->prog = grown;
		c->prog_cap = cap;
	}
	c->prog[c->nprog].progress = progress;
	c->prog[c->nprog].arg = arg;
	c->prog[c->nprog].refs = 1;
	c->nprog++;
	c->bindings++;
out:
	fdv_unlock(&c->lock);
	return ret;
}

void fdm_cntr_del_progress(struct fid_cntr *cntr, void *arg)
{
	struct fdm_cntr *c;
	unsigned i;

	if (!cntr)
		return;
	c = fdm_cntr_of(cntr);
	fdv_lock(&c->lock);
	for (i = 0; i < c->nprog; i++) {
		if (c->prog[i].arg != arg)
			continue;
		c->bindings--;
		if (--c->prog[i].refs == 0)
			c->prog[i] = c->prog[--c->nprog];
		break;
	}
	fdv_unlock(&c->lock);
}

int fdm_cntr_set_waiter(struct fid_cntr *cntr, int domain_fd, int (*trywait)(void *arg),
			void *arg)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);
	struct epoll_event ev = { .events = EPOLLIN };

	if (c->efd < 0)
		return 0;
	c->wepfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->wepfd < 0 || epoll_ctl(c->wepfd, EPOLL_CTL_ADD, c->efd, &ev) ||
	    epoll_ctl(c->wepfd, EPOLL_CTL_ADD, domain_fd, &ev)) {
		int err = errno;

		if (c->wepfd >= 0)
			close(c->wepfd);
		c->wepfd = -1;
		return -err;
	}
	c->trywait = trywait;
	c->trywait_arg = arg;
	return 0;
}

int fdm_cntr_trywait(struct fid_cntr *cntr)
{
	struct fdm_cntr *c = fdm_cntr_of(cntr);

	if (c->efd < 0)
		return -FI_EINVAL;	/* no wait object */
	if (!c->trywait || __atomic_load_n(&c->signalled, __ATOMIC_ACQUIRE))
		return -FI_EAGAIN;	/* a change not read yet: call in */
	return c->trywait(c->trywait_arg);
}
