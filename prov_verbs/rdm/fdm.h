/* RDM layer (FI_EP_RDM over verbs MSG, provider "verbs;ofi_rxm"): the
 * layer's private objects. The wire protocol is docs/rdm-protocol.md.
 *
 * The layer sits on the verbs provider through the public fi_* API only:
 * each RDM domain holds a verbs domain, each RDM endpoint a verbs passive
 * endpoint (its address), an EQ, one CQ for all its connections, a shared
 * receive context (the eager pool) and one verbs MSG endpoint per peer,
 * made on first use. Progress is manual by default: reading an RDM CQ or
 * counter drives the endpoints bound to it (fdm_ep_progress). A domain
 * opened with FI_PROGRESS_AUTO also has a thread of its own that drives
 * every endpoint when their verbs fds say something arrived
 * (fdm_domain.c, docs/fi_rdm.7.md "Progress"). */
#ifndef FDM_H
#define FDM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <fdv/fdv_compiler.h>
#include <fdv/fdv_config.h>
#include <fdv/fdv_cq.h>
#include <fdv/fdv_ep.h>
#include <fdv/fdv_lock.h>
#include <fdv/fdv_mr.h>

#include "fdm_ep.h"
#include "fd_sets.h"
#include "fd_lock.h"
#include "fd_util.h"
#include "fdm_atomic.h"
#include "fdm_proto.h"

#define FDM_PROV_NAME		"verbs;ofi_rxm"
#define FDM_CORE_PROV_NAME	"verbs"
/* The layer's parameters are upstream rxm's namespace: FI_OFI_RXM_* */
#define FDM_PARAM_PROV		"ofi_rxm"
#define FDM_CONNECT_RETRY_DEF_MS	10000
#define FDM_CONNECT_RETRY_MAX_MS	3600000

/* Progress reads the EQ this often when no connection is being made:
 * each read is a system call (~380 user-space instructions with its
 * wrappers, and a kernel entry), which every 32nd call made ~90 of a
 * tagged round trip's instructions; a peer's connection request waits at
 * most this many progress calls (as rstream's idle CM check). */
#define FDM_EQ_EVERY		256u

/* ---- fabric and domain ---- */
struct fdm_domain {
	struct fid_domain domain_fid;
	struct fd_layer_fabric *fabric;	/* the kit's: verbs fabric underneath */
	struct fid_domain *vdomain;
	struct fi_info *info;		/* the application's RDM info */
	struct fi_info *core;		/* verbs MSG info the endpoints use */
	/* One lock for all the layer's state in this domain: progress of
	 * any endpoint may complete into any CQ or counter of it. Taken
	 * when the application asked for FI_THREAD_SAFE, or for
	 * FI_PROGRESS_AUTO (the progress thread is a second caller); under
	 * FI_THREAD_DOMAIN with manual progress the application serialises
	 * its calls itself. */
	fd_mutex_t mutex;
	bool locked;
	/* FI_PROGRESS_AUTO (data or control): the progress thread, which
	 * sleeps on prog_epfd (wait_epfd and prog_stopfd) */
	bool auto_progress;
	bool prog_running;
	int prog_stop;			/* set (atomic) at close */
	int prog_epfd, prog_stopfd;
	pthread_t prog_thread;
	int refs;
	uint32_t pool_size;		/* SRQ depth per endpoint */
	struct fdm_node eps;		/* enabled endpoints (counter progress) */
	size_t core_max_msg;		/* one verbs read at most */
	/* the application's registrations by key (fdm_mr.c), under the lock */
	struct fdm_mr **mr_tab;
	size_t mr_nbuckets, mr_count;
	/* epoll set of every enabled endpoint's verbs CQ channel and EQ
	 * fds: readable when progress may find something new */
	int wait_epfd;
	/* endpoints with collective state (fdm_coll.c), under the lock;
	 * NULL while none: the CQs' one test for diverting completions */
	struct fdm_coll_ep *coll_eps;
};

/* ---- address vector ---- */
struct fdm_av_entry {
	struct fdm_name name;
	bool valid;
};

struct fdm_eq;

