/* The rstream event queue. What the application reads here is made by the
 * layer: each bound endpoint or passive endpoint owns a verbs EQ for its
 * verbs object, and reading this EQ first runs every bound object's pump,
 * which reads that verbs EQ and queues here what it means for the stream
 * (connection requests whose peer speaks the protocol, FI_CONNECTED once
 * the rings are known, FI_SHUTDOWN, errors naming the rstream object).
 * The verbs EQs' wait fds join this EQ's, so fi_eq_sread and FI_GETWAIT
 * waiters wake when a verbs EQ has news. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fdr.h"

struct fdr_eq_entry {
	struct fdr_eq_entry *next;
	uint32_t event;
	bool is_error;
	struct fi_eq_err_entry err;	/* valid when is_error */
	size_t len;			/* bytes in data */
	uint8_t data[];			/* the event, or the error's err_data */
};

/* Bound on fi_eq_write: an entry is copied whole, and a length far beyond
 * any real event is a caller's mistake, better refused than allocated. */
#define FDR_EQ_WRITE_MAX (64 * 1024)

static struct fdr_eq *fdr_eq_of(struct fid_eq *eq)
{
	return fdr_container_of(eq, struct fdr_eq, eq_fid);
}

int fdr_errno(int err)
{
	/* fi_errno values are the errno values for what the system reports */
	return err > 0 ? err : FI_EIO;
}

/* ---- the queue (lock held) ---- */

static void fdr_eq_push_locked(struct fdr_eq *eq, struct fdr_eq_entry *e)
{
	uint64_t one = 1;

	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	/* The wait fd stays readable while entries wait. */
	if (write(eq->efd, &one, sizeof(one)) < 0)
		FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
}

static void fdr_eq_pop_locked(struct fdr_eq *eq)
{
	uint64_t v;

	eq->head = eq->head->next;
	if (!eq->head) {
		eq->tail = NULL;
		if (read(eq->efd, &v, sizeof(v)) < 0)
			FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
	}
}

static void fdr_eq_push(struct fdr_eq *eq, struct fdr_eq_entry *e)
{
	pthread_mutex_lock(&eq->lock);
	fdr_eq_push_locked(eq, e);
	pthread_mutex_unlock(&eq->lock);
}

void fdr_eq_push_cm(struct fdr_eq *eq, uint32_t event, struct fid *fid,
		    struct fi_info *info, const uint8_t *data, size_t len)
{
	struct fi_eq_cm_entry *cm;
	struct fdr_eq_entry *e;

	e = calloc(1, sizeof(*e) + sizeof(*cm) + len);
	if (!e) {
		FD_WARN(FD_LOG_EQ, "rstream: no memory to queue event %u", event);
		if (info)
			fdr_connreq_drop(info);
		return;
	}
	e->event = event;
	e->len = sizeof(*cm) + len;
	cm = (struct fi_eq_cm_entry *)(void *)e->data;
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	fdr_eq_push(eq, e);
}

void fdr_eq_push_error(struct fdr_eq *eq, struct fid *fid, void *context,
		       int err, int prov_errno, const void *err_data,
		       size_t err_len)
{
	struct fdr_eq_entry *e = calloc(1, sizeof(*e) + err_len);

	if (!e) {
		FD_WARN(FD_LOG_EQ, "rstream: no memory to queue error %d", err);
		return;
	}
	e->is_error = true;
	e->len = err_len;
	if (err_len)
		memcpy(e->data, err_data, err_len);
	e->err.fid = fid;
	e->err.context = context;
	e->err.err = err;
	e->err.prov_errno = prov_errno;
	fdr_eq_push(eq, e);
}

static const struct fid *fdr_entry_owner(const struct fdr_eq_entry *e)
{
	if (e->is_error)
		return e->err.fid;
	if (e->len >= sizeof(struct fi_eq_cm_entry) &&
	    e->event >= FI_CONNREQ && e->event <= FI_SHUTDOWN)
		return ((const struct fi_eq_cm_entry *)(const void *)e->data)->fid;
	return NULL;
}

/* An entry nobody will read: a connection request in it is refused. */
static void fdr_eq_drop_entry(struct fdr_eq_entry *e)
{
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)e->data;

	if (!e->is_error && e->event == FI_CONNREQ &&
	    e->len >= sizeof(*cm) && cm->info)
		fdr_connreq_drop(cm->info);
	free(e);
}

/* ---- sources ---- */

