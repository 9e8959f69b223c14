/* Event queue. rdma_cm events are taken from the EQ's event channel when
 * the application reads, translated (the connection state machine moves on
 * here), acknowledged at once and queued as ready-made entries, so peeking,
 * error entries and fi_eq_write all work on one list. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fdv_internal.h"

static struct fdv_eq *fdv_eq_of(struct fid_eq *eq)
{
	return FDV_OBJ(struct fdv_eq, eq_fid, eq);
}

/* Called with the lock held. */
static void fdv_eq_push(struct fdv_eq *eq, struct fdv_eq_entry *e)
{
	uint64_t one = 1;

	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	/* Keep the wait fd readable while entries wait in the list. */
	if (write(eq->efd, &one, sizeof(one)) < 0)
		FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
}

static void fdv_eq_pop(struct fdv_eq *eq)
{
	uint64_t v;

	eq->head = eq->head->next;
	if (!eq->head) {
		eq->tail = NULL;
		if (read(eq->efd, &v, sizeof(v)) < 0)
			FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
	}
}

/* Queue an event whose payload is `len` bytes at `data`. */
int fdv_eq_push_event(struct fdv_eq *eq, uint32_t event, const void *data,
		      size_t len)
{
	struct fdv_eq_entry *e = calloc(1, sizeof(*e) + len);

	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	if (len)
		memcpy(e->data, data, len);
	fdv_eq_push(eq, e);
	return 0;
}

/* Queue a CM event (fi_eq_cm_entry followed by the connection data). */
int fdv_eq_push_cm(struct fdv_eq *eq, uint32_t event, struct fid *fid,
		   struct fi_info *info, const uint8_t *data, size_t len)
{
	struct fdv_eq_entry *e;
	struct fi_eq_cm_entry *cm;

	e = calloc(1, sizeof(*e) + sizeof(*cm) + len);
	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = sizeof(*cm) + len;
	cm = (struct fi_eq_cm_entry *)(void *)e->data;
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	fdv_eq_push(eq, e);
	return 0;
}

int fdv_eq_push_error(struct fdv_eq *eq, struct fid *fid, void *context,
		      int err, int prov_errno, const void *err_data,
		      size_t err_len)
{
	struct fdv_eq_entry *e = calloc(1, sizeof(*e) + err_len);

	if (!e)
		return -FI_ENOMEM;
	e->is_error = true;
	e->len = err_len;
	if (err_len)
		memcpy(e->data, err_data, err_len);
	e->err.fid = fid;
	e->err.context = context;
	e->err.err = err;
	e->err.prov_errno = prov_errno;
	fdv_eq_push(eq, e);
	return 0;
}

/* ---- connect deadlines ---- */

static uint64_t fdv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The timer follows the earliest deadline (0 disarms it). Lock held. */
static void fdv_eq_arm_deadline(struct fdv_eq *eq)
{
	struct itimerspec its;
	struct fdv_msg_ep *ep;
	uint64_t first = 0;

	for (ep = eq->connecting; ep; ep = ep->connecting_next)
		if (!first || ep->connect_deadline_ns < first)
			first = ep->connect_deadline_ns;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (timerfd_settime(eq->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		FD_WARN(FD_LOG_EQ, "timerfd_settime: %s", strerror(errno));
}

void fdv_eq_watch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep,
			  unsigned int ms)
{
	pthread_mutex_lock(&eq->lock);
	ep->connect_deadline_ns = fdv_now_ns() + (uint64_t)ms * 1000000u;
	ep->connecting_next = eq->connecting;
	eq->connecting = ep;
	fdv_eq_arm_deadline(eq);
	pthread_mutex_unlock(&eq->lock);
}

void fdv_eq_unwatch_connect_locked(struct fdv_eq *eq, struct fdv_msg_ep *ep)
{
	struct fdv_msg_ep **pp;

	if (!ep->connect_deadline_ns)
		return;
	for (pp = &eq->connecting; *pp; pp = &(*pp)->connecting_next) {
		if (*pp == ep) {
			*pp = ep->connecting_next;
			break;
		}
	}
	ep->connect_deadline_ns = 0;
	ep->connecting_next = NULL;
	fdv_eq_arm_deadline(eq);
}

void fdv_eq_unwatch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep)
{
	pthread_mutex_lock(&eq->lock);
	fdv_eq_unwatch_connect_locked(eq, ep);
	pthread_mutex_unlock(&eq->lock);
}

/* After the channel is drained (an answer that arrived in time wins),
 * connects past their deadline fail. Lock held. */