struct fdm_av {
	struct fid_av av_fid;
	struct fdm_domain *domain;
	/* FI_EVENT: inserts report to eq (fi_av_bind) instead of returning
	 * their counts; without a bound EQ they fail with -FI_ENOEQ */
	bool async;
	struct fdm_eq *eq;
	enum fi_av_type type;
	uint32_t addr_format;
	struct fdm_av_entry *tab;
	size_t count, cap;
	uint64_t gen;			/* bumped by every remove */
	int refs;			/* endpoints bound */
	/* fi_av_attr's: the top bits of an fi_addr_t that name a peer
	 * scalable endpoint's receive context (fi_rx_addr), 0 for none */
	int rx_ctx_bits;
};

/* ---- completion queue ---- */
struct fdm_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
};

struct fdm_cq_err {
	struct fi_cq_err_entry e;
};

struct fdm_cq {
	/* struct fdv_cq_head: what the direct wrappers dispatch on */
	struct fid_cq cq_fid;
	uint32_t kind;
	struct fdm_domain *domain;
	enum fi_cq_format format;
	struct fdm_cqe *ring;		/* successes, FIFO (grows) */
	size_t head, tail, cap;
	struct fdm_cq_err *errs;	/* errors, FIFO (grows) */
	size_t ehead, etail, ecap;
	struct fdm_ep **eps;		/* bound endpoints, progressed on read */
	size_t neps, eps_cap;
	int signaled;
	/* Wait object (FI_WAIT_FD / FI_WAIT_UNSPEC; -1 without): epfd holds
	 * the domain's wait_epfd and efd; efd is written by fi_cq_signal and
	 * by a completion queued while armed (a trywait said 0), under the
	 * domain lock. */
	int epfd, efd;
	bool armed;
	/* While a read of this CQ drives progress: the caller's buffer, its
	 * source addresses, its room and how much of it is filled.
	 * fdm_cq_write puts a completion there directly (in the caller's
	 * format) while room is left, and in the ring only after: one
	 * translation, from the verbs completion to the caller's entry.
	 * out_max is 0 outside a read, so progress from anywhere else
	 * (another CQ's read, a send, the progress thread) queues. */
	void *out;
	fi_addr_t *out_src;
	size_t out_n, out_max;
	struct fd_waitable waitable;	/* wait and poll sets (fd_sets.h) */
};

/* An arrived message nobody had a receive for. */
struct fdm_unexp {
	struct fdm_node node;
	struct fdm_conn *conn;
	uint64_t tag, data;
	uint8_t flags;			/* header flags */
	bool rndv;
	size_t len;
	uint8_t *payload;		/* eager: a heap copy */
	struct fdm_rndv_info rinfo;	/* rendezvous: where to read */
	bool claimed;
	void *claim_ctx;
};

/* A rendezvous being read into a matched receive. */
struct fdm_rndv {
	struct fdm_node node;		/* the endpoint's active list */
	struct fdm_conn *conn;
	struct fdm_rndv_info rinfo;
	struct iovec iov[FDM_IOV_LIMIT];
	size_t count;
	struct fid_mr *mr[FDM_IOV_LIMIT];	/* registered here */
	void *desc[FDM_IOV_LIMIT];
	uint64_t op_flags;
	size_t total;			/* bytes to read (what fits) */
	size_t olen;			/* bytes cut off */
	size_t posted;			/* bytes whose reads are posted */
	uint32_t inflight;
	int err;
	bool done_sent;
	/* the connection instance its reads were posted on: a read that
	 * fails there leaves that QP in error, so the connection is failed
	 * (and the peer told by the disconnect); a failure before any read
	 * is told by a done carrying the status instead */
	struct fid_ep *vep;
	void *context;
	void *buf;			/* FI_MULTI_RECV: where the message starts */
	uint64_t cq_flags, tag, data;
};

/* The direct wrappers read an RDM endpoint's kind where struct
 * fdv_ep_head has it. */
_Static_assert(offsetof(struct fdm_ep, kind) == offsetof(struct fdv_ep_head, kind),
	       "struct fdm_ep must start like struct fdv_ep_head");

static inline void fdm_lock(struct fdm_domain *d)
{
	if (d->locked)
		fd_mutex_lock(&d->mutex);
}

static inline void fdm_unlock(struct fdm_domain *d)
{
	if (d->locked)
		fd_mutex_unlock(&d->mutex);
}