int fdr_eq_add_src(struct fdr_eq *eq, struct fdr_eq_src *src)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (src->fd >= 0 && epoll_ctl(eq->epfd, EPOLL_CTL_ADD, src->fd, &ev))
		return -fdr_errno(errno);
	pthread_mutex_lock(&eq->src_lock);
	src->next = eq->srcs;
	eq->srcs = src;
	pthread_mutex_unlock(&eq->src_lock);
	atomic_fetch_add(&eq->refs, 1);
	return 0;
}

void fdr_eq_del_src(struct fdr_eq *eq, struct fdr_eq_src *src,
		    const struct fid *owner)
{
	struct fdr_eq_src **pp;
	struct fdr_eq_entry **ep, *e, *prev = NULL;

	/* Waits for a pump in progress: the source is freed after this. */
	pthread_mutex_lock(&eq->src_lock);
	for (pp = &eq->srcs; *pp; pp = &(*pp)->next) {
		if (*pp == src) {
			*pp = src->next;
			break;
		}
	}
	pthread_mutex_unlock(&eq->src_lock);
	if (src->fd >= 0)
		epoll_ctl(eq->epfd, EPOLL_CTL_DEL, src->fd, NULL);

	/* Nobody may read a dangling fid. */
	pthread_mutex_lock(&eq->lock);
	for (ep = &eq->head; (e = *ep);) {
		if (fdr_entry_owner(e) == owner) {
			*ep = e->next;
			fdr_eq_drop_entry(e);
			continue;
		}
		prev = e;
		ep = &e->next;
	}
	eq->tail = prev;
	if (!eq->head) {
		uint64_t v;

		if (read(eq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&eq->lock);
	atomic_fetch_sub(&eq->refs, 1);
}

static void fdr_eq_pump(struct fdr_eq *eq)
{
	struct fdr_eq_src *src;

	pthread_mutex_lock(&eq->src_lock);
	for (src = eq->srcs; src; src = src->next)
		src->pump(src);
	pthread_mutex_unlock(&eq->src_lock);
}

/* ---- fi_ops_eq ---- */

static void fdr_eq_release_last_err(struct fdr_eq *eq)
{
	free(eq->last_err);
	eq->last_err = NULL;
}

static ssize_t fdr_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct fdr_eq_entry *e;
	struct fdr_eq *eq;
	ssize_t ret;

	if (!eq_fid || !event || (!buf && len))
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdr_eq_of(eq_fid);
	fdr_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	fdr_eq_release_last_err(eq);
	e = eq->head;
	if (!e) {
		ret = -FI_EAGAIN;
	} else if (e->is_error) {
		ret = -FI_EAVAIL;
	} else if (len < e->len) {
		ret = -FI_ETOOSMALL;
	} else {
		*event = e->event;
		memcpy(buf, e->data, e->len);
		ret = (ssize_t)e->len;
		if (!(flags & FI_PEEK)) {
			fdr_eq_pop_locked(eq);
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t fdr_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			      uint64_t flags)
{
	struct fdr_eq_entry *e;
	struct fdr_eq *eq;
	void *user_data = NULL;
	size_t user_size = 0;

	if (!eq_fid || !buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdr_eq_of(eq_fid);
	/* Before 1.5 err_data was output only. */
	if (FI_VERSION_GE(eq->fabric->version, FI_VERSION(1, 5))) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
	}
	fdr_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	fdr_eq_release_last_err(eq);
	e = eq->head;
	if (!e || !e->is_error) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	*buf = e->err;
	if (user_size && user_data) {
		buf->err_data = user_data;
		buf->err_data_size = e->len < user_size ? e->len : user_size;
		memcpy(user_data, e->data, buf->err_data_size);
	} else {
		/* ours, valid until the next read of this EQ */
		buf->err_data = e->len ? e->data : NULL;
		buf->err_data_size = e->len;
	}
	if (!(flags & FI_PEEK)) {
		fdr_eq_pop_locked(eq);
		if (buf->err_data == e->data)
			eq->last_err = e;
		else
			free(e);
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t fdr_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct fdr_eq_entry *e;

	(void)flags;
	/* A zero-length entry would read back as an event nobody can parse. */
	if (!eq_fid || !buf || !len || len > FDR_EQ_WRITE_MAX)
		return -FI_EINVAL;
	e = calloc(1, sizeof(*e) + len);
	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	memcpy(e->data, buf, len);
	fdr_eq_push(fdr_eq_of(eq_fid), e);
	return (ssize_t)len;
}

static int fdr_ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int)((now.tv_sec - start->tv_sec) * 1000 +
		     (now.tv_nsec - start->tv_nsec) / 1000000);
}

static ssize_t fdr_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct epoll_event ev;
	struct timespec start;
	struct fdr_eq *eq;
	ssize_t ret;
	int wait_ms;

	if (!eq_fid)
		return -FI_EINVAL;
	eq = fdr_eq_of(eq_fid);
	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ret = fdr_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		wait_ms = -1;
		if (timeout >= 0) {
			wait_ms = timeout - fdr_ms_since(&start);
			if (wait_ms <= 0)
				return -FI_EAGAIN;
		}
		if (epoll_wait(eq->epfd, &ev, 1, wait_ms) < 0 && errno != EINTR)
			return -fdr_errno(errno);
	}
}

