/* MSG endpoint state the data path touches, and the two posting helpers
 * every transfer ends in. */
#include <rdma/fi_endpoint.h>

#ifndef FDV_EP_H
#define FDV_EP_H

#include <string.h>
#include <fdv/fdv_verbs.h>
#include <fdv/fdv_compiler.h>
#include <fdv/fdv_lock.h>
#include <fdv/fdv_mr.h>
#include <fdv/fdv_cq.h>

FDV_EXTERN_C_BEGIN

/* Largest scatter/gather list a data-path call builds on its stack; the
 * endpoint's iov limits never exceed it. */
#define FDV_IOV_MAX 8

/* verbs carries lengths in 32 bits and RC messages up to 2 GiB. */
#define FDV_MAX_MSG_SIZE ((size_t)1 << 31)

/* Endpoint kinds one library serves. Every endpoint object starts with
 * the public fid_ep followed by its kind (struct fdv_ep_head), so a direct
 * wrapper tells a MSG endpoint, whose calls it inlines, from a layer's
 * with one compare against an immediate; every layer's endpoint has
 * FDV_EP_KIND_LAYER and is reached through its own ops tables. With no
 * layer compiled in (FDV_EP_LAYERS 0) the test is not compiled at all. */
enum fdv_ep_kind {
	FDV_EP_KIND_MSG = 0,
	FDV_EP_KIND_LAYER = 1,	/* a layer over verbs: calls via ep->msg etc. */
};

struct fdv_ep_head {
	struct fid_ep ep_fid;
	uint32_t kind;
};

FDV_INLINE uint32_t fdv_ep_kind(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdv_ep_head, ep_fid)->kind;
}

struct fdv_ep {
	struct fid_ep ep_fid;	/* first: the application holds &ep_fid */
	uint32_t kind;		/* FDV_EP_KIND_MSG; as in struct fdv_ep_head */
	/* Set once the connection is established and cleared when it ends:
	 * sends on anything else fail before reaching the device. */
	struct ibv_qp *qp_tx;
	/* Set at fi_enable: receives may be posted before the connection
	 * exists, which is how an application avoids RNR at start-up. */
	struct ibv_qp *qp_rx;
	uint32_t inject_size;	/* max_inline_data of the QP */
	/* The driver reclaims send-queue slots only on a signaled
	 * completion, so one request in every signal_every is signaled even
	 * when the application asked for no completion. */
	uint32_t signal_every;
	uint32_t unsignaled;	/* posted since the last signaled request */
	uint32_t tx_iov_limit;
	uint32_t rx_iov_limit;
	/* FI_COMPLETION when every transmit (receive) op completes: no
	 * FI_SELECTIVE_COMPLETION, or op_flags asked for it. */
	uint64_t tx_comp;
	uint64_t rx_comp;
	/* Where a non-fetching atomic's old value goes: verbs atomics always
	 * return it, and nobody asked for it. */
	uint64_t *atomic_scratch;
	uint32_t atomic_scratch_lkey;
	fdv_lock_t lock;
	/* Set on a shared receive context only (fi_srx_context): it has no
	 * QP, so its receives reach the SRQ through the out-of-line path a
	 * missing qp_rx already takes, and a MSG endpoint's receive pays
	 * nothing for SRX support. */
	struct ibv_srq *srq;
};

/* Out of line and cold, in the library: turn a failed post into an fi
 * error. */
FDV_COLD ssize_t fdv_ep_post_failed(struct fdv_ep *ep, int ret);
FDV_COLD ssize_t fdv_ep_not_ready(struct fdv_ep *ep, int tx);
FDV_COLD ssize_t fdv_ep_recv_no_qp(struct fdv_ep *ep, struct ibv_recv_wr *wr);
FDV_COLD ssize_t fdv_ep_bad_request(struct fdv_ep *ep, const char *why);

FDV_INLINE struct fdv_ep *fdv_ep_of(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdv_ep, ep_fid);
}

/* Post one send-queue request. want_comp is FI_COMPLETION or 0. The
 * unsignaled count changes only when the post succeeds, so a request the
 * driver refused cannot leave the queue without a signaled request ahead. */
FDV_INLINE ssize_t fdv_ep_post_send(struct fdv_ep *ep, struct ibv_send_wr *wr,
				    uint64_t want_comp, void *context)
{
	struct ibv_send_wr *bad;
	uint32_t unsignaled;
	int ret;

	wr->next = NULL;
	fdv_lock(&ep->lock);
	if (fdv_unlikely(!ep->qp_tx)) {
		fdv_unlock(&ep->lock);
		return fdv_ep_not_ready(ep, 1);
	}
	if (want_comp) {
		wr->wr_id = (uintptr_t)context;
		wr->send_flags |= IBV_SEND_SIGNALED;
		unsignaled = 0;
	} else {
		wr->wr_id = FDV_WR_ID_SILENT;
		unsignaled = ep->unsignaled + 1;
		if (unsignaled >= ep->signal_every) {
			wr->send_flags |= IBV_SEND_SIGNALED;
			unsignaled = 0;
		}
	}
	ret = ibv_post_send(ep->qp_tx, wr, &bad);
	if (fdv_likely(!ret))
		ep->unsignaled = unsignaled;
	fdv_unlock(&ep->lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
}

FDV_INLINE ssize_t fdv_ep_post_recv(struct fdv_ep *ep, struct ibv_recv_wr *wr,
				    uint64_t want_comp, void *context)
{
	struct ibv_recv_wr *bad;
	int ret;

	wr->next = NULL;
	wr->wr_id = want_comp ? (uintptr_t)context : FDV_WR_ID_SILENT;
	fdv_lock(&ep->lock);
	if (fdv_unlikely(!ep->qp_rx)) {
		fdv_unlock(&ep->lock);
		return fdv_ep_recv_no_qp(ep, wr);
	}
	ret = ibv_post_recv(ep->qp_rx, wr, &bad);
	fdv_unlock(&ep->lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
}

/* Fill an sge list from an iov/desc pair. Returns the total length, or
 * SIZE_MAX when a non-empty buffer came without a descriptor; inline sends
 * pass need_desc 0 because the device never reads their lkey. */
FDV_INLINE size_t fdv_fill_sge(struct ibv_sge *sge, const struct iovec *iov,
			       void **desc, size_t count, int need_desc)
{
	size_t i, total = 0;

	for (i = 0; i < count; i++) {
		sge[i].addr = (uintptr_t)iov[i].iov_base;
		sge[i].length = (uint32_t)iov[i].iov_len;
		total += iov[i].iov_len;
		if (desc && desc[i])
			sge[i].lkey = fdv_desc_lkey(desc[i]);
		else if (need_desc && iov[i].iov_len)
			return SIZE_MAX;
		else
			sge[i].lkey = 0;
	}
	return total;
}

FDV_INLINE size_t fdv_iov_total(const struct iovec *iov, size_t count)
{
	size_t total = 0;

	for (size_t i = 0; i < count && iov; i++)
		total += iov[i].iov_len;
	return total;
}

FDV_EXTERN_C_END

/* Every unit that compiles the endpoint data path reports its layout. */
#include <fdv/fdv_abi.h>

#endif /* FDV_EP_H */
