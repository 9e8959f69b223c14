/* RDM layer (FI_EP_RDM over verbs MSG, provider "verbs;ofi_rxm"): the
 * layer's private objects. The wire protocol is docs/rdm-protocol.md.
 *
 * The layer sits on the verbs provider through the public fi_* API only:
 * each RDM domain holds a verbs domain, each RDM endpoint a verbs passive
 * endpoint (its address), an EQ, one CQ for all its connections, a shared
 * receive context (the eager pool) and one verbs MSG endpoint per peer,
 * made on first use. Progress is manual: reading an RDM CQ or counter
 * drives the endpoints bound to it (fdm_ep_progress). */
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

#include "fdm_proto.h"

#define FDM_PROV_NAME		"verbs;ofi_rxm"
#define FDM_CORE_PROV_NAME	"verbs"

/* Eager pool buffer: header + payload. */
#define FDM_BUF_SIZE		8192u
#define FDM_EAGER_MAX		(FDM_BUF_SIZE - FDM_HDR_LEN)
/* Bounce buffers per endpoint (sends in flight or waiting for their
 * connection); fi_send answers -FI_EAGAIN when all are taken. */
#define FDM_DEF_TX_SIZE		256u
/* Receives the application may have posted at once. */
#define FDM_DEF_RX_SIZE		1024u
/* Eager pool (SRQ) depth at most; less if the device allows less. */
#define FDM_POOL_MAX		512u
#define FDM_IOV_LIMIT		4u
/* Largest message: what the rendezvous header can describe and the
 * reads split into pieces the device takes. */
#define FDM_MAX_MSG_SIZE	((size_t)1 << 32)
/* The connect deadline (FI_VERBS_RXM_CONNECT_TIMEOUT is not read: the
 * verbs provider's FI_VERBS_CONNECT_TIMEOUT bounds each attempt). */
#define FDM_CQ_BATCH		16
/* Progress reads the EQ this often when no connection is being made. */
#define FDM_EQ_EVERY		32u

/* ---- intrusive doubly linked list ---- */
struct fdm_node {
	struct fdm_node *next, *prev;
};

static inline void fdm_list_init(struct fdm_node *h)
{
	h->next = h->prev = h;
}

static inline bool fdm_list_empty(const struct fdm_node *h)
{
	return h->next == h;
}

