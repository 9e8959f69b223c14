/* MSG endpoints: creation, binding, enabling (the QP is created here),
 * options, close, and the out-of-line error paths of the inline data path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"
#include "fdv_dgram_int.h"

static struct fdv_msg_ep *fdv_msg_ep_of_fid(struct fid *fid)
{
	return FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, fid);
}

/* ---- data-path slow paths ---- */

ssize_t fdv_ep_post_failed(struct fdv_ep *ep_in, int ret)
{
	(void)ep_in;
	/* Drivers report a full queue as ENOMEM: the caller should reap
	 * completions and try again. */
	if (ret == ENOMEM || ret == EAGAIN)
		return -FI_EAGAIN;
	FD_DBG(FD_LOG_EP_DATA, "post failed: %s", strerror(ret));
	return -fd_errno_to_fi(ret);
}

/* Why an endpoint cannot post now; the library's own slow paths ask it
 * (the inline code never does, so it is not an entry point). */
static FDV_COLD ssize_t fdv_ep_not_ready(struct fdv_ep *ep_in, int tx)
{
	struct fdv_msg_ep *ep;

	if (ep_in->srq)
		return -FI_EOPNOTSUPP;	/* a shared receive context: receives only */
	ep = fdv_container_of(ep_in, struct fdv_msg_ep, ep);
	if (!tx && ep->srx)
		return -FI_EOPNOTSUPP;	/* receives are posted to its SRX */
	switch (ep->state) {
	case FDV_EP_IDLE:
		return -FI_EOPBADSTATE;	/* not enabled */
	case FDV_EP_SHUTDOWN:
		return -FI_ENOTCONN;
	default:
		/* enabled, not yet connected; or no receive CQ bound */
		return tx ? -FI_ENOTCONN : -FI_EOPBADSTATE;
	}
}

/* The receive of a shared receive context (an endpoint without qp_rx but
 * with an SRQ), or a receive posted too early. The SRQ takes its own lock
 * in every driver, so none is taken here. */
ssize_t fdv_ep_recv_no_qp(struct fdv_ep *ep, struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad;
	int ret;

	if (!ep->srq)
		return fdv_ep_not_ready(ep, 0);
	if (wr->num_sge > (int)ep->rx_iov_limit)
		return fdv_ep_bad_request(ep, "iov count");
	ret = ibv_post_srq_recv(ep->srq, wr, &bad);
	return ret ? fdv_ep_post_failed(ep, ret) : 0;
}

/* A receive of one buffer on an endpoint without a receive QP (a shared
 * receive context, or too early): its own request, never the prebuilt one,
 * which several threads may reach through one shared context. */
ssize_t fdv_ep_recv_one_no_qp(struct fdv_ep *ep, void *buf, size_t len,
			      uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = (uint32_t)len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return fdv_ep_recv_no_qp(ep, &wr);
}

/* Zero-length requests carry no SGE (num_sge 0), which the prebuilt
 * requests are not shaped for; they are rare (barriers, notifications),
 * so they build their own here. */
ssize_t fdv_ep_post_empty(struct fdv_ep *ep, enum ibv_wr_opcode opcode,
			  unsigned int send_flags, uint32_t imm_be,
			  uint64_t raddr, uint32_t rkey, uint64_t want_comp,
			  void *context)
{
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = opcode;
	wr.send_flags = send_flags;
	wr.imm_data = imm_be;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return fdv_ep_post_send(ep, &wr, want_comp, context);
}

ssize_t fdv_ep_recv_empty(struct fdv_ep *ep, uint64_t wr_id)
{
	struct ibv_recv_wr wr;

	memset(&wr, 0, sizeof(wr));
	return fdv_ep_post_recv(ep, &wr, wr_id);
}

ssize_t fdv_ep_bad_request(struct fdv_ep *ep, const char *why)
{
	(void)ep;
	FD_DBG(FD_LOG_EP_DATA, "invalid request: %s", why);
	return -FI_EINVAL;
}

/* ---- FI_MORE: requests held on the endpoint ---- */

/* struct fdv_more and FDV_MORE_MAX are in fdv/fdv_ep.h: the inline
 * FI_MORE path of the msg forms builds held requests in place. */

