/* rstream (FI_EP_SOCK_STREAM over verbs RMA): the layer's private objects
 * and entry points. Included by the verbs provider's .c files, which hand
 * FI_EP_SOCK_STREAM infos over to the fdr_ functions below. */
#ifndef FDR_H
#define FDR_H

#include "fdv_internal.h"
#include "fdr_proto.h"
#include "fdv_ops.h"

#define FDR_PROV_NAME		"verbs;rstream"

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
/* The user's share of the 55 bytes of CM data: ours goes first. */
#define FDR_CM_DATA_MAX		(FDV_CM_DATA_MAX - FDR_BLOB_LEN)
/* fi_shutdown and fi_close wait this long at most for the peer to give a
 * credit for the FIN and for the FIN to complete. */
#define FDR_FIN_WAIT_MS		2000

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
	 * (run from the user's EQ reads) changes the state too. */
	pthread_mutex_t lock;
	struct fdv_domain *domain;
	struct fi_info *info;		/* the user's, duplicated */
	struct fdv_eq *ueq;		/* the user's EQ, once bound */

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
	/* readiness (see fdr_wait_update) */
	bool tx_waiting, rx_waiting;
	bool efd_set;
	int waitfd;			/* epoll: CQ channel, internal EQ, efd */
	int efd;
};

/* info->handle of a user FI_CONNREQ: the verbs request underneath, with
 * the peer's blob already checked. handle.ops->close releases it. */
struct fdr_connreq {
	struct fid handle;
	struct fi_info *core_info;	/* its handle is the verbs request */
	struct fdr_blob peer;
};

struct fdr_pep {
	struct fid_pep pep_fid;
	pthread_mutex_t lock;
	struct fdv_fabric *fabric;
	struct fi_info *info;		/* the user's */
	struct fid_eq *ieq;
	struct fid_pep *ipep;
	struct fdv_eq *ueq;
	int iwarp;
};

/* fdr_getinfo.c */
int fdr_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
void fdr_getinfo_init(void);
int fdr_info_iwarp(const struct fi_info *info);
/* The verbs MSG info an rstream info stands for (a new fi_info). */
struct fi_info *fdr_core_info(const struct fi_info *info);
/* The rstream info for a verbs info (a new fi_info), from a template. */
struct fi_info *fdr_stream_info(const struct fi_info *tmpl,
				const struct fi_info *core);

/* fdr_msg_ops.c: the endpoints' fi_msg table */
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
	return fdv_container_of(ep_fid, struct fdr_ep, ep_fid);
}

/* fdr_ep.c */
int fdr_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);

/* fdr_stream.c */
void fdr_progress(struct fdr_ep *ep);
/* Post the receive for one 4-byte slot (a work request of the ring). */
int fdr_post_rx(struct fdr_ep *ep, uint32_t slot);
void fdr_set_error(struct fdr_ep *ep, int err);
void fdr_wait_update(struct fdr_ep *ep);
/* The verbs connection is gone: take what completed before it went. */
void fdr_drain_after_close(struct fdr_ep *ep);
struct fdr_connreq *fdr_connreq_of(struct fid *handle);

/* fdr_cm.c */
int fdr_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);
extern struct fi_ops_cm fdr_ep_cm_ops;
void fdr_ep_pump_eq(struct fdr_ep *ep);
void fdr_ep_eq_hook(void *arg);
int fdr_ep_shutdown_locked(struct fdr_ep *ep);
/* An rstream domain: a verbs domain whose user-facing ops offer no CQs
 * and no memory registration. */
void fdr_domain_init(struct fdv_domain *dom);

#endif /* FDR_H */
