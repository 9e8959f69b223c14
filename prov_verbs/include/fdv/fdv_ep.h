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
 * with one test of the FDV_EP_KIND_LAYER bit in memory, which every
 * layer's kind has. Every layer (rstream, RDM) is reached through its
 * own ops tables and has FDV_EP_KIND_LAYER itself. (gen/api.spec's
 * @inline-layer could give a layer some inline calls and a kind of its
 * own, odd and defined by the layer; none has one: docs/DESIGN.md.) With
 * no layer compiled in (FDV_EP_LAYERS 0) the test is not compiled at
 * all. */
enum fdv_ep_kind {
	FDV_EP_KIND_MSG = 0,
	FDV_EP_KIND_LAYER = 1,	/* a layer over verbs: calls via ep->msg etc. */
	/* FI_EP_DGRAM (fdv_dgram.h): the layer bit, so the MSG line keeps
	 * its one test; inline calls behind a second compare. */
	FDV_EP_KIND_DGRAM = 3,
};

struct fdv_ep_head {
	struct fid_ep ep_fid;
	uint32_t kind;
};

FDV_INLINE uint32_t fdv_ep_kind(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdv_ep_head, ep_fid)->kind;
}

/* The kind again, for the second test on a layer's path: a load the
 * compiler does not merge with the first, so that first test stays one
 * test of the byte in memory on the MSG path instead of a load into a
 * register kept for both. */
FDV_INLINE uint32_t fdv_ep_kind_reload(struct fid_ep *ep_fid)
{
	return __atomic_load_n(&fdv_container_of(ep_fid, struct fdv_ep_head, ep_fid)->kind,
			       __ATOMIC_RELAXED);
}

struct fdv_ep {
	struct fid_ep ep_fid;	/* first: the application holds &ep_fid */
	uint32_t kind;		/* FDV_EP_KIND_MSG; as in struct fdv_ep_head */
	/* Set once the connection is established and cleared when it ends:
	 * sends on anything else fail before reaching the device. */
	struct ibv_qp *qp_tx;
	/* qp_tx when every transmit completes (tx_comp is FI_COMPLETION),
	 * else NULL; gated with qp_tx. The plain calls (fi_send, fi_write,
	 * fi_read, fi_fetch_atomic...) post through it with one test for
	 * connection, held FI_MORE requests and the completion choice at once
	 * (want_comp FDV_COMP_EP); anything else takes the general path. */
	struct ibv_qp *qp_tx_comp;
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
	/* wr_id of a receive is its context OR-ed with this: 0 when receives
	 * complete, all ones (FDV_WR_ID_SILENT) when they do not. One OR
	 * instead of a test and a select per fi_recv. */
	uint64_t rx_silent;
	/* Prebuilt requests of the single-buffer calls (fi_send, fi_inject,
	 * fi_recv, fi_write, fi_read, fi_fetch_atomic & co.): sg_list points
	 * at the SGE beside it, num_sge is 1 and next NULL from creation on,
	 * so a call stores only what it changes (address, length, key,
	 * opcode, flags, wr_id, remote fields). Zero-length requests, which
	 * need num_sge 0, go through an out-of-line helper with a request of
	 * their own. With FDV_THREAD_SAFE two threads could fill them at
	 * once, so that build fills one on the caller's stack instead
	 * (fdv_ep_tx_wr / fdv_ep_rx_wr). */
	struct ibv_send_wr tx_wr;
	struct ibv_sge tx_sge;
	struct ibv_recv_wr rx_wr;
	struct ibv_sge rx_sge;
};

/* At most this many requests wait for a call without FI_MORE; one more
 * sends them all. Enough to amortise a doorbell (a system call on rxe)
 * over many small messages, small enough that an endpoint that uses
 * FI_MORE pays ~10 KiB for it. */
#define FDV_MORE_MAX 32

/* Held requests (allocated by the library at an endpoint's first
 * FI_MORE). Entry i's sg_list points at sge[i]; an inline payload the
 * caller may reuse before the chain is posted (FI_INJECT, or no
 * completion to wait for) is copied to bounce + i * bounce_size, since
 * the device reads inline data only at ibv_post_send. Entries [head, n)
 * wait, linked in order; head > 0 only after a post the device refused
 * part of. The layout is compiled into applications (the inline msg
 * forms build entry n in place): FDV_ABI_VERSION covers it. */
