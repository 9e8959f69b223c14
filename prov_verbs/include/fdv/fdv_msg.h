/* FI_MSG on an RC queue pair: every call is one work request (FI_MORE
 * holds it until a call without FI_MORE sends them together). */
#include <rdma/fi_endpoint.h>

#ifndef FDV_MSG_H
#define FDV_MSG_H

#include <fdv/fdv_ep.h>

FDV_EXTERN_C_BEGIN

/* The fields of the endpoint's (prebuilt) request that a send of one
 * buffer changes; imm_data only where the opcode carries it. */
FDV_INLINE ssize_t fdv_msg_post_one(struct fdv_ep *ep, struct ibv_send_wr *wr,
				    struct ibv_sge *sge, const void *buf,
				    size_t len, unsigned int send_flags,
				    uint64_t want_comp, void *context,
				    enum ibv_wr_opcode opcode, uint32_t imm_be)
{
	sge->addr = (uintptr_t)buf;
	sge->length = (uint32_t)len;
	wr->opcode = opcode;
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = imm_be;
	return fdv_ep_post_send_flags(ep, wr, send_flags, want_comp, context);
}

/* Sends of 1..inject_size bytes go inline: the CPU copies them into the
 * work request, so they need no descriptor (the SGE's lkey is left as it
 * is: the device never reads it) and the buffer is reusable at return.
 * Larger ones need the registration's lkey. One unsigned compare
 * (len - 1 wraps for 0) picks the inline case, where only a NULL buffer
 * needs testing; a zero-length send takes the out-of-line helper. */
FDV_INLINE ssize_t fdv_msg_send_one(struct fdv_ep *ep, const void *buf,
				    size_t len, void *desc, uint64_t want_comp,
				    void *context, enum ibv_wr_opcode opcode,
				    uint32_t imm_be)
{
	struct ibv_send_wr local, *wr;
	struct ibv_sge local_sge, *sge;

	if (fdv_likely(len - 1 < ep->inject_size)) {
		if (fdv_unlikely(!buf))
			return fdv_ep_bad_request(ep, "send buffer");
		wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
		return fdv_msg_post_one(ep, wr, sge, buf, len, IBV_SEND_INLINE,
					want_comp, context, opcode, imm_be);
	}
	if (fdv_unlikely(!len))
		return fdv_ep_post_empty(ep, opcode, IBV_SEND_INLINE, imm_be, 0, 0,
					 want_comp, context);
	/* Separate tests: two predictable branches each, where one combined
	 * condition costs a chain of flag computations. */
	if (fdv_unlikely(len > FDV_MAX_MSG_SIZE))
		return fdv_ep_bad_request(ep, "send length");
	if (fdv_unlikely(!buf))
		return fdv_ep_bad_request(ep, "send buffer");
	if (fdv_unlikely(!desc))
		return fdv_ep_bad_request(ep, "send without a descriptor");
	wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
	fdv_store_key(sge, fdv_desc_lkey(desc));
	return fdv_msg_post_one(ep, wr, sge, buf, len, 0, want_comp, context,
				opcode, imm_be);
}

FDV_INLINE ssize_t fdv_msg_send(struct fid_ep *ep_fid, const void *buf,
				size_t len, void *desc, fi_addr_t dest_addr,
				void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr; /* connected endpoint */
	return fdv_msg_send_one(ep, buf, len, desc, FDV_COMP_EP, context,
				IBV_WR_SEND, 0);
}

FDV_INLINE ssize_t fdv_msg_senddata(struct fid_ep *ep_fid, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest_addr, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_msg_send_one(ep, buf, len, desc, FDV_COMP_EP, context,
				IBV_WR_SEND_WITH_IMM, fdv_htobe32((uint32_t)data));
}