static struct fdv_msg_ep *fdv_msg_ep_of(struct fdv_ep *ep)
{
	return fdv_container_of(ep, struct fdv_msg_ep, ep);
}

/* wr_id and signaling as fdv_ep_post_send does them; the slot is taken
 * here too. Returns 0 or -FI_EAGAIN (slot ring full). */
static ssize_t fdv_more_prepare(struct fdv_ep *ep, struct ibv_send_wr *wr,
				uint64_t want_comp, void *context,
				uint64_t slot_flags)
{
	if (slot_flags) {
		struct fdv_wr_slot *slot = &ep->slots[ep->slot_next];

		if (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE))
			return -FI_EAGAIN;
		slot->context = context;
		slot->flags = slot_flags;
		wr->wr_id = FDV_WR_ID_TAGGED + ep->slot_next;
		wr->send_flags |= IBV_SEND_SIGNALED;
		ep->slot_next = ep->slot_next + 1 == ep->slot_count ? 0 : ep->slot_next + 1;
		ep->unsignaled = 0;
	} else if (want_comp) {
		wr->wr_id = (uintptr_t)context;
		wr->send_flags |= IBV_SEND_SIGNALED;
		ep->unsignaled = 0;
	} else {
		wr->wr_id = FDV_WR_ID_SILENT;
		if (++ep->unsignaled >= ep->signal_every) {
			wr->send_flags |= IBV_SEND_SIGNALED;
			ep->unsignaled = 0;
		}
	}
	return 0;
}

/* Send what waits, plus tail (the current call's request, or NULL), in
 * one ibv_post_send. On a refusal the accepted prefix is gone, the rest of
 * the held requests stay held and the tail is not taken. */
static ssize_t fdv_more_flush(struct fdv_ep *ep, struct fdv_more *more,
			      struct ibv_send_wr *tail)
{
	struct ibv_send_wr *first, *bad = NULL;
	int ret;

	if (more->head == more->n) {
		first = tail;
	} else {
		more->wr[more->n - 1].next = tail;
		first = &more->wr[more->head];
	}
	if (!first)
		return 0;
	ret = ibv_post_send(more->qp, first, &bad);
	if (more->n)
		more->wr[more->n - 1].next = NULL;
	if (!ret || bad == tail) {
		more->head = more->n = 0;
		ep->qp_tx = more->qp;	/* nothing waits: open the fast path */
		ep->qp_tx_comp = ep->tx_comp ? more->qp : NULL;
	} else if (bad >= more->wr && bad < more->wr + more->n) {
		more->head = (uint32_t)(bad - more->wr);
	}
	if (!ret)
		return 0;
	/* The driver may have skipped its signaled request: the next one
	 * is signaled, so the send queue still drains. */
	ep->unsignaled = ep->signal_every ? ep->signal_every - 1 : 0;
	return fdv_ep_post_failed(ep, ret);
}

static ssize_t fdv_more_hold(struct fdv_ep *ep, struct fdv_more *more,
			     const struct ibv_send_wr *wr, int copy)
{
	uint32_t i = more->n;
	struct ibv_send_wr *e = &more->wr[i];

	*e = *wr;
	e->next = NULL;
	e->sg_list = more->sge[i];
	/* Inline data is read by the driver only at ibv_post_send; it is
	 * copied aside when the caller may reuse its buffer before that
	 * (FI_INJECT, or no completion to wait for). */
	if (copy && (wr->send_flags & IBV_SEND_INLINE) && wr->num_sge) {
		uint8_t *to = more->bounce + (size_t)i * more->bounce_size;
		uint32_t len = 0;

		for (int k = 0; k < wr->num_sge; k++) {
			if (len + wr->sg_list[k].length > more->bounce_size)
				return fdv_ep_bad_request(ep, "inline request over inject_size");
			memcpy(to + len, (void *)(uintptr_t)wr->sg_list[k].addr,
			       wr->sg_list[k].length);
			len += wr->sg_list[k].length;
		}
		more->sge[i][0].addr = (uintptr_t)to;
		more->sge[i][0].length = len;
		more->sge[i][0].lkey = 0;
		e->num_sge = 1;
	} else {
		memcpy(more->sge[i], wr->sg_list, (size_t)wr->num_sge * sizeof(*wr->sg_list));
	}
	if (i > more->head)
		more->wr[i - 1].next = e;
	more->n = i + 1;
	return 0;
}

