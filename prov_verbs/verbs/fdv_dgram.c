/* FI_EP_DGRAM over verbs UD queue pairs: fi_getinfo entries, the
 * endpoint object (open, bind, enable, getname, close), the calls that
 * are not inline (vector and msg forms, senddata, injectdata), the
 * refusals of the inline ones, and the source address of a receive. The
 * inline calls are in <fdv/fdv_dgram.h>. */
#include <arpa/inet.h>
#include <endian.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_attr.h"
#include "fd_util.h"
#include "fdv_dgram_int.h"
#include "fdv_layer.h"	/* fdv_getinfo: the MSG lookup that names devices */

static struct fdv_dgram_full *fdv_dgram_full_of(struct fdv_dgram_ep *d)
{
	return fdv_container_of(d, struct fdv_dgram_full, d);
}

static struct fdv_dgram_full *fdv_dgram_full_of_fid(struct fid *fid)
{
	return fdv_container_of(fid, struct fdv_dgram_full, d.ep.ep_fid.fid);
}

/* ---- refusals of the data path ---- */

ssize_t fdv_dgram_refuse(struct fdv_dgram_ep *d, fi_addr_t addr, size_t len, int why)
{
	switch (why) {
	case FDV_DGRAM_BAD_ADDR:
		/* As upstream's verbs provider answers an address its AV does
		 * not hold. */
		FD_DBG(FD_LOG_EP_DATA, "datagram to fi_addr %" PRIu64 ": not in the AV",
		       (uint64_t)addr);
		return -FI_ENOENT;
	case FDV_DGRAM_BAD_LEN:
		FD_DBG(FD_LOG_EP_DATA, "datagram length %zu: payload limit %u, receive "
		       "buffers at least %u bytes (the prefix)", len, d->max_msg,
		       FDV_DGRAM_PREFIX);
		return -FI_EINVAL;
	case FDV_DGRAM_BAD_BUF:
		FD_DBG(FD_LOG_EP_DATA, "datagram buffer without memory or descriptor");
		return -FI_EINVAL;
	default:
		return -FI_EOPBADSTATE;	/* not enabled yet */
	}
}

/* ---- the forms that are not inline ---- */

static uint64_t fdv_dgram_want(struct fdv_dgram_ep *d, uint64_t flags)
{
	return (d->ep.tx_comp || (flags & FI_COMPLETION)) ? FI_COMPLETION : 0;
}

/* want_comp: FI_COMPLETION or 0, decided by the caller. */
static ssize_t fdv_dgram_sendiov(struct fdv_dgram_ep *d, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t flags, uint64_t data, void *context,
				 uint64_t want_comp)
{
	struct ibv_sge sge[FDV_IOV_MAX];
	struct ibv_send_wr wr;
	unsigned int send_flags = 0;
	size_t total;
	int inl;

	if (count > d->ep.tx_iov_limit || (count && !iov))
		return -FI_EINVAL;
	if (flags & ~(FI_INJECT | FI_COMPLETION | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE |
		      FI_TRANSMIT_COMPLETE | FI_MORE | FI_FENCE | FI_MSG | FI_SEND))
		return -FI_EBADFLAGS;
	total = fdv_iov_total(iov, count);
	if (total > d->max_msg)
		return fdv_dgram_refuse(d, dest, total, FDV_DGRAM_BAD_LEN);
	inl = total <= d->ep.inject_size;
	if ((flags & FI_INJECT) && !inl)
		return fdv_dgram_refuse(d, dest, total, FDV_DGRAM_BAD_LEN);
	if (fdv_fill_sge(sge, iov, desc, count, !inl) == SIZE_MAX)
		return fdv_dgram_refuse(d, dest, total, FDV_DGRAM_BAD_BUF);
	if (inl)
		send_flags |= IBV_SEND_INLINE;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = (int)count;
	wr.opcode = IBV_WR_SEND;
	if (flags & FI_REMOTE_CQ_DATA) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htobe32((uint32_t)data);
	}
	wr.send_flags = send_flags;
	return fdv_dgram_post(d, &wr, dest, want_comp, context);
}

static ssize_t fdv_dgram_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t dest_addr, void *context)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep);

	return fdv_dgram_sendiov(d, iov, desc, count, dest_addr, 0, 0, context,
				 d->ep.tx_comp);
}

static ssize_t fdv_dgram_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep);

	if (!msg)
		return -FI_EINVAL;
	return fdv_dgram_sendiov(d, msg->msg_iov, msg->desc, msg->iov_count, msg->addr,
				 flags, msg->data, msg->context, fdv_dgram_want(d, flags));
}

static ssize_t fdv_dgram_senddata(struct fid_ep *ep, const void *buf, size_t len,
				  void *desc, uint64_t data, fi_addr_t dest_addr,
				  void *context)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return fdv_dgram_sendiov(d, &iov, &desc, 1, dest_addr, FI_REMOTE_CQ_DATA, data,
				 context, d->ep.tx_comp);
}

