/* The core event queue that every layer's EQ is built on (verbs MSG,
 * rstream, RDM). Not installed.
 *
 * What is the same everywhere lives here: one list of ready-made entries
 * in arrival order (events, user events, error entries; an error at the
 * head makes fi_eq_read say -FI_EAVAIL), fi_eq_read / readerr / write /
 * sread / strerror, FI_GETWAIT / FI_GETWAITOBJ, fi_close's -FI_EBUSY while
 * something is bound, and membership of wait sets and poll sets.
 *
 * The wait fd handed out (FI_GETWAIT) is an epoll fd holding an eventfd
 * that is readable while the list is not empty, plus whatever fds the
 * layer adds (fd_eq_add_fd: verbs' rdma_cm channel and connect timer,
 * rstream's inner verbs EQs), so a waiter wakes when a source has news.
 *
 * What differs is in struct fd_eq_class: how news is taken from the
 * layer's sources into the list (pump, run before every read, trywait and
 * poll), what an unread entry holds that must be released (drop: a
 * connection request to refuse), and the layer's own teardown. A layer
 * embeds struct fd_eq first in its EQ object. */
#ifndef FD_EQ_H
#define FD_EQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include "fd_sets.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fd_eq_entry {
	struct fd_eq_entry *next;
	uint32_t event;
	bool is_error;
	bool user;			/* fi_eq_write: nothing for drop to release */
	struct fi_eq_err_entry err;	/* valid when is_error */
	size_t len;			/* bytes in data */
	uint8_t data[];			/* the event, or the error's err_data */
};

struct fd_eq;

struct fd_eq_class {
	/* Take news from the layer's sources into the list. Called without
	 * the queue lock (it takes it to push). NULL: no sources. */
	void (*pump)(struct fd_eq *eq);
	/* An entry of the layer's that nobody will read (fi_close,
	 * fd_eq_forget): release what it holds. Not called for user entries;
	 * the core frees the entry itself. NULL: nothing held. */
	void (*drop)(struct fd_eq_entry *e);
	/* After the core's teardown in fi_close: the layer's own, and free
	 * the object. NULL: nothing of the layer's; the core frees the
	 * object (fd_eq_new's). */
	void (*close)(struct fd_eq *eq);
	/* fi_eq_strerror of a prov_errno >= 0; NULL: fi_strerror of it. */
	const char *status_text;
};

struct fd_eq {
	struct fid_eq eq_fid;
	const struct fd_eq_class *cls;
	uint32_t version;		/* fabric's API version (readerr's err_data) */
	enum fi_wait_obj wait_obj;	/* FI_WAIT_NONE, FI_WAIT_FD or FI_WAIT_SET */
	int epfd;			/* FI_GETWAIT: efd + the layer's fds */
	int efd;			/* readable while head != NULL */
	pthread_mutex_t lock;		/* the list */
	struct fd_eq_entry *head, *tail;
	struct fd_eq_entry *last_err;	/* readerr's err_data, until the next read */
	atomic_int refs;		/* objects bound: fi_close says -FI_EBUSY */
	/* The opening fabric's count, held from init to fini so that the
	 * fabric's fi_close says -FI_EBUSY while the EQ is open (NULL: none). */
	atomic_int *owner_refs;
	struct fd_waitable waitable;	/* wait sets and poll sets */
};

/* fi_eq_open's common part: checks attr (flags, wait_obj; FI_WAIT_SET
 * needs a wait set of this library), makes the wait fds, fills the fid
 * (class FI_CLASS_EQ, the core's ops) and joins attr's wait set. On error
 * nothing is left to undo. */
int fd_eq_init(struct fd_eq *eq, const struct fi_eq_attr *attr, uint32_t version,
	       atomic_int *owner_refs, const struct fd_eq_class *cls, void *context);
/* A layer's EQ object of size bytes (struct fd_eq first), zeroed and
 * through fd_eq_init; on error nothing is left. */
int fd_eq_new(size_t size, const struct fi_eq_attr *attr, uint32_t version,
	      atomic_int *owner_refs, const struct fd_eq_class *cls, void *context,
	      struct fd_eq **out);
/* Undo fd_eq_init for a layer whose open fails after it (drops entries). */
void fd_eq_fini(struct fd_eq *eq);
/* The EQ behind a fid, if it is one of this library's (any layer's), or,
 * _of_class, one of that layer's (cls); NULL if not. */
struct fd_eq *fd_eq_of_fid(struct fid *fid);
struct fd_eq *fd_eq_of_class(struct fid *fid, const struct fd_eq_class *cls);

/* One more fd for the wait fd to wake on, or one fewer. */
int fd_eq_add_fd(struct fd_eq *eq, int fd);
void fd_eq_del_fd(struct fd_eq *eq, int fd);

/* Queue an entry. _locked: the caller holds eq->lock (a pump that pushes
 * while it walks state the same lock guards). -FI_ENOMEM. */
int fd_eq_push_event_locked(struct fd_eq *eq, uint32_t event, const void *data,
			    size_t len);
int fd_eq_push_event(struct fd_eq *eq, uint32_t event, const void *data, size_t len);
/* FI_CONNREQ / FI_CONNECTED / FI_SHUTDOWN: fi_eq_cm_entry + data. */
int fd_eq_push_cm_locked(struct fd_eq *eq, uint32_t event, struct fid *fid,
			 struct fi_info *info, const void *data, size_t len);
int fd_eq_push_error_locked(struct fd_eq *eq, struct fid *fid, void *context,
			    uint64_t data, int err, int prov_errno,
			    const void *err_data, size_t err_len);
int fd_eq_push_error(struct fd_eq *eq, struct fid *fid, void *context,
		     uint64_t data, int err, int prov_errno,
		     const void *err_data, size_t err_len);

/* An object is closing: drop the entries of the layer's that name it, so
 * nobody reads a dangling fid. */
void fd_eq_forget(struct fd_eq *eq, const struct fid *fid);
/* fi_trywait on the EQ: pump, then 0 if nothing is queued (the wait fd
 * may be slept on), -FI_EAGAIN if something is. */
int fd_eq_trywait(struct fd_eq *eq);

static inline void fd_eq_ref(struct fd_eq *eq, int delta)
{
	atomic_fetch_add_explicit(&eq->refs, delta, memory_order_relaxed);
}

#ifdef __cplusplus
}
#endif

#endif
