/* Event queues of the RDM fabric. Until issue 25 fi_eq_open on an RDM
 * fabric handed out a verbs EQ, which held nothing the layer wrote: an RDM
 * endpoint makes its connections on an EQ of its own. The layer's events
 * (FI_AV_COMPLETE of an AV opened with FI_EVENT, FI_JOIN_COMPLETE of a
 * collective join) and their error entries need a queue the layer can
 * write both kinds into, so the RDM EQ is the layer's: one list of
 * entries in arrival order (an error at the head makes fi_eq_read say
 * -FI_EAVAIL, as fi_eq(3) has it), and an eventfd that is readable while
 * the list is not empty (FI_GETWAIT, fi_eq_sread, fi_trywait). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

struct fdm_eq_entry {
	struct fdm_eq_entry *next;
	uint32_t event;
	bool is_error;
	struct fi_eq_err_entry err;	/* is_error */
	size_t len;
	uint8_t data[];			/* the event's bytes */
};

struct fdm_eq {
	struct fid_eq eq_fid;
	pthread_mutex_t lock;
	struct fdm_eq_entry *head, *tail;
	/* handed out by fi_eq_readerr (its err_data points here); freed by
	 * the next read */
	struct fdm_eq_entry *last_err;
	enum fi_wait_obj wait_obj;
	int efd;			/* readable while head != NULL */
	int refs;			/* AVs and endpoints bound */
};

/* A user event is copied whole: anything far beyond a real event is a
 * mistake better refused than tried as an allocation. */
#define FDM_EQ_WRITE_MAX	(64 * 1024)

static struct fi_ops_eq fdm_eq_ops;

static struct fdm_eq *fdm_eq_of(struct fid_eq *eq)
{
	return fdv_container_of(eq, struct fdm_eq, eq_fid);
}

struct fdm_eq *fdm_eq_from_fid(struct fid *fid)
{
	struct fid_eq *eq;

	if (!fid || fid->fclass != FI_CLASS_EQ)
		return NULL;
	eq = fdv_container_of(fid, struct fid_eq, fid);
	/* only ours: an EQ of another fabric has no list to write into */
	return eq->ops == &fdm_eq_ops ? fdm_eq_of(eq) : NULL;
}

void fdm_eq_ref(struct fdm_eq *eq, int delta)
{
	__atomic_fetch_add(&eq->refs, delta, __ATOMIC_RELAXED);
}

/* Lock held. */
static void fdm_eq_push(struct fdm_eq *eq, struct fdm_eq_entry *e)
{
	uint64_t one = 1;

	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	if (write(eq->efd, &one, sizeof(one)) < 0)
		FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
}

static void fdm_eq_pop(struct fdm_eq *eq)
{
	uint64_t v;

	eq->head = eq->head->next;
	if (!eq->head) {
		eq->tail = NULL;
		if (read(eq->efd, &v, sizeof(v)) < 0)
			FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
	}
}