static ssize_t fdv_dgram_injectdata(struct fid_ep *ep, const void *buf, size_t len,
				    uint64_t data, fi_addr_t dest_addr)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (len > d->ep.inject_size)
		return fdv_dgram_refuse(d, dest_addr, len, FDV_DGRAM_BAD_LEN);
	/* no completion for an inject, whatever the endpoint's default */
	return fdv_dgram_sendiov(d, &iov, NULL, 1, dest_addr, FI_INJECT | FI_REMOTE_CQ_DATA,
				 data, NULL, 0);
}

/* A receive into the slot's full-size bounce buffer; the CQ copies the
 * datagram to iov (fdv_dgram_rx_polled). */
static ssize_t fdv_dgram_recv_bounce(struct fdv_dgram_full *e, const struct iovec *iov,
				     size_t count, size_t total, void *context)
{
	struct fdv_dgram_ep *d = &e->d;
	struct fdv_wr_slot *slot;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t i;
	int ret;

	fdv_lock(&d->ep.lock);
	if (!d->ep.qp_rx) {
		fdv_unlock(&d->ep.lock);
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, 0, FDV_DGRAM_NOT_ENABLED);
	}
	i = d->ep.slot_next;
	slot = &d->ep.slots[i];
	if (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE)) {
		fdv_unlock(&d->ep.lock);
		return -FI_EAGAIN;
	}
	e->rxv[i].n = (uint32_t)count;
	e->rxv[i].total = total;
	memcpy(e->rxv[i].iov, iov, count * sizeof(*iov));
	slot->context = context;
	slot->flags = FI_MSG | FI_RECV | FDV_SLOT_BOUNCED;
	d->rx_buf[i] = iov[0].iov_base;
	sge.addr = (uintptr_t)(e->bounce + (size_t)i * e->stride);
	sge.length = e->stride;
	sge.lkey = e->bounce_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = FDV_WR_ID_TAGGED + i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ibv_post_recv(d->ep.qp_rx, &wr, &bad);
	if (!ret)
		d->ep.slot_next = i + 1 == d->ep.slot_count ? 0 : i + 1;
	else
		slot->flags = 0;
	fdv_unlock(&d->ep.lock);
	return !ret ? 0 : fdv_ep_post_failed(&d->ep, ret);
}

static ssize_t fdv_dgram_recviov(struct fdv_dgram_ep *d, const struct iovec *iov,
				 void **desc, size_t count, uint64_t flags, void *context)
{
	struct fdv_dgram_full *e = fdv_dgram_full_of(d);
	struct ibv_sge sge[FDV_IOV_MAX];
	struct ibv_recv_wr wr;
	size_t total;

	if (!count || count > d->ep.rx_iov_limit || !iov)
		return -FI_EINVAL;
	if (flags & ~(FI_COMPLETION | FI_MORE | FI_MSG | FI_RECV))
		return -FI_EBADFLAGS;
	/* The GRH lands in one piece: the first buffer holds the whole
	 * prefix, which is where the source address is read from. */
	if (iov[0].iov_len < FDV_DGRAM_PREFIX)
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, iov[0].iov_len, FDV_DGRAM_BAD_LEN);
	total = fdv_fill_sge(sge, iov, desc, count, 1);
	if (total == SIZE_MAX || !iov[0].iov_base)
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, 0, FDV_DGRAM_BAD_BUF);
	if (total < e->stride)
		return fdv_dgram_recv_bounce(e, iov, count, total, context);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = (int)count;
	return fdv_dgram_post_recv(d, &wr, iov[0].iov_base, context, 0);
}

ssize_t fdv_dgram_recv_short(struct fdv_dgram_ep *d, void *buf, size_t len, void *desc,
			     void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	if (len < FDV_DGRAM_PREFIX)
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, len, FDV_DGRAM_BAD_LEN);
	if (!buf || !desc)
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, len, FDV_DGRAM_BAD_BUF);
	if (!d->ep.qp_rx)
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, 0, FDV_DGRAM_NOT_ENABLED);
	if (len >= FDV_DGRAM_PREFIX + d->max_msg)	/* only !desc etc. got here */
		return fdv_dgram_recviov(d, &iov, &desc, 1, 0, context);
	return fdv_dgram_recv_bounce(fdv_dgram_full_of(d), &iov, 1, len, context);
}

void fdv_dgram_rx_polled(struct fdv_ep *ep, uint32_t slot, struct ibv_wc *wc)
{
	struct fdv_dgram_full *e;
	struct fdv_dgram_rxv *v;
	const uint8_t *from;
	size_t left, n;

	if (ep->kind != FDV_EP_KIND_DGRAM || slot >= ep->slot_count ||
	    !(ep->slots[slot].flags & FDV_SLOT_BOUNCED) || wc->status != IBV_WC_SUCCESS)
		return;
	e = fdv_dgram_full_of(fdv_container_of(ep, struct fdv_dgram_ep, ep));
	v = &e->rxv[slot];
	from = e->bounce + (size_t)slot * e->stride;
	left = wc->byte_len < v->total ? wc->byte_len : v->total;
	for (uint32_t k = 0; k < v->n && left; k++, left -= n) {
		n = v->iov[k].iov_len < left ? v->iov[k].iov_len : left;
		memcpy(v->iov[k].iov_base, from, n);
		from += n;
	}
	/* Longer than the application's buffers: what fits is there, and
	 * the receive completes in error as a device's would (FI_ETRUNC). */
	if (wc->byte_len > v->total)
		wc->status = IBV_WC_LOC_LEN_ERR;
}