FDV_INLINE ssize_t fdv_msg_inject_one(struct fdv_ep *ep, const void *buf,
				      size_t len, enum ibv_wr_opcode opcode,
				      uint32_t imm_be)
{
	struct ibv_send_wr local, *wr;
	struct ibv_sge local_sge, *sge;

	if (fdv_unlikely(len - 1 >= ep->inject_size || !buf)) {
		if (len == 0)
			return fdv_ep_post_empty(ep, opcode, IBV_SEND_INLINE,
						 imm_be, 0, 0, 0, NULL);
		return fdv_ep_bad_request(ep, "inject length over inject_size");
	}
	wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
	return fdv_msg_post_one(ep, wr, sge, buf, len, IBV_SEND_INLINE, 0, NULL,
				opcode, imm_be);
}

FDV_INLINE ssize_t fdv_msg_inject(struct fid_ep *ep_fid, const void *buf,
				  size_t len, fi_addr_t dest_addr)
{
	(void)dest_addr;
	return fdv_msg_inject_one(fdv_ep_of(ep_fid), buf, len, IBV_WR_SEND, 0);
}

FDV_INLINE ssize_t fdv_msg_injectdata(struct fid_ep *ep_fid, const void *buf,
				      size_t len, uint64_t data,
				      fi_addr_t dest_addr)
{
	(void)dest_addr;
	return fdv_msg_inject_one(fdv_ep_of(ep_fid), buf, len,
				  IBV_WR_SEND_WITH_IMM, fdv_htobe32((uint32_t)data));
}

/* A send's opcode: with immediate data when the caller gives CQ data. */
FDV_INLINE void fdv_msg_send_opcode(struct ibv_send_wr *wr, uint64_t flags,
				    uint64_t data)
{
	if (flags & FI_REMOTE_CQ_DATA) {
		wr->opcode = IBV_WR_SEND_WITH_IMM;
		wr->imm_data = fdv_htobe32((uint32_t)data);
	} else {
		wr->opcode = IBV_WR_SEND;
	}
}

/* The end of an in-place hold: the entry's last fields, queued, the
 * endpoint lock (taken by the caller) released. */
FDV_INLINE ssize_t fdv_msg_hold_done(struct fdv_ep *ep, struct ibv_send_wr *e,
				     int num_sge, unsigned int send_flags,
				     uint64_t want_comp, void *context)
{
	e->num_sge = num_sge;
	e->send_flags = send_flags;
	fdv_more_queue(ep, e, want_comp, context);
	fdv_unlock(&ep->lock);
	return 0;
}

/* fi_sendmsg with FI_MORE, built where it waits (fdv_more_next), when
 * the request keeps no payload of the caller's that must be copied: a
 * non-inline send, or an inline one whose buffer stays the caller's
 * until its completion (FDV_OP_NOCOPY with a completion wanted). Returns
 * 1 when it did not take the request, which then goes the general way.
 * The count and iov were checked by the caller. */
FDV_INLINE ssize_t fdv_msg_hold_v(struct fdv_ep *ep, const struct iovec *iov,
				  void **desc, size_t count, size_t total,
				  void *context, uint64_t flags, uint64_t data,
				  uint64_t op_flags)
{
	uint64_t want_comp = (flags | ep->tx_comp) & FI_COMPLETION;
	int inl = total <= ep->inject_size;
	struct ibv_send_wr *e;

	if (inl && !(want_comp && (op_flags & FDV_OP_NOCOPY)))
		return 1;
	fdv_lock(&ep->lock);
	e = fdv_more_next(ep);
	if (fdv_unlikely(!e)) {
		fdv_unlock(&ep->lock);
		return 1;
	}
	/* sg_list is already this entry's own SGE row */
	if (fdv_unlikely(total > FDV_MAX_MSG_SIZE ||
			 fdv_fill_sge(e->sg_list, iov, desc, count, !inl) == SIZE_MAX)) {
		fdv_unlock(&ep->lock);
		return fdv_ep_bad_request(ep, "send iov without descriptor");
	}
	fdv_msg_send_opcode(e, flags, data);
	return fdv_msg_hold_done(ep, e, (int)count,
				 (inl ? IBV_SEND_INLINE : 0) | fdv_fence_of(op_flags),
				 want_comp, context);
}