ssize_t fdv_ep_post_held(struct fdv_ep *ep, struct ibv_send_wr *wr,
			 uint64_t want_comp, void *context, uint64_t slot_flags,
			 int hold)
{
	struct fdv_msg_ep *mep = fdv_msg_ep_of(ep);
	struct fdv_more *more = ep->more;
	uint32_t saved_slot = ep->slot_next, saved_unsignaled = ep->unsignaled;
	int copy = hold != FDV_HOLD_NOCOPY;
	ssize_t ret;

	hold = hold != FDV_POST_NOW;
	if (mep->state != FDV_EP_CONNECTED || !mep->id || !mep->id->qp) {
		/* The connection went while requests were held. Each was
		 * accepted with 0, so each must complete: they go to the QP
		 * they were held for (it lives until the endpoint closes),
		 * which the disconnect moved to the error state, so each
		 * flushes into the CQ as FI_ECANCELED, as it would have had
		 * it been posted before the connection ended. The fast path
		 * stays closed. */
		if (more && more->head != more->n) {
			if (fdv_more_flush(ep, more, NULL))
				more->head = more->n = 0;
			ep->qp_tx = NULL;
			ep->qp_tx_comp = NULL;
		}
		return fdv_ep_not_ready(ep, 1);
	}
	if (!more && hold) {
		uint32_t bounce = ep->inject_size;

		more = calloc(1, sizeof(*more) + (size_t)FDV_MORE_MAX * bounce);
		if (!more)
			return -FI_ENOMEM;
		more->bounce_size = bounce;
		/* pre-linked: fdv_msg_hold_v fills entries in place */
		for (uint32_t i = 0; i < FDV_MORE_MAX; i++)
			more->wr[i].sg_list = more->sge[i];
		ep->more = more;
	}
	if (!more || more->head == more->n) {
		if (!hold) {
			/* Not gated by us: the connection's QP is simply not
			 * published yet (connected under a racing reader). */
			return fdv_ep_not_ready(ep, 1);
		}
		more->qp = mep->id->qp;
	}
	if (hold && more->n == FDV_MORE_MAX) {
		ret = fdv_more_flush(ep, more, NULL);
		if (ret)
			return ret;
	}
	ret = fdv_more_prepare(ep, wr, want_comp, context, slot_flags);
	if (ret)
		return ret;
	if (!hold) {
		ret = fdv_more_flush(ep, more, wr);
	} else {
		if (more->n == FDV_MORE_MAX) {
			ret = -FI_EAGAIN;	/* a refused flush left it full */
		} else {
			ret = fdv_more_hold(ep, more, wr, copy);
			if (!ret) {
				/* gate the fast paths */
				ep->qp_tx = NULL;
				ep->qp_tx_comp = NULL;
			}
		}
	}
	if (ret && slot_flags) {
		/* The request was not taken: its slot stays free. */
		ep->slots[saved_slot].flags = 0;
		ep->slot_next = saved_slot;
	}
	if (ret && hold)
		ep->unsignaled = saved_unsignaled;
	return ret;
}

/* ---- binding and enabling ---- */

static int fdv_ep_bind_cq(struct fdv_msg_ep *ep, struct fdv_cq_full *cq,
			  uint64_t flags)
{
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;	/* already bound */
	if (cq->domain != ep->domain)
		return -FI_EDOMAIN;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_bind_flags = flags;
		atomic_fetch_add(&cq->refs, 1);
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_bind_flags = flags;
		atomic_fetch_add(&cq->refs, 1);
	}
	return 0;
}

static int fdv_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdv_msg_ep *ep = fdv_msg_ep_of_fid(fid);
	struct fdv_eq *eq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->state != FDV_EP_IDLE)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		return fdv_ep_bind_cq(ep, FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, bfid), flags);
	case FI_CLASS_EQ:
		if (flags)
			return -FI_EBADFLAGS;
		if (ep->eq)
			return -FI_EINVAL;
		eq = fdv_eq_of_fid(bfid);
		if (!eq)
			return -FI_EINVAL;	/* not a verbs EQ */
		ret = fdv_eq_attach(eq, ep->id);
		if (ret)
			return ret;
		ep->eq = eq;
		fd_eq_ref(&eq->core, 1);
		return 0;
	case FI_CLASS_SRX_CTX:
		if (flags)
			return -FI_EBADFLAGS;
		if (ep->srx)
			return -FI_EINVAL;
		ep->srx = fdv_srx_of_fid(bfid);
		if (ep->srx->domain != ep->domain) {
			ep->srx = NULL;
			return -FI_EDOMAIN;
		}
		atomic_fetch_add(&ep->srx->refs, 1);
		return 0;
	case FI_CLASS_CNTR:
	case FI_CLASS_STX_CTX:
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;	/* AVs and the like mean nothing to MSG */
	}
}

