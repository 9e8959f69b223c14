/* Private to the verbs provider's .c files: the full objects (the installed
 * fdv/ headers hold only the fields the inline data path touches, at the
 * start of each object) and the control-path helpers. Never installed. */
#ifndef FDV_INTERNAL_H
#define FDV_INTERNAL_H

#define FD_LOG_PROV "verbs"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/rdma_cma.h>

#include <fdv/fdv_cq.h>
#include <fdv/fdv_ep.h>
#include <fdv/fdv_mr.h>
#include <fdv/fdv_atomic.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fd_eq.h"
#include "fd_sets.h"
#include "fd_util.h"
#include "fdv_ops.h"
#include "fdv_cm_data.h"
#include "fdv_param.h"
#include "fdv_threading.h"

struct fdv_fabric {
	struct fid_fabric fabric_fid;
	atomic_int refs;
	char *name;
};

struct fdv_domain {
	struct fid_domain domain_fid;
	struct fdv_fabric *fabric;
	struct ibv_context *verbs;	/* rdma_cm's context for the device */
	struct ibv_pd *pd;
	struct fi_info *info;
	struct ibv_device_attr dev_attr;
	uint32_t version;
	atomic_int refs;
	/* From the info it was opened with: decides the CQs' ops tables; an
	 * endpoint's own info decides its tables. */
	enum fi_threading threading;
	/* FI_VERBS_* as read at fi_domain; its objects take their values
	 * from here (min_rnr_timer: set on each QP once it is connected, see
	 * fdv_qp_set_min_rnr_timer; connect_timeout_ms; cq_size). */
	struct fdv_params params;
	/* Where non-fetching atomics drop the old value verbs returns: one
	 * registration shared by the domain's endpoints (nobody reads it, so
	 * concurrent writes do no harm), made when the first endpoint is
	 * enabled rather than a memory region per endpoint. */
	pthread_mutex_t scratch_lock;
	uint64_t *scratch;
	struct ibv_mr *scratch_mr;
};

/* The EQ: the core's (queue, wait fd, fi_ops) plus the rdma_cm side. */
struct fdv_eq {
	struct fd_eq core;		/* first; core.lock also guards connecting; holds
					 * the fabric's reference */
	struct rdma_event_channel *channel;	/* in core's wait fd */
	/* fi_connect calls with a deadline (FI_VERBS_CONNECT_TIMEOUT): the
	 * timerfd, in core's wait fd, fires at the earliest so that sread
	 * wakes. */
	int tfd;
	struct fdv_msg_ep *connecting;
};

struct fdv_cq_full {
	struct fdv_cq cq;		/* first: inline part */
	struct fdv_domain *domain;
	struct ibv_comp_channel *channel;
	int signal_fd;			/* fi_cq_signal wakes a blocked sread */
	enum fi_wait_obj wait_obj;
	enum fi_cq_wait_cond wait_cond;	/* what fi_cq_sread's cond means */
	/* The vendor_err of the error fi_cq_readerr handed out last, for a
	 * caller that brought no err_data buffer (valid until the next). */
	uint32_t err_vendor;
	bool armed;
	bool serves_send;		/* some QP's send queue completes here */
	bool serves_recv;		/* some QP's receive queue completes here */
	uint32_t backlog_head;
	struct ibv_wc backlog_wc[FDV_CQ_BATCH];
	/* The endpoints whose send queues complete here, sorted by QP
	 * number: how a completion that carries a slot finds its slot. */
	struct fdv_cq_qp *qps;
	uint32_t nqps, qps_cap;
	atomic_int refs;
	bool mt_locked;			/* as in struct fdv_msg_ep */
	pthread_mutex_t mt_lock;
	struct fd_waitable waitable;	/* wait and poll sets (fd_sets.h) */
};

struct fdv_cq_qp {
	uint32_t qp_num;
	struct fdv_ep *ep;
};

struct fdv_mr_full {
	struct fdv_mr mr;		/* first: inline part */
	struct fdv_domain *domain;
	struct ibv_mr *ibmr;
	uint64_t access;
};

enum fdv_ep_state {
	FDV_EP_IDLE,		/* created, not enabled */
	FDV_EP_ENABLED,		/* QP exists */
	FDV_EP_CONNECTING,	/* fi_connect / fi_accept called */
	FDV_EP_CONNECTED,
	FDV_EP_SHUTDOWN,	/* disconnected: either side */
};

struct fdv_msg_ep {
	struct fdv_ep ep;		/* first: inline part */
	struct fdv_domain *domain;
	struct fi_info *info;
	struct rdma_cm_id *id;
	struct fdv_eq *eq;
	struct fdv_cq_full *tx_cq, *rx_cq;
	uint64_t tx_bind_flags, rx_bind_flags;
	enum fdv_ep_state state;
	bool disconnect_sent;
	bool passive;		/* created from a connection request */
	uint8_t peer_initiator_depth;	/* what the connect request offered */
	uint8_t peer_responder_resources;
	/* CLOCK_MONOTONIC ns by which the connect must be answered, 0 for
	 * none; linked on eq->connecting until then. */
	uint64_t connect_deadline_ns;
	struct fdv_msg_ep *connecting_next;
	bool connect_expired;	/* FI_ETIMEDOUT reported: later answers are dropped */
	/* Opened at FI_THREAD_ENDPOINT/FID/SAFE in a FDV_OPS_LOCKED build: the
	 * ops tables are the locked ones, and mt_lock also orders the EQ's
	 * changes of ep.qp_tx against the data path. */
	bool mt_locked;
	pthread_mutex_t mt_lock;
	struct fdv_srx *srx;	/* receives come from this SRQ (fi_ep_bind) */
};