/* The common FI_MORE call, one buffer: fdv_msg_hold_v without the loops.
 * Returns 1 when it did not take the request. */
FDV_INLINE ssize_t fdv_msg_hold_one(struct fdv_ep *ep, const struct iovec *iov,
				    void **desc, void *context, uint64_t flags,
				    uint64_t data)
{
	uint64_t want_comp = (flags | ep->tx_comp) & FI_COMPLETION;
	size_t len = iov->iov_len;
	struct ibv_send_wr *e;
	struct ibv_sge *sge;
	unsigned int send_flags;

	if (len <= ep->inject_size) {
		/* inline: the payload stays the caller's until its
		 * completion only when one is wanted and it is no inject */
		if (!want_comp || (flags & FI_INJECT))
			return 1;
		send_flags = IBV_SEND_INLINE;
	} else {
		if (fdv_unlikely(len > FDV_MAX_MSG_SIZE || !desc || !*desc))
			return 1;	/* the general path says what is wrong */
		send_flags = 0;
	}
	fdv_lock(&ep->lock);
	e = fdv_more_next(ep);
	if (fdv_unlikely(!e)) {
		fdv_unlock(&ep->lock);
		return 1;
	}
	sge = e->sg_list;	/* the entry's own SGE row */
	sge->addr = (uintptr_t)iov->iov_base;
	if (send_flags)
		sge->length = (uint32_t)len;
	else
		fdv_store_len_key(sge, (uint32_t)len, fdv_desc_lkey(*desc));
	fdv_msg_send_opcode(e, flags, data);
	return fdv_msg_hold_done(ep, e, 1, send_flags | fdv_fence_of(flags),
				 want_comp, context);
}

/* The vector and msg forms share one body; flags are the caller's (sendmsg)
 * or the endpoint's defaults (sendv). */
FDV_INLINE ssize_t fdv_msg_sendv_flags(struct fdv_ep *ep,
				       const struct iovec *iov, void **desc,
				       size_t count, void *context,
				       uint64_t flags, uint64_t data,
				       uint64_t op_flags)
{
	struct ibv_sge sge[FDV_IOV_MAX];
	struct ibv_send_wr wr;
	size_t total;
	int inl;

	if (fdv_unlikely(count > ep->tx_iov_limit || (count && !iov)))
		return fdv_ep_bad_request(ep, "iov count over tx iov_limit");
	total = 0;
	for (size_t i = 0; i < count; i++)
		total += iov[i].iov_len;
	inl = total <= ep->inject_size;
	if (fdv_unlikely((flags & FI_INJECT) && !inl))
		return fdv_ep_bad_request(ep, "FI_INJECT over inject_size");
	if (op_flags & FI_MORE) {
		ssize_t held = fdv_msg_hold_v(ep, iov, desc, count, total, context,
					      flags, data, op_flags);

		if (held <= 0)
			return held;
	}
	if (fdv_unlikely(total > FDV_MAX_MSG_SIZE ||
			 fdv_fill_sge(sge, iov, desc, count, !inl) == SIZE_MAX))
		return fdv_ep_bad_request(ep, "send iov without descriptor");
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = (int)count;
	wr.send_flags = inl ? IBV_SEND_INLINE : 0;
	fdv_msg_send_opcode(&wr, flags, data);
	return fdv_ep_post_send_op(ep, &wr, (flags | ep->tx_comp) & FI_COMPLETION,
				   context, op_flags);
}

FDV_INLINE ssize_t fdv_msg_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t dest_addr,
				 void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_msg_sendv_flags(ep, iov, desc, count, context, ep->tx_comp, 0, 0);
}