static uint64_t fdv_comp_flags(struct fdv_cq_full *cq, uint64_t bind_flags,
			       uint64_t op_flags)
{
	if (!cq)
		return 0;
	if (!(bind_flags & FI_SELECTIVE_COMPLETION) || (op_flags & FI_COMPLETION))
		return FI_COMPLETION;
	return 0;
}

static int fdv_ep_enable(struct fdv_msg_ep *ep)
{
	struct ibv_qp_init_attr attr;
	const struct fi_tx_attr *tx = ep->info->tx_attr;
	const struct fi_rx_attr *rx = ep->info->rx_attr;
	int ret;

	if (ep->state != FDV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (!ep->eq)
		return -FI_ENOEQ;
	/* Send completions, even unrequested ones, must land somewhere
	 * the application polls. */
	if (!ep->tx_cq)
		return -FI_ENOCQ;
	if (!ep->id->verbs) {
		FD_WARN(FD_LOG_EP_CTRL, "endpoint has no destination: no device to create a QP on");
		return -FI_EINVAL;
	}
	if (ep->id->verbs != ep->domain->verbs)
		return -FI_EDOMAIN;

	memset(&attr, 0, sizeof(attr));
	attr.qp_context = ep;
	attr.send_cq = ep->tx_cq->cq.ibcq;
	attr.recv_cq = ep->rx_cq ? ep->rx_cq->cq.ibcq : ep->tx_cq->cq.ibcq;
	attr.cap.max_send_wr = (uint32_t)(tx ? tx->size : 384);
	attr.cap.max_recv_wr = (uint32_t)(rx ? rx->size : 384);
	attr.cap.max_send_sge = (uint32_t)(tx ? tx->iov_limit : 1);
	attr.cap.max_recv_sge = (uint32_t)(rx ? rx->iov_limit : 1);
	if (ep->srx) {
		/* The QP draws its receives from the SRQ and has no queue of
		 * its own; qp_rx stays NULL so fi_recv on it is refused. */
		attr.srq = ep->srx->ep.srq;
		attr.cap.max_recv_wr = 0;
		attr.cap.max_recv_sge = 0;
	}
	attr.cap.max_inline_data = (uint32_t)(tx ? tx->inject_size : 0);
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;	/* signaling is chosen per request */
	ret = fdv_domain_scratch(ep->domain, &ep->ep.atomic_scratch,
				 &ep->ep.atomic_scratch_lkey);
	if (ret)
		return ret;
	if (rdma_create_qp(ep->id, ep->domain->pd, &attr)) {
		int err = errno;

		FD_WARN(FD_LOG_EP_CTRL, "rdma_create_qp (sq %u rq %u inline %u): %s",
			attr.cap.max_send_wr, attr.cap.max_recv_wr,
			attr.cap.max_inline_data, strerror(err));
		return -fd_errno_to_fi(err);
	}
	ep->ep.inject_size = tx && tx->inject_size < attr.cap.max_inline_data ?
		(uint32_t)tx->inject_size : attr.cap.max_inline_data;
	/* One completion slot per send-queue entry (fdv_cq.h). */
	ep->ep.slot_count = attr.cap.max_send_wr < FDV_WR_SLOTS_MAX ?
		attr.cap.max_send_wr : FDV_WR_SLOTS_MAX;
	if (!ep->ep.slot_count)
		ep->ep.slot_count = 1;
	ep->ep.slots = calloc(ep->ep.slot_count, sizeof(*ep->ep.slots));
	ret = ep->ep.slots ? fdv_cq_add_qp(ep->tx_cq, ep->id->qp->qp_num, &ep->ep) :
			     -FI_ENOMEM;
	if (ret) {
		free(ep->ep.slots);
		ep->ep.slots = NULL;
		rdma_destroy_qp(ep->id);
		return ret;
	}
	ep->ep.signal_every = attr.cap.max_send_wr / 2 ? attr.cap.max_send_wr / 2 : 1;
	/* The device may grant more than was asked; the application was
	 * promised the info's limits, and those are what it gets checked
	 * against. */
	if (attr.cap.max_send_sge < ep->ep.tx_iov_limit)
		ep->ep.tx_iov_limit = attr.cap.max_send_sge;
	if (attr.cap.max_recv_sge < ep->ep.rx_iov_limit)
		ep->ep.rx_iov_limit = attr.cap.max_recv_sge;
	ep->ep.tx_comp = fdv_comp_flags(ep->tx_cq, ep->tx_bind_flags, tx ? tx->op_flags : 0);
	ep->ep.rx_comp = fdv_comp_flags(ep->rx_cq, ep->rx_bind_flags, rx ? rx->op_flags : 0);
	ep->ep.rx_silent = ep->ep.rx_comp ? 0 : FDV_WR_ID_SILENT;
	ep->tx_cq->serves_send = true;
	(ep->rx_cq ? ep->rx_cq : ep->tx_cq)->serves_recv = true;
	/* Receives may be posted from now on; sends once connected. */
	if (ep->rx_cq && !ep->srx)
		ep->ep.qp_rx = ep->id->qp;
	ep->state = FDV_EP_ENABLED;
	FD_DBG(FD_LOG_EP_CTRL, "qp %u on %s: sq %u rq %u inline %u",
	       ep->id->qp->qp_num, ibv_get_device_name(ep->id->verbs->device),
	       attr.cap.max_send_wr, attr.cap.max_recv_wr, ep->ep.inject_size);
	return 0;
}

static int fdv_ep_control(struct fid *fid, int command, void *arg)
{
	struct fdv_msg_ep *ep = fdv_msg_ep_of_fid(fid);

	switch (command) {
	case FI_ENABLE:
		return fdv_ep_enable(ep);
	case FI_GETOPSFLAG:
		return fd_info_getopsflag(ep->info, arg);
	default:
		return -FI_ENOSYS;
	}
}

/* ---- options ---- */

/* FI_OPT_MIN_MULTI_RECV would need FI_MULTI_RECV, which an RC receive
 * queue does not offer. FI_OPT_TX_SIZE / FI_OPT_RX_SIZE (size_t) resize
 * the queues until fi_enable creates the QP: a layer sizes its inner
 * endpoint from options its own application set after fi_endpoint. */
static int fdv_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct fdv_msg_ep *ep = FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, fid);
	size_t v;

	if (level != FI_OPT_ENDPOINT ||
	    (optname != FI_OPT_TX_SIZE && optname != FI_OPT_RX_SIZE))
		return fd_opt_get_cm_data_size(level, optname, optval, optlen,
						FDV_CM_DATA_MAX);
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(size_t)) {
		*optlen = sizeof(size_t);
		return -FI_ETOOSMALL;
	}
	if (optname == FI_OPT_TX_SIZE)
		v = ep->info->tx_attr ? ep->info->tx_attr->size : 0;
	else
		v = ep->info->rx_attr ? ep->info->rx_attr->size : 0;
	memcpy(optval, &v, sizeof(v));
	*optlen = sizeof(size_t);
	return 0;
}