struct fdv_more {
	struct ibv_qp *qp;	/* the connected QP while qp_tx is gated */
	uint32_t head, n;
	uint32_t bounce_size;
	struct ibv_send_wr wr[FDV_MORE_MAX];
	struct ibv_sge sge[FDV_MORE_MAX][FDV_IOV_MAX];
	uint8_t bounce[];
};

/* want_comp of a call that completes as the endpoint's defaults say
 * (tx_comp): resolved by fdv_ep_post_send_flags, through qp_tx_comp. */
#define FDV_COMP_EP UINT64_MAX

/* Internal operation flag (never a user's: op_flags are masked to
 * FI_FENCE | FI_MORE before it is added): the request's inline data stays
 * valid until its completion, so a request held by FI_MORE may keep
 * pointing at it instead of copying it aside. Set by fi_sendmsg without
 * FI_INJECT when a completion is wanted; an FI_INJECT buffer is reusable
 * at return and must be copied. */
#define FDV_OP_NOCOPY (1ULL << 62)

/* fdv_ep_post_held's hold argument */
enum { FDV_POST_NOW = 0, FDV_HOLD_COPY = 1, FDV_HOLD_NOCOPY = 2 };

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
FDV_EXPORT FDV_COLD ssize_t fdv_ep_post_failed(struct fdv_ep *ep, int ret);
FDV_EXPORT FDV_COLD ssize_t fdv_ep_recv_no_qp(struct fdv_ep *ep, struct ibv_recv_wr *wr);
FDV_EXPORT FDV_COLD ssize_t fdv_ep_bad_request(struct fdv_ep *ep, const char *why);
/* Called with the endpoint lock held when qp_tx is NULL or the request
 * carries FI_MORE: holds the request (more: FDV_HOLD_COPY or, when its
 * inline data may stay where it is, FDV_HOLD_NOCOPY), or sends the held
 * ones and this one in one ibv_post_send (FDV_POST_NOW), or reports why
 * the endpoint cannot send. slot_flags != 0 when the request needs a
 * completion slot. */
FDV_EXPORT ssize_t fdv_ep_post_held(struct fdv_ep *ep, struct ibv_send_wr *wr,
				    uint64_t want_comp, void *context,
				    uint64_t slot_flags, int more);

/* length and lkey are adjacent 32-bit fields of an SGE. Left alone, gcc
 * packs their two stores into one vector store that costs four
 * instructions; a volatile store cannot be merged and is one plain mov. */
FDV_INLINE void fdv_store_len_key(struct ibv_sge *sge, uint32_t len,
				  uint32_t lkey)
{
	sge->length = len;
	*(volatile uint32_t *)&sge->lkey = lkey;
}

/* The lkey alone, beside a length stored elsewhere: volatile for the
 * same reason. */
FDV_INLINE void fdv_store_key(struct ibv_sge *sge, uint32_t lkey)
{
	*(volatile uint32_t *)&sge->lkey = lkey;
}

/* Zero-length requests (num_sge 0), out of line: they are not what the
 * prebuilt requests are shaped for. opcode is a send or RDMA opcode;
 * raddr/rkey are used by the RMA opcodes only. */
FDV_EXPORT ssize_t fdv_ep_post_empty(struct fdv_ep *ep, enum ibv_wr_opcode opcode,
				     unsigned int send_flags, uint32_t imm_be,
				     uint64_t raddr, uint32_t rkey, uint64_t want_comp,
				     void *context);
FDV_EXPORT ssize_t fdv_ep_recv_empty(struct fdv_ep *ep, uint64_t wr_id);
FDV_EXPORT FDV_COLD ssize_t fdv_ep_recv_one_no_qp(struct fdv_ep *ep, void *buf,
						  size_t len, uint32_t lkey,
						  uint64_t wr_id);

FDV_INLINE struct fdv_ep *fdv_ep_of(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdv_ep, ep_fid);
}

/* Link the prebuilt requests; once, when the endpoint is made. */
FDV_INLINE void fdv_ep_prebuild(struct fdv_ep *ep)
{
	memset(&ep->tx_wr, 0, sizeof(ep->tx_wr));
	memset(&ep->rx_wr, 0, sizeof(ep->rx_wr));
	ep->tx_wr.sg_list = &ep->tx_sge;
	ep->tx_wr.num_sge = 1;
	ep->rx_wr.sg_list = &ep->rx_sge;
	ep->rx_wr.num_sge = 1;
}

