/* FI_ATOMIC on verbs: what RC atomics can do, exactly. verbs has two
 * atomic operations, 64-bit fetch-and-add and compare-and-swap on an
 * 8-byte aligned remote address; everything libfabric asks beyond them is
 * refused with -FI_EOPNOTSUPP, and fi_*atomicvalid says so up front.
 *
 *   fi_atomic        FI_SUM (fetch-add, old value dropped), FI_ATOMIC_WRITE (8-byte RDMA write)
 *   fi_fetch_atomic  FI_SUM, FI_ATOMIC_READ (fetch-add of 0)
 *   fi_compare_atomic FI_CSWAP
 *   datatypes        FI_INT64, FI_UINT64; count 1
 *
 * The operands are values read from the caller's buffers at post time.
 *
 * Two of these are emulations, with their limits:
 *   FI_ATOMIC_READ is a fetch-add of 0, because an RDMA read is not atomic
 *     against other verbs atomics; like every verbs atomic it needs the
 *     target registered with FI_REMOTE_WRITE (verbs remote-atomic rights
 *     come only with it, see fdv_mr.c), so it fails on a read-only region.
 *   FI_ATOMIC_WRITE is an aligned 8-byte RDMA write. Devices place such a
 *     write as one unit, but the verbs spec only orders atomics among
 *     themselves: a concurrent fetch-add from another QP may interleave. */
#include <rdma/fi_atomic.h>

#ifndef FDV_ATOMIC_H
#define FDV_ATOMIC_H

#include <fdv/fdv_ep.h>

FDV_EXTERN_C_BEGIN

enum fdv_atomic_kind { FDV_ATOMIC_WRITE, FDV_ATOMIC_FETCH, FDV_ATOMIC_COMPARE };

FDV_INLINE int fdv_atomic_supported(enum fdv_atomic_kind kind,
				    enum fi_datatype dt, enum fi_op op)
{
	if (dt != FI_INT64 && dt != FI_UINT64)
		return 0;
	switch (kind) {
	case FDV_ATOMIC_WRITE:
		return op == FI_SUM || op == FI_ATOMIC_WRITE;
	case FDV_ATOMIC_FETCH:
		return op == FI_SUM || op == FI_ATOMIC_READ;
	default:
		return op == FI_CSWAP;
	}
}

FDV_INLINE int fdv_atomic_valid(enum fdv_atomic_kind kind, enum fi_datatype dt,
				enum fi_op op, size_t *count)
{
	if (!fdv_atomic_supported(kind, dt, op))
		return -FI_EOPNOTSUPP;
	if (count)
		*count = 1;
	return 0;
}

/* Every atomic ends here. slot_flags is non-zero (FI_ATOMIC | FI_WRITE)
 * for the non-fetching forms, whose completion cannot be told from the
 * verbs opcode; op_flags carries FI_FENCE / FI_MORE of the msg forms. */
FDV_INLINE ssize_t fdv_atomic_submit(struct fdv_ep *ep, struct ibv_send_wr *wr,
				     uint64_t want_comp, void *context,
				     uint64_t slot_flags, uint64_t op_flags)
{
	if (slot_flags && want_comp == FDV_COMP_EP)
		want_comp = ep->tx_comp;
	if (slot_flags && want_comp) {
		wr->send_flags |= fdv_fence_of(op_flags);
		return fdv_ep_post_send_slot(ep, wr, context, slot_flags, op_flags);
	}
	return fdv_ep_post_send_op(ep, wr, want_comp, context, op_flags);
}

