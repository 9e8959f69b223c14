/* RDM layer (FI_EP_RDM, "verbs;ofi_rxm"): the objects its eager data
 * path (fdm_msg.h) reads and writes. Private to the library: RDM
 * endpoints are reached through their ops tables in both builds (the
 * direct build's wrappers send every call on a layer's endpoint there),
 * so none of these layouts is part of the ABI. docs/DESIGN.md ("What the
 * inline RDM path buys") says why. */
#ifndef FDM_EP_H
#define FDM_EP_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <fdv/fdv_compiler.h>
#include <fdv/fdv_verbs.h>

#define FDM_PROTO_VERSION	2
#define FDM_HDR_LEN		32u
#define FDM_NAME_KEY_LEN	20u	/* family, address, port: compared as bytes */

/* Eager pool buffer: header + payload. */
#define FDM_BUF_SIZE		8192u
#define FDM_EAGER_MAX		(FDM_BUF_SIZE - FDM_HDR_LEN)
/* The application's transmit requests (tx_attr->size: sends in flight or
 * waiting for their connection; fi_send answers -FI_EAGAIN beyond). Each
 * endpoint allocates a bounce buffer for each and a reserve on top for
 * the layer's own messages (a quarter, at least 1, at most
 * FDM_TX_RESERVE): 224 + 32 = 256 buffers by default. */
#define FDM_DEF_TX_SIZE		224u
#define FDM_TX_RESERVE		32u
/* Receives the application may have posted at once. */
#define FDM_DEF_RX_SIZE		1024u
/* Eager pool (SRQ) depth at most; less if the device allows less. */
#define FDM_POOL_MAX		512u
#define FDM_IOV_LIMIT		4u
/* Largest message: what the rendezvous header can describe and the
 * reads split into pieces the device takes. */
#define FDM_MAX_MSG_SIZE	((size_t)1 << 32)
/* Completions one progress pass reads from the verbs CQ at a time. */
#define FDM_CQ_BATCH		16
/* Flow control (docs/rdm-protocol.md): the most messages one peer may
 * have in our eager pool at once, and how many connections of an
 * endpoint have a credit word the peer writes (later ones go without
 * flow control). */
#define FDM_CREDIT_MAX		64u
/* How far below zero a send that reports no completion (an inject) may
 * take a connection's credits. Such a send cannot wait in the
 * connection's queue (nothing would call progress to post it), so with
 * no credit it would have to say -FI_EAGAIN, and a burst of small sends
 * to a peer that is busy elsewhere would wait for that peer (MPICH's
 * pt2pt/sendrecv3). The connection is RC with endless RNR retries: a
 * message that finds the peer's pool empty is held by the device and
 * delivered in order once a buffer is reposted, so overdrawing costs
 * retries on the wire, never data. The bound keeps a sender that the
 * peer does not read from filling the wire with them for ever
 * (docs/rdm-protocol.md, "Overdraft"). */
#define FDM_CREDIT_OVERDRAFT	128
/* Scalable endpoints (fdm_sep.c): transmit and receive contexts each at
 * most; context pair k listens on the SEP's port + k. */
#define FDM_SEP_MAX_CTX		16u
#define FDM_CREDIT_SLOTS	4096u

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

/* An endpoint's name: what fi_getname gives and fi_av_insert takes. */
struct fdm_name {
	union {
		struct sockaddr sa;
		struct sockaddr_in sin;
		struct sockaddr_in6 sin6;
	} u;
	uint32_t len;		/* 16 or 28 */
};

enum fdm_op {
	FDM_OP_EAGER_MSG = 1,
	FDM_OP_EAGER_TAG = 2,
	FDM_OP_RNDV_MSG = 3,
	FDM_OP_RNDV_TAG = 4,
	FDM_OP_RNDV_DONE = 5,
	FDM_OP_RMA_EVENT = 6,	/* tag: FI_REMOTE_WRITE or FI_REMOTE_READ */
	FDM_OP_ATOMIC_REQ = 7,	/* tag: request id; payload: fdm_atomic_req */
	FDM_OP_ATOMIC_RESP = 8,	/* tag: request id; data: status; payload: fetched */
};

#define FDM_HF_DATA	0x1	/* remote CQ data present */
/* Eager ops only: the sender asked FI_DELIVERY_COMPLETE. An 8-byte
 * request id follows the header (before the payload), and the receiver
 * answers with FDM_OP_RNDV_DONE carrying it once it took the message in
 * (placed in a receive, or buffered as unexpected). */
#define FDM_HF_ACK	0x2
#define FDM_ACK_ID_LEN	8u

