/* FI_RMA on an RC queue pair: remote addresses are virtual addresses
 * (FI_MR_VIRT_ADDR) and keys are the peer's rkeys (fi_mr_key). */
#include <rdma/fi_rma.h>

#ifndef FDV_RMA_H
#define FDV_RMA_H

#include <fdv/fdv_ep.h>

FDV_EXTERN_C_BEGIN

/* Keys are 32-bit rkeys: anything wider did not come from fi_mr_key. */
FDV_INLINE int fdv_rma_key_ok(uint64_t key)
{
	return key <= UINT32_MAX;
}

FDV_INLINE ssize_t fdv_rma_post(struct fdv_ep *ep, struct ibv_sge *sge,
				int num_sge, int inl, enum ibv_wr_opcode opcode,
				uint64_t addr, uint64_t key, uint32_t imm_be,
				uint64_t want_comp, void *context,
				uint64_t op_flags)
{
	struct ibv_send_wr wr;

	if (fdv_unlikely(!fdv_rma_key_ok(key)))
		return fdv_ep_bad_request(ep, "RMA key wider than 32 bits");
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	wr.opcode = opcode;
	wr.send_flags = inl ? IBV_SEND_INLINE : 0;
	wr.imm_data = imm_be;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = (uint32_t)key;
	return fdv_ep_post_send_op(ep, &wr, want_comp, context, op_flags);
}

/* One local buffer, in the endpoint's prebuilt request: inline when a
 * write of 1..inject_size bytes fits (no descriptor needed, the lkey left
 * as it is), else it needs its lkey; reads never go inline. A zero-length
 * transfer takes the out-of-line helper. */
FDV_INLINE ssize_t fdv_rma_one(struct fdv_ep *ep, const void *buf, size_t len,
			       void *desc, enum ibv_wr_opcode opcode,
			       uint64_t addr, uint64_t key, uint32_t imm_be,
			       uint64_t want_comp, void *context)
{
	struct ibv_send_wr local, *wr;
	struct ibv_sge local_sge, *sge;
	unsigned int send_flags;

	if (fdv_unlikely(!fdv_rma_key_ok(key)))
		return fdv_ep_bad_request(ep, "RMA key wider than 32 bits");
	if (opcode != IBV_WR_RDMA_READ && fdv_likely(len - 1 < ep->inject_size)) {
		if (fdv_unlikely(!buf))
			return fdv_ep_bad_request(ep, "RMA buffer");
		wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
		send_flags = IBV_SEND_INLINE;
	} else if (fdv_likely(len - 1 < FDV_MAX_MSG_SIZE)) {
		/* separate tests: cheaper than one combined condition */
		if (fdv_unlikely(!buf))
			return fdv_ep_bad_request(ep, "RMA buffer");
		if (fdv_unlikely(!desc))
			return fdv_ep_bad_request(ep, "RMA without a descriptor");
		wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
		fdv_store_key(sge, fdv_desc_lkey(desc));
		send_flags = 0;
	} else if (fdv_unlikely(len)) {
		return fdv_ep_bad_request(ep, "RMA length");
	} else {
		return fdv_ep_post_empty(ep, opcode,
					 opcode == IBV_WR_RDMA_READ ? 0 : IBV_SEND_INLINE,
					 imm_be, addr, (uint32_t)key, want_comp,
					 context);
	}
	sge->addr = (uintptr_t)buf;
	sge->length = (uint32_t)len;
	wr->opcode = opcode;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = imm_be;
	wr->wr.rdma.remote_addr = addr;
	wr->wr.rdma.rkey = (uint32_t)key;
	return fdv_ep_post_send_flags(ep, wr, send_flags, want_comp, context);
}

FDV_INLINE ssize_t fdv_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
				void *desc, fi_addr_t src_addr, uint64_t addr,
				uint64_t key, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)src_addr;
	return fdv_rma_one(ep, buf, len, desc, IBV_WR_RDMA_READ, addr, key, 0,
			   FDV_COMP_EP, context);
}

FDV_INLINE ssize_t fdv_rma_write(struct fid_ep *ep_fid, const void *buf,
				 size_t len, void *desc, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_rma_one(ep, buf, len, desc, IBV_WR_RDMA_WRITE, addr, key, 0,
			   FDV_COMP_EP, context);
}

FDV_INLINE ssize_t fdv_rma_writedata(struct fid_ep *ep_fid, const void *buf,
				     size_t len, void *desc, uint64_t data,
				     fi_addr_t dest_addr, uint64_t addr,
				     uint64_t key, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_rma_one(ep, buf, len, desc, IBV_WR_RDMA_WRITE_WITH_IMM, addr,
			   key, fdv_htobe32((uint32_t)data), FDV_COMP_EP, context);
}

