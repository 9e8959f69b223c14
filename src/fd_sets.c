/* Wait sets and poll sets (fi_poll(3)); src/include/fd_sets.h says what a
 * member object provides. Provider-independent: a member is reached only
 * through its fid, fi_control and its struct fd_waitable. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fd_sets.h"
#include "fd_util.h"

/* ---- common: the member list ---- */

struct fd_member {
	struct fid *fid;
	struct fd_waitable *w;
	int fd;				/* wait sets: the fd in epfd */
	uint64_t value, errors;		/* poll sets, counters: last seen */
};

struct fd_members {
	struct fd_member *m;
	size_t n, cap;
};

static struct fd_member *fd_members_find(struct fd_members *l, const struct fid *fid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->m[i].fid == fid)
			return &l->m[i];
	return NULL;
}

static struct fd_member *fd_members_add(struct fd_members *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct fd_member *n = realloc(l->m, cap * sizeof(*n));

		if (!n)
			return NULL;
		l->m = n;
		l->cap = cap;
	}
	memset(&l->m[l->n], 0, sizeof(l->m[0]));
	return &l->m[l->n++];
}

static void fd_members_del(struct fd_members *l, struct fd_member *m)
{
	*m = l->m[--l->n];
}

/* Every open CQ, EQ, counter and wait set of this library, so that a set can
 * tell a live object from a closed (freed) one by its address alone,
 * before touching it: adding a closed object is then -FI_EINVAL, not a
 * read of freed memory. Opens and closes only; a linear list will do. */
static pthread_mutex_t fd_live_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct fid **fd_live;
static size_t fd_live_n, fd_live_cap;

static int fd_live_add(const struct fid *fid)
{
	int ret = 0;

	pthread_mutex_lock(&fd_live_lock);
	if (fd_live_n == fd_live_cap) {
		size_t cap = fd_live_cap ? fd_live_cap * 2 : 64;
		const struct fid **n = realloc(fd_live, cap * sizeof(*n));

		if (!n) {
			ret = -FI_ENOMEM;
			goto out;
		}
		fd_live = n;
		fd_live_cap = cap;
	}
	fd_live[fd_live_n++] = fid;
out:
	pthread_mutex_unlock(&fd_live_lock);
	return ret;
}

static void fd_live_del(const struct fid *fid)
{
	pthread_mutex_lock(&fd_live_lock);
	for (size_t i = 0; i < fd_live_n; i++) {
		if (fd_live[i] == fid) {
			fd_live[i] = fd_live[--fd_live_n];
			break;
		}
	}
	pthread_mutex_unlock(&fd_live_lock);
}

static bool fd_live_has(const struct fid *fid)
{
	bool found = false;

	pthread_mutex_lock(&fd_live_lock);
	for (size_t i = 0; i < fd_live_n && !found; i++)
		found = fd_live[i] == fid;
	pthread_mutex_unlock(&fd_live_lock);
	return found;
}

int fd_waitable_init(struct fd_waitable *w, struct fid *fid,
		     int (*ready)(struct fid *fid), int (*trywait)(struct fid *fid))
{
	w->ready = ready;
	w->trywait = trywait;
	atomic_init(&w->pollsets, 0);
	w->wait_set = NULL;
	return fd_live_add(fid);
}

void fd_waitable_fini(struct fd_waitable *w, struct fid *fid)
{
	fd_wait_leave(w, fid);
	fd_live_del(fid);
}

int fd_waitable_open(struct fd_waitable *w, struct fid *fid,
		     int (*ready)(struct fid *fid), int (*trywait)(struct fid *fid),
		     struct fid_wait *ws)
{
	int ret = fd_waitable_init(w, fid, ready, trywait);

	if (!ret && ws) {
		ret = fd_wait_join(w, ws, fid);
		if (ret)
			fd_waitable_fini(w, fid);
	}
	return ret;
}

/* The member side of an object, if it is an open CQ, EQ or counter of this
 * library that can be in a set. */
static struct fd_waitable *fd_waitable_of(struct fid *fid)
{
	struct fd_waitable *w = NULL;