/* The send request a single-buffer call fills, and its one SGE: the
 * endpoint's prebuilt pair, or (FDV_THREAD_SAFE) the caller's stack pair
 * linked the same way. */
FDV_INLINE struct ibv_send_wr *fdv_ep_tx_wr(struct fdv_ep *ep,
					    struct ibv_send_wr *local,
					    struct ibv_sge *local_sge,
					    struct ibv_sge **sge)
{
#if FDV_THREAD_SAFE
	(void)ep;
	local->sg_list = local_sge;
	local->num_sge = 1;
	local->next = NULL;
	*sge = local_sge;
	return local;
#else
	(void)local;
	(void)local_sge;
	*sge = &ep->tx_sge;
	return &ep->tx_wr;
#endif
}

FDV_INLINE struct ibv_recv_wr *fdv_ep_rx_wr(struct fdv_ep *ep,
					    struct ibv_recv_wr *local,
					    struct ibv_sge *local_sge,
					    struct ibv_sge **sge)
{
#if FDV_THREAD_SAFE
	(void)ep;
	local->sg_list = local_sge;
	local->num_sge = 1;
	local->next = NULL;
	*sge = local_sge;
	return local;
#else
	(void)local;
	(void)local_sge;
	*sge = &ep->rx_sge;
	return &ep->rx_wr;
#endif
}

/* Post one send-queue request (wr->next is NULL: the prebuilt requests
 * have it so, stack-built ones set it). want_comp is FI_COMPLETION or 0.
 * unsignaled counts the silent requests since the last one signaled for
 * the driver's sake; a request signaled because the application wants its
 * completion does not reset it (one store less per call; the count then
 * errs towards signaling early, which is always safe). It changes only
 * when the post succeeds, so a request the driver refused cannot leave
 * the queue without a signaled request ahead. */