FDV_INLINE ssize_t fdv_rma_inject_one(struct fdv_ep *ep, const void *buf,
				      size_t len, enum ibv_wr_opcode opcode,
				      uint64_t addr, uint64_t key,
				      uint32_t imm_be)
{
	struct ibv_sge sge;

	if (fdv_unlikely(len > ep->inject_size || (!buf && len)))
		return fdv_ep_bad_request(ep, "inject_write length over inject_size");
	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)len;
	sge.lkey = 0;
	return fdv_rma_post(ep, &sge, len ? 1 : 0, 1, opcode, addr, key, imm_be,
			    0, NULL, 0);
}

FDV_INLINE ssize_t fdv_rma_inject(struct fid_ep *ep_fid, const void *buf,
				  size_t len, fi_addr_t dest_addr,
				  uint64_t addr, uint64_t key)
{
	(void)dest_addr;
	return fdv_rma_inject_one(fdv_ep_of(ep_fid), buf, len,
				  IBV_WR_RDMA_WRITE, addr, key, 0);
}

FDV_INLINE ssize_t fdv_rma_injectdata(struct fid_ep *ep_fid, const void *buf,
				      size_t len, uint64_t data,
				      fi_addr_t dest_addr, uint64_t addr,
				      uint64_t key)
{
	(void)dest_addr;
	return fdv_rma_inject_one(fdv_ep_of(ep_fid), buf, len,
				  IBV_WR_RDMA_WRITE_WITH_IMM, addr, key,
				  fdv_htobe32((uint32_t)data));
}

/* Vector and msg forms. verbs reaches one remote range per request. */
FDV_INLINE ssize_t fdv_rma_vec(struct fdv_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, int is_read,
			       uint64_t addr, uint64_t key, uint64_t flags,
			       uint64_t data, void *context, uint64_t op_flags)
{
	struct ibv_sge sge[FDV_IOV_MAX];
	enum ibv_wr_opcode opcode;
	size_t total = 0;
	int inl;

	if (fdv_unlikely(count > ep->tx_iov_limit || (count && !iov)))
		return fdv_ep_bad_request(ep, "iov count over tx iov_limit");
	for (size_t i = 0; i < count; i++)
		total += iov[i].iov_len;
	inl = !is_read && total <= ep->inject_size;
	if (fdv_unlikely((flags & FI_INJECT) && !inl))
		return fdv_ep_bad_request(ep, "FI_INJECT not possible for this request");
	if (fdv_unlikely(total > FDV_MAX_MSG_SIZE ||
			 fdv_fill_sge(sge, iov, desc, count, !inl) == SIZE_MAX))
		return fdv_ep_bad_request(ep, "RMA iov without descriptor");
	if (is_read)
		opcode = IBV_WR_RDMA_READ;
	else if (flags & FI_REMOTE_CQ_DATA)
		opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	else
		opcode = IBV_WR_RDMA_WRITE;
	return fdv_rma_post(ep, sge, (int)count, inl, opcode, addr, key,
			    fdv_htobe32((uint32_t)data),
			    (flags | ep->tx_comp) & FI_COMPLETION, context,
			    op_flags);
}

FDV_INLINE ssize_t fdv_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t src_addr,
				 uint64_t addr, uint64_t key, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)src_addr;
	return fdv_rma_vec(ep, iov, desc, count, 1, addr, key, ep->tx_comp, 0,
			   context, 0);
}

FDV_INLINE ssize_t fdv_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
				  void **desc, size_t count, fi_addr_t dest_addr,
				  uint64_t addr, uint64_t key, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_rma_vec(ep, iov, desc, count, 0, addr, key, ep->tx_comp, 0,
			   context, 0);
}

FDV_INLINE ssize_t fdv_rma_msg(struct fdv_ep *ep, const struct fi_msg_rma *msg,
			       uint64_t flags, int is_read)
{
	if (fdv_unlikely(!msg || msg->rma_iov_count != 1 || !msg->rma_iov))
		return fdv_ep_bad_request(ep, "fi_msg_rma needs exactly one rma_iov");
	if (fdv_unlikely(flags & FDV_TX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	if (fdv_unlikely(msg->rma_iov[0].len < fdv_iov_total(msg->msg_iov, msg->iov_count)))
		return fdv_ep_bad_request(ep, "rma_iov shorter than the local iov");
	return fdv_rma_vec(ep, msg->msg_iov, msg->desc, msg->iov_count, is_read,
			   msg->rma_iov[0].addr, msg->rma_iov[0].key, flags,
			   msg->data, msg->context, flags & (FI_FENCE | FI_MORE));
}

FDV_INLINE ssize_t fdv_rma_readmsg(struct fid_ep *ep_fid,
				   const struct fi_msg_rma *msg, uint64_t flags)
{
	return fdv_rma_msg(fdv_ep_of(ep_fid), msg, flags, 1);
}

FDV_INLINE ssize_t fdv_rma_writemsg(struct fid_ep *ep_fid,
				    const struct fi_msg_rma *msg, uint64_t flags)
{
	return fdv_rma_msg(fdv_ep_of(ep_fid), msg, flags, 0);
}

FDV_EXTERN_C_END

#endif /* FDV_RMA_H */
