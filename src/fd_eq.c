/* The core event queue (src/include/fd_eq.h says what a layer adds). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fd_eq.h"
#include "fd_util.h"

/* Bound on fi_eq_write: an entry is copied whole, and a length far beyond
 * any real event is a caller's mistake, better refused than allocated. */
#define FD_EQ_WRITE_MAX (64 * 1024)

static struct fi_ops fd_eq_fi_ops;

static struct fd_eq *fd_eq_of(struct fid_eq *eq)
{
	return fd_container_of(eq, struct fd_eq, eq_fid);
}

struct fd_eq *fd_eq_of_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EQ || fid->ops != &fd_eq_fi_ops)
		return NULL;
	return fd_container_of(fid, struct fd_eq, eq_fid.fid);
}

struct fd_eq *fd_eq_of_class(struct fid *fid, const struct fd_eq_class *cls)
{
	struct fd_eq *eq = fd_eq_of_fid(fid);

	return eq && eq->cls == cls ? eq : NULL;
}

/* ---- the list (lock held) ---- */

static void fd_eq_push_locked(struct fd_eq *eq, struct fd_eq_entry *e)
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

/* The list went empty: the wait fd stops being readable. */
static void fd_eq_drained(struct fd_eq *eq)
{
	uint64_t v;

	eq->tail = NULL;
	if (read(eq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
}

static void fd_eq_pop_locked(struct fd_eq *eq)
{
	eq->head = eq->head->next;
	if (!eq->head)
		fd_eq_drained(eq);
}

static void fd_eq_drop(struct fd_eq *eq, struct fd_eq_entry *e)
{
	if (!e->user && eq->cls->drop)
		eq->cls->drop(e);
	free(e);
}

static struct fd_eq_entry *fd_eq_entry_new(uint32_t event, size_t len)
{
	struct fd_eq_entry *e = calloc(1, sizeof(*e) + len);

	if (e) {
		e->event = event;
		e->len = len;
	}
	return e;
}

int fd_eq_push_event_locked(struct fd_eq *eq, uint32_t event, const void *data,
			    size_t len)
{
	struct fd_eq_entry *e = fd_eq_entry_new(event, len);

	if (!e)
		return -FI_ENOMEM;
	if (len)
		memcpy(e->data, data, len);
	fd_eq_push_locked(eq, e);
	return 0;
}

int fd_eq_push_event(struct fd_eq *eq, uint32_t event, const void *data, size_t len)
{
	int ret;

	pthread_mutex_lock(&eq->lock);
	ret = fd_eq_push_event_locked(eq, event, data, len);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

int fd_eq_push_cm_locked(struct fd_eq *eq, uint32_t event, struct fid *fid,
			 struct fi_info *info, const void *data, size_t len)
{
	struct fd_eq_entry *e = fd_eq_entry_new(event, sizeof(struct fi_eq_cm_entry) + len);
	struct fi_eq_cm_entry *cm;

	if (!e)
		return -FI_ENOMEM;
	cm = (struct fi_eq_cm_entry *)(void *)e->data;
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	fd_eq_push_locked(eq, e);
	return 0;
}

int fd_eq_push_error_locked(struct fd_eq *eq, struct fid *fid, void *context,
			    uint64_t data, int err, int prov_errno,
			    const void *err_data, size_t err_len)
{
	struct fd_eq_entry *e = fd_eq_entry_new(0, err_len);

	if (!e)
		return -FI_ENOMEM;
	e->is_error = true;
	if (err_len)
		memcpy(e->data, err_data, err_len);
	e->err.fid = fid;
	e->err.context = context;
	e->err.data = data;
	e->err.err = err;
	e->err.prov_errno = prov_errno;
	fd_eq_push_locked(eq, e);
	return 0;
}

int fd_eq_push_error(struct fd_eq *eq, struct fid *fid, void *context,
		     uint64_t data, int err, int prov_errno,
		     const void *err_data, size_t err_len)
{
	int ret;

	pthread_mutex_lock(&eq->lock);
	ret = fd_eq_push_error_locked(eq, fid, context, data, err, prov_errno,
				      err_data, err_len);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* The object an entry of the layer's speaks of: an error's fid, a CM
 * event's endpoint, an asynchronous completion's object; NULL for user
 * entries (their bytes are the user's, not ours to interpret). */
static const struct fid *fd_eq_entry_owner(const struct fd_eq_entry *e)
{
	if (e->is_error)
		return e->err.fid;
	if (e->user)
		return NULL;
	switch (e->event) {
	case FI_CONNREQ:
	case FI_CONNECTED:
	case FI_SHUTDOWN:
	case FI_AV_COMPLETE:
	case FI_JOIN_COMPLETE:
	case FI_MR_COMPLETE:
		/* fi_eq_cm_entry and fi_eq_entry both start with the fid, and
		 * nothing else is needed to match it: a CM event without
		 * private data (every FI_SHUTDOWN) is only 16 bytes, shorter
		 * than a fi_eq_entry, so the length asked is the fid's own. */
		if (e->len >= sizeof(struct fid *))
			return *(struct fid *const *)(const void *)e->data;
		return NULL;
	default:
		return NULL;
	}
}

void fd_eq_forget(struct fd_eq *eq, const struct fid *fid)
{
	struct fd_eq_entry **pp, *e, *prev = NULL;

	pthread_mutex_lock(&eq->lock);
	for (pp = &eq->head; (e = *pp);) {
		if (fd_eq_entry_owner(e) == fid) {
			*pp = e->next;
			fd_eq_drop(eq, e);
			continue;
		}
		prev = e;
		pp = &e->next;
	}
	eq->tail = prev;
	if (!eq->head)
		fd_eq_drained(eq);
	pthread_mutex_unlock(&eq->lock);
}

static void fd_eq_pump(struct fd_eq *eq)
{
	if (eq->cls->pump)
		eq->cls->pump(eq);
}

/* ---- fi_ops_eq ---- */

static void fd_eq_release_last_err(struct fd_eq *eq)
{
	free(eq->last_err);
	eq->last_err = NULL;
}

static ssize_t fd_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			  size_t len, uint64_t flags)
{
	struct fd_eq_entry *e;
	struct fd_eq *eq;
	ssize_t ret;

	if (!eq_fid || !event || (!buf && len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fd_eq_of(eq_fid);
	fd_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	fd_eq_release_last_err(eq);
	e = eq->head;
	if (!e) {
		ret = -FI_EAGAIN;
	} else if (e->is_error) {
		ret = -FI_EAVAIL;
	} else if (len < e->len) {
		ret = -FI_ETOOSMALL;
	} else {
		*event = e->event;
		if (e->len)
			memcpy(buf, e->data, e->len);
		ret = (ssize_t)e->len;
		if (!(flags & FI_PEEK)) {
			fd_eq_pop_locked(eq);
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t fd_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			     uint64_t flags)
{
	struct fd_eq_entry *e;
	struct fd_eq *eq;
	void *user_data = NULL;
	size_t user_size = 0;

	if (!eq_fid || !buf)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fd_eq_of(eq_fid);
	/* Before 1.5 err_data was output only. */
	if (FI_VERSION_GE(eq->version, FI_VERSION(1, 5))) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
	}
	fd_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	fd_eq_release_last_err(eq);
	e = eq->head;
	if (!e || !e->is_error) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	*buf = e->err;
	if (user_size && user_data) {
		/* The caller's buffer: copy what fits, say how much. */
		buf->err_data = user_data;
		buf->err_data_size = e->len < user_size ? e->len : user_size;
		if (buf->err_data_size)
			memcpy(user_data, e->data, buf->err_data_size);
	} else {
		/* Ours, valid until the next read of this EQ. */
		buf->err_data = e->len ? e->data : NULL;
		buf->err_data_size = e->len;
	}
	if (!(flags & FI_PEEK)) {
		fd_eq_pop_locked(eq);
		if (e->len && buf->err_data == e->data)
			eq->last_err = e;
		else
			free(e);
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t fd_eq_write(struct fid_eq *eq_fid, uint32_t event,
			   const void *buf, size_t len, uint64_t flags)
{
	struct fd_eq_entry *e;
	struct fd_eq *eq;

	(void)flags;
	/* A zero-length entry would read back as an event nobody can parse. */
	if (!eq_fid || !buf || !len || len > FD_EQ_WRITE_MAX)
		return -FI_EINVAL;
	eq = fd_eq_of(eq_fid);
	e = fd_eq_entry_new(event, len);
	if (!e)
		return -FI_ENOMEM;
	e->user = true;
	memcpy(e->data, buf, len);
	pthread_mutex_lock(&eq->lock);
	fd_eq_push_locked(eq, e);
	pthread_mutex_unlock(&eq->lock);
	return (ssize_t)len;
}

static ssize_t fd_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, int timeout, uint64_t flags)
{
	struct epoll_event ev;
	struct fd_eq *eq;
	long start;
	ssize_t ret;
	int wait_ms;

	if (!eq_fid)
		return -FI_EINVAL;
	eq = fd_eq_of(eq_fid);
	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	start = fd_now_ms();
	for (;;) {
		ret = fd_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		wait_ms = fd_ms_left(start, timeout);
		if (!wait_ms)
			return -FI_EAGAIN;
		if (epoll_wait(eq->epfd, &ev, 1, wait_ms) < 0 && errno != EINTR)
			return -fd_errno_to_fi(errno);
	}
}

static const char *fd_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				  const void *err_data, char *buf, size_t len)
{
	struct fd_eq *eq = eq_fid ? fd_eq_of(eq_fid) : NULL;
	const char *s;

	(void)err_data;
	if (prov_errno < 0 || !eq || !eq->cls->status_text)
		s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
	else
		s = eq->cls->status_text;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static struct fi_ops_eq fd_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = fd_eq_read,
	.readerr = fd_eq_readerr,
	.write = fd_eq_write,
	.sread = fd_eq_sread,
	.strerror = fd_eq_strerror,
};

int fd_eq_trywait(struct fd_eq *eq)
{
	int ret;

	fd_eq_pump(eq);
	pthread_mutex_lock(&eq->lock);
	ret = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* ---- wait sets and poll sets ---- */

static int fd_eq_set_trywait(struct fid *fid)
{
	return fd_eq_trywait(fd_container_of(fid, struct fd_eq, eq_fid.fid));
}

/* fi_poll: 1 when an event or an error is queued. */
static int fd_eq_set_ready(struct fid *fid)
{
	return fd_eq_set_trywait(fid) == -FI_EAGAIN;
}

/* ---- fid ---- */

int fd_eq_add_fd(struct fd_eq *eq, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(eq->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -fd_errno_to_fi(errno);
	return 0;
}

void fd_eq_del_fd(struct fd_eq *eq, int fd)
{
	if (epoll_ctl(eq->epfd, EPOLL_CTL_DEL, fd, NULL))
		FD_DBG(FD_LOG_EQ, "epoll_ctl del: %s", strerror(errno));
}

void fd_eq_fini(struct fd_eq *eq)
{
	struct fd_eq_entry *e;

	fd_waitable_fini(&eq->waitable, &eq->eq_fid.fid);
	while ((e = eq->head)) {
		eq->head = e->next;
		fd_eq_drop(eq, e);
	}
	eq->tail = NULL;
	fd_eq_release_last_err(eq);
	close(eq->epfd);
	close(eq->efd);
	pthread_mutex_destroy(&eq->lock);
	if (eq->owner_refs)
		atomic_fetch_sub(eq->owner_refs, 1);
}

static int fd_eq_close(struct fid *fid)
{
	struct fd_eq *eq = fd_container_of(fid, struct fd_eq, eq_fid.fid);

	if (atomic_load(&eq->refs) || fd_waitable_busy(&eq->waitable))
		return -FI_EBUSY;
	fd_eq_fini(eq);
	if (eq->cls->close)
		eq->cls->close(eq);
	else
		free(eq);
	return 0;
}

static int fd_eq_control(struct fid *fid, int command, void *arg)
{
	struct fd_eq *eq = fd_container_of(fid, struct fd_eq, eq_fid.fid);

	/* An EQ in a wait set has a wait fd of its own too (fd_sets.h). */
	return fd_waitable_control(command, arg, &eq->waitable,
				   eq->wait_obj == FI_WAIT_NONE ? -1 : eq->epfd,
				   eq->wait_obj == FI_WAIT_NONE ? FI_WAIT_NONE : FI_WAIT_FD);
}

static struct fi_ops fd_eq_fi_ops =
	FD_FI_OPS(fd_eq_close, fd_no_fid_bind, fd_eq_control, fd_no_fid_tostr);

int fd_eq_init(struct fd_eq *eq, const struct fi_eq_attr *attr, uint32_t version,
	       atomic_int *owner_refs, const struct fd_eq_class *cls, void *context)
{
	enum fi_wait_obj wait = FI_WAIT_FD;
	int ret;

	if (attr && (attr->flags & ~(uint64_t)(FI_WRITE | FI_AFFINITY)))
		return -FI_EBADFLAGS;
	if (attr) {
		/* FI_WAIT_SET: a wait fd of its own, joined to the set below */
		ret = fd_wait_obj_check(attr->wait_obj, attr->wait_set, false);
		if (ret)
			return ret;
		if (attr->wait_obj == FI_WAIT_NONE || attr->wait_obj == FI_WAIT_SET)
			wait = attr->wait_obj;
	}
	memset(eq, 0, sizeof(*eq));
	eq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (eq->efd < 0 || eq->epfd < 0) {
		ret = -fd_errno_to_fi(errno);
		goto err_fds;
	}
	ret = fd_eq_add_fd(eq, eq->efd);
	if (ret)
		goto err_fds;
	pthread_mutex_init(&eq->lock, NULL);
	atomic_init(&eq->refs, 0);
	eq->cls = cls;
	eq->version = version;
	eq->wait_obj = wait;
	fd_fid_init(&eq->eq_fid.fid, FI_CLASS_EQ, context, &fd_eq_fi_ops);
	eq->eq_fid.ops = &fd_eq_ops;
	ret = fd_waitable_open(&eq->waitable, &eq->eq_fid.fid, fd_eq_set_ready,
			       fd_eq_set_trywait,
			       wait == FI_WAIT_SET ? attr->wait_set : NULL);
	if (ret)
		goto err_lock;
	eq->owner_refs = owner_refs;
	if (owner_refs)
		atomic_fetch_add(owner_refs, 1);
	return 0;
err_lock:
	pthread_mutex_destroy(&eq->lock);
err_fds:
	if (eq->efd >= 0)
		close(eq->efd);
	if (eq->epfd >= 0)
		close(eq->epfd);
	return ret;
}

int fd_eq_new(size_t size, const struct fi_eq_attr *attr, uint32_t version,
	      atomic_int *owner_refs, const struct fd_eq_class *cls, void *context,
	      struct fd_eq **out)
{
	struct fd_eq *eq = calloc(1, size);
	int ret;

	if (!eq)
		return -FI_ENOMEM;
	ret = fd_eq_init(eq, attr, version, owner_refs, cls, context);
	if (ret) {
		free(eq);
		return ret;
	}
	*out = eq;
	return 0;
}