static void fdv_eq_expire_connects(struct fdv_eq *eq)
{
	struct fdv_msg_ep **pp, *ep;
	uint64_t now, ticks;
	ssize_t n;

	if (!eq->connecting)
		return;
	/* clears the fd's readiness; EAGAIN when it has not fired */
	n = read(eq->tfd, &ticks, sizeof(ticks));
	(void)n;
	now = fdv_now_ns();
	for (pp = &eq->connecting; (ep = *pp);) {
		if (ep->connect_deadline_ns > now) {
			pp = &ep->connecting_next;
			continue;
		}
		*pp = ep->connecting_next;
		ep->connecting_next = NULL;
		ep->connect_deadline_ns = 0;
		fdv_cm_connect_expired(eq, ep);
	}
	fdv_eq_arm_deadline(eq);
}

/* Take every pending rdma_cm event off the channel. Lock held. */
static void fdv_eq_pump(struct fdv_eq *eq)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(eq->channel, &ev))
		fdv_cm_handle_event(eq, ev);
	fdv_eq_expire_connects(eq);
}

static void fdv_eq_release_last_err(struct fdv_eq *eq)
{
	free(eq->last_err);
	eq->last_err = NULL;
}

static ssize_t fdv_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct fdv_eq *eq;
	struct fdv_eq_entry *e;
	ssize_t ret;

	if (!eq_fid || !event || (!buf && len))
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdv_eq_of(eq_fid);
	pthread_mutex_lock(&eq->lock);
	fdv_eq_pump(eq);
	fdv_eq_release_last_err(eq);
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
			fdv_eq_pop(eq);
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t fdv_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			      uint64_t flags)
{
	struct fdv_eq *eq;
	struct fdv_eq_entry *e;
	void *user_data = NULL;
	size_t user_size = 0;

	if (!eq_fid || !buf)
		return -FI_EINVAL;
	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdv_eq_of(eq_fid);
	if (FI_VERSION_GE(eq->fabric->version, FI_VERSION(1, 5))) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
	}
	pthread_mutex_lock(&eq->lock);
	fdv_eq_pump(eq);
	fdv_eq_release_last_err(eq);
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
		memcpy(user_data, e->data, buf->err_data_size);
	} else {
		/* Ours, valid until the next read of this EQ. */
		buf->err_data = e->len ? e->data : NULL;
		buf->err_data_size = e->len;
	}
	if (!(flags & FI_PEEK)) {
		fdv_eq_pop(eq);
		if (buf->err_data == e->data)
			eq->last_err = e;
		else
			free(e);
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

/* Bound on a user event: an entry is copied whole into the queue, and a
 * length far beyond any real event is a caller's mistake, better refused
 * than tried as an allocation. */
#define FDV_EQ_WRITE_MAX (64 * 1024)

static ssize_t fdv_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct fdv_eq *eq;
	int ret;

	(void)flags;
	/* A zero-length entry would read back as a 0-byte event, which no
	 * reader can interpret. */
	if (!eq_fid || !buf || !len || len > FDV_EQ_WRITE_MAX)
		return -FI_EINVAL;
	eq = fdv_eq_of(eq_fid);
	pthread_mutex_lock(&eq->lock);
	ret = fdv_eq_push_event(eq, event, buf, len);
	pthread_mutex_unlock(&eq->lock);
	return ret ? ret : (ssize_t)len;
}

static int fdv_ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int)((now.tv_sec - start->tv_sec) * 1000 +
		     (now.tv_nsec - start->tv_nsec) / 1000000);
}

static ssize_t fdv_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct fdv_eq *eq;
	struct epoll_event ev;
	struct timespec start;
	ssize_t ret;
	int wait_ms, rc;

	if (!eq_fid)
		return -FI_EINVAL;
	eq = fdv_eq_of(eq_fid);
	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ret = fdv_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		wait_ms = -1;
		if (timeout >= 0) {
			wait_ms = timeout - fdv_ms_since(&start);
			if (wait_ms <= 0)
				return -FI_EAGAIN;
		}
		rc = epoll_wait(eq->epfd, &ev, 1, wait_ms);
		if (rc < 0 && errno != EINTR)
			return -fdv_errno_to_fi(errno);
	}
}

static const char *fdv_eq_strerror(struct fid_eq *eq, int prov_errno,
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

static struct fi_ops_eq fdv_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = fdv_eq_read,
	.readerr = fdv_eq_readerr,
	.write = fdv_eq_write,
	.sread = fdv_eq_sread,
	.strerror = fdv_eq_strerror,
};

