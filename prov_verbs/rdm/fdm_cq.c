/* RDM completion queues. Reading one drives every endpoint bound to it
 * (manual progress); what that progress completes goes straight into the
 * caller's buffer in the caller's format (fdm_cq_write), and only what
 * does not fit there, or what completes outside a read of this CQ, waits
 * in a software queue (the ring), handed out by later reads. Errors wait in
 * their own FIFO; while one is there, reads answer -FI_EAVAIL. The queues
 * grow rather than drop a completion. With FI_WAIT_FD / FI_WAIT_UNSPEC a
 * CQ has an fd over its domain's verbs fds and an eventfd of its own
 * (docs/fi_rdm.7.md, "Wait objects"). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

static struct fdm_cq *fdm_cq_of(struct fid_cq *cq)
{
	return fdv_container_of(cq, struct fdm_cq, cq_fid);
}

int fdm_cq_add_ep(struct fdm_cq *cq, struct fdm_ep *ep)
{
	for (size_t i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == cq->eps_cap) {
		size_t cap = cq->eps_cap ? cq->eps_cap * 2 : 4;
		struct fdm_ep **n = realloc(cq->eps, cap * sizeof(*n));

		if (!n)
			return -FI_ENOMEM;
		cq->eps = n;
		cq->eps_cap = cap;
	}
	cq->eps[cq->neps++] = ep;
	return 0;
}

void fdm_cq_del_ep(struct fdm_cq *cq, struct fdm_ep *ep)
{
	for (size_t i = 0; i < cq->neps; i++) {
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			return;
		}
	}
}

static int fdm_cq_grow(void **ring, size_t *head, size_t *tail, size_t *cap,
		       size_t elem)
{
	if (*head) {
		memmove(*ring, (uint8_t *)*ring + *head * elem, (*tail - *head) * elem);
		*tail -= *head;
		*head = 0;
		if (*tail < *cap)
			return 0;
	}
	size_t ncap = *cap ? *cap * 2 : 64;
	void *n = realloc(*ring, ncap * elem);

	if (!n)
		return -FI_ENOMEM;
	*ring = n;
	*cap = ncap;
	return 0;
}

/* A completion for a CQ whose waiter may be asleep (armed by a trywait
 * that said 0): its fd must turn readable. Once per arming. */