/* A shared receive context (fi_srx_context): an ibv SRQ that the QPs of
 * the MSG endpoints bound to it draw their receives from. Its ep.srq is
 * what the data path's receive fallback posts to; it has no QP, so every
 * transmit call on it fails before reaching a device. */
struct fdv_srx {
	struct fdv_ep ep;		/* first: inline part, ep.srq set */
	struct fdv_domain *domain;
	struct fi_rx_attr attr;
	atomic_int refs;		/* endpoints bound */
};

struct fdv_pep {
	struct fid_pep pep_fid;
	struct fdv_fabric *fabric;
	struct fi_info *info;
	struct rdma_cm_id *id;
	struct fdv_eq *eq;
	int backlog;
	bool listening;
};

/* info->handle of an FI_CONNREQ: the request's rdma_cm id until an
 * endpoint adopts it or fi_reject consumes it. */
struct fdv_connreq {
	struct fid handle;
	struct rdma_cm_id *id;
	uint8_t initiator_depth;	/* from the request, for the accept */
	uint8_t responder_resources;
};

#define FDV_OBJ(type, member, fidp) fdv_container_of(fidp, type, member)

/* fdv_fabric.c */
int fdv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);

/* fdv_domain.c */
int fdv_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* fdv_eq.c */
int fdv_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
/* A verbs EQ behind a fid, NULL if it is not one (another layer's EQ). */
struct fdv_eq *fdv_eq_of_fid(struct fid *fid);
int fdv_eq_attach(struct fdv_eq *eq, struct rdma_cm_id *id);
/* Connect deadlines: watch after a successful rdma_connect; unwatch when
 * the connect is answered (EQ lock held) or the endpoint closes. */
void fdv_eq_watch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep,
			  unsigned int ms);
void fdv_eq_unwatch_connect_locked(struct fdv_eq *eq, struct fdv_msg_ep *ep);
void fdv_eq_unwatch_connect(struct fdv_eq *eq, struct fdv_msg_ep *ep);
/* Queueing, with the EQ lock held (from fdv_cm_handle_event). */
static inline int fdv_eq_push_cm(struct fdv_eq *eq, uint32_t event, struct fid *fid,
				 struct fi_info *info, const uint8_t *data, size_t len)
{
	return fd_eq_push_cm_locked(&eq->core, event, fid, info, data, len);
}

static inline int fdv_eq_push_error(struct fdv_eq *eq, struct fid *fid, void *context,
				    int err, int prov_errno, const void *err_data,
				    size_t err_len)
{
	return fd_eq_push_error_locked(&eq->core, fid, context, 0, err, prov_errno,
				       err_data, err_len);
}

/* fdv_cq.c */
int fdv_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int fdv_cq_trywait(struct fdv_cq_full *cq);
int fdv_cq_add_qp(struct fdv_cq_full *cq, uint32_t qp_num, struct fdv_ep *ep);
void fdv_cq_del_qp(struct fdv_cq_full *cq, uint32_t qp_num);

/* fdv_srx.c */
int fdv_srx_open(struct fid_domain *domain, struct fi_rx_attr *attr,
		 struct fid_ep **rx_ep, void *context);

/* fdv_mr.c */
extern struct fi_ops_mr fdv_mr_ops;

/* fdv_ep.c / fdv_cm.c */
int fdv_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep, void *context);
int fdv_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep, void *context);
int fdv_pep_yield_id(struct fid *fid, struct fdv_msg_ep *ep,
		     const struct fi_info *info, struct rdma_cm_id **id);
void fdv_cm_handle_event(struct fdv_eq *eq, struct rdma_cm_event *ev);
void fdv_cm_connect_expired(struct fdv_eq *eq, struct fdv_msg_ep *ep);
extern struct fi_ops_cm fdv_msg_ep_cm_ops;
extern struct fi_ops_cm fdv_pep_cm_ops;
int fdv_msg_ep_disconnect(struct fdv_msg_ep *ep);
void fdv_msg_ep_set_qp_tx(struct fdv_msg_ep *ep, struct ibv_qp *qp);

/* helpers shared by the control path; fields a table does not implement
 * point at the core's shared stubs (fd_enosys.h) */
int fdv_wc_status_to_fi(enum ibv_wc_status status);
int fdv_opt_set_cm_data_size(int level, int optname);

/* The object of an fi_srx_context fid. */
static inline struct fdv_srx *fdv_srx_of_fid(struct fid *fid)
{
	return FDV_OBJ(struct fdv_srx, ep.ep_fid.fid, fid);
}

/* The domain's scratch word for the old values of non-fetching atomics,
 * registered by the first endpoint that needs it (see struct fdv_domain);
 * kept with the domain's other accessors here, so an endpoint does not
 * call back into fdv_domain.c. */
static inline int fdv_domain_scratch(struct fdv_domain *dom, uint64_t **addr, uint32_t *lkey)
{
	int ret = 0;

	pthread_mutex_lock(&dom->scratch_lock);
	if (!dom->scratch_mr) {
		if (posix_memalign((void **)&dom->scratch, 64, 64)) {
			dom->scratch = NULL;
			ret = -FI_ENOMEM;
			goto out;
		}
		dom->scratch_mr = ibv_reg_mr(dom->pd, dom->scratch, 64,
					     IBV_ACCESS_LOCAL_WRITE);
		if (!dom->scratch_mr) {
			ret = -fd_errno_to_fi(errno);
			free(dom->scratch);
			dom->scratch = NULL;
			goto out;
		}
	}
	*addr = dom->scratch;
	*lkey = dom->scratch_mr->lkey;
out:
	pthread_mutex_unlock(&dom->scratch_lock);
	return ret;
}

#endif /* FDV_INTERNAL_H */