size_t fdv_dgram_olen(struct fdv_ep *ep, uint32_t slot, const struct ibv_wc *wc)
{
	struct fdv_dgram_full *e;

	if (ep->kind != FDV_EP_KIND_DGRAM || slot >= ep->slot_count ||
	    !(ep->slots[slot].flags & FDV_SLOT_BOUNCED))
		return 0;
	e = fdv_dgram_full_of(fdv_container_of(ep, struct fdv_dgram_ep, ep));
	return wc->byte_len > e->rxv[slot].total ? wc->byte_len - e->rxv[slot].total : 0;
}

static ssize_t fdv_dgram_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t src_addr, void *context)
{
	(void)src_addr;
	return fdv_dgram_recviov(fdv_dgram_of(ep), iov, desc, count, 0, context);
}

static ssize_t fdv_dgram_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return fdv_dgram_recviov(fdv_dgram_of(ep), msg->msg_iov, msg->desc,
				 msg->iov_count, flags, msg->context);
}

/* The same inline functions the direct build compiles into programs,
 * here out of line for the OFF build and programs built without
 * FABRIC_DIRECT. */
static struct fi_ops_msg fdv_dgram_ops_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdv_dgram_recv,
	.recvv = fdv_dgram_recvv,
	.recvmsg = fdv_dgram_recvmsg,
	.send = fdv_dgram_send,
	.sendv = fdv_dgram_sendv,
	.sendmsg = fdv_dgram_sendmsg,
	.inject = fdv_dgram_inject,
	.senddata = fdv_dgram_senddata,
	.injectdata = fdv_dgram_injectdata,
};

/* ---- the source of a receive ---- */

fi_addr_t fdv_dgram_src(struct fdv_ep *ep, uint32_t slot, const struct ibv_wc *wc)
{
	struct fdv_dgram_full *e;
	const uint8_t *grh;
	uint8_t gid[16];
	bool has_gid;

	if (ep->kind != FDV_EP_KIND_DGRAM)
		return FI_ADDR_NOTAVAIL;
	e = fdv_dgram_full_of(fdv_container_of(ep, struct fdv_dgram_ep, ep));
	if (!e->av || slot >= ep->slot_count)
		return FI_ADDR_NOTAVAIL;
	grh = e->d.rx_buf[slot];
	has_gid = (wc->wc_flags & IBV_WC_GRH) && grh && wc->byte_len >= FDV_DGRAM_PREFIX;
	if (has_gid) {
		/* RoCE v2 over IPv4 leaves the IPv4 header in the last 20
		 * bytes of the 40 (version nibble 4); an IB or RoCE GRH starts
		 * with IP version 6 and holds the source GID at byte 8. */
		if ((grh[20] >> 4) == 4 && (grh[0] >> 4) != 6) {
			memset(gid, 0, 10);
			gid[10] = gid[11] = 0xff;
			memcpy(gid + 12, grh + 20 + 12, 4);
		} else {
			memcpy(gid, grh + 8, 16);
		}
	}
	return fdv_av_find(e->av, gid, has_gid, wc->slid, wc->src_qp);
}

/* ---- binding, enabling, naming ---- */

static int fdv_dgram_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdv_dgram_full *e = fdv_dgram_full_of_fid(fid);
	struct fdv_cq_full *cq;
	struct fdv_av_full *av;

	if (!bfid)
		return -FI_EINVAL;
	if (e->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		if (!(flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EINVAL;
		cq = FDV_OBJ(struct fdv_cq_full, cq.cq_fid.fid, bfid);
		if (cq->domain != e->domain)
			return -FI_EDOMAIN;
		if (((flags & FI_TRANSMIT) && e->tx_cq) || ((flags & FI_RECV) && e->rx_cq))
			return -FI_EINVAL;
		if (flags & FI_TRANSMIT) {
			e->tx_cq = cq;
			e->tx_bind_flags = flags;
			atomic_fetch_add(&cq->refs, 1);
		}
		if (flags & FI_RECV) {
			e->rx_cq = cq;
			e->rx_bind_flags = flags;
			atomic_fetch_add(&cq->refs, 1);
		}
		return 0;
	case FI_CLASS_AV:
		if (flags)
			return -FI_EBADFLAGS;
		if (e->av)
			return -FI_EINVAL;
		av = FDV_OBJ(struct fdv_av_full, av.av_fid.fid, bfid);
		if (av->domain != e->domain)
			return -FI_EDOMAIN;
		e->av = av;
		e->d.av = &av->av;
		atomic_fetch_add(&av->refs, 1);
		return 0;
	case FI_CLASS_CNTR:
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}
}

static int fdv_dgram_modify(struct fdv_dgram_full *e)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = e->port_num;
	a.qkey = FDV_DGRAM_QKEY;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return errno;
	return 0;
}