static void fdm_cq_wake(struct fdm_cq *cq)
{
	uint64_t one = 1;

	cq->armed = false;
	if (write(cq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		FD_WARN(FD_LOG_CQ, "eventfd write: %s", strerror(errno));
}

static void fdm_cq_drain(struct fdm_cq *cq)
{
	uint64_t v;

	if (read(cq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		FD_WARN(FD_LOG_CQ, "eventfd read: %s", strerror(errno));
}

void fdm_cq_queue(struct fdm_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src)
{
	struct fdm_cqe *e;

	/* collective transfers were diverted by fdm_cq_write, the only caller */
	if (fdv_unlikely(cq->tail == cq->cap) &&
	    fdm_cq_grow((void **)&cq->ring, &cq->head, &cq->tail, &cq->cap,
			sizeof(*cq->ring))) {
		FD_WARN(FD_LOG_CQ, "out of memory: completion of %p lost", context);
		return;
	}
	e = &cq->ring[cq->tail++];
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.buf = buf;
	e->e.data = data;
	e->e.tag = tag;
	e->src = src;
	if (fdv_unlikely(cq->armed))
		fdm_cq_wake(cq);
}

void fdm_cq_write_err(struct fdm_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag)
{
	struct fdm_cq_err *e;

	if (fdv_unlikely(cq->domain->coll_eps != NULL) &&
	    fdm_coll_divert(cq->domain, context, len, err))
		return;
	if (cq->etail == cq->ecap &&
	    fdm_cq_grow((void **)&cq->errs, &cq->ehead, &cq->etail, &cq->ecap,
			sizeof(*cq->errs))) {
		FD_WARN(FD_LOG_CQ, "out of memory: error completion of %p lost", context);
		return;
	}
	e = &cq->errs[cq->etail++];
	memset(e, 0, sizeof(*e));
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.olen = olen;
	e->e.data = data;
	e->e.tag = tag;
	e->e.err = err;
	e->e.prov_errno = prov_errno;
	if (cq->armed)
		fdm_cq_wake(cq);
}

/* Inline: every read runs it, over one endpoint in the common case. */
FDV_INLINE void fdm_cq_progress(struct fdm_cq *cq)
{
	for (size_t i = 0; i < cq->neps; i++)
		fdm_ep_progress(cq->eps[i]);
}

static size_t fdm_cq_entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

/* Whether anything waits in the ring or the error FIFO. Both are reset
 * to 0/0 when they are drained (fdm_cq_take, fdm_cq_readerr) and only
 * grow otherwise, so a queue is empty exactly when its tail is 0: one
 * OR of the two tails instead of two head/tail compares on every read. */
static inline bool fdm_cq_backlog(const struct fdm_cq *cq)
{
	return (cq->tail | cq->etail) != 0;
}

static void fdm_cq_copy_out(enum fi_cq_format f, void *buf, size_t i,
			    const struct fi_cq_tagged_entry *e)
{
	fdm_cq_put(f, buf, i, e->op_context, e->flags, e->len, e->buf, e->data, e->tag);
}

static ssize_t fdm_cq_take(struct fdm_cq *cq, void *buf, size_t count,
			   fi_addr_t *src)
{
	size_t n = 0;

	if (cq->ehead != cq->etail)
		return -FI_EAVAIL;
	while (n < count && cq->head != cq->tail) {
		struct fdm_cqe *e = &cq->ring[cq->head++];

		fdm_cq_copy_out(cq->format, buf, n, &e->e);
		if (src)
			src[n] = e->src;
		n++;
	}
	if (cq->head == cq->tail)
		cq->head = cq->tail = 0;
	return n ? (ssize_t)n : -FI_EAGAIN;
}

/* A read with queued completions (or errors), no buffer or a count of
 * 0: progress first, then what is queued. */
static __attribute__((noinline)) ssize_t
fdm_cq_read_queued(struct fdm_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	if (!buf && count)
		return -FI_EINVAL;
	fdm_cq_progress(cq);
	return count ? fdm_cq_take(cq, buf, count, src) :
		(cq->ehead != cq->etail ? -FI_EAVAIL : -FI_EAGAIN);
}

static ssize_t fdm_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			       fi_addr_t *src)
{
	struct fdm_cq *cq = fdm_cq_of(cq_fid);
	struct fdm_domain *d = cq->domain;
	ssize_t ret;

	fdm_lock(d);
	if (fdv_unlikely(fdm_cq_backlog(cq) || !buf || !count)) {
		ret = fdm_cq_read_queued(cq, buf, count, src);
		fdm_unlock(d);
		return ret;
	}
	/* Nothing queued: what progress completes for this CQ goes straight
	 * into buf, the rest into the ring. */
	cq->out = buf;
	cq->out_src = src;
	cq->out_max = count;
	fdm_cq_progress(cq);
	ret = (ssize_t)cq->out_n;
	cq->out_max = cq->out_n = 0;
	if (!ret)
		ret = cq->etail ? -FI_EAVAIL : -FI_EAGAIN;
	fdm_unlock(d);
	return ret;
}

static ssize_t fdm_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return fdm_cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t fdm_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
			      uint64_t flags)
{
	struct fdm_cq *cq = fdm_cq_of(cq_fid);
	struct fi_cq_err_entry *e;
	ssize_t ret = 1;

	if (!buf)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	fdm_lock(cq->domain);
	if (cq->ehead == cq->etail)
		fdm_cq_progress(cq);
	if (cq->ehead == cq->etail) {
		ret = -FI_EAGAIN;
	} else {
		void *err_data = buf->err_data;
		size_t err_data_size = buf->err_data_size;

		e = &cq->errs[cq->ehead++].e;
		*buf = *e;
		/* API 1.5+: the caller's err_data buffer stays its own; we
		 * have no provider data to put there. */
		buf->err_data = err_data;
		buf->err_data_size = 0;
		(void)err_data_size;
		if (cq->ehead == cq->etail)
			cq->ehead = cq->etail = 0;
	}
	fdm_unlock(cq->domain);
	return ret;
}

/* 0: nothing queued, every endpoint of the domain idle with its verbs
 * CQ and EQ armed, and a completion queued from now on writes efd: the
 * fd (epfd) will turn readable. Progress is manual, so the fd only says
 * "call in now"; the endpoints of the whole domain are armed because its
 * fd set is the domain's. */
static int fdm_cq_trywait_locked(struct fdm_cq *cq)
{
	int ret;

	fdm_cq_drain(cq);
	ret = fdm_domain_trywait(cq->domain);
	if (!ret && fdm_cq_backlog(cq))
		ret = -FI_EAGAIN;
	cq->armed = !ret;
	return ret;
}

int fdm_cq_trywait(struct fid_cq *cq_fid)
{
	struct fdm_cq *cq = fdm_cq_of(cq_fid);
	int ret;

	if (cq->epfd < 0)
		return -FI_EINVAL;	/* no wait object */
	fdm_lock(cq->domain);
	ret = fdm_cq_trywait_locked(cq);
	fdm_unlock(cq->domain);
	return ret;
}

/* Wait and poll sets (src/fd_sets.c): fi_poll's "anything to read?"
 * after progress, and fi_trywait on the CQ. */
static int fdm_cq_ready(struct fid *fid)
{
	struct fdm_cq *cq = fdv_container_of(fid, struct fdm_cq, cq_fid.fid);
	int ready;

	fdm_lock(cq->domain);
	fdm_cq_progress(cq);
	ready = fdm_cq_backlog(cq);
	fdm_unlock(cq->domain);
	return ready;
}

static int fdm_cq_set_trywait(struct fid *fid)
{
	return fdm_cq_trywait(fdv_container_of(fid, struct fid_cq, fid));
}

static ssize_t fdm_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src, const void *cond, int timeout)
{
	struct fdm_cq *cq = fdm_cq_of(cq_fid);
	long end = timeout < 0 ? -1 : fd_now_ms() + timeout;
	unsigned spins = 0;
	ssize_t ret;

	(void)cond;
	for (;;) {
		long left;
		int rc;

		ret = fdm_cq_readfrom(cq_fid, buf, count, src);
		if (ret != -FI_EAGAIN)
			return ret;
		if (__atomic_exchange_n(&cq->signaled, 0, __ATOMIC_ACQ_REL))
			return -FI_EAGAIN;
		left = end < 0 ? -1 : end - fd_now_ms();
		if (end >= 0 && left <= 0)
			return -FI_EAGAIN;
		if (cq->epfd < 0) {
			/* FI_WAIT_NONE / FI_WAIT_YIELD: nothing to sleep on */
			if (++spins > 1024)
				sched_yield();
			continue;
		}
		rc = fdm_cq_trywait(cq_fid);
		if (rc == -FI_EAGAIN) {
			/* work no fd announces (credits, a connection being
			 * made): keep calling in, politely */
			if (++spins > 64)
				sched_yield();
			continue;
		}
		if (rc)
			return rc;
		spins = 0;
		/* a signal whose eventfd write the trywait drained */
		if (__atomic_load_n(&cq->signaled, __ATOMIC_ACQUIRE))
			continue;
		{
			struct pollfd pfd = { .fd = cq->epfd, .events = POLLIN };

			if (poll(&pfd, 1, left < 0 ? -1 : (int)left) < 0 && errno != EINTR)
				return -FI_EOTHER;
		}
	}
}

static ssize_t fdm_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return fdm_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int fdm_cq_signal(struct fid_cq *cq_fid)
{
	struct fdm_cq *cq = fdm_cq_of(cq_fid);
	uint64_t one = 1;

	__atomic_store_n(&cq->signaled, 1, __ATOMIC_RELEASE);
	/* wakes a sleeper whatever the arming; the sleeper's next trywait
	 * drains it */
	if (cq->efd >= 0 && write(cq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static const char *fdm_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	(void)cq_fid;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int fdm_cq_close(struct fid *fid)
{
	struct fdm_cq *cq = fdv_container_of(fid, struct fdm_cq, cq_fid.fid);

	if (cq->neps || fd_waitable_busy(&cq->waitable))
		return -FI_EBUSY;
	fd_waitable_fini(&cq->waitable, fid);
	__atomic_fetch_sub(&cq->domain->refs, 1, __ATOMIC_RELAXED);
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->efd >= 0)
		close(cq->efd);
	free(cq->ring);
	free(cq->errs);
	free(cq->eps);
	free(cq);
	return 0;
}

static int fdm_cq_control(struct fid *fid, int command, void *arg)
{
	struct fdm_cq *cq = fdv_container_of(fid, struct fdm_cq, cq_fid.fid);

	return fd_waitable_control(command, arg, &cq->waitable, cq->epfd,
				   cq->epfd < 0 ? FI_WAIT_NONE : FI_WAIT_FD);
}

static struct fi_ops fdm_cq_fi_ops =
	FD_FI_OPS(fdm_cq_close, fd_no_fid_bind, fdm_cq_control, fd_no_fid_tostr);

static struct fi_ops_cq fdm_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = fdm_cq_read,
	.readfrom = fdm_cq_readfrom,
	.readerr = fdm_cq_readerr,
	.sread = fdm_cq_sread,
	.sreadfrom = fdm_cq_sreadfrom,
	.signal = fdm_cq_signal,
	.strerror = fdm_cq_strerror,
};

int fdm_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq_out, void *context)
{
	struct fdm_domain *d = fdv_container_of(domain, struct fdm_domain, domain_fid);
	struct fdm_cq *cq;
	enum fi_cq_format fmt;
	int ret;

	if (!attr || !cq_out)
		return -FI_EINVAL;
	fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	if (fmt != FI_CQ_FORMAT_CONTEXT && fmt != FI_CQ_FORMAT_MSG &&
	    fmt != FI_CQ_FORMAT_DATA && fmt != FI_CQ_FORMAT_TAGGED)
		return -FI_ENOSYS;
	/* FI_WAIT_SET: an fd as for FI_WAIT_FD, in the set (src/fd_sets.c) */
	ret = fd_wait_obj_check(attr->wait_obj, attr->wait_set, true);
	if (ret)
		return ret;
	if (attr->flags & ~(uint64_t)0)
		return -FI_EBADFLAGS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	(void)fdm_cq_entry_size;
	cq->epfd = cq->efd = -1;
	if (attr->wait_obj == FI_WAIT_FD || attr->wait_obj == FI_WAIT_UNSPEC ||
	    attr->wait_obj == FI_WAIT_SET) {
		struct epoll_event ev = { .events = EPOLLIN };

		cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		cq->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (cq->efd < 0 || cq->epfd < 0 ||
		    epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->efd, &ev) ||
		    epoll_ctl(cq->epfd, EPOLL_CTL_ADD, d->wait_epfd, &ev)) {
			int err = errno;

			if (cq->efd >= 0)
				close(cq->efd);
			if (cq->epfd >= 0)
				close(cq->epfd);
			free(cq);
			return -err;
		}
	}
	cq->domain = d;
	cq->format = fmt;
	cq->kind = FDV_CQ_KIND_LAYER;
	fd_fid_init(&cq->cq_fid.fid, FI_CLASS_CQ, context, &fdm_cq_fi_ops);
	cq->cq_fid.ops = &fdm_cq_ops;
	{
		ret = fd_waitable_open(&cq->waitable, &cq->cq_fid.fid, fdm_cq_ready,
				       fdm_cq_set_trywait,
				       attr->wait_obj == FI_WAIT_SET ? attr->wait_set : NULL);
		if (ret) {
			if (cq->efd >= 0)
				close(cq->efd);
			if (cq->epfd >= 0)
				close(cq->epfd);
			free(cq);
			return ret;
		}
	}
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*cq_out = &cq->cq_fid;
	return 0;
}