/* fdm_getinfo.c */
int fdm_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
struct fi_info *fdm_core_hints(const struct fi_info *rdm);
uint32_t fdm_core_version(uint32_t version);

/* fdm_fabric.c / fdm_domain.c */
int fdm_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
/* Whether a sockaddr is a wildcard (or absent). */
int fdm_wildcard(const void *addr);
int fdm_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* fdm_mr.c */
extern struct fi_ops_mr fdm_mr_ops;
/* Where [addr, addr + len) is, if key names a region of this domain that
 * holds all of it and grants every bit of access; else NULL. */
void *fdm_mr_target(struct fdm_domain *d, uint64_t key, uint64_t addr, size_t len,
		    uint64_t access);
void fdm_mr_table_free(struct fdm_domain *d);

/* fdm_av.c */
int fdm_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
/* The AV entry of addr, or NULL. */
const struct fdm_name *fdm_av_name(struct fdm_av *av, fi_addr_t addr);
/* The fi_addr_t of name in av, or FI_ADDR_NOTAVAIL. */
fi_addr_t fdm_av_find(struct fdm_av *av, const struct fdm_name *name);

/* fdm_avset.c: AV sets */
struct fdm_av_set {
	struct fid_av_set set_fid;
	struct fdm_av *av;
	fi_addr_t *members;		/* in order: a member's index is its rank */
	size_t n, cap;
	uint64_t flags;
};
int fdm_av_set_open(struct fid_av *av, struct fi_av_set_attr *attr,
		    struct fid_av_set **set, void *context);
/* The layer's set behind set, or NULL. */
struct fdm_av_set *fdm_av_set_of(const struct fid_av_set *set);

/* fdm_coll.c: collectives in software over the tagged path
 * (docs/fi_rdm.7.md "Collectives"). On an FI_COLLECTIVE endpoint the
 * tags with this bit set are the layer's; the application's tag format
 * is 63 bits wide and its receives never match them. */
#define FDM_COLL_TAG_BIT	(1ULL << 63)
struct fdm_coll_ep;
extern struct fi_ops_collective fdm_coll_ops;
int fdm_coll_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		  struct fid_mc **mc, void *context);
int fdm_coll_query(struct fid_domain *domain, enum fi_collective_op coll,
		   struct fi_collective_attr *attr, uint64_t flags);
/* fi_ep_bind of an EQ: where the endpoint's joins report. */
int fdm_coll_bind_eq(struct fdm_ep *ep, struct fid *eq);
/* Endpoint close: -FI_EBUSY while groups are joined, else frees. */
int fdm_coll_ep_close(struct fdm_ep *ep);
/* A completion of the layer's own collective transfers: taken (true) or
 * the application's (false). Called from fdm_cq_write(_err), lock held. */
bool fdm_coll_divert(struct fdm_domain *d, void *context, size_t len, int err);
/* The bits of a receive's ignore mask that may apply on ep. */
static inline uint64_t fdm_coll_ignore_mask(const struct fdm_ep *ep)
{
	return (ep->info->caps & FI_COLLECTIVE) ? ~FDM_COLL_TAG_BIT : ~0ULL;
}

/* fdm_sep.c: scalable endpoints (docs/fi_rdm.7.md "Scalable endpoints") */
int fdm_sep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **sep, void *context);
/* Move a name's port by delta: 0, or -FI_EINVAL when it would leave
 * 1..65535 (the name is unchanged then). */
int fdm_name_shift(struct fdm_name *n, int delta);

/* fdm_eq.c: the RDM fabric's event queues */
int fdm_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
/* The layer's EQ behind fid, or NULL (not an EQ, or another fabric's). */
struct fdm_eq *fdm_eq_from_fid(struct fid *fid);
void fdm_eq_ref(struct fdm_eq *eq, int delta);
int fdm_eq_write_event(struct fdm_eq *eq, uint32_t event, const void *buf, size_t len);
/* An error entry: fid, context and data as fi_eq_err_entry carries them,
 * err positive. */
int fdm_eq_write_error(struct fdm_eq *eq, struct fid *fid, void *context,
		       uint64_t data, int err);
/* Drop the layer's entries naming fid (it is closing). */
void fdm_eq_forget(struct fdm_eq *eq, const struct fid *fid);