/* ---- transmit requests ---- */
enum fdm_rma_kind {
	FDM_RMA_WRITE, FDM_RMA_READ,
};

struct fdm_rma_op {
	uint8_t op;			/* enum fdm_rma_kind; atomics: fdm_atomic_kind */
	bool bounce;			/* data goes through tx->buf */
	size_t count;
	struct iovec iov[FDM_IOV_LIMIT];
	void *desc[FDM_IOV_LIMIT];
	uint64_t raddr, rkey, data, flags;
	/* atomics (software, at the target: fdm_atomic.c): iov/count
	 * above are where the fetched values go */
	enum fi_datatype dt;
	enum fi_op aop;
	size_t acount;			/* atomic elements */
	uint32_t status;		/* the target's answer: 0 or an FI_E* */
};

enum fdm_tx_order {
	FDM_ORD_NONE,
	FDM_ORD_READ,		/* an RDMA read the device still runs */
	FDM_ORD_ATOMIC,		/* an atomic request not answered yet */
};

enum fdm_tx_kind {
	FDM_TX_EAGER,		/* completes on the verbs send completion */
	FDM_TX_RNDV,		/* completes on the peer's "rendezvous done"
				 * (also an FDM_HF_ACK eager send) */
	FDM_TX_CTRL,		/* layer's own message (done): no completion */
	FDM_TX_RMA,		/* a verbs read or write for the application */
	FDM_TX_ATOMIC,		/* an atomic request: completes on the peer's answer */
};

struct fdm_tx {
	struct fdm_node node;		/* pending list of its connection */
	struct fdm_conn *conn;
	void *context;
	uint64_t cq_flags;		/* what its completion reports */
	uint8_t kind;
	bool report;			/* a CQ entry is wanted */
	bool rts_done;			/* rendezvous, atomic: the request's send completed */
	bool done_rcvd;			/* rendezvous, atomic: the peer answered */
	bool in_use;
	uint8_t cntr;			/* FDM_CNTR_* index to count into */
	/* rendezvous: the status the peer's done carried (0: read it all);
	 * set and read by the library only, in what was padding */
	uint16_t done_status;
	uint32_t idx;
	uint32_t gen;			/* rendezvous id = gen << 32 | idx */
	uint32_t wire_len;		/* header + payload in buf */
	/* FDM_ORD_*: counted in its connection's reads_out or atomics_out
	 * from its post to its completion (fdm_conn_order_done) */
	uint8_t ordered;
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

/* ---- connections ---- */
enum fdm_conn_state {
	FDM_C_IDLE,		/* never connected, or failed */
	FDM_C_CONNECTING,	/* our fi_connect is outstanding */
	FDM_C_ACCEPTING,	/* we accepted the peer's request */
	FDM_C_WAIT_PEER,	/* the peer refused ours: its request comes */
	FDM_C_RETRY,		/* nothing listened at the peer's address:
				 * we try again at deadline_ms */
	FDM_C_CONNECTED,
};

struct fdm_conn {
	struct fdm_ep *ep;
	uint32_t id;			/* index in ep->conns: our id */
	uint32_t remote_id;		/* the peer's id, put in our headers */
	enum fdm_conn_state state;
	struct fid_ep *vep;		/* current verbs MSG endpoint */
	/* vep while a send may be posted on it at once: connected and
	 * nothing queued before it (send-after-send order); else NULL.
	 * The inline send tests this one pointer (fdm_conn_sync). */
	struct fid_ep *tx_vep;
	/* Messages that may still go to the peer's eager pool before it
	 * reports buffers freed; every message that takes a pool buffer
	 * there takes one (the inline send too). Signed: sends that report
	 * a completion wait while it is <= 0, injects may take it down to
	 * -FDM_CREDIT_OVERDRAFT; INT32_MAX without flow control. */
	int32_t tx_credits;
	uint32_t tx_grant;		/* the peer's grant for this connection */
	uint32_t tx_seen;		/* last value read from our credit word */
	bool tx_unlimited;		/* no credit word: no flow control */
	/* the other way: what we granted the peer, and the pool buffers
	 * its messages took that we freed and reported (its credit word,
	 * at peer_word/peer_word_key, holds rx_reported) */
	bool credit_owed;		/* a report waits for send-queue room */
	uint32_t rx_grant, rx_freed, rx_reported, rx_report_every;
	uint64_t peer_word, peer_word_key;
	struct fdm_name peer;
	struct fdm_node pending;	/* txs waiting to be posted, in order */
	/* Data order across RMA and atomics (fdm_rma_post): RDMA reads
	 * posted and not complete, atomic requests sent and not answered */
	uint32_t reads_out, atomics_out;
	bool on_flush;			/* in ep->flush */
	/* the peer's context index in its scalable endpoint (fdm_sep.c):
	 * its listening port is its SEP's port + peer_ctx, and the AV
	 * names the SEP; 0 for a plain endpoint */
	uint8_t peer_ctx;
	struct fdm_node flush_node;
	fi_addr_t src;			/* the peer in the endpoint's AV */
	uint64_t src_gen;
	/* FDM_C_WAIT_PEER gives up then; FDM_C_RETRY connects again then */
	long deadline_ms;
	/* FDM_C_RETRY: the last attempt is due by retry_end_ms (the first
	 * refusal + the endpoint's connect_retry_ms); retry_gap_ms is the
	 * pause before the next one, doubled after each */
	long retry_end_ms;
	uint32_t retry_gap_ms;
	/* Why the last attempt failed (a positive FI_E*), told once to the
	 * next call that must post at once (fdm_conn_post_now) instead of
	 * connecting again; 0 after that or after a success. */
	int last_err;
	/* The inline eager send's work request, built once (fdm_conn_new):
	 * opcode IBV_WR_SEND, sg_list sge, sge[0].lkey the bounce buffers'.
	 * A send sets the addresses, lengths and num_sge: the header in the
	 * bounce buffer and the payload in place as two inline SGEs when
	 * both fit the verbs endpoint's inline size, else header and
	 * payload copied into the bounce buffer as one SGE. Written only by
	 * the inline send, which a FI_THREAD_DOMAIN application serialises
	 * (FI_THREAD_SAFE domains take the library's send instead). */
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
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