static uint64_t fdv_dgram_comp(uint64_t bind_flags, uint64_t op_flags)
{
	return !(bind_flags & FI_SELECTIVE_COMPLETION) || (op_flags & FI_COMPLETION) ?
	       FI_COMPLETION : 0;
}

static int fdv_dgram_enable(struct fdv_dgram_full *e)
{
	const struct fi_tx_attr *tx = e->info->tx_attr;
	const struct fi_rx_attr *rx = e->info->rx_attr;
	struct ibv_qp_init_attr attr;
	bool global;
	int err, ret;

	if (e->enabled)
		return -FI_EOPBADSTATE;
	/* Sends complete (or are reclaimed) in a CQ, and every receive
	 * completes: both are needed. */
	if (!e->tx_cq || !e->rx_cq)
		return -FI_ENOCQ;
	ret = fdv_dgram_port(e->domain, &e->port_num, &e->sgid_index, &e->gid, &e->lid,
			     &global);
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_context = e;
	attr.send_cq = e->tx_cq->cq.ibcq;
	attr.recv_cq = e->rx_cq->cq.ibcq;
	attr.cap.max_send_wr = (uint32_t)(tx && tx->size ? tx->size : FDV_DEF_TX_SIZE);
	attr.cap.max_recv_wr = (uint32_t)(rx && rx->size ? rx->size : FDV_DEF_RX_SIZE);
	attr.cap.max_send_sge = e->d.ep.tx_iov_limit ? e->d.ep.tx_iov_limit : 1;
	attr.cap.max_recv_sge = e->d.ep.rx_iov_limit ? e->d.ep.rx_iov_limit : 1;
	attr.cap.max_inline_data = e->d.ep.inject_size;
	attr.qp_type = IBV_QPT_UD;
	attr.sq_sig_all = 0;
	e->qp = ibv_create_qp(e->domain->pd, &attr);
	if (!e->qp && attr.cap.max_inline_data) {
		/* A UD queue may carry less inline data than the RC probe
		 * found: then without. */
		attr.cap.max_inline_data = 0;
		e->qp = ibv_create_qp(e->domain->pd, &attr);
	}
	if (!e->qp) {
		err = errno;
		FD_WARN(FD_LOG_EP_CTRL, "ibv_create_qp (UD, sq %u rq %u): %s",
			attr.cap.max_send_wr, attr.cap.max_recv_wr, strerror(err));
		return -fd_errno_to_fi(err);
	}
	err = fdv_dgram_modify(e);
	if (err) {
		FD_WARN(FD_LOG_EP_CTRL, "ibv_modify_qp (UD): %s", strerror(err));
		ret = -fd_errno_to_fi(err);
		goto err_qp;
	}
	e->d.ep.inject_size = attr.cap.max_inline_data < e->d.ep.inject_size ?
			      attr.cap.max_inline_data : e->d.ep.inject_size;
	/* One receive slot per receive-queue entry (fdv_cq.h): the CQ finds
	 * the endpoint by QP number and the buffer by slot. */
	e->d.ep.slot_count = attr.cap.max_recv_wr < FDV_WR_SLOTS_MAX ?
			     attr.cap.max_recv_wr : FDV_WR_SLOTS_MAX;
	if (!e->d.ep.slot_count)
		e->d.ep.slot_count = 1;
	e->d.ep.slots = calloc(e->d.ep.slot_count, sizeof(*e->d.ep.slots));
	e->d.rx_buf = calloc(e->d.ep.slot_count, sizeof(*e->d.rx_buf));
	e->rxv = calloc(e->d.ep.slot_count, sizeof(*e->rxv));
	e->stride = FDV_DGRAM_PREFIX + e->d.max_msg;
	e->bounce = calloc(e->d.ep.slot_count, e->stride);
	if (!e->d.ep.slots || !e->d.rx_buf || !e->rxv || !e->bounce) {
		ret = -FI_ENOMEM;
		goto err_slots;
	}
	e->bounce_mr = ibv_reg_mr(e->domain->pd, e->bounce,
				  (size_t)e->d.ep.slot_count * e->stride, IBV_ACCESS_LOCAL_WRITE);
	if (!e->bounce_mr) {
		ret = -fd_errno_to_fi(errno);
		goto err_slots;
	}
	ret = fdv_cq_add_qp(e->rx_cq, e->qp->qp_num, &e->d.ep);
	if (ret) {
		ibv_dereg_mr(e->bounce_mr);
		e->bounce_mr = NULL;
		goto err_slots;
	}
	e->d.ep.signal_every = attr.cap.max_send_wr / 2 ? attr.cap.max_send_wr / 2 : 1;
	e->d.ep.tx_comp = fdv_dgram_comp(e->tx_bind_flags, tx ? tx->op_flags : 0);
	e->d.ep.rx_comp = FI_COMPLETION;
	e->tx_cq->serves_send = true;
	e->rx_cq->serves_recv = true;
	e->enabled = true;
	fdv_lock(&e->d.ep.lock);
	e->d.ep.qp_rx = e->qp;
	e->d.ep.qp_tx = e->qp;
	fdv_unlock(&e->d.ep.lock);
	FD_DBG(FD_LOG_EP_CTRL, "UD qp %u: sq %u rq %u inline %u payload %u",
	       e->qp->qp_num, attr.cap.max_send_wr, attr.cap.max_recv_wr,
	       e->d.ep.inject_size, e->d.max_msg);
	return 0;
err_slots:
	free(e->d.ep.slots);
	free(e->d.rx_buf);
	free(e->rxv);
	free(e->bounce);
	e->d.ep.slots = NULL;
	e->d.rx_buf = NULL;
	e->rxv = NULL;
	e->bounce = NULL;
err_qp:
	ibv_destroy_qp(e->qp);
	e->qp = NULL;
	return ret;
}