/* fdm_cq.c */
int fdm_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int fdm_cq_add_ep(struct fdm_cq *cq, struct fdm_ep *ep);
/* fi_trywait of an RDM CQ: 0 when it is safe to sleep on its fd. */
int fdm_cq_trywait(struct fid_cq *cq);
void fdm_cq_del_ep(struct fdm_cq *cq, struct fdm_ep *ep);
void fdm_cq_queue(struct fdm_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src);

/* One entry in the caller's format at index i of buf. */
static inline void fdm_cq_put(enum fi_cq_format f, void *buf, size_t i,
			      void *context, uint64_t flags, size_t len,
			      void *dbuf, uint64_t data, uint64_t tag)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		((struct fi_cq_entry *)buf)[i].op_context = context;
		break;
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *m = (struct fi_cq_msg_entry *)buf + i;

		m->op_context = context;
		m->flags = flags;
		m->len = len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *m = (struct fi_cq_data_entry *)buf + i;

		m->op_context = context;
		m->flags = flags;
		m->len = len;
		m->buf = dbuf;
		m->data = data;
		break;
	}
	default: {	/* FI_CQ_FORMAT_TAGGED: checked at open */
		struct fi_cq_tagged_entry *m = (struct fi_cq_tagged_entry *)buf + i;

		m->op_context = context;
		m->flags = flags;
		m->len = len;
		m->buf = dbuf;
		m->data = data;
		m->tag = tag;
		break;
	}
	}
}

/* A successful completion: into the buffer of the read driving progress
 * while it has room (nothing can be queued ahead of it then: a read
 * delivers directly only from an empty ring), else into the ring. */
static inline void fdm_cq_write(struct fdm_cq *cq, void *context, uint64_t flags,
				size_t len, void *buf, uint64_t data, uint64_t tag,
				fi_addr_t src)
{
	size_t n = cq->out_n;

	/* the layer's collective transfers complete into fdm_coll.c, never
	 * into the application's buffer or ring */
	if (fdv_unlikely(cq->domain->coll_eps != NULL) &&
	    fdm_coll_divert(cq->domain, context, len, 0))
		return;
	if (fdv_likely(n < cq->out_max)) {
		fdm_cq_put(cq->format, cq->out, n, context, flags, len, buf, data, tag);
		if (cq->out_src)
			cq->out_src[n] = src;
		cq->out_n = n + 1;
		return;
	}
	fdm_cq_queue(cq, context, flags, len, buf, data, tag, src);
}
void fdm_cq_write_err(struct fdm_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag);

/* fdm_ep.c */
int fdm_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
/* Progress: the verbs CQ first, so what arrived on a connection is
 * delivered before its disconnect is seen; the rest (EQ, credit reports,
 * queued sends, rendezvous, atomics) costs one predictable branch when
 * nothing waits. The domain lock is held. Inline: the CQ read calls it
 * once per bound endpoint.
 * Both operands of the | are evaluated, so the EQ countdown runs on
 * every call. */
void fdm_ep_read_vcq(struct fdm_ep *ep);
FDV_COLD void fdm_ep_progress_more(struct fdm_ep *ep);
static inline void fdm_ep_progress(struct fdm_ep *ep)
{
	if (fdv_unlikely(!ep->enabled))
		return;
	fdm_ep_read_vcq(ep);
	if (fdv_unlikely(ep->work | !--ep->eq_left))
		fdm_ep_progress_more(ep);
}
/* Recompute tx_fast, rx_fast, tx_report (fdm_ep.h). */
void fdm_ep_fast_update(struct fdm_ep *ep);
void fdm_ep_progress_cb(void *arg);
/* Progress every endpoint of d, then arm their verbs CQs and EQs: 0 when
 * nothing is left to do and d->wait_epfd turns readable on the next
 * event, -FI_EAGAIN when progress must run again. The lock is held. */