/* One verbs atomic: result lands in (res, res_lkey), 8 bytes. */
FDV_INLINE ssize_t fdv_atomic_post(struct fdv_ep *ep, enum ibv_wr_opcode opcode,
				   uint64_t operand, uint64_t compare,
				   void *res, uint32_t res_lkey, uint64_t addr,
				   uint64_t key, uint64_t want_comp, void *context,
				   uint64_t slot_flags, uint64_t op_flags)
{
	struct ibv_send_wr local, *wr;
	struct ibv_sge local_sge, *sge;

	/* separate tests: cheaper than one combined condition */
	if (fdv_unlikely(addr & 7))
		return fdv_ep_bad_request(ep, "atomic target not 8-byte aligned");
	if (fdv_unlikely(key > UINT32_MAX))
		return fdv_ep_bad_request(ep, "atomic key wider than 32 bits");
	/* The endpoint's prebuilt request: only the fields an atomic uses
	 * are written (swap only for compare-and-swap). */
	wr = fdv_ep_tx_wr(ep, &local, &local_sge, &sge);
	sge->addr = (uintptr_t)res;
	fdv_store_len_key(sge, sizeof(uint64_t), res_lkey);
	wr->opcode = opcode;
	wr->send_flags = 0;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.rkey = (uint32_t)key;
	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr->wr.atomic.compare_add = compare;
		wr->wr.atomic.swap = operand;
	} else {
		wr->wr.atomic.compare_add = operand;
	}
	return fdv_atomic_submit(ep, wr, want_comp, context, slot_flags, op_flags);
}

/* FI_ATOMIC_WRITE is an 8-byte RDMA write: inline when the QP takes 8
 * inline bytes (the value is copied at post time), else from the caller's
 * registered buffer. An inject has no descriptor, so it must go inline. */
FDV_INLINE ssize_t fdv_atomic_post_write8(struct fdv_ep *ep, const void *buf,
					  void *desc, int inject, uint64_t addr,
					  uint64_t key, uint64_t want_comp,
					  void *context, uint64_t op_flags)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	int inl = ep->inject_size >= sizeof(uint64_t);

	if (fdv_unlikely((addr & 7) || key > UINT32_MAX))
		return fdv_ep_bad_request(ep, "atomic target not 8-byte aligned or bad key");
	if (fdv_unlikely(!inl && (inject || !desc)))
		return fdv_ep_bad_request(ep, "FI_ATOMIC_WRITE over inject_size needs a descriptor");
	sge.addr = (uintptr_t)buf;
	sge.length = sizeof(uint64_t);
	sge.lkey = inl ? 0 : fdv_desc_lkey(desc);
	wr.next = NULL;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = inl ? IBV_SEND_INLINE : 0;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = (uint32_t)key;
	return fdv_atomic_submit(ep, &wr, want_comp, context, FI_ATOMIC | FI_WRITE,
				 op_flags);
}

FDV_INLINE ssize_t fdv_atomic_do_write(struct fdv_ep *ep, const void *buf,
				       size_t count, void *desc, int inject,
				       uint64_t addr, uint64_t key,
				       enum fi_datatype dt, enum fi_op op,
				       uint64_t want_comp, void *context,
				       uint64_t op_flags)
{
	uint64_t v;

	if (fdv_unlikely(!fdv_atomic_supported(FDV_ATOMIC_WRITE, dt, op)))
		return -FI_EOPNOTSUPP;
	if (fdv_unlikely(count != 1 || !buf))
		return fdv_ep_bad_request(ep, "atomic count must be 1");
	/* Underneath it is a fetch-add or an RDMA write; the completion must
	 * still say FI_ATOMIC | FI_WRITE, which a slot tells the CQ. */
	if (op == FI_ATOMIC_WRITE)
		return fdv_atomic_post_write8(ep, buf, desc, inject, addr, key,
					      want_comp, context, op_flags);
	memcpy(&v, buf, sizeof(v));
	/* Nobody wants the old value: it lands in the endpoint's scratch. */
	return fdv_atomic_post(ep, IBV_WR_ATOMIC_FETCH_AND_ADD, v, 0,
			       ep->atomic_scratch, ep->atomic_scratch_lkey,
			       addr, key, want_comp, context,
			       FI_ATOMIC | FI_WRITE, op_flags);
}

