/* rstream (FI_EP_SOCK_STREAM over verbs RMA): the layer's private objects
 * and entry points. The layer sits on the verbs MSG provider, which it
 * reaches only through the public fi_* API and the contract header
 * fdv_layer.h: every rstream object wraps verbs objects it opened itself
 * (fabric, domain, EQ, CQ, passive endpoint, endpoint, memory region). */
#ifndef FDR_H
#define FDR_H

#define FD_LOG_PROV "verbs;rstream"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_collective.h>
#include <fdv/fdv_ep.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fd_eq.h"
#include "fd_util.h"
#include "fdv_layer.h"
#include "fd_lock.h"
#include "fdr_proto.h"

#define FDR_PROV_NAME		"verbs;rstream"
#define FDR_CORE_PROV_NAME	"verbs"


/* Defaults, as upstream's rstream had them. */
#define FDR_DEF_BUF_SIZE	(32u * 1024)
#define FDR_DEF_QUEUE_SIZE	384u
/* Largest FI_OPT_TX_SIZE / FI_OPT_RX_SIZE: both queues share one CQ,
 * which must stay within what Soft-RoCE and common HCAs allow. */
#define FDR_MAX_QUEUE_SIZE	8192u
#define FDR_MIN_QUEUE_SIZE	FDR_CREDITS_MIN
/* What fi_send and fi_recv take at most per call in an iov. */
#define FDR_IOV_LIMIT		16
#define FDR_DEF_IOV_LIMIT	4
/* Connection data of the verbs endpoints underneath: ours goes first and
 * the user has the rest (FI_OPT_CM_DATA_SIZE of the verbs endpoint,
 * asked when an rstream object opens). Buffers are sized for the most any
 * RDMA CM transport carries. */
#define FDR_CM_BUF		256
/* fi_shutdown and fi_close wait this long at most for the peer to give a
 * credit for the FIN and for the FIN to complete. */
#define FDR_FIN_WAIT_MS		2000
/* A data call that finds nothing to do looks at the connection's events
 * (a system call) only every this many times in a row: every 16th when
 * the application has the wait fd (it may sleep on it and must see a
 * connection event soon after it wakes), every 256th when it has not
 * (it can only spin; a reset is still noticed within 256 calls). */
#define FDR_EQ_CHECK_EVERY	16
#define FDR_EQ_CHECK_SPIN	256

/* A verbs domain (the device and protection domain the endpoints' rings
 * are registered in) offering the application endpoints and nothing
 * else: a stream reports no completions and registers no user memory. */
struct fdr_domain {
	struct fid_domain domain_fid;
	struct fd_layer_fabric *fabric;
	struct fid_domain *idom;
	size_t max_queue;		/* the device's deepest work queue */
	atomic_int refs;
};

/* Something bound to an rstream EQ whose events come from a verbs EQ of
 * its own: reading the rstream EQ runs `pump`, which translates what the
 * verbs EQ holds into entries of the rstream EQ; `fd` (the verbs EQ's
 * wait fd) wakes the rstream EQ's waiters. */
struct fdr_eq_src {
	struct fdr_eq_src *next;
	void (*pump)(struct fdr_eq_src *src);
	int fd;
};

/* The rstream EQ: the core's (queue, wait fd, fi_ops) plus its sources. */
struct fdr_eq {
	struct fd_eq core;		/* first; holds the fabric's reference */
	/* Order: src_lock, then a source's own lock, then core.lock. */
	pthread_mutex_t src_lock;	/* the sources; held while pumping */
	struct fdr_eq_src *srcs;
};

enum fdr_state {
	FDR_IDLE,		/* opened, not enabled */
	FDR_ENABLED,
	FDR_CONNECTING,		/* fi_connect / fi_accept done */
	FDR_CONNECTED,
	FDR_CLOSED,		/* shut down, reset or refused */
};

struct fdr_ep {
	/* struct fdv_ep_head: what the direct wrappers dispatch on */
	struct fid_ep ep_fid;
	uint32_t kind;

	/* One lock for everything below: the transmit and receive paths
	 * share the CQ, the credits and the state, and the CM translation
	 * (run from the user's EQ reads) changes the state too. Not a
	 * pthread mutex: the data path takes it on every call (fd_lock.h). */
	fd_mutex_t lock;
	struct fdr_domain *domain;
	struct fi_info *info;		/* the user's, duplicated */
	struct fdr_eq *ueq;		/* the user's EQ, once bound */
	struct fdr_eq_src src;		/* on ueq's sources */
	size_t cm_data_max;		/* the user's share of the CM data */

	/* the layer underneath: a verbs MSG endpoint of this library */
	struct fid_eq *ieq;
	struct fid_cq *icq;
	struct fid_ep *iep;
	struct fid_mr *imr;
	uint8_t *region;		/* [tx ring | rx ring | rx slots | tx slots] */
	size_t region_len;
	uint8_t *tx_ring, *rx_ring;
	uint8_t *rx_slots, *tx_slots;	/* 4-byte messages (iWARP framing) */
	void *desc;

	/* options, fixed at fi_enable */
	uint32_t tx_buf, rx_buf;
	uint32_t tx_size, rx_size;
	int iwarp;