	if (!fid || !fd_live_has(fid))
		return NULL;	/* NULL, closed, or not ours */
	if (!fid->ops || (fid->fclass != FI_CLASS_CQ && fid->fclass != FI_CLASS_CNTR &&
			  fid->fclass != FI_CLASS_EQ))
		return NULL;
	if (!fid->ops->control || fid->ops->control(fid, FD_CTL_WAITABLE, &w) || !w)
		return NULL;
	return w;
}

/* ---- wait sets ---- */

struct fd_wait {
	struct fid_wait wait_fid;
	struct fid_fabric *fabric;
	int epfd;
	pthread_mutex_t lock;		/* members; held across their trywait,
					 * so a member's close waits for it */
	struct fd_members members;
};

static struct fi_ops fd_wait_fi_ops;

static struct fd_wait *fd_wait_of(const struct fid_wait *ws)
{
	if (!ws || !fd_live_has(&ws->fid) || ws->fid.fclass != FI_CLASS_WAIT || ws->fid.ops != &fd_wait_fi_ops)
		return NULL;
	return (struct fd_wait *)((char *)ws - offsetof(struct fd_wait, wait_fid));
}

int fd_wait_check(const struct fid_wait *ws)
{
	return fd_wait_of(ws) ? 0 : -FI_EINVAL;
}

int fd_wait_obj_check(enum fi_wait_obj obj, const struct fid_wait *ws, bool yield_ok)
{
	switch (obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		return 0;
	case FI_WAIT_SET:
		return fd_wait_check(ws);
	case FI_WAIT_YIELD:
		return yield_ok ? 0 : -FI_ENOSYS;
	default:
		return -FI_ENOSYS;
	}
}

/* Every member armed: 0; one with something to read: -FI_EAGAIN; else
 * the member's error. Called with the lock held. */
static int fd_wait_try_locked(struct fd_wait *s)
{
	for (size_t i = 0; i < s->members.n; i++) {
		struct fd_member *m = &s->members.m[i];
		int ret = m->w->trywait(m->fid);

		if (ret)
			return ret;
	}
	return 0;
}