FDV_INLINE ssize_t fdv_atomic_write(struct fid_ep *ep_fid, const void *buf,
				    size_t count, void *desc,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, enum fi_datatype datatype,
				    enum fi_op op, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	return fdv_atomic_do_write(ep, buf, count, desc, 0, addr, key,
				   datatype, op, ep->tx_comp, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_writev(struct fid_ep *ep_fid,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, fi_addr_t dest_addr,
				     uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op,
				     void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)dest_addr;
	if (fdv_unlikely(count != 1 || !iov))
		return fdv_ep_bad_request(ep, "atomic iov count must be 1");
	return fdv_atomic_do_write(ep, iov[0].addr, iov[0].count,
				   desc ? desc[0] : NULL, 0, addr, key, datatype,
				   op, ep->tx_comp, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_writemsg(struct fid_ep *ep_fid,
				       const struct fi_msg_atomic *msg,
				       uint64_t flags)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	if (fdv_unlikely(!msg || msg->iov_count != 1 || msg->rma_iov_count != 1 ||
			 !msg->msg_iov || !msg->rma_iov ||
			 msg->rma_iov[0].count != msg->msg_iov[0].count))
		return fdv_ep_bad_request(ep, "fi_msg_atomic needs one iov and one rma_iov");
	if (fdv_unlikely(flags & FDV_TX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	return fdv_atomic_do_write(ep, msg->msg_iov[0].addr, msg->msg_iov[0].count,
				   msg->desc ? msg->desc[0] : NULL,
				   (flags & FI_INJECT) != 0, msg->rma_iov[0].addr,
				   msg->rma_iov[0].key, msg->datatype, msg->op,
				   (flags | ep->tx_comp) & FI_COMPLETION,
				   msg->context, flags & (FI_FENCE | FI_MORE));
}

FDV_INLINE ssize_t fdv_atomic_inject(struct fid_ep *ep_fid, const void *buf,
				     size_t count, fi_addr_t dest_addr,
				     uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op)
{
	(void)dest_addr;
	return fdv_atomic_do_write(fdv_ep_of(ep_fid), buf, count, NULL, 1, addr,
				   key, datatype, op, 0, NULL, 0);
}

FDV_INLINE ssize_t fdv_atomic_do_fetch(struct fdv_ep *ep, const void *buf,
				       size_t count, void *result,
				       void *result_desc, uint64_t addr,
				       uint64_t key, enum fi_datatype dt,
				       enum fi_op op, uint64_t want_comp,
				       void *context, uint64_t op_flags)
{
	uint64_t v = 0;

	if (fdv_unlikely(!fdv_atomic_supported(FDV_ATOMIC_FETCH, dt, op)))
		return -FI_EOPNOTSUPP;
	if (fdv_unlikely(count != 1))
		return fdv_ep_bad_request(ep, "fetch atomic: count must be 1");
	if (fdv_unlikely(!result))
		return fdv_ep_bad_request(ep, "fetch atomic: no result buffer");
	if (fdv_unlikely(!result_desc))
		return fdv_ep_bad_request(ep, "fetch atomic: result not registered");
	if (fdv_unlikely(op == FI_SUM && !buf))
		return fdv_ep_bad_request(ep, "fetch atomic: no operand");
	if (op == FI_SUM)
		memcpy(&v, buf, sizeof(v));
	return fdv_atomic_post(ep, IBV_WR_ATOMIC_FETCH_AND_ADD, v, 0, result,
			       fdv_desc_lkey(result_desc), addr, key,
			       want_comp, context, 0, op_flags);
}

FDV_INLINE ssize_t fdv_atomic_readwrite(struct fid_ep *ep_fid, const void *buf,
					size_t count, void *desc, void *result,
					void *result_desc, fi_addr_t dest_addr,
					uint64_t addr, uint64_t key,
					enum fi_datatype datatype,
					enum fi_op op, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)desc;
	(void)dest_addr;
	return fdv_atomic_do_fetch(ep, buf, count, result, result_desc, addr,
				   key, datatype, op, FDV_COMP_EP, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_readwritev(struct fid_ep *ep_fid,
					 const struct fi_ioc *iov, void **desc,
					 size_t count, struct fi_ioc *resultv,
					 void **result_desc, size_t result_count,
					 fi_addr_t dest_addr, uint64_t addr,
					 uint64_t key, enum fi_datatype datatype,
					 enum fi_op op, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)desc;
	(void)dest_addr;
	if (fdv_unlikely(count > 1 || result_count != 1 || !resultv || !result_desc ||
			 (count == 1 && !iov)))
		return fdv_ep_bad_request(ep, "fetch atomic iov counts must be 1");
	/* FI_ATOMIC_READ ignores its operand, whatever its count says */
	if (fdv_unlikely(count == 1 && op != FI_ATOMIC_READ &&
			 iov[0].count != resultv[0].count))
		return fdv_ep_bad_request(ep, "operand and result counts differ");
	return fdv_atomic_do_fetch(ep, count ? iov[0].addr : NULL,
				   resultv[0].count, resultv[0].addr,
				   result_desc[0], addr, key, datatype, op,
				   ep->tx_comp, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_readwritemsg(struct fid_ep *ep_fid,
					   const struct fi_msg_atomic *msg,
					   struct fi_ioc *resultv,
					   void **result_desc,
					   size_t result_count, uint64_t flags)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	if (fdv_unlikely(!msg || msg->iov_count > 1 || msg->rma_iov_count != 1 ||
			 !msg->rma_iov || result_count != 1 || !resultv ||
			 !result_desc || (msg->iov_count && !msg->msg_iov) ||
			 msg->rma_iov[0].count != resultv[0].count ||
			 (msg->iov_count && msg->op != FI_ATOMIC_READ &&
			  msg->msg_iov[0].count != resultv[0].count)))
		return fdv_ep_bad_request(ep, "fetch atomic msg: one iov, rma_iov, result");
	if (fdv_unlikely(flags & FDV_TX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	return fdv_atomic_do_fetch(ep, msg->iov_count ? msg->msg_iov[0].addr : NULL,
				   resultv[0].count, resultv[0].addr,
				   result_desc[0], msg->rma_iov[0].addr,
				   msg->rma_iov[0].key, msg->datatype, msg->op,
				   (flags | ep->tx_comp) & FI_COMPLETION,
				   msg->context, flags & (FI_FENCE | FI_MORE));
}

FDV_INLINE ssize_t fdv_atomic_do_compare(struct fdv_ep *ep, const void *buf,
					 size_t count, const void *compare,
					 void *result, void *result_desc,
					 uint64_t addr, uint64_t key,
					 enum fi_datatype dt, enum fi_op op,
					 uint64_t want_comp, void *context,
					 uint64_t op_flags)
{
	uint64_t swap, cmp;

	if (fdv_unlikely(!fdv_atomic_supported(FDV_ATOMIC_COMPARE, dt, op)))
		return -FI_EOPNOTSUPP;
	if (fdv_unlikely(count != 1 || !buf || !compare || !result || !result_desc))
		return fdv_ep_bad_request(ep, "compare atomic: count 1, all buffers");
	memcpy(&swap, buf, sizeof(swap));
	memcpy(&cmp, compare, sizeof(cmp));
	return fdv_atomic_post(ep, IBV_WR_ATOMIC_CMP_AND_SWP, swap, cmp, result,
			       fdv_desc_lkey(result_desc), addr, key,
			       want_comp, context, 0, op_flags);
}

FDV_INLINE ssize_t fdv_atomic_compwrite(struct fid_ep *ep_fid, const void *buf,
					size_t count, void *desc,
					const void *compare, void *compare_desc,
					void *result, void *result_desc,
					fi_addr_t dest_addr, uint64_t addr,
					uint64_t key, enum fi_datatype datatype,
					enum fi_op op, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)desc;
	(void)compare_desc;
	(void)dest_addr;
	return fdv_atomic_do_compare(ep, buf, count, compare, result, result_desc,
				     addr, key, datatype, op, ep->tx_comp, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_compwritev(struct fid_ep *ep_fid,
					 const struct fi_ioc *iov, void **desc,
					 size_t count,
					 const struct fi_ioc *comparev,
					 void **compare_desc,
					 size_t compare_count,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count,
					 fi_addr_t dest_addr, uint64_t addr,
					 uint64_t key, enum fi_datatype datatype,
					 enum fi_op op, void *context)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)desc;
	(void)compare_desc;
	(void)dest_addr;
	if (fdv_unlikely(count != 1 || compare_count != 1 || result_count != 1 ||
			 !iov || !comparev || !resultv || !result_desc ||
			 comparev[0].count != iov[0].count ||
			 resultv[0].count != iov[0].count))
		return fdv_ep_bad_request(ep, "compare atomic iov counts must be 1");
	return fdv_atomic_do_compare(ep, iov[0].addr, iov[0].count,
				     comparev[0].addr, resultv[0].addr,
				     result_desc[0], addr, key, datatype, op,
				     ep->tx_comp, context, 0);
}

FDV_INLINE ssize_t fdv_atomic_compwritemsg(struct fid_ep *ep_fid,
					   const struct fi_msg_atomic *msg,
					   const struct fi_ioc *comparev,
					   void **compare_desc,
					   size_t compare_count,
					   struct fi_ioc *resultv,
					   void **result_desc,
					   size_t result_count, uint64_t flags)
{
	struct fdv_ep *ep = fdv_ep_of(ep_fid);

	(void)compare_desc;
	if (fdv_unlikely(!msg || msg->iov_count != 1 || msg->rma_iov_count != 1 ||
			 !msg->msg_iov || !msg->rma_iov || compare_count != 1 ||
			 result_count != 1 || !comparev || !resultv || !result_desc ||
			 msg->rma_iov[0].count != msg->msg_iov[0].count ||
			 comparev[0].count != msg->msg_iov[0].count ||
			 resultv[0].count != msg->msg_iov[0].count))
		return fdv_ep_bad_request(ep, "compare atomic msg: counts must be 1");
	if (fdv_unlikely(flags & FDV_TX_MSG_BADFLAGS))
		return -FI_EBADFLAGS;
	return fdv_atomic_do_compare(ep, msg->msg_iov[0].addr, msg->msg_iov[0].count,
				     comparev[0].addr, resultv[0].addr,
				     result_desc[0], msg->rma_iov[0].addr,
				     msg->rma_iov[0].key, msg->datatype, msg->op,
				     (flags | ep->tx_comp) & FI_COMPLETION,
				     msg->context, flags & (FI_FENCE | FI_MORE));
}

FDV_INLINE int fdv_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
				     enum fi_op op, size_t *count)
{
	(void)ep;
	return fdv_atomic_valid(FDV_ATOMIC_WRITE, datatype, op, count);
}

FDV_INLINE int fdv_atomic_readwritevalid(struct fid_ep *ep,
					 enum fi_datatype datatype,
					 enum fi_op op, size_t *count)
{
	(void)ep;
	return fdv_atomic_valid(FDV_ATOMIC_FETCH, datatype, op, count);
}

FDV_INLINE int fdv_atomic_compwritevalid(struct fid_ep *ep,
					 enum fi_datatype datatype,
					 enum fi_op op, size_t *count)
{
	(void)ep;
	return fdv_atomic_valid(FDV_ATOMIC_COMPARE, datatype, op, count);
}

FDV_EXTERN_C_END

#endif /* FDV_ATOMIC_H */