int fdm_domain_trywait(struct fdm_domain *d);
/* Add (or remove) the endpoint's verbs fds to d->wait_epfd. */
int fdm_ep_wait_attach(struct fdm_ep *ep, bool add);
struct fdm_tx *fdm_tx_get(struct fdm_ep *ep);
/* For the application's requests: NULL once only the reserve is left. */
struct fdm_tx *fdm_tx_get_app(struct fdm_ep *ep);
/* Closes the registrations a rendezvous or an RMA request made. */
void fdm_tx_put_mrs(struct fdm_tx *tx);
static inline void fdm_tx_put(struct fdm_ep *ep, struct fdm_tx *tx)
{
	/* Only a rendezvous send or an RMA registers user buffers (and sets
	 * its kind before it does): an eager send skips the loop. */
	if (fdv_unlikely(tx->kind == FDM_TX_RNDV || tx->kind == FDM_TX_RMA))
		fdm_tx_put_mrs(tx);
	tx->in_use = false;
	ep->tx_free[ep->tx_nfree++] = tx->idx;
}

void fdm_count_slow(struct fdm_ep *ep, uint8_t which, int err);
/* Count into the endpoint's counter `which` (FDM_CNTR_*, or
 * FDM_CNTR_NONE), if one is bound: one load and test when none is. */
static inline void fdm_count(struct fdm_ep *ep, uint8_t which, int err)
{
	if (fdv_unlikely(which < FDM_CNTR_N && ep->cntr[which]))
		fdm_count_slow(ep, which, err);
}

/* fdm_conn.c */
/* The connection for dest (made if needed, connecting started), or NULL
 * with *err set (-FI_EINVAL: not in the AV; -FI_ENOMEM). */
struct fdm_conn *fdm_conn_for_addr(struct fdm_ep *ep, fi_addr_t dest, int *err);
struct fdm_conn *fdm_conn_by_id(struct fdm_ep *ep, uint32_t id);
/* Queue tx on its connection and post what can go now. */
void fdm_conn_submit(struct fdm_conn *conn, struct fdm_tx *tx);
/* For a send that reports no completion (an inject): post it now or
 * return -FI_EAGAIN (or the connection's error) and leave it to the
 * caller, never queue it - see the function. */
ssize_t fdm_conn_post_now(struct fdm_conn *conn, struct fdm_tx *tx);
/* fdm_conn_post_now, once more after a progress pass if it said
 * -FI_EAGAIN; tx goes back to the pool unless it went. For every request
 * that reports no completion: fi_inject and kin, fi_inject_atomic. */
ssize_t fdm_conn_send_unreported(struct fdm_ep *ep, struct fdm_conn *conn, struct fdm_tx *tx);
/* Post the pending txs of the connections that may now send. */
void fdm_conn_flush(struct fdm_ep *ep);
void fdm_conn_handle_events(struct fdm_ep *ep);
/* The connection failed: its queued and outstanding work fails with err. */
void fdm_conn_fail(struct fdm_conn *conn, int err);
fi_addr_t fdm_conn_src_find(struct fdm_conn *conn);
/* The connection's peer in the endpoint's AV (FI_ADDR_NOTAVAIL if not
 * there): looked up again only after the AV changed. */
static inline fi_addr_t fdm_conn_src(struct fdm_conn *conn)
{
	struct fdm_av *av = conn->ep->av;

	if (fdv_unlikely(conn->src_gen != av->gen + av->count))
		return fdm_conn_src_find(conn);
	return conn->src;
}
void fdm_conn_close_all(struct fdm_ep *ep);
void fdm_rndv_fail_conn(struct fdm_ep *ep, struct fdm_conn *c, int err);

/* fdm_credit.c: flow control (docs/rdm-protocol.md) */
int fdm_credit_setup(struct fdm_ep *ep);
void fdm_credit_teardown(struct fdm_ep *ep);
/* A new connection instance from our side: our grant and credit word
 * into cm, our counts reset. */
void fdm_credit_offer(struct fdm_conn *c, struct fdm_cm *cm);
/* The peer's grant and credit word from its handshake data. */
void fdm_credit_accept(struct fdm_conn *c, const struct fdm_cm *peer);
/* The connection ended: its grant goes back to the pool. */
void fdm_credit_release(struct fdm_conn *c);
/* Read our credit word; the connection's credits after it (a message
 * may go while they are above its floor: 0, or -FDM_CREDIT_OVERDRAFT
 * for an inject). */
int32_t fdm_credit_refresh(struct fdm_conn *c);
/* One pool buffer a message of c took is free again. */
void fdm_credit_freed(struct fdm_conn *c);
/* Reports that found the send queue full, again. */
void fdm_credit_report_owed(struct fdm_ep *ep);