static int fdv_dgram_control(struct fid *fid, int command, void *arg)
{
	struct fdv_dgram_full *e = fdv_dgram_full_of_fid(fid);

	switch (command) {
	case FI_ENABLE:
		return fdv_dgram_enable(e);
	case FI_GETOPSFLAG:
		return fd_info_getopsflag(e->info, arg);
	default:
		return -FI_ENOSYS;
	}
}

static int fdv_dgram_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fdv_dgram_full *e = fdv_dgram_full_of_fid(fid);
	struct fdv_ud_name n;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	/* The QP number is the address: it exists from fi_enable on. */
	if (!e->qp)
		return -FI_EOPBADSTATE;
	memset(&n, 0, sizeof(n));
	memcpy(n.gid, e->gid.raw, sizeof(n.gid));
	n.qpn_be = htobe32(e->qp->qp_num);
	n.qkey_be = htobe32(FDV_DGRAM_QKEY);
	n.lid_be = htobe16(e->lid);
	n.magic_be = htobe16(FDV_UD_NAME_MAGIC);
	if (*addrlen < sizeof(n)) {
		*addrlen = sizeof(n);
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &n, sizeof(n));
	*addrlen = sizeof(n);
	return 0;
}

static int fdv_dgram_close(struct fid *fid)
{
	struct fdv_dgram_full *e = fdv_dgram_full_of_fid(fid);

	if (e->qp) {
		/* Completions of this QP still queued find no slots. */
		fdv_cq_del_qp(e->rx_cq, e->qp->qp_num);
		ibv_destroy_qp(e->qp);
	}
	if (e->bounce_mr)
		ibv_dereg_mr(e->bounce_mr);
	free(e->bounce);
	free(e->rxv);
	free(e->d.ep.slots);
	free(e->d.rx_buf);
	if (e->tx_cq)
		atomic_fetch_sub(&e->tx_cq->refs, 1);
	if (e->rx_cq)
		atomic_fetch_sub(&e->rx_cq->refs, 1);
	if (e->av)
		atomic_fetch_sub(&e->av->refs, 1);
	atomic_fetch_sub(&e->domain->refs, 1);
	fdv_lock_destroy(&e->d.ep.lock);
	fi_freeinfo(e->info);
	free(e);
	return 0;
}

static struct fi_ops fdv_dgram_fid_ops =
	FD_FI_OPS(fdv_dgram_close, fdv_dgram_bind, fdv_dgram_control, fd_no_fid_tostr);

static struct fi_ops_cm fdv_dgram_cm_ops =
	FD_CM_OPS_CONNECTIONLESS(fdv_dgram_getname, fd_no_cm_join);

static size_t fdv_mtu_of(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? (size_t)128 << mtu : 0;
}