static int fdv_ep_setopt(fid_t fid, int level, int optname,
			 const void *optval, size_t optlen)
{
	struct fdv_msg_ep *ep = FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, fid);
	size_t v;

	if (level != FI_OPT_ENDPOINT ||
	    (optname != FI_OPT_TX_SIZE && optname != FI_OPT_RX_SIZE))
		return fdv_opt_set_cm_data_size(level, optname);
	if (!optval || optlen != sizeof(size_t))
		return -FI_EINVAL;
	memcpy(&v, optval, sizeof(v));
	if (!v || v > (size_t)ep->domain->dev_attr.max_qp_wr)
		return -FI_EINVAL;
	if (ep->state != FDV_EP_IDLE)
		return -FI_EOPBADSTATE;	/* the QP exists */
	if (optname == FI_OPT_TX_SIZE) {
		if (!ep->info->tx_attr)
			return -FI_EINVAL;
		ep->info->tx_attr->size = v;
	} else {
		if (!ep->info->rx_attr)
			return -FI_EINVAL;
		ep->info->rx_attr->size = v;
	}
	return 0;
}

static struct fi_ops_ep fdv_msg_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdv_ep_getopt,
	.setopt = fdv_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

/* ---- close ---- */

static int fdv_ep_close(struct fid *fid)
{
	struct fdv_msg_ep *ep = fdv_msg_ep_of_fid(fid);

	if (ep->state == FDV_EP_CONNECTED || ep->state == FDV_EP_CONNECTING)
		fdv_msg_ep_disconnect(ep);
	if (ep->eq) {
		fdv_eq_unwatch_connect(ep->eq, ep);
		/* Another thread may be pumping the EQ: from here on an event
		 * of this id (the DISCONNECTED our own disconnect causes, say)
		 * finds no owner and is only acked, so nothing naming this
		 * endpoint is queued after the forget. rdma_destroy_id below
		 * waits for such an event's ack, which the pump gives under
		 * the same lock. */
		if (ep->id) {
			pthread_mutex_lock(&ep->eq->core.lock);
			ep->id->context = NULL;
			pthread_mutex_unlock(&ep->eq->core.lock);
		}
		fd_eq_forget(&ep->eq->core, fid);
	}
	if (ep->id) {
		/* Completions of this QP still in the CQ no longer find its
		 * slots; held FI_MORE requests never reach the device. */
		if (ep->id->qp && ep->ep.slots)
			fdv_cq_del_qp(ep->tx_cq, ep->id->qp->qp_num);
		if (ep->id->qp)
			rdma_destroy_qp(ep->id);
		if (rdma_destroy_id(ep->id))
			FD_WARN(FD_LOG_EP_CTRL, "rdma_destroy_id: %s", strerror(errno));
	}
	free(ep->ep.slots);
	free(ep->ep.more);
	if (ep->tx_cq)
		atomic_fetch_sub(&ep->tx_cq->refs, 1);
	if (ep->rx_cq)
		atomic_fetch_sub(&ep->rx_cq->refs, 1);
	if (ep->eq)
		fd_eq_ref(&ep->eq->core, -1);
	if (ep->srx)
		atomic_fetch_sub(&ep->srx->refs, 1);
	atomic_fetch_sub(&ep->domain->refs, 1);
	fdv_lock_destroy(&ep->ep.lock);
	if (ep->mt_locked)
		pthread_mutex_destroy(&ep->mt_lock);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static struct fi_ops fdv_ep_fid_ops =
	FD_FI_OPS(fdv_ep_close, fdv_ep_bind, fdv_ep_control, NULL);

/* ---- creation ---- */

static int fdv_ep_resolve(struct fdv_msg_ep *ep, const struct fi_info *info)
{
	if (rdma_create_id(NULL, &ep->id, &ep->ep.ep_fid.fid, RDMA_PS_TCP))
		return -fd_errno_to_fi(errno);
	if (!info->dest_addr)
		return 0;	/* fi_connect will have nowhere to go: -FI_EINVAL at enable */
	/* The id has no event channel yet, so rdma_cm resolves synchronously;
	 * the EQ bound later takes the id over for the connection's events. */
	if (rdma_resolve_addr(ep->id, (struct sockaddr *)info->src_addr,
			      (struct sockaddr *)info->dest_addr,
			      FDV_RESOLVE_TIMEOUT_MS) ||
	    rdma_resolve_route(ep->id, FDV_RESOLVE_TIMEOUT_MS)) {
		int err = errno;
		char peer[96];

		fd_addr_str(peer, sizeof(peer), FI_SOCKADDR, info->dest_addr,
			    info->dest_addrlen);
		FD_WARN(FD_LOG_EP_CTRL, "resolving the peer address %s: %s",
			peer, strerror(err));
		return -fd_errno_to_fi(err);
	}
	return 0;
}

int fdv_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_out, void *context)
{
	struct fdv_domain *dom;
	struct fdv_msg_ep *ep;
	int ret;

	if (!domain || !info || !ep_out)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type == FI_EP_DGRAM)
		return fdv_dgram_open(domain, info, ep_out, context);
	if (info->ep_attr && info->ep_attr->type != FI_EP_MSG &&
	    info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_EINVAL;
	if (info->tx_attr && info->tx_attr->iov_limit > FDV_IOV_MAX)
		return -FI_EINVAL;
	/* The QP's sizes are 32 bits wide: a larger request would be cut
	 * down silently to some unrelated size. */
	if ((info->tx_attr && (info->tx_attr->size > UINT32_MAX ||
			       info->tx_attr->inject_size > UINT32_MAX)) ||
	    (info->rx_attr && info->rx_attr->size > UINT32_MAX))
		return -FI_EINVAL;
	if (info->rx_attr && info->rx_attr->iov_limit > FDV_IOV_MAX)
		return -FI_EINVAL;
	/* A connection request (the accepting side) or a passive endpoint
	 * whose address the new endpoint takes over. */
	if (info->handle && info->handle->fclass != FI_CLASS_CONNREQ &&
	    info->handle->fclass != FI_CLASS_PEP)
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	ep = fd_calloc_info(sizeof(*ep), offsetof(struct fdv_msg_ep, info), info);
	if (!ep)
		return -FI_ENOMEM;
	ep->domain = dom;
	ep->info->handle = NULL;	/* neither is ours to keep */
	if (info->handle && info->handle->fclass == FI_CLASS_PEP) {
		ret = fdv_pep_yield_id(info->handle, ep, info, &ep->id);
		if (ret)
			goto err;
	} else if (info->handle) {
		/* The passive side: adopt the connection request's id. */
		struct fdv_connreq *req = FDV_OBJ(struct fdv_connreq, handle, info->handle);

		if (req->id->verbs != dom->verbs) {
			FD_WARN(FD_LOG_EP_CTRL, "connection request arrived on another device than the domain's");
			ret = -FI_EDOMAIN;
			goto err;
		}
		ep->id = req->id;
		ep->id->context = &ep->ep.ep_fid.fid;
		ep->passive = true;
		ep->peer_initiator_depth = req->initiator_depth;
		ep->peer_responder_resources = req->responder_resources;
		free(req);
		info->handle = NULL;
		ep->info->handle = NULL;
	} else {
		ret = fdv_ep_resolve(ep, info);
		if (ret)
			goto err;
	}
	fdv_lock_init(&ep->ep.lock);
	fdv_ep_prebuild(&ep->ep);
	/* The limits the data path checks hold from the start, so a call made
	 * too early is told about the state, not about its arguments. */
	if (info->tx_attr) {
		ep->ep.inject_size = (uint32_t)info->tx_attr->inject_size;
		ep->ep.tx_iov_limit = (uint32_t)info->tx_attr->iov_limit;
	}
	if (info->rx_attr)
		ep->ep.rx_iov_limit = (uint32_t)info->rx_attr->iov_limit;
	ep->ep.kind = FDV_EP_KIND_MSG;
	ep->state = FDV_EP_IDLE;
	fd_ep_fid_init(&ep->ep.ep_fid, FI_CLASS_EP, context, &fdv_ep_fid_ops,
		       &fdv_msg_ep_ops, &fdv_msg_ep_cm_ops);
	ep->ep.ep_fid.msg = &fdv_msg_ops_msg;
	ep->ep.ep_fid.rma = &fdv_msg_ops_rma;
	ep->ep.ep_fid.atomic = &fdv_msg_ops_atomic;
#if FDV_OPS_LOCKED
	if (fdv_threading_locked(info->domain_attr &&
				 info->domain_attr->threading != FI_THREAD_UNSPEC ?
				 info->domain_attr->threading : dom->threading)) {
		pthread_mutex_init(&ep->mt_lock, NULL);
		ep->mt_locked = true;
		ep->ep.ep_fid.msg = &fdv_msg_ops_locked_msg;
		ep->ep.ep_fid.rma = &fdv_msg_ops_locked_rma;
		ep->ep.ep_fid.atomic = &fdv_msg_ops_locked_atomic;
	}
#endif
	atomic_fetch_add(&dom->refs, 1);
	*ep_out = &ep->ep.ep_fid;
	return 0;
err:
	if (ep->id && !ep->passive)
		rdma_destroy_id(ep->id);
	fi_freeinfo(ep->info);
	free(ep);
	return ret;
}