/* fdm_msg.c */
extern struct fi_ops_msg fdm_msg_ops;
extern struct fi_ops_tagged fdm_tagged_ops;
/* A verbs completion for one of the layer's requests. */
void fdm_handle_recv(struct fdm_ep *ep, struct fdm_rxbuf *rb, size_t len);
/* An RDMA write with immediate data (fi_writedata) landed here. */
void fdm_handle_remote_write(struct fdm_ep *ep, struct fdm_rxbuf *rb, uint64_t data);
void fdm_handle_tx_done(struct fdm_ep *ep, struct fdm_tx *tx, int err);
void fdm_handle_rndv_read(struct fdm_ep *ep, struct fdm_rndv *rv, int err);
void fdm_rndv_pump(struct fdm_ep *ep);
/* FI_DELIVERY_COMPLETE: answer an FDM_HF_ACK message with its id; false
 * if no transmit request is free (fdm_owe_ack queues it then). */
bool fdm_send_ack(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t req_id);
void fdm_repost(struct fdm_ep *ep, struct fdm_rxbuf *rb);
void fdm_ep_drop_queues(struct fdm_ep *ep);
ssize_t fdm_ep_cancel(fid_t fid, void *context);
/* Which pool a completed request belongs to. The layer's verbs CQ, QPs
 * and SRQ are its own: every wr_id that completes there was posted by the
 * layer, as a pool buffer (receives), a transmit request or a rendezvous
 * read, so one unsigned compare of the offset against the pool's span
 * tells them apart (a pointer below the pool wraps to a large offset). */
static inline int fdm_is_rxbuf(const struct fdm_ep *ep, const void *ctx)
{
	return (uintptr_t)ctx - (uintptr_t)ep->rxbufs <
		(uintptr_t)ep->nrxbufs * sizeof(*ep->rxbufs);
}

static inline int fdm_is_tx(const struct fdm_ep *ep, const void *ctx)
{
	return (uintptr_t)ctx - (uintptr_t)ep->txs <
		(uintptr_t)ep->ntx * sizeof(*ep->txs);
}

/* An eager send's request went out without error: count, report, free.
 * Inline in the CQ read's loop, where nearly every send completion is
 * this one (fdm_handle_tx_done takes the rest). */
static inline void fdm_eager_sent(struct fdm_ep *ep, struct fdm_tx *tx)
{
	fdm_count(ep, tx->cntr, 0);
	if (tx->report)
		fdm_cq_write(ep->tx_cq, tx->context, tx->cq_flags, 0, NULL, 0, 0,
			     FI_ADDR_NOTAVAIL);
	fdm_tx_put(ep, tx);
}

/* fdm_rma.c */
extern struct fi_ops_rma fdm_rma_ops;
void fdm_handle_rma_done(struct fdm_ep *ep, struct fdm_tx *tx, int err);
/* Count, report (an error whatever the selective completion) and free an
 * RMA or atomic request. */
void fdm_rma_complete(struct fdm_ep *ep, struct fdm_tx *tx, uint64_t flags, int err);
/* Post an atomic request's message (fdm_conn.c): fenced behind reads. */
ssize_t fdm_atomic_post(struct fdm_conn *c, struct fdm_tx *tx);
/* A read or atomic request of tx->conn finished (tx->ordered). */
void fdm_conn_order_done(struct fdm_tx *tx);
/* Whether a request sent to the peer earlier may still write local
 * memory (an RDMA read posted, an atomic not answered) or has not left
 * (queued): what a FI_FENCE message waits for. */
static inline bool fdm_conn_fence_busy(const struct fdm_conn *c)
{
	return c->reads_out || c->atomics_out || !fdm_list_empty(&c->pending);
}
ssize_t fdm_rma_post(struct fdm_conn *c, struct fdm_tx *tx);
/* What every RMA and atomic starts with: the domain lock, the connection
 * to dest and a free request of kind (after one progress pass if none is
 * free). 0 with the lock held and *conn, *txp set, or the error with the
 * lock released. */
int fdm_rma_begin(struct fdm_ep *ep, fi_addr_t dest, void *context, uint64_t flags,
		  uint8_t kind, struct fdm_conn **conn, struct fdm_tx **txp);

#endif /* FDM_H */