int fdv_eq_trywait(struct fdv_eq *eq)
{
	int ret;

	pthread_mutex_lock(&eq->lock);
	fdv_eq_pump(eq);
	ret = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

int fdv_eq_attach(struct fdv_eq *eq, struct rdma_cm_id *id)
{
	if (id->channel == eq->channel)
		return 0;
	if (rdma_migrate_id(id, eq->channel))
		return -fdv_errno_to_fi(errno);
	return 0;
}

static void fdv_eq_drop_entry(struct fdv_eq_entry *e)
{
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)e->data;

	if (!e->is_error && e->event == FI_CONNREQ && cm->info) {
		struct fid *h = cm->info->handle;
		struct fdv_connreq *req = h ?
			FDV_OBJ(struct fdv_connreq, handle, h) : NULL;

		if (req) {
			rdma_reject(req->id, NULL, 0);
			rdma_destroy_id(req->id);
			free(req);
			cm->info->handle = NULL;
		}
		fi_freeinfo(cm->info);
	}
	free(e);
}

/* An object is closing: drop the entries that name it, so nobody reads a
 * dangling fid, and release connection requests nobody will answer. */
void fdv_eq_forget(struct fdv_eq *eq, const struct fid *fid)
{
	struct fdv_eq_entry **pp, *e, *prev = NULL;

	pthread_mutex_lock(&eq->lock);
	for (pp = &eq->head; (e = *pp);) {
		const struct fid *owner = e->is_error ? e->err.fid :
			(e->len >= sizeof(struct fi_eq_cm_entry) &&
			 e->event >= FI_CONNREQ && e->event <= FI_SHUTDOWN ?
			 ((struct fi_eq_cm_entry *)(void *)e->data)->fid : NULL);

		if (owner == fid) {
			*pp = e->next;
			fdv_eq_drop_entry(e);
			continue;
		}
		prev = e;
		pp = &e->next;
	}
	eq->tail = prev;
	pthread_mutex_unlock(&eq->lock);
}

static int fdv_eq_close(struct fid *fid)
{
	struct fdv_eq *eq = FDV_OBJ(struct fdv_eq, eq_fid.fid, fid);
	struct fdv_eq_entry *e;

	if (atomic_load(&eq->refs))
		return -FI_EBUSY;
	while ((e = eq->head)) {
		eq->head = e->next;
		fdv_eq_drop_entry(e);
	}
	fdv_eq_release_last_err(eq);
	rdma_destroy_event_channel(eq->channel);
	close(eq->epfd);
	close(eq->efd);
	close(eq->tfd);
	pthread_mutex_destroy(&eq->lock);
	atomic_fetch_sub(&eq->fabric->refs, 1);
	free(eq);
	return 0;
}

static int fdv_eq_control(struct fid *fid, int command, void *arg)
{
	struct fdv_eq *eq = FDV_OBJ(struct fdv_eq, eq_fid.fid, fid);

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

static struct fi_ops fdv_eq_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = fdv_eq_close,
	.bind = fd_no_fid_bind,
	.control = fdv_eq_control,
	.ops_open = fd_no_fid_ops_open,
	.tostr = NULL,
	.ops_set = NULL,
};

int fdv_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	struct fdv_fabric *fab;
	struct fdv_eq *eq;
	struct epoll_event ev;
	enum fi_wait_obj wait = FI_WAIT_FD;
	int err;

	if (!fabric || !eq_out)
		return -FI_EINVAL;
	fab = FDV_OBJ(struct fdv_fabric, fabric_fid, fabric);
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
	eq->epfd = eq->efd = eq->tfd = -1;
	eq->channel = rdma_create_event_channel();
	if (!eq->channel) {
		err = errno;
		goto err;
	}
	if (fcntl(eq->channel->fd, F_SETFL,
		  fcntl(eq->channel->fd, F_GETFL) | O_NONBLOCK)) {
		err = errno;
		goto err;
	}
	eq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	eq->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (eq->efd < 0 || eq->epfd < 0 || eq->tfd < 0) {
		err = errno;
		goto err;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->channel->fd, &ev) ||
	    epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->efd, &ev) ||
	    epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->tfd, &ev)) {
		err = errno;
		goto err;
	}
	pthread_mutex_init(&eq->lock, NULL);
	eq->fabric = fab;
	eq->wait_obj = wait;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &fdv_eq_fid_ops;
	eq->eq_fid.ops = &fdv_eq_ops;
	atomic_fetch_add(&fab->refs, 1);
	*eq_out = &eq->eq_fid;
	return 0;
err:
	if (eq->channel)
		rdma_destroy_event_channel(eq->channel);
	if (eq->efd >= 0)
		close(eq->efd);
	if (eq->epfd >= 0)
		close(eq->epfd);
	free(eq);
	return -fdv_errno_to_fi(err);
}