int fd_wait_trywait(struct fid *fid)
{
	struct fd_wait *s = fd_wait_of((struct fid_wait *)fid);
	int ret;

	if (!s)
		return -FI_EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = fd_wait_try_locked(s);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int fd_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	for (int i = 0; i < count; i++) {
		struct fd_waitable *w;
		int ret;

		if (fids[i] && fids[i]->fclass == FI_CLASS_WAIT) {
			ret = fd_wait_trywait(fids[i]);
		} else {
			w = fd_waitable_of(fids[i]);
			if (!w || !w->trywait)
				return -FI_EINVAL;
			ret = w->trywait(fids[i]);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* 0 when a member may have something to read (it had, or its fd fired),
 * -FI_ETIMEDOUT when timeout ms passed without (negative: no limit). */
static int fd_wait_wait(struct fid_wait *ws, int timeout)
{
	struct fd_wait *s = fd_wait_of(ws);
	long end = timeout < 0 ? -1 : fd_now_ms() + timeout;

	if (!s)
		return -FI_EINVAL;
	for (;;) {
		struct epoll_event ev[8];
		long left = -1;
		int ret, n;

		pthread_mutex_lock(&s->lock);
		ret = fd_wait_try_locked(s);
		pthread_mutex_unlock(&s->lock);
		if (ret == -FI_EAGAIN)
			return 0;
		if (ret)
			return ret;
		if (end >= 0) {
			left = end - fd_now_ms();
			if (left < 0)
				left = 0;
		}
		n = epoll_wait(s->epfd, ev, 8, (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -FI_ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int fd_wait_join(struct fd_waitable *w, struct fid_wait *ws, struct fid *member)
{
	struct fd_wait *s = fd_wait_of(ws);
	struct epoll_event ev = { .events = EPOLLIN };
	struct fd_member *m;
	int fd = -1, ret;

	if (!s || !w || !member || !w->trywait)
		return -FI_EINVAL;
	ret = member->ops->control(member, FI_GETWAIT, &fd);
	if (ret)
		return ret;
	pthread_mutex_lock(&s->lock);
	m = fd_members_add(&s->members);
	if (!m) {
		pthread_mutex_unlock(&s->lock);
		return -FI_ENOMEM;
	}
	ev.data.ptr = member;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -errno;
		s->members.n--;
		pthread_mutex_unlock(&s->lock);
		FD_WARN(FD_LOG_CORE, "wait set: epoll_ctl add fd %d: %s", fd, strerror(-ret));
		return ret;
	}
	m->fid = member;
	m->w = w;
	m->fd = fd;
	w->wait_set = ws;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void fd_wait_leave(struct fd_waitable *w, struct fid *member)
{
	struct fd_wait *s;
	struct fd_member *m;

	if (!w || !w->wait_set)
		return;
	s = fd_wait_of(w->wait_set);
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	m = fd_members_find(&s->members, member);
	if (m) {
		/* before the member closes its fd: epoll would drop it then,
		 * but only once every duplicate of the file is gone */
		if (epoll_ctl(s->epfd, EPOLL_CTL_DEL, m->fd, NULL))
			FD_DBG(FD_LOG_CORE, "wait set: epoll_ctl del fd %d: %s", m->fd,
			       strerror(errno));
		fd_members_del(&s->members, m);
	}
	w->wait_set = NULL;
	pthread_mutex_unlock(&s->lock);
}

static int fd_wait_close(struct fid *fid)
{
	struct fd_wait *s = fd_wait_of((struct fid_wait *)fid);

	if (!s)
		return -FI_EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->members.n) {
		pthread_mutex_unlock(&s->lock);
		FD_INFO(FD_LOG_CORE, "wait set still holds %zu object(s)", s->members.n);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&s->lock);
	fd_live_del(&s->wait_fid.fid);
	close(s->epfd);
	pthread_mutex_destroy(&s->lock);
	free(s->members.m);
	free(s);
	return 0;
}

static int fd_wait_fid_control(struct fid *fid, int command, void *arg)
{
	struct fd_wait *s = fd_wait_of((struct fid_wait *)fid);

	if (!s)
		return -FI_EINVAL;
	return fd_wait_control(command, arg, s->epfd, FI_WAIT_FD);
}

static struct fi_ops fd_wait_fi_ops =
	FD_FI_OPS(fd_wait_close, fd_no_fid_bind, fd_wait_fid_control, fd_no_fid_tostr);

static struct fi_ops_wait fd_wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = fd_wait_wait,
};

int fd_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		 struct fid_wait **waitset)
{
	struct fd_wait *s;

	if (!fabric || !attr || !waitset)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EINVAL;	/* fi_poll(3): reserved, must be 0 */
	switch (attr->wait_obj) {
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
	case FI_WAIT_POLLFD:
		return -FI_ENOSYS;	/* docs/fi_direct_verbs.7.md */
	default:
		return -FI_EINVAL;	/* FI_WAIT_NONE, FI_WAIT_SET: no wait object */
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -FI_ENOMEM;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		int err = errno;

		free(s);
		return -err;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->fabric = fabric;
	s->wait_fid.fid.fclass = FI_CLASS_WAIT;
	s->wait_fid.fid.context = NULL;
	s->wait_fid.fid.ops = &fd_wait_fi_ops;
	s->wait_fid.ops = &fd_wait_ops;
	if (fd_live_add(&s->wait_fid.fid)) {
		pthread_mutex_destroy(&s->lock);
		close(s->epfd);
		free(s);
		return -FI_ENOMEM;
	}
	*waitset = &s->wait_fid;
	return 0;
}

/* ---- poll sets ---- */

struct fd_poll {
	struct fid_poll poll_fid;
	struct fid_domain *domain;
	pthread_mutex_t lock;
	struct fd_members members;
};

static struct fi_ops fd_poll_fi_ops;

static struct fd_poll *fd_poll_of(struct fid_poll *ps)
{
	if (!ps || ps->fid.ops != &fd_poll_fi_ops)
		return NULL;
	return (struct fd_poll *)((char *)ps - offsetof(struct fd_poll, poll_fid));
}

static int fd_poll_add(struct fid_poll *ps, struct fid *fid, uint64_t flags)
{
	struct fd_poll *p = fd_poll_of(ps);
	struct fd_waitable *w;
	struct fd_member *m;
	int ret = 0;

	if (!p)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	w = fd_waitable_of(fid);
	if (!w || (fid->fclass != FI_CLASS_CNTR && !w->ready))
		return -FI_EINVAL;	/* not a CQ, EQ or counter of ours */
	pthread_mutex_lock(&p->lock);
	if (fd_members_find(&p->members, fid)) {
		ret = -FI_EALREADY;
		goto out;
	}
	m = fd_members_add(&p->members);
	if (!m) {
		ret = -FI_ENOMEM;
		goto out;
	}
	m->fid = fid;
	m->w = w;
	if (fid->fclass == FI_CLASS_CNTR) {
		struct fid_cntr *c = (struct fid_cntr *)fid;

		m->value = c->ops->read(c);
		m->errors = c->ops->readerr(c);
	}
	atomic_fetch_add_explicit(&w->pollsets, 1, memory_order_acq_rel);
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int fd_poll_del(struct fid_poll *ps, struct fid *fid, uint64_t flags)
{
	struct fd_poll *p = fd_poll_of(ps);
	struct fd_member *m;
	int ret = 0;

	if (!p || !fid)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&p->lock);
	m = fd_members_find(&p->members, fid);
	if (!m) {
		ret = -FI_EINVAL;	/* not in this set */
	} else {
		atomic_fetch_sub_explicit(&m->w->pollsets, 1, memory_order_acq_rel);
		fd_members_del(&p->members, m);
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Drives every member; the contexts of the CQs with an entry (or error)
 * queued and of the counters whose value or error count moved since the
 * last fi_poll reported them, at most count; 0 if none. A counter left
 * out for want of room keeps its last values, so the next call has it. */
static int fd_poll_poll(struct fid_poll *ps, void **context, int count)
{
	struct fd_poll *p = fd_poll_of(ps);
	int n = 0, ret = 0;

	if (!p || count < 0 || (count && !context))
		return -FI_EINVAL;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->members.n && n < count; i++) {
		struct fd_member *m = &p->members.m[i];

		if (m->fid->fclass != FI_CLASS_CNTR) {
			int r = m->w->ready(m->fid);

			if (r < 0) {
				ret = r;
				break;
			}
			if (r)
				context[n++] = m->fid->context;
		} else {
			struct fid_cntr *c = (struct fid_cntr *)m->fid;
			uint64_t v = c->ops->read(c), e = c->ops->readerr(c);

			if (v != m->value || e != m->errors) {
				m->value = v;
				m->errors = e;
				context[n++] = m->fid->context;
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
	return n ? n : ret;
}

static int fd_poll_close(struct fid *fid)
{
	struct fd_poll *p = fd_poll_of((struct fid_poll *)fid);

	if (!p)
		return -FI_EINVAL;
	pthread_mutex_lock(&p->lock);
	if (p->members.n) {
		pthread_mutex_unlock(&p->lock);
		FD_INFO(FD_LOG_CORE, "poll set still holds %zu object(s)", p->members.n);
		return -FI_EBUSY;	/* fi_poll_del them first */
	}
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&p->lock);
	free(p->members.m);
	free(p);
	return 0;
}

static struct fi_ops fd_poll_fi_ops =
	FD_FI_OPS(fd_poll_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

static struct fi_ops_poll fd_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = fd_poll_poll,
	.poll_add = fd_poll_add,
	.poll_del = fd_poll_del,
};

int fd_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		 struct fid_poll **pollset)
{
	struct fd_poll *p;

	if (!domain || !attr || !pollset)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EINVAL;	/* fi_poll(3): reserved, must be 0 */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->domain = domain;
	p->poll_fid.fid.fclass = FI_CLASS_POLL;
	p->poll_fid.fid.ops = &fd_poll_fi_ops;
	p->poll_fid.ops = &fd_poll_ops;
	*pollset = &p->poll_fid;
	return 0;
}