int fdm_eq_write_event(struct fdm_eq *eq, uint32_t event, const void *buf, size_t len)
{
	struct fdm_eq_entry *e = calloc(1, sizeof(*e) + len);

	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	memcpy(e->data, buf, len);
	pthread_mutex_lock(&eq->lock);
	fdm_eq_push(eq, e);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

int fdm_eq_write_error(struct fdm_eq *eq, struct fid *fid, void *context,
		       uint64_t data, int err)
{
	struct fdm_eq_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->is_error = true;
	e->err.fid = fid;
	e->err.context = context;
	e->err.data = data;
	e->err.err = err;
	pthread_mutex_lock(&eq->lock);
	fdm_eq_push(eq, e);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

static void fdm_eq_release_last_err(struct fdm_eq *eq)
{
	free(eq->last_err);
	eq->last_err = NULL;
}

static ssize_t fdm_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct fdm_eq *eq;
	struct fdm_eq_entry *e;
	ssize_t ret;

	if (!eq_fid || !event || (!buf && len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdm_eq_of(eq_fid);
	pthread_mutex_lock(&eq->lock);
	fdm_eq_release_last_err(eq);
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
			fdm_eq_pop(eq);
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t fdm_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			      uint64_t flags)
{
	struct fdm_eq *eq;
	struct fdm_eq_entry *e;

	if (!eq_fid || !buf)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	eq = fdm_eq_of(eq_fid);
	pthread_mutex_lock(&eq->lock);
	fdm_eq_release_last_err(eq);
	e = eq->head;
	if (!e || !e->is_error) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	/* the layer's errors carry no error data: keep the caller's
	 * buffer, say it holds nothing */
	{
		void *user = buf->err_data;

		*buf = e->err;
		buf->err_data = user;
		buf->err_data_size = 0;
	}
	if (!(flags & FI_PEEK)) {
		fdm_eq_pop(eq);
		free(e);
	}
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t fdm_eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf,
			    size_t len, uint64_t flags)
{
	int ret;

	(void)flags;
	/* a zero-length entry would read back as a 0-byte event, which no
	 * reader can interpret */
	if (!eq_fid || !buf || !len || len > FDM_EQ_WRITE_MAX)
		return -FI_EINVAL;
	ret = fdm_eq_write_event(fdm_eq_of(eq_fid), event, buf, len);
	return ret ? ret : (ssize_t)len;
}

static ssize_t fdm_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct fdm_eq *eq;
	long deadline;
	ssize_t ret;

	if (!eq_fid)
		return -FI_EINVAL;
	eq = fdm_eq_of(eq_fid);
	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_EINVAL;
	deadline = timeout >= 0 ? fdm_now_ms() + timeout : 0;
	for (;;) {
		struct pollfd p = { .fd = eq->efd, .events = POLLIN };
		int wait_ms = -1;

		ret = fdm_eq_read(eq_fid, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		if (timeout >= 0) {
			wait_ms = (int)(deadline - fdm_now_ms());
			if (wait_ms <= 0)
				return -FI_EAGAIN;
		}
		if (poll(&p, 1, wait_ms) < 0 && errno != EINTR)
			return -FI_EIO;
	}
}

static const char *fdm_eq_strerror(struct fid_eq *eq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	(void)eq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static struct fi_ops_eq fdm_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = fdm_eq_read,
	.readerr = fdm_eq_readerr,
	.write = fdm_eq_write,
	.sread = fdm_eq_sread,
	.strerror = fdm_eq_strerror,
};

int fdm_eq_trywait(struct fid_eq *eq_fid)
{
	struct fdm_eq *eq = fdm_eq_of(eq_fid);
	int ret;

	pthread_mutex_lock(&eq->lock);
	ret = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

/* An object is closing: drop the entries that name it, so nobody reads a
 * dangling fid (fi_av(3) asks callers to read first; this keeps those who
 * did not from a use after free). */
void fdm_eq_forget(struct fdm_eq *eq, const struct fid *fid)
{
	struct fdm_eq_entry **pp, *e, *prev = NULL;
	uint64_t v;

	pthread_mutex_lock(&eq->lock);
	for (pp = &eq->head; (e = *pp);) {
		const struct fid *owner = e->is_error ? e->err.fid :
			e->len >= sizeof(struct fi_eq_entry) ?
			((const struct fi_eq_entry *)(const void *)e->data)->fid : NULL;

		if (owner == fid && (e->is_error || e->event == FI_AV_COMPLETE ||
				     e->event == FI_JOIN_COMPLETE)) {
			*pp = e->next;
			free(e);
			continue;
		}
		prev = e;
		pp = &e->next;
	}
	eq->tail = prev;
	if (!eq->head && read(eq->efd, &v, sizeof(v)) < 0)
		FD_DBG(FD_LOG_EQ, "eventfd: %s", strerror(errno));
	pthread_mutex_unlock(&eq->lock);
}

static int fdm_eq_close(struct fid *fid)
{
	struct fdm_eq *eq = fdv_container_of(fid, struct fdm_eq, eq_fid.fid);
	struct fdm_eq_entry *e;

	if (__atomic_load_n(&eq->refs, __ATOMIC_RELAXED))
		return -FI_EBUSY;
	while ((e = eq->head)) {
		eq->head = e->next;
		free(e);
	}
	fdm_eq_release_last_err(eq);
	close(eq->efd);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static int fdm_eq_control(struct fid *fid, int command, void *arg)
{
	struct fdm_eq *eq = fdv_container_of(fid, struct fdm_eq, eq_fid.fid);

	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		if (eq->wait_obj == FI_WAIT_NONE)
			return -FI_ENODATA;
		*(int *)arg = eq->efd;
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

static struct fi_ops fdm_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fdm_eq_close,
	.bind = fd_no_fid_bind,
	.control = fdm_eq_control,
	.ops_open = fd_no_fid_ops_open,
	.tostr = fd_no_fid_tostr,
	.ops_set = fd_no_fid_ops_set,
};

int fdm_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	enum fi_wait_obj wait = FI_WAIT_FD;
	struct fdm_eq *eq;

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
	if (eq->efd < 0) {
		free(eq);
		return -FI_EMFILE;
	}
	pthread_mutex_init(&eq->lock, NULL);
	eq->wait_obj = wait;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &fdm_eq_fi_ops;
	eq->eq_fid.ops = &fdm_eq_ops;
	*eq_out = &eq->eq_fid;
	return 0;
}