	/* What the eager calls test first (fdm_msg.h): set when the
	 * endpoint is enabled in a domain without the layer's lock
	 * (FI_THREAD_SAFE takes the general calls, which lock) and its
	 * operation flags ask for nothing the inline code does not do;
	 * fdm_ep_fast_update() keeps them. */
	bool tx_fast;			/* eager sends to a connected peer */
	bool rx_fast;			/* receives with an empty unexpected queue */
	bool tx_report;			/* a send without FI_INJECT completes */
	uint32_t inject_size;		/* tx_attr->inject_size */
	/* the AV's generation (bumped by fi_av_remove): by_addr is valid
	 * while by_addr_gen equals it */
	const uint64_t *av_gen;

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
	/* The application's requests leave this many free for the layer's
	 * own messages (rendezvous done, RMA events, atomic answers): a
	 * request of the peer's waits for one of those, so two endpoints
	 * whose requests all wait on each other could otherwise finish
	 * neither (fdm_tx_get_app). */
	uint32_t tx_reserve;
	struct fdm_rx *rxs;
	uint32_t nrx;
	uint32_t *rx_free;
	uint32_t rx_nfree;

	struct fdm_conn **conns;	/* by our id */
	uint32_t nconns, conns_cap;
	uint32_t nwait;			/* connections in FDM_C_WAIT_PEER or _RETRY */
	/* How long a connection refused because nothing listens at the
	 * peer's address is tried again (FI_OFI_RXM_CONNECT_RETRY) */
	uint32_t connect_retry_ms;
	uint32_t nconnecting;		/* connections not yet established */
	/* Progress calls left until the EQ is read again (FDM_EQ_EVERY). */
	uint32_t eq_left;
	/* Set where work beyond the verbs CQ appears (a connection on its
	 * way, a credit report owed, a connection to flush, a rendezvous
	 * started, an atomic answer waiting); recomputed by the progress
	 * pass that looks at them. While it is 0 and the EQ is not due,
	 * progress costs one test beyond the CQ read (fdm_ep_progress). */
	uint32_t work;
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
	/* a scalable endpoint's context pair (fdm_sep.c): its index, which
	 * its connection requests carry; NULL and 0 for a plain endpoint */
	uint8_t sep_ctx;
	struct fdm_sep *sep;
	/* atomic requests that arrived while no transmit request was free
	 * for their answer, in arrival order (fdm_atomic.c) */
	struct fdm_node atomic_wait;

	/* Flow control: one 32-bit credit word per connection id, which
	 * the peer of that connection writes (RDMA write, big endian) */
	uint32_t *credit_words;
	struct fid_mr *credit_mr;
	uint32_t credit_granted;	/* sum of rx_grant over connections */
	uint32_t credit_owed;		/* connections with credit_owed set */
};

static inline struct fdm_ep *fdm_ep_of(struct fid_ep *ep)
{
	return fdv_container_of(ep, struct fdm_ep, ep_fid);
}


#endif /* FDM_EP_H */