int fdv_dgram_open(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **ep_out, void *context)
{
	const struct fdv_device_info *dev;
	struct fdv_dgram_full *e;
	struct fdv_domain *dom;
	size_t mtu;

	if (!domain || !info || !ep_out)
		return -FI_EINVAL;
#if !FDV_EP_LAYERS
	/* The direct wrappers tell a datagram endpoint from a MSG one by its
	 * kind, a test compiled in only with FDV_EP_LAYERS. */
	return -FI_ENOSYS;
#endif
	if ((info->tx_attr && (info->tx_attr->iov_limit > FDV_IOV_MAX ||
			       info->tx_attr->size > UINT32_MAX ||
			       info->tx_attr->inject_size > UINT32_MAX)) ||
	    (info->rx_attr && (info->rx_attr->iov_limit > FDV_IOV_MAX ||
			       info->rx_attr->size > UINT32_MAX)))
		return -FI_EINVAL;
	/* The application must take the prefix: every receive buffer
	 * starts with the GRH. */
	if (!(info->mode & FI_MSG_PREFIX) &&
	    !(info->rx_attr && (info->rx_attr->mode & FI_MSG_PREFIX)))
		return -FI_EINVAL;
	dom = FDV_OBJ(struct fdv_domain, domain_fid, domain);
	dev = fdv_device_lookup(ibv_get_device_name(dom->verbs->device));
	if (!dev)
		return -FI_ENODEV;
	mtu = fdv_mtu_of(dev->port_attr.active_mtu);
	if (!mtu)
		return -FI_ENODEV;
	e = fd_calloc_info(sizeof(*e), offsetof(struct fdv_dgram_full, info), info);
	if (!e)
		return -FI_ENOMEM;
	e->info->handle = NULL;
	e->domain = dom;
	fdv_lock_init(&e->d.ep.lock);
	e->d.ep.kind = FDV_EP_KIND_DGRAM;
	e->d.max_msg = (uint32_t)(info->ep_attr && info->ep_attr->max_msg_size &&
				  info->ep_attr->max_msg_size < mtu ?
				  info->ep_attr->max_msg_size : mtu);
	e->d.ep.inject_size = (uint32_t)(info->tx_attr ? info->tx_attr->inject_size : 0);
	if (e->d.ep.inject_size > e->d.max_msg)
		e->d.ep.inject_size = e->d.max_msg;
	e->d.ep.tx_iov_limit = (uint32_t)(info->tx_attr && info->tx_attr->iov_limit ?
					  info->tx_attr->iov_limit : 1);
	e->d.ep.rx_iov_limit = (uint32_t)(info->rx_attr && info->rx_attr->iov_limit ?
					  info->rx_attr->iov_limit : 1);
	fd_ep_fid_init(&e->d.ep.ep_fid, FI_CLASS_EP, context, &fdv_dgram_fid_ops,
		       &fd_no_ops_ep, &fdv_dgram_cm_ops);
	e->d.ep.ep_fid.msg = &fdv_dgram_ops_msg;
	atomic_fetch_add(&dom->refs, 1);
	*ep_out = &e->d.ep.ep_fid;
	return 0;
}

/* ---- fi_getinfo ---- */

#define FDV_DGRAM_CAPS (FI_MSG | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM)

static void fdv_dgram_device_name(struct fdv_ud_name *n,
				  const struct fdv_device_info *dev)
{
	memset(n, 0, sizeof(*n));
	memcpy(n->gid, dev->gid.raw, sizeof(n->gid));
	n->qkey_be = htobe32(FDV_DGRAM_QKEY);
	n->lid_be = htobe16(dev->port_attr.lid);
	n->magic_be = htobe16(FDV_UD_NAME_MAGIC);
}

/* A device's FI_EP_DGRAM entry, from its FI_EP_MSG template: the device,
 * domain and fabric attributes stay; what a UD QP serves changes. */
static struct fi_info *fdv_dgram_template(const struct fi_info *msg,
					  const struct fdv_device_info *dev,
					  const struct fdv_params *prm)
{
	struct fi_info *fi = fi_dupinfo(msg);
	size_t mtu = fdv_mtu_of(dev->port_attr.active_mtu);
	struct fdv_ud_name devname;
	char *name;

	if (!fi)
		return NULL;
	if (!mtu || asprintf(&name, "%s-dgram", dev->name) < 0) {
		fi_freeinfo(fi);
		return NULL;
	}
	free(fi->domain_attr->name);
	fi->domain_attr->name = name;
	/* The device's name with QP number 0: which port and GID, no QP yet
	 * (fi_getname gives the endpoint's after fi_enable). Passed back
	 * as hints->src_addr it picks this device again; upstream puts an
	 * all-zero name here, and programs (fabtests' getinfo_test) expect
	 * every entry to carry a source address. */
	fdv_dgram_device_name(&devname, dev);
	fd_info_copy_addr(&fi->dest_addr, &fi->dest_addrlen, NULL, 0);
	if (fd_info_copy_addr(&fi->src_addr, &fi->src_addrlen, &devname, sizeof(devname))) {
		fi_freeinfo(fi);
		return NULL;
	}
	fd_attrs_apply(fi, &(const struct fd_attrs){
		FD_ATTR(caps, FDV_DGRAM_CAPS),
		FD_ATTR(mode, FI_MSG_PREFIX),
		FD_ATTR(addr_format, FI_ADDR_IB_UD),

		FD_ATTR(tx_caps, FI_MSG | FI_SEND),
		FD_ATTR(tx_mode, 0),
		FD_ATTR(tx_op_flags, FI_COMPLETION),
		FD_ATTR(tx_msg_order, 0),	/* UD may lose; nothing is promised */
		FD_ATTR(tx_rma_iov_limit, 0),
		/* the device's limits, cut to the FI_VERBS_* parameters */
		FD_ATTR_AT_MOST(tx_size, prm->tx_size),
		FD_ATTR_AT_MOST(tx_iov_limit, prm->tx_iov_limit),
		/* an inline send is one datagram */
		FD_ATTR_AT_MOST(tx_inject_size, prm->inline_size < mtu ? prm->inline_size : mtu),

		FD_ATTR(rx_caps, FI_MSG | FI_RECV),
		FD_ATTR(rx_mode, FI_MSG_PREFIX),
		FD_ATTR(rx_op_flags, FI_COMPLETION),
		FD_ATTR(rx_msg_order, 0),
		FD_ATTR(rx_comp_order, FI_ORDER_STRICT),
		FD_ATTR_AT_MOST(rx_size, prm->rx_size),
		FD_ATTR_AT_MOST(rx_iov_limit, prm->rx_iov_limit),

		FD_ATTR(ep_type, FI_EP_DGRAM),
		FD_ATTR(ep_protocol, FI_PROTO_IB_UD),
		FD_ATTR(ep_protocol_version, 1),
		FD_ATTR(ep_max_msg_size, mtu),
		FD_ATTR(ep_msg_prefix_size, FDV_DGRAM_PREFIX),
		FD_ATTR(ep_max_order_raw_size, 0),
		FD_ATTR(ep_max_order_war_size, 0),
		FD_ATTR(ep_max_order_waw_size, 0),

		FD_ATTR(dom_max_ep_srx_ctx, 0),
		FD_ATTR(dom_av_type, FI_AV_UNSPEC),
		/* The threading the build serves without locked tables. */
		FD_ATTR(dom_threading, FDV_THREAD_SAFE ? FI_THREAD_SAFE : FI_THREAD_DOMAIN),
	});
	return fi;
}