static const char *fdr_eq_strerror(struct fid_eq *eq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *s = prov_errno < 0 ? fi_strerror(-prov_errno) :
			"rdma_cm event status (reject reason or errno)";

	(void)eq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static struct fi_ops_eq fdr_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = fdr_eq_read,
	.readerr = fdr_eq_readerr,
	.write = fdr_eq_write,
	.sread = fdr_eq_sread,
	.strerror = fdr_eq_strerror,
};

int fdr_eq_trywait(struct fdr_eq *eq)
{
	int ret;

	fdr_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	ret = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* ---- fid ---- */

static int fdr_eq_close(struct fid *fid)
{
	struct fdr_eq *eq = fdr_eq_of(fdr_container_of(fid, struct fid_eq, fid));
	struct fdr_eq_entry *e;

	if (atomic_load(&eq->refs))
		return -FI_EBUSY;
	while ((e = eq->head)) {
		eq->head = e->next;
		fdr_eq_drop_entry(e);
	}
	fdr_eq_release_last_err(eq);
	close(eq->epfd);
	close(eq->efd);
	pthread_mutex_destroy(&eq->lock);
	pthread_mutex_destroy(&eq->src_lock);
	atomic_fetch_sub(&eq->fabric->refs, 1);
	free(eq);
	return 0;
}

static int fdr_eq_control(struct fid *fid, int command, void *arg)
{
	struct fdr_eq *eq = fdr_eq_of(fdr_container_of(fid, struct fid_eq, fid));

	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		if (eq->wait_obj == FI_WAIT_NONE)
			return -FI_ENODATA;
		*(int *)arg = eq->epfd;
		return 0;
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		*(enum fi_wait_obj *)arg = eq->wait_obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops fdr_eq_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = fdr_eq_close,
	.bind = fd_no_fid_bind,
	.control = fdr_eq_control,
	.ops_open = fd_no_fid_ops_open,
	.tostr = NULL,
	.ops_set = NULL,
};

struct fdr_eq *fdr_eq_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EQ || fid->ops != &fdr_eq_fid_ops)
		return NULL;
	return fdr_eq_of(fdr_container_of(fid, struct fid_eq, fid));
}

int fdr_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	enum fi_wait_obj wait = FI_WAIT_FD;
	struct epoll_event ev;
	struct fdr_eq *eq;
	int err;

	if (!fabric || !eq_out)
		return -FI_EINVAL;
	if (attr && (attr->flags & ~(uint64_t)(FI_WRITE | FI_AFFINITY)))
		return -FI_EBADFLAGS;
	if (attr) {
		switch (attr->wait_obj) {
		case FI_WAIT_NONE:
			wait = FI_WAIT_NONE;
			break;
		case FI_WAIT_UNSPEC:
		case FI_WAIT_FD:
			break;
		default:
			return -FI_ENOSYS;
		}
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (eq->efd < 0 || eq->epfd < 0 ||
	    epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->efd, &ev)) {
		err = errno;
		if (eq->efd >= 0)
			close(eq->efd);
		if (eq->epfd >= 0)
			close(eq->epfd);
		free(eq);
		return -fdr_errno(err);
	}
	pthread_mutex_init(&eq->lock, NULL);
	pthread_mutex_init(&eq->src_lock, NULL);
	eq->fabric = fdr_container_of(fabric, struct fdr_fabric, fabric_fid);
	eq->wait_obj = wait;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &fdr_eq_fid_ops;
	eq->eq_fid.ops = &fdr_eq_ops;
	atomic_fetch_add(&eq->fabric->refs, 1);
	*eq_out = &eq->eq_fid;
	return 0;
}
