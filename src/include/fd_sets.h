/* Wait sets and poll sets (fi_poll(3)), kept in the core for every
 * provider and layer. Not installed: the core's interface to providers.
 *
 * A wait set (fi_wait_open) is an epoll fd over its members' own wait fds
 * (what fi_control(FI_GETWAIT) on each returns). A CQ, EQ or counter opened
 * with wait_obj FI_WAIT_SET gets a wait fd of its own as with FI_WAIT_FD
 * and joins the set; fi_wait and fi_trywait on the set try each member
 * (arming it) before the set's fd may be slept on.
 *
 * A poll set (fi_poll_open) is a list of CQs, EQs and counters; fi_poll drives
 * each and reports the contexts of those with something to read.
 *
 * What the sets need from a member object beyond the public API is one
 * struct fd_waitable embedded in the object, handed out through
 * fi_control(FD_CTL_WAITABLE); an object that does not answer it cannot
 * join a set (-FI_EINVAL). The object's open calls fd_waitable_init; its
 * close must refuse (-FI_EBUSY) while fd_waitable_busy() and call
 * fd_waitable_fini() (fd_wait_leave() alone while the close may still
 * fail). */
#ifndef FD_SETS_H
#define FD_SETS_H

#include <stdatomic.h>
#include <stdbool.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "fd_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A private fi_control command ("FD" and 1): far from libfabric's own,
 * which are small integers. arg: struct fd_waitable **. */
#define FD_CTL_WAITABLE 0x46440001

struct fd_waitable {
	/* Drive the object's progress; 1 if an entry or an error is queued
	 * to read, 0 if not, a negative fi error. CQs and EQs: a poll set
	 * compares a counter's values itself. */
	int (*ready)(struct fid *fid);
	/* fi_trywait on this object alone: 0 armed (its wait fd turns
	 * readable on the next event), -FI_EAGAIN read first. */
	int (*trywait)(struct fid *fid);
	/* Poll sets holding the object: closing it says -FI_EBUSY. */
	atomic_int pollsets;
	/* The wait set the object was opened into (FI_WAIT_SET), or NULL. */
	struct fid_wait *wait_set;
};

/* At the object's open, before it can be handed out: fills w and records
 * fid as a live object (-FI_ENOMEM). At its close, once it will go:
 * fd_waitable_fini leaves its wait set and forgets it, so adding it to a
 * set afterwards is -FI_EINVAL. */
int fd_waitable_init(struct fd_waitable *w, struct fid *fid,
		     int (*ready)(struct fid *fid), int (*trywait)(struct fid *fid));
void fd_waitable_fini(struct fd_waitable *w, struct fid *fid);
/* fd_waitable_init, then (ws not NULL: the object was opened with
 * FI_WAIT_SET, its wait fd ready) fd_wait_join; nothing left on error. */
int fd_waitable_open(struct fd_waitable *w, struct fid *fid,
		     int (*ready)(struct fid *fid), int (*trywait)(struct fid *fid),
		     struct fid_wait *ws);

/* fabric ops .wait_open: FI_WAIT_UNSPEC and FI_WAIT_FD sets. */
int fd_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		 struct fid_wait **waitset);
/* domain ops .poll_open. */
int fd_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		 struct fid_poll **pollset);

/* For an open with wait_obj FI_WAIT_SET: 0 if ws is a wait set of this
 * library, -FI_EINVAL if not (NULL included). */
int fd_wait_check(const struct fid_wait *ws);
/* After the object (member, with its wait fd ready for FI_GETWAIT) is
 * set up: put it into ws and remember ws in w. */
int fd_wait_join(struct fd_waitable *w, struct fid_wait *ws, struct fid *member);
/* At the member's close: out of its wait set, if any. */
void fd_wait_leave(struct fd_waitable *w, struct fid *member);
/* The wait_obj of a CQ, counter or EQ attribute, checked the one way:
 * FI_WAIT_NONE, FI_WAIT_UNSPEC, FI_WAIT_FD (the object makes an fd of its
 * own), FI_WAIT_SET (the same, and ws must be a wait set of this library:
 * -FI_EINVAL if not), FI_WAIT_YIELD where yield_ok (sread spins): 0;
 * anything else (mutex/cond, pollfd) -FI_ENOSYS. */
int fd_wait_obj_check(enum fi_wait_obj obj, const struct fid_wait *ws, bool yield_ok);
/* A fabric's trywait, for a fid of class FI_CLASS_WAIT. */
int fd_wait_trywait(struct fid *waitset);
/* fabric ops .trywait of every provider and layer: each fid a wait set or
 * a CQ, EQ or counter of this library (its fd_waitable's trywait: 0 armed,
 * -FI_EAGAIN read first); anything else -FI_EINVAL. */
int fd_trywait(struct fid_fabric *fabric, struct fid **fids, int count);

/* The whole fi_control of a set member for the wait commands:
 * FD_CTL_WAITABLE hands out w; FI_GETWAIT / FI_GETWAITOBJ as
 * fd_wait_control (fd < 0: no wait fd); anything else -FI_ENOSYS. */
static inline int fd_waitable_control(int command, void *arg, struct fd_waitable *w,
				      int fd, enum fi_wait_obj obj)
{
	if (command != FD_CTL_WAITABLE)
		return fd_wait_control(command, arg, fd, obj);
	if (!arg)
		return -FI_EINVAL;
	*(struct fd_waitable **)arg = w;
	return 0;
}

static inline bool fd_waitable_busy(struct fd_waitable *w)
{
	return atomic_load_explicit(&w->pollsets, memory_order_acquire) > 0;
}

#ifdef __cplusplus
}
#endif

#endif
