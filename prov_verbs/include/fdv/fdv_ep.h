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

struct fdv_more;

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
	/* Completion slots (fdv_cq.h): one per send-queue entry, used in
	 * send-queue order by the requests that need one. */
	uint32_t slot_count;
	uint32_t slot_next;
	struct fdv_wr_slot *slots;
	/* Requests posted with FI_MORE wait here (library-owned, allocated at
	 * the first FI_MORE). While any wait, qp_tx is NULL, so every post
	 * takes the out-of-line path that sends them first: the common case
	 * pays no test for it. */
	struct fdv_more *more;
	fdv_lock_t lock;
	/* Set on a shared receive context only (fi_srx_context): it has no
	 * QP, so its receives reach the SRQ through the out-of-line path a
	 * missing qp_rx already takes, and a MSG endpoint's receive pays
	 * nothing for SRX support. */
	struct ibv_srq *srq;
};

/* Operation flags the *msg forms can honour: on an RC queue pair every
 * completion already means the peer's device took the data (inject and
 * transmit complete); FI_FENCE maps to IBV_SEND_FENCE and FI_MORE to one
 * chained post. */
#define FDV_TX_MSG_FLAGS (FI_COMPLETION | FI_REMOTE_CQ_DATA | FI_INJECT | \
			  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |	  \
			  FI_FENCE | FI_MORE)
/* What no verbs request can do: triggered operations, receive-side
 * matching flags, and completion levels past the peer's device. Other
 * bits (capabilities such as FI_MSG that some programs pass along) are
 * ignored, as upstream's verbs provider ignores every bit it does not
 * use. */
#define FDV_TX_MSG_BADFLAGS (FI_MULTI_RECV | FI_PEEK | FI_TRIGGER |	    \
			     FI_DELIVERY_COMPLETE | FI_COMMIT_COMPLETE |    \
			     FI_MATCH_COMPLETE | FI_CLAIM | FI_DISCARD)
#define FDV_RX_MSG_BADFLAGS (FI_MULTI_RECV | FI_PEEK | FI_CLAIM | \
			     FI_DISCARD | FI_TRIGGER)

/* Out of line and cold, in the library: turn a failed post into an fi
 * error. */
FDV_COLD ssize_t fdv_ep_post_failed(struct fdv_ep *ep, int ret);
FDV_COLD ssize_t fdv_ep_not_ready(struct fdv_ep *ep, int tx);
FDV_COLD ssize_t fdv_ep_recv_no_qp(struct fdv_ep *ep, struct ibv_recv_wr *wr);
FDV_COLD ssize_t fdv_ep_bad_request(struct fdv_ep *ep, const char *why);
/* Called with the endpoint lock held when qp_tx is NULL or the request
 * carries FI_MORE: holds the request (more), or sends the held ones and
 * this one in one ibv_post_send, or reports why the endpoint cannot send.
 * slot_flags != 0 when the request needs a completion slot. */
ssize_t fdv_ep_post_held(struct fdv_ep *ep, struct ibv_send_wr *wr,
			 uint64_t want_comp, void *context,
			 uint64_t slot_flags, int more);

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
		ssize_t held = fdv_ep_post_held(ep, wr, want_comp, context, 0, 0);

		fdv_unlock(&ep->lock);
		return held;
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

/* A request whose completion needs a slot (want_comp implied). The slot is
 * the next in the endpoint's ring; it is still busy only when the
 * application left a whole send queue's worth of them unread. */
FDV_INLINE ssize_t fdv_ep_post_send_slot(struct fdv_ep *ep,
					 struct ibv_send_wr *wr, void *context,
					 uint64_t slot_flags, uint64_t op_flags)
{
	struct ibv_send_wr *bad;
	struct fdv_wr_slot *slot;
	uint32_t i;
	int ret;

	wr->next = NULL;
	fdv_lock(&ep->lock);
	if (fdv_unlikely(!ep->qp_tx || (op_flags & FI_MORE))) {
		ssize_t held = fdv_ep_post_held(ep, wr, FI_COMPLETION, context,
						slot_flags, (op_flags & FI_MORE) != 0);

		fdv_unlock(&ep->lock);
		return held;
	}
	i = ep->slot_next;
	slot = &ep->slots[i];
	/* Freed by the CQ reader (release store) once the completion was
	 * handed out; plain loads and stores, no locked instruction. */
	if (fdv_unlikely(__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE))) {
		fdv_unlock(&ep->lock);
		return -FI_EAGAIN;
	}
	slot->context = context;
	slot->flags = slot_flags;
	wr->wr_id = FDV_WR_ID_TAGGED + i;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(ep->qp_tx, wr, &bad);
	if (fdv_likely(!ret)) {
		ep->unsignaled = 0;
		ep->slot_next = i + 1 == ep->slot_count ? 0 : i + 1;
	} else {
		slot->flags = 0;
	}
	fdv_unlock(&ep->lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
}

/* IBV_SEND_FENCE is bit 0 of send_flags; FI_FENCE is one bit of the
 * operation flags: a shift and a mask, no branch. */
FDV_INLINE unsigned int fdv_fence_of(uint64_t op_flags)
{
	return (unsigned int)((op_flags / FI_FENCE) & 1) * IBV_SEND_FENCE;
}

/* The *msg forms end here: op_flags may carry FI_FENCE and FI_MORE; for
 * every other form it is the constant 0 and this is fdv_ep_post_send. */
FDV_INLINE ssize_t fdv_ep_post_send_op(struct fdv_ep *ep, struct ibv_send_wr *wr,
				       uint64_t want_comp, void *context,
				       uint64_t op_flags)
{
	wr->send_flags |= fdv_fence_of(op_flags);
	if (fdv_unlikely(op_flags & FI_MORE)) {
		ssize_t ret;

		wr->next = NULL;
		fdv_lock(&ep->lock);
		ret = fdv_ep_post_held(ep, wr, want_comp, context, 0, 1);
		fdv_unlock(&ep->lock);
		return ret;
	}
	return fdv_ep_post_send(ep, wr, want_comp, context);
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