/*
 * node and service (with FI_SOURCE: a local address, or a port to be found
 * at; without: a peer) can only choose the device for a datagram
 * endpoint: its UD address (GID, QP number, Q_Key) exists only after
 * fi_enable, and no IP address or port maps to a QP number without a name
 * service, which this provider does not run. So the devices are the ones
 * an FI_EP_MSG lookup of the same node, service and flags finds (the
 * device that holds the local address, or that routes to the peer), and
 * the entries carry as src_addr only the device's name with QP number 0
 * (fdv_dgram_template) and, for a peer, a dest_addr of the same kind: the
 * peer port's GID with QP number 0 (fdv_dgram_peer_name), which says where
 * but is no endpoint (fi_av_insert refuses QP numbers below 2). Peers
 * exchange fi_getname names out of band and fi_av_insert them (as
 * fi_pingpong does over its control socket). docs/fi_direct_verbs.7.md,
 * DATAGRAM ENDPOINTS.
 */
static int fdv_dgram_devices_named(uint32_t version, const char *node, const char *service,
				   uint64_t flags, struct fi_info **named)
{
	struct fi_info *msg_hints = fi_allocinfo();
	int ret;

	*named = NULL;
	if (!msg_hints)
		return -FI_ENOMEM;
	/* only the addressing is asked about: whatever MSG needs is offered */
	msg_hints->ep_attr->type = FI_EP_MSG;
	msg_hints->mode = ~0ULL;
	msg_hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
					  FI_MR_PROV_KEY;
	ret = fdv_getinfo(version, node, service, flags & (FI_SOURCE | FI_NUMERICHOST),
			  msg_hints, named);
	fi_freeinfo(msg_hints);
	if (ret)
		FD_DBG(FD_LOG_CORE, "FI_EP_DGRAM: node %s, service %s on no RDMA device",
		       node ? node : "-", service ? service : "-");
	return ret;
}

/* Bytes that are a UD name of this library (fdv_dgram_getname). */
static bool fdv_ud_name_valid(const void *addr, size_t len)
{
	struct fdv_ud_name n;

	if (len != sizeof(n))
		return false;
	memcpy(&n, addr, sizeof(n));
	return be16toh(n.magic_be) == FDV_UD_NAME_MAGIC && !n.zero;
}

static const struct fi_info *fdv_info_of_domain(const struct fi_info *list,
						 const char *name)
{
	for (; list; list = list->next)
		if (list->domain_attr && list->domain_attr->name &&
		    !strcmp(list->domain_attr->name, name))
			return list;
	return NULL;
}

/* The peer that node/service named, as a UD name with QP number 0: on a
 * RoCE port the GID is the peer's IP address (IPv4-mapped for IPv4),
 * which the MSG lookup resolved into its entry's dest_addr. An
 * InfiniBand port's peer GID is not derived from its IP address: false,
 * and that device has no entry for this peer (as upstream's has none). */
static bool fdv_dgram_peer_name(const struct fi_info *msg, const struct fdv_device_info *dev,
				struct fdv_ud_name *n)
{
	const struct sockaddr *sa = msg ? msg->dest_addr : NULL;