static inline void fdm_list_add_tail(struct fdm_node *h, struct fdm_node *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void fdm_list_del(struct fdm_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define fdm_entry(ptr, type, member) fdv_container_of(ptr, type, member)

/* ---- fabric and domain ---- */
struct fdm_fabric {
	struct fid_fabric fabric_fid;
	struct fid_fabric *vfabric;	/* the verbs fabric underneath */
};

struct fdm_domain {
	struct fid_domain domain_fid;
	struct fdm_fabric *fabric;
	struct fid_domain *vdomain;
	struct fi_info *info;		/* the application's RDM info */
	struct fi_info *core;		/* verbs MSG info the endpoints use */
	/* One lock for all the layer's state in this domain: progress of
	 * any endpoint may complete into any CQ or counter of it. Taken
	 * only when the application asked for FI_THREAD_SAFE; under
	 * FI_THREAD_DOMAIN it serialises its calls itself. */
	pthread_mutex_t mutex;
	bool locked;
	int refs;
	uint32_t pool_size;		/* SRQ depth per endpoint */
	struct fdm_node eps;		/* enabled endpoints (counter progress) */
	size_t core_max_msg;		/* one verbs read at most */
};

/* ---- address vector ---- */
struct fdm_av_entry {
	struct fdm_name name;
	bool valid;
};

struct fdm_av {
	struct fid_av av_fid;
	struct fdm_domain *domain;
	enum fi_av_type type;
	uint32_t addr_format;
	struct fdm_av_entry *tab;
	size_t count, cap;
	uint64_t gen;			/* bumped by every remove */
	int refs;			/* endpoints bound */
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
};

/* ---- transmit requests ---- */
enum fdm_rma_kind {
	FDM_RMA_WRITE, FDM_RMA_READ, FDM_RMA_ATOMIC, FDM_RMA_FETCH, FDM_RMA_CSWAP,
};

struct fdm_rma_op {
	uint8_t op;			/* enum fdm_rma_kind */
	bool bounce;			/* data goes through tx->buf */
	size_t count;
	struct iovec iov[FDM_IOV_LIMIT];
	void *desc[FDM_IOV_LIMIT];
	uint64_t raddr, rkey, data, flags;
	enum fi_datatype dt;
	enum fi_op aop;
	size_t acount;			/* atomic elements */
	void *result;			/* fetch: where the old value goes */
};

enum fdm_tx_kind {
	FDM_TX_EAGER,		/* completes on the verbs send completion */
	FDM_TX_RNDV,		/* completes on the peer's "rendezvous done" */
	FDM_TX_CTRL,		/* layer's own message (done): no completion */
	FDM_TX_RMA,		/* a read/write/atomic through the layer */
};

struct fdm_tx {
	struct fdm_node node;		/* pending list of its connection */
	struct fdm_conn *conn;
	void *context;
	uint64_t cq_flags;		/* what its completion reports */
	uint8_t kind;
	bool report;			/* a CQ entry is wanted */
	bool rts_done;			/* rendezvous: the RTS send completed */
	bool done_rcvd;			/* rendezvous: the peer finished */
	bool in_use;
	uint8_t cntr;			/* FDM_CNTR_* index to count into */
	uint32_t idx;
	uint32_t gen;			/* rendezvous id = gen << 32 | idx */
	uint32_t wire_len;		/* header + payload in buf */
	uint8_t *buf;			/* registered bounce buffer */
	struct fid_mr *mr[FDM_IOV_LIMIT]; /* rendezvous: user buffers we registered */
	struct fid_ep *vep;		/* what it was posted on */
	size_t len;			/* payload bytes */
	/* RMA and atomics through the layer */
	struct fdm_rma_op rma;
};

/* ---- receives ---- */
struct fdm_rxbuf {			/* one eager pool buffer (SRQ entry) */
	uint8_t *buf;
	uint32_t idx;
};

struct fdm_rx {				/* a receive the application posted */
	struct fdm_node node;
	struct iovec iov[FDM_IOV_LIMIT];
	size_t count;
	void *desc[FDM_IOV_LIMIT];
	fi_addr_t src;
	uint64_t tag, ignore;
	void *context;
	uint64_t flags;			/* FI_MSG or FI_TAGGED, | FI_RECV */
	uint64_t op_flags;
	bool tagged;
	bool in_use;
	bool multi;			/* FI_MULTI_RECV: used is the fill level */
	size_t used;
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
	void *context;
	void *buf;			/* FI_MULTI_RECV: where the message starts */
	uint64_t cq_flags, tag, data;
};

/* ---- connections ---- */
enum fdm_conn_state {
	FDM_C_IDLE,		/* never connected, or failed */
	FDM_C_CONNECTING,	/* our fi_connect is outstanding */
	FDM_C_ACCEPTING,	/* we accepted the peer's request */
	FDM_C_WAIT_PEER,	/* the peer refused ours: its request comes */
	FDM_C_CONNECTED,
};

struct fdm_conn {
	struct fdm_ep *ep;
	uint32_t id;			/* index in ep->conns: our id */
	uint32_t remote_id;		/* the peer's id, put in our headers */
	enum fdm_conn_state state;
	struct fid_ep *vep;		/* current verbs MSG endpoint */
	struct fdm_name peer;
	struct fdm_node pending;	/* txs waiting to be posted, in order */
	bool on_flush;			/* in ep->flush */
	struct fdm_node flush_node;
	fi_addr_t src;			/* the peer in the endpoint's AV */
	uint64_t src_gen;
	long deadline_ms;		/* FDM_C_WAIT_PEER gives up then */
};

/* ---- endpoint ---- */
enum {
	FDM_CNTR_SEND, FDM_CNTR_RECV, FDM_CNTR_READ, FDM_CNTR_WRITE,
	FDM_CNTR_RREAD, FDM_CNTR_RWRITE, FDM_CNTR_N,
	FDM_CNTR_NONE = 0xff,
};

struct fdm_ep {
	/* struct fdv_ep_head: what the direct wrappers dispatch on */
	struct fid_ep ep_fid;
	uint32_t kind;

	struct fdm_domain *domain;
	struct fi_info *info;
	struct fdm_cq *tx_cq, *rx_cq;
	uint64_t tx_cq_flags, rx_cq_flags;	/* FI_SELECTIVE_COMPLETION */
	struct fdm_av *av;
	struct fid_cntr *cntr[FDM_CNTR_N];
	uint64_t tx_op_flags, rx_op_flags;
	bool enabled;
	bool directed;			/* FI_DIRECTED_RECV */
	size_t min_multi_recv;

	/* verbs objects underneath */
	struct fid_eq *veq;
	struct fid_cq *vcq;
	struct fid_ep *vsrx;
	struct fid_pep *vpep;
	struct fid_mr *vmr;
	void *vdesc;
	uint8_t *region;
	size_t region_len;

	struct fdm_name name;		/* our address (the passive endpoint's) */
	uint8_t name_key[FDM_NAME_KEY_LEN];

	struct fdm_rxbuf *rxbufs;
	uint32_t nrxbufs;
	struct fdm_tx *txs;
	uint32_t ntx;
	uint32_t *tx_free;		/* stack of free tx indexes */
	uint32_t tx_nfree;
	struct fdm_rx *rxs;
	uint32_t nrx;
	uint32_t *rx_free;
	uint32_t rx_nfree;

	struct fdm_conn **conns;	/* by our id */
	uint32_t nconns, conns_cap;
	uint32_t nwait;			/* connections in FDM_C_WAIT_PEER */
	uint32_t nconnecting;		/* connections not yet established */
	uint32_t eq_tick;
	struct fdm_conn **by_addr;	/* cache: fi_addr_t -> connection */
	size_t by_addr_cap;
	uint64_t by_addr_gen;
	struct fid_ep **zombies;	/* abandoned verbs endpoints */
	size_t nzombies, zombies_cap;

	struct fdm_node posted_msg, posted_tag;
	struct fdm_node unexp_msg, unexp_tag;
	struct fdm_node rndv_active;
	struct fdm_node flush;		/* connections with postable pending */
	struct fdm_node dom_node;	/* the domain's enabled endpoints */
	bool rma_event;			/* FI_RMA_EVENT: tell targets of RMA */
};

static inline void fdm_lock(struct fdm_domain *d)
{
	if (d->locked)
		pthread_mutex_lock(&d->mutex);
}

static inline void fdm_unlock(struct fdm_domain *d)
{
	if (d->locked)
		pthread_mutex_unlock(&d->mutex);
}

static inline struct fdm_ep *fdm_ep_of(struct fid_ep *ep)
{
	return fdv_container_of(ep, struct fdm_ep, ep_fid);
}

long fdm_now_ms(void);

/* fdm_getinfo.c */
int fdm_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
struct fi_info *fdm_core_hints(const struct fi_info *rdm);

/* fdm_fabric.c / fdm_domain.c */
int fdm_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
/* Whether a sockaddr is a wildcard (or absent). */
int fdm_wildcard(const void *addr);
int fdm_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* fdm_av.c */
int fdm_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
/* The AV entry of addr, or NULL. */
const struct fdm_name *fdm_av_name(struct fdm_av *av, fi_addr_t addr);
/* The fi_addr_t of name in av, or FI_ADDR_NOTAVAIL. */
fi_addr_t fdm_av_find(struct fdm_av *av, const struct fdm_name *name);

/* fdm_cq.c */
int fdm_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int fdm_cq_add_ep(struct fdm_cq *cq, struct fdm_ep *ep);
void fdm_cq_del_ep(struct fdm_cq *cq, struct fdm_ep *ep);
void fdm_cq_write(struct fdm_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src);
void fdm_cq_write_err(struct fdm_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag);

/* fdm_ep.c */
int fdm_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
void fdm_ep_progress(struct fdm_ep *ep);
void fdm_ep_progress_cb(void *arg);
struct fdm_tx *fdm_tx_get(struct fdm_ep *ep);
void fdm_tx_put(struct fdm_ep *ep, struct fdm_tx *tx);
void fdm_count(struct fdm_ep *ep, uint8_t which, int err);

/* fdm_conn.c */
/* The connection for dest (made if needed, connecting started), or NULL
 * with *err set (-FI_EINVAL: not in the AV; -FI_ENOMEM). */
struct fdm_conn *fdm_conn_for_addr(struct fdm_ep *ep, fi_addr_t dest, int *err);
struct fdm_conn *fdm_conn_by_id(struct fdm_ep *ep, uint32_t id);
/* Queue tx on its connection and post what can go now. */
void fdm_conn_submit(struct fdm_conn *conn, struct fdm_tx *tx);
/* Post the pending txs of the connections that may now send. */
void fdm_conn_flush(struct fdm_ep *ep);
void fdm_conn_handle_events(struct fdm_ep *ep);
/* The connection failed: its queued and outstanding work fails with err. */
void fdm_conn_fail(struct fdm_conn *conn, int err);
fi_addr_t fdm_conn_src(struct fdm_conn *conn);
void fdm_conn_close_all(struct fdm_ep *ep);
void fdm_rndv_fail_conn(struct fdm_ep *ep, struct fdm_conn *c, int err);

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
void fdm_repost(struct fdm_ep *ep, struct fdm_rxbuf *rb);
void fdm_ep_drop_queues(struct fdm_ep *ep);
ssize_t fdm_ep_cancel(fid_t fid, void *context);
/* The endpoint's request tables (rx pool entries etc.) */
int fdm_is_rxbuf(struct fdm_ep *ep, void *ctx);
int fdm_is_tx(struct fdm_ep *ep, void *ctx);

/* fdm_rma.c */
extern struct fi_ops_rma fdm_rma_ops;
extern struct fi_ops_atomic fdm_atomic_ops;
void fdm_handle_rma_done(struct fdm_ep *ep, struct fdm_tx *tx, int err);
ssize_t fdm_rma_post(struct fdm_conn *c, struct fdm_tx *tx);

#endif /* FDM_H */