FDV_INLINE ssize_t fdv_msg_sendmsg(struct fid_ep *ep_fid,
				   const struct fi_msg *msg, uint64_t flags)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	if (fdv_unlikely(!msg))
		return fdv_ep_bad_request(ep, "NULL fi_msg");
	if (fdv_unlikely(flags & FDV_TX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	if ((flags & FI_MORE) && msg->iov_count == 1 && msg->msg_iov) {
		ssize_t held = fdv_msg_hold_one(ep, msg->msg_iov, msg->desc,
						msg->context, flags, msg->data);

		if (held <= 0)
			return held;
	}
	return fdv_msg_sendv_flags(ep, msg->msg_iov, msg->desc, msg->iov_count,
				   msg->context, flags, msg->data,
				   (flags & (FI_FENCE | FI_MORE)) |
				   (flags & FI_INJECT ? 0 : FDV_OP_NOCOPY));
}

FDV_INLINE ssize_t fdv_msg_recv(struct fid_ep *ep_fid, void *buf, size_t len,
				void *desc, fi_addr_t src_addr, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)src_addr;
	/* A real buffer is the common case and gets the straight line. One
	 * unsigned compare tells it from both an empty and an oversized one
	 * (len - 1 wraps for 0); separate tests keep buffer and descriptor
	 * two predictable branches instead of flags combined on the way. */
	if (fdv_likely(len - 1 < FDV_MAX_MSG_SIZE)) {
		if (fdv_unlikely(!buf)) {
			/* No memory at all (no buffer, no descriptor), as
			 * upstream takes it: a receive only an empty message
			 * fits, anything longer completes it with an error.
			 * fabtests' fi_shared_ctx -e msg posts these. */
			if (!desc)
				return fdv_ep_recv_empty(ep, (uintptr_t)context | ep->rx_silent);
			return fdv_ep_bad_request(ep, "receive buffer");
		}
		if (fdv_unlikely(!desc))
			return fdv_ep_bad_request(ep, "receive without a descriptor");
		return fdv_ep_post_recv_one(ep, buf, len, fdv_desc_lkey(desc),
					    (uintptr_t)context | ep->rx_silent);
	}
	if (len == 0)
		return fdv_ep_recv_empty(ep, (uintptr_t)context | ep->rx_silent);
	return fdv_ep_bad_request(ep, "receive length");
}

FDV_INLINE ssize_t fdv_msg_recvv_flags(struct fdv_ep *ep,
				       const struct iovec *iov, void **desc,
				       size_t count, void *context,
				       uint64_t flags)
{
	struct ibv_sge sge[FDV_IOV_MAX];
	struct ibv_recv_wr wr;

	if (fdv_unlikely(count > ep->rx_iov_limit || (count && !iov)))
		return fdv_ep_bad_request(ep, "iov count over rx iov_limit");
	if (fdv_unlikely(fdv_fill_sge(sge, iov, desc, count, 1) > FDV_MAX_MSG_SIZE))
		return fdv_ep_bad_request(ep, "receive iov without descriptor");
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = (int)count;
	return fdv_ep_post_recv(ep, &wr,
				fdv_rx_wr_id((flags | ep->rx_comp) & FI_COMPLETION,
					     context));
}

FDV_INLINE ssize_t fdv_msg_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t src_addr,
				 void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)src_addr;
	return fdv_msg_recvv_flags(ep, iov, desc, count, context, ep->rx_comp);
}

FDV_INLINE ssize_t fdv_msg_recvmsg(struct fid_ep *ep_fid,
				   const struct fi_msg *msg, uint64_t flags)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	if (fdv_unlikely(!msg))
		return fdv_ep_bad_request(ep, "NULL fi_msg");
	/* Peeking, claiming and multi-receive buffers need matching in
	 * software, which an RC receive queue does not do. FI_MORE is a
	 * hint a receive may ignore: it is posted at once. */
	if (fdv_unlikely(flags & FDV_RX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	return fdv_msg_recvv_flags(ep, msg->msg_iov, msg->desc, msg->iov_count,
				   msg->context, flags);
}

FDV_EXTERN_C_END

#endif /* FDV_MSG_H */