FDV_INLINE ssize_t fdv_ep_post_send_flags(struct fdv_ep *ep,
					  struct ibv_send_wr *wr,
					  unsigned int send_flags,
					  uint64_t want_comp, void *context)
{
	struct ibv_send_wr *bad;
	uint32_t unsignaled;
	int ret;

	fdv_lock(&ep->lock);
	if (want_comp == FDV_COMP_EP) {
		struct ibv_qp *qp = ep->qp_tx_comp;

		if (fdv_likely(qp)) {
			wr->wr_id = (uintptr_t)context;
			wr->send_flags = send_flags | IBV_SEND_SIGNALED;
			ret = fdv_ibv_post_send(qp, wr, &bad);
			fdv_unlock(&ep->lock);
			return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
		}
		/* selective completion, not connected, or FI_MORE requests
		 * held: the general path below */
		want_comp = ep->tx_comp;
	}
	if (fdv_unlikely(!ep->qp_tx)) {
		ssize_t held;

		wr->send_flags = send_flags;
		held = fdv_ep_post_held(ep, wr, want_comp, context, 0, 0);
		fdv_unlock(&ep->lock);
		return held;
	}
	/* send_flags is stored once, with the signaling bit decided. */
	if (want_comp) {
		wr->wr_id = (uintptr_t)context;
		wr->send_flags = send_flags | IBV_SEND_SIGNALED;
		ret = fdv_ibv_post_send(ep->qp_tx, wr, &bad);
	} else {
		wr->wr_id = FDV_WR_ID_SILENT;
		unsignaled = ep->unsignaled + 1;
		if (unsignaled >= ep->signal_every) {
			send_flags |= IBV_SEND_SIGNALED;
			unsignaled = 0;
		}
		wr->send_flags = send_flags;
		ret = fdv_ibv_post_send(ep->qp_tx, wr, &bad);
		if (fdv_likely(!ret))
			ep->unsignaled = unsignaled;
	}
	fdv_unlock(&ep->lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
}

FDV_INLINE ssize_t fdv_ep_post_send(struct fdv_ep *ep, struct ibv_send_wr *wr,
				    uint64_t want_comp, void *context)
{
	return fdv_ep_post_send_flags(ep, wr, wr->send_flags, want_comp, context);
}

/* A request whose completion needs a slot (want_comp implied; wr->next
 * NULL). The slot is
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
	ret = fdv_ibv_post_send(ep->qp_tx, wr, &bad);
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

		if (want_comp == FDV_COMP_EP)
			want_comp = ep->tx_comp;
		wr->next = NULL;
		fdv_lock(&ep->lock);
		ret = fdv_ep_post_held(ep, wr, want_comp, context, 0,
				       (op_flags & FDV_OP_NOCOPY) && want_comp ?
				       FDV_HOLD_NOCOPY : FDV_HOLD_COPY);
		fdv_unlock(&ep->lock);
		return ret;
	}
	return fdv_ep_post_send(ep, wr, want_comp, context);
}

/* FI_MORE without a copy or a call: the entry the next held request is
 * built in, or NULL when that request must take fdv_ep_post_held (no
 * held array yet, the array full or partly refused, or nothing held and
 * the endpoint not connected). Called with the endpoint lock held. */
FDV_INLINE struct ibv_send_wr *fdv_more_next(struct fdv_ep *ep)
{
	struct fdv_more *more = ep->more;

	if (!more || more->head || more->n == FDV_MORE_MAX ||
	    (!more->n && !ep->qp_tx))
		return NULL;
	return &more->wr[more->n];
}

/* Queue the entry fdv_more_next gave (its opcode, SGEs, num_sge and
 * send_flags but the signaling bit filled in): completion choice as
 * fdv_ep_post_send_flags makes it, linked behind the last one. The first
 * held request closes the fast paths (qp_tx NULL), so the next call
 * without FI_MORE goes out of line and posts the whole chain. */
FDV_INLINE void fdv_more_queue(struct fdv_ep *ep, struct ibv_send_wr *e,
			       uint64_t want_comp, void *context)
{
	struct fdv_more *more = ep->more;
	uint32_t n = more->n;

	if (want_comp) {
		e->wr_id = (uintptr_t)context;
		e->send_flags |= IBV_SEND_SIGNALED;
	} else {
		e->wr_id = FDV_WR_ID_SILENT;
		if (++ep->unsignaled >= ep->signal_every) {
			e->send_flags |= IBV_SEND_SIGNALED;
			ep->unsignaled = 0;
		}
	}
	e->next = NULL;
	if (n) {
		more->wr[n - 1].next = e;
	} else {
		more->qp = ep->qp_tx;
		ep->qp_tx = NULL;
		ep->qp_tx_comp = NULL;
	}
	more->n = n + 1;
}

/* wr->next is NULL (prebuilt, or set by the caller); wr_id is the
 * context, or FDV_WR_ID_SILENT for a receive nobody asked to see. */
FDV_INLINE uint64_t fdv_rx_wr_id(uint64_t want_comp, void *context)
{
	return want_comp ? (uintptr_t)context : FDV_WR_ID_SILENT;
}

FDV_INLINE ssize_t fdv_ep_post_recv(struct fdv_ep *ep, struct ibv_recv_wr *wr,
				    uint64_t wr_id)
{
	struct ibv_recv_wr *bad;
	int ret;

	wr->wr_id = wr_id;
	fdv_lock(&ep->lock);
	if (fdv_unlikely(!ep->qp_rx)) {
		fdv_unlock(&ep->lock);
		return fdv_ep_recv_no_qp(ep, wr);
	}
	ret = ibv_post_recv(ep->qp_rx, wr, &bad);
	fdv_unlock(&ep->lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(ep, ret);
}

/* One receive buffer, in the endpoint's prebuilt request. The queue pair
 * is tested before the request is touched: a shared receive context (no
 * QP) may take receives from several threads at once, so its receives
 * build their own request out of line. */
FDV_INLINE ssize_t fdv_ep_post_recv_one(struct fdv_ep *ep, void *buf,
					size_t len, uint32_t lkey,
					uint64_t wr_id)
{
	struct ibv_recv_wr local, *wr, *bad;
	struct ibv_sge local_sge, *sge;
	struct ibv_qp *qp;
	int ret;

	fdv_lock(&ep->lock);
	qp = ep->qp_rx;
	if (fdv_unlikely(!qp)) {
		fdv_unlock(&ep->lock);
		return fdv_ep_recv_one_no_qp(ep, buf, len, lkey, wr_id);
	}
	wr = fdv_ep_rx_wr(ep, &local, &local_sge, &sge);
	sge->addr = (uintptr_t)buf;
	fdv_store_len_key(sge, (uint32_t)len, lkey);
	wr->wr_id = wr_id;
	ret = ibv_post_recv(qp, wr, &bad);
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