	if (!sa || dev->link_layer != IBV_LINK_LAYER_ETHERNET)
		return false;
	memset(n, 0, sizeof(*n));
	if (sa->sa_family == AF_INET &&
	    msg->dest_addrlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		n->gid[10] = n->gid[11] = 0xff;
		memcpy(n->gid + 12, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 &&
		   msg->dest_addrlen >= sizeof(struct sockaddr_in6)) {
		memcpy(n->gid, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	} else {
		return false;
	}
	n->qkey_be = htobe32(FDV_DGRAM_QKEY);
	n->magic_be = htobe16(FDV_UD_NAME_MAGIC);
	return true;
}

int fdv_dgram_getinfo(uint32_t version, const char *node, const char *service,
		      uint64_t flags, const struct fi_info *hints,
		      struct fi_info ***tail)
{
	const struct fdv_device_info *dev;
	const struct fi_info *msg;
	struct fi_info *named = NULL;
	struct fdv_ud_name peer;
	bool by_name = false;
	struct fdv_params prm;
	int found = 0, ndev = 0;

#if !FDV_EP_LAYERS
	return -FI_ENODATA;	/* see fdv_dgram_open */
#endif
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_ADDR_IB_UD)
		return -FI_ENODATA;
	/* A datagram endpoint is named by its UD address (fi_getname after
	 * fi_enable); an address in the hints must be one of those names. */
	if (hints && ((hints->src_addr && !fdv_ud_name_valid(hints->src_addr,
							    hints->src_addrlen)) ||
		      (hints->dest_addr && !fdv_ud_name_valid(hints->dest_addr,
							     hints->dest_addrlen)))) {
		FD_DBG(FD_LOG_CORE, "FI_EP_DGRAM: an address in hints that is no UD name");
		return -FI_ENODATA;
	}
	if (node || service) {
		int ret = fdv_dgram_devices_named(version, node, service, flags, &named);

		if (ret)
			return ret;
	} else if (hints && hints->src_addr) {
		/* On RoCE the name holds the IPv4-mapped GID: the device
		 * of that IPv4 address is the one (an IB GID is matched
		 * against each device's below) */
		const struct fdv_ud_name *n = hints->src_addr;
		char ip[INET_ADDRSTRLEN];

		if (fdv_gid_is_v4_mapped(n->gid)) {
			int ret;

			if (!inet_ntop(AF_INET, n->gid + 12, ip, sizeof(ip)))
				return -FI_ENODATA;
			ret = fdv_dgram_devices_named(version, ip, NULL,
						      FI_SOURCE | FI_NUMERICHOST, &named);
			if (ret)
				return ret;
			by_name = true;
		}
	}
	fdv_read_params(&prm);
	fdv_devices_get(&ndev);
	for (int i = 0; i < ndev; i++) {
		struct fi_info *t, *fi;

		msg = fdv_msg_template(i, &dev);
		if (!msg)
			continue;
		if (dev->transport != IBV_TRANSPORT_IB)
			continue;	/* iWARP has no UD */
		if ((node || service || by_name) && !fdv_info_of_domain(named, dev->name))
			continue;
		/* a peer named by node: fi_getinfo(3) hands out its address */
		if (node && !(flags & FI_SOURCE) && !(hints && hints->dest_addr) &&
		    !fdv_dgram_peer_name(fdv_info_of_domain(named, dev->name), dev, &peer))
			continue;
		/* a source name is the device's own GID; a destination may
		 * be any port of the fabric, which UD reaches from each */
		if (hints && hints->src_addr && !by_name && !node && !service &&
		    memcmp(((const struct fdv_ud_name *)hints->src_addr)->gid, dev->gid.raw,
			   sizeof(dev->gid.raw)))
			continue;
		if (prm.device_name && strncasecmp(dev->name, prm.device_name,
						   strlen(prm.device_name)))
			continue;
		t = fdv_dgram_template(msg, dev, &prm);
		if (!t) {
			fi_freeinfo(named);
			return -FI_ENOMEM;
		}
		if (fd_info_check(version, t, hints)) {
			fi_freeinfo(t);
			continue;
		}
		fi = fd_info_narrow(version, t, hints);
		fi_freeinfo(t);
		/* a name given as the source comes back as the source */
		if (fi && hints && hints->src_addr &&
		    fd_info_copy_addr(&fi->src_addr, &fi->src_addrlen, hints->src_addr,
				      hints->src_addrlen)) {
			fi_freeinfo(fi);
			fi = NULL;
		}
		if (fi && node && !(flags & FI_SOURCE) && !(hints && hints->dest_addr) &&
		    fd_info_copy_addr(&fi->dest_addr, &fi->dest_addrlen, &peer, sizeof(peer))) {
			fi_freeinfo(fi);
			fi = NULL;
		}
		if (fi && hints && hints->dest_addr && !fi->dest_addr) {
			fi->dest_addr = malloc(hints->dest_addrlen);
			if (fi->dest_addr) {
				memcpy(fi->dest_addr, hints->dest_addr, hints->dest_addrlen);
				fi->dest_addrlen = hints->dest_addrlen;
			} else {
				fi_freeinfo(fi);
				fi = NULL;
			}
		}
		if (!fi) {
			fi_freeinfo(named);
			return -FI_ENOMEM;
		}
		**tail = fi;
		*tail = &fi->next;
		found++;
	}
	fi_freeinfo(named);
	return found ? 0 : -FI_ENODATA;
}