	enum fdr_state state;
	bool passive;			/* made from a connection request */
	struct fdr_flow flow;
	struct fdr_blob peer;
	uint32_t sq_free;		/* send queue slots */
	uint32_t tx_slot_next;
	int err;			/* sticky connection error (negative) */
	bool local_shutdown;		/* fi_shutdown or close on this side */
	bool cm_closed;			/* the verbs connection is gone */
	bool qp_dead;			/* posting is pointless: flushed */
	bool connected_reported;	/* the user saw FI_CONNECTED */
	bool shutdown_reported;
	/* The CQ is armed and no completion has been read since: it has
	 * none, and its channel will wake a waiter (fdr_arm). */
	bool cq_armed;
	/* The application asked for the wait fd (FI_GETWAIT). Until it
	 * does, nobody can sleep on the fd, so a call that finds nothing
	 * leaves the CQ as it is (re-arming it costs two system calls
	 * after every completion); from then on such a call leaves it
	 * armed, and the fd turns readable when anything arrives. */
	bool wait_used;
	uint32_t idle_calls;		/* data calls in a row that found nothing */
	/* readiness (see fdr_wait_update) */
	bool tx_waiting, rx_waiting;
	bool efd_set;
	int waitfd;			/* epoll: CQ channel, internal EQ, efd */
	int efd;
};

/* The direct wrappers read `kind` where a verbs endpoint has it. */
_Static_assert(offsetof(struct fdr_ep, kind) == offsetof(struct fdv_ep_head, kind),
	       "struct fdr_ep must start like struct fdv_ep_head");

/* info->handle of a user FI_CONNREQ: the verbs request underneath, with
 * the peer's blob already checked. handle.ops->close releases it. */
struct fdr_connreq {
	struct fid handle;
	struct fi_info *core_info;	/* its handle is the verbs request */
	struct fid_pep *ipep;		/* the verbs pep that refuses it */
	struct fdr_blob peer;
};

struct fdr_pep {
	struct fid_pep pep_fid;
	pthread_mutex_t lock;
	struct fd_layer_fabric *fabric;
	struct fi_info *info;		/* the user's */
	struct fid_eq *ieq;
	struct fid_pep *ipep;
	struct fdr_eq *ueq;
	struct fdr_eq_src src;		/* on ueq's sources */
	size_t cm_data_max;		/* the user's share of the CM data */
	int iwarp;
};

/* fdr_getinfo.c */
int fdr_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
void fdr_getinfo_init(void);
int fdr_info_iwarp(const struct fi_info *info);
/* Whether an info has every attribute an rstream object reads. */
bool fdr_info_complete(const struct fi_info *info);
/* The verbs MSG info an rstream info stands for (a new fi_info; NULL when
 * out of memory or the info is not complete). */
struct fi_info *fdr_core_info(const struct fi_info *info);
/* The rstream info for a verbs info (a new fi_info), from a template. */
struct fi_info *fdr_stream_info(const struct fi_info *tmpl,
				const struct fi_info *core);

/* fdr_msg_ops.c: the endpoints' ops tables */
extern struct fi_ops_msg fdr_ops_msg;

/* The stream calls behind it. flags: 0 or FI_PEEK. Return the bytes
 * accepted / delivered (> 0), 0 for a zero-length call or, on receive, at
 * the end of the stream, or a negative fi error (-FI_EAGAIN: nothing can
 * move now). */
ssize_t fdr_stream_send(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags);
ssize_t fdr_stream_recv(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags);

static inline struct fdr_ep *fdr_ep_of(struct fid_ep *ep_fid)
{
	return fd_container_of(ep_fid, struct fdr_ep, ep_fid);
}

/* fdr_fabric.c */
int fdr_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);

/* fdr_domain.c */
int fdr_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* fdr_eq.c */
int fdr_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
/* The rstream EQ behind a fid, or NULL for anything else. */
struct fdr_eq *fdr_eq_of_fid(struct fid *fid);
/* Binding: a source joins with a reference on the EQ; leaving drops the
 * entries that name `owner` (an object closing). */
int fdr_eq_add_src(struct fdr_eq *eq, struct fdr_eq_src *src);
void fdr_eq_del_src(struct fdr_eq *eq, struct fdr_eq_src *src,
		    const struct fid *owner);
/* An FI_CONNREQ, FI_CONNECTED or FI_SHUTDOWN entry (fi_eq_cm_entry + data). */
void fdr_eq_push_cm(struct fdr_eq *eq, uint32_t event, struct fid *fid,
		    struct fi_info *info, const uint8_t *data, size_t len);
void fdr_eq_push_error(struct fdr_eq *eq, struct fid *fid, void *context,
		       int err, int prov_errno, const void *err_data,
		       size_t err_len);
/* Release what an unread FI_CONNREQ's info holds (fdr_cm.c). */
void fdr_connreq_drop(struct fi_info *info);

/* The user's share of a verbs object's connection data (after our blob). */
int fdr_cm_share(struct fid *ifid, size_t *out);

/* fdr_ep.c */
int fdr_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

/* fdr_stream.c */
void fdr_progress(struct fdr_ep *ep);
/* Post the receive for one 4-byte slot (a work request of the ring). */
int fdr_post_rx(struct fdr_ep *ep, uint32_t slot);
void fdr_set_error(struct fdr_ep *ep, int err);
void fdr_wait_update(struct fdr_ep *ep);
/* FI_GETWAIT: the application may sleep on the wait fd from now on. */
void fdr_wait_fd_used(struct fdr_ep *ep);
/* The verbs connection is gone: take what completed before it went. */
void fdr_drain_after_close(struct fdr_ep *ep);
struct fdr_connreq *fdr_connreq_of(struct fid *handle);

/* fdr_cm.c */
int fdr_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);
extern struct fi_ops_cm fdr_ep_cm_ops;
void fdr_ep_pump_eq(struct fdr_ep *ep);
void fdr_ep_eq_pump(struct fdr_eq_src *src);
int fdr_ep_shutdown_locked(struct fdr_ep *ep);

#endif /* FDR_H */
