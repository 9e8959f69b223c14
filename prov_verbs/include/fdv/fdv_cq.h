/* Completion queue: the inline reaping path. */
/* The public header comes first, outside our guard: when this file is the
 * first one an application includes, fi_eq.h pulls in the direct wrappers,
 * which include this file again, and by then every type below is known. */
#include <rdma/fi_eq.h>

#ifndef FDV_CQ_H
#define FDV_CQ_H

#include <fdv/fdv_verbs.h>
#include <fdv/fdv_compiler.h>
#include <fdv/fdv_lock.h>

FDV_EXTERN_C_BEGIN

/* wr_id of a work request whose completion the user did not ask for (an
 * inject, a selective-completion op without FI_COMPLETION, or the periodic
 * signaled request that lets the driver reclaim send-queue slots). A user
 * context equal to this value would be meaningless: it is not a pointer any
 * allocation can return. */
#define FDV_WR_ID_SILENT UINT64_MAX

/* Completions polled from the device per fi_cq_read call at most: a stack
 * array of this many ibv_wc is the only buffer between device and user. */
#define FDV_CQ_BATCH 16

/* A request whose completion must report other flags than its verbs
 * opcode implies (a non-fetching atomic is a fetch-add or an RDMA write
 * underneath) carries as wr_id the address of one of these slots, which
 * holds the user's context and the flags. The slots belong to the library,
 * so no user context can be mistaken for one. A slot is reused after
 * FDV_WR_SLOTS more such requests: far more than can be outstanding on the
 * send queues of one process. */
struct fdv_wr_slot {
	void *context;
	uint64_t flags;
};

#define FDV_WR_SLOTS 65536
extern struct fdv_wr_slot fdv_wr_slots[FDV_WR_SLOTS];
extern unsigned int fdv_wr_slot_next;

FDV_INLINE void *fdv_wr_slot_take(void *context, uint64_t flags)
{
	unsigned int i = __atomic_fetch_add(&fdv_wr_slot_next, 1, __ATOMIC_RELAXED) %
			 FDV_WR_SLOTS;

	fdv_wr_slots[i].context = context;
	fdv_wr_slots[i].flags = flags;
	return &fdv_wr_slots[i];
}

FDV_INLINE const struct fdv_wr_slot *fdv_wr_slot_of(uint64_t wr_id)
{
	uintptr_t off = (uintptr_t)wr_id - (uintptr_t)fdv_wr_slots;

	return off < sizeof(fdv_wr_slots) ?
		(const struct fdv_wr_slot *)(uintptr_t)wr_id : NULL;
}

struct fdv_cq {
	struct fid_cq cq_fid;	/* first: the application holds &cq_fid */
	struct ibv_cq *ibcq;
	uint32_t format;	/* enum fi_cq_format of the user's entries */
	/* Non-zero while polled completions wait in the library (after an
	 * error, the rest of that batch): reads then take the slow path. */
	uint32_t backlog;
	fdv_lock_t lock;
};

/* Out of line, in the library. */
ssize_t fdv_cq_read_slow(struct fdv_cq *cq, void *buf, size_t count,
			 fi_addr_t *src_addr);
ssize_t fdv_cq_deliver_slow(struct fdv_cq *cq, struct ibv_wc *wc, int n,
			    void *buf, size_t done, fi_addr_t *src_addr);
ssize_t fdv_cq_poll_failed(struct fdv_cq *cq, int ret);
ssize_t fdv_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf,
		       uint64_t flags);
ssize_t fdv_cq_sread(struct fid_cq *cq, void *buf, size_t count,
		     const void *cond, int timeout);
ssize_t fdv_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count,
			 fi_addr_t *src_addr, const void *cond, int timeout);
int fdv_cq_signal(struct fid_cq *cq);
const char *fdv_cq_strerror(struct fid_cq *cq, int prov_errno,
			    const void *err_data, char *buf, size_t len);

FDV_INLINE struct fdv_cq *fdv_cq_of(struct fid_cq *cq_fid)
{
	return fdv_container_of(cq_fid, struct fdv_cq, cq_fid);
}

/* Completion flags of a successful work completion. Receive opcodes have
 * bit 7 set (IBV_WC_RECV is 128); everything else is the initiator side. */
FDV_INLINE uint64_t fdv_wc_flags(const struct ibv_wc *wc)
{
	switch (wc->opcode) {
	case IBV_WC_SEND:
		return FI_MSG | FI_SEND;
	case IBV_WC_RDMA_WRITE:
		return FI_RMA | FI_WRITE;
	case IBV_WC_RDMA_READ:
		return FI_RMA | FI_READ;
	case IBV_WC_COMP_SWAP:
	case IBV_WC_FETCH_ADD:
		return FI_ATOMIC | FI_READ;
	case IBV_WC_RECV:
		return (wc->wc_flags & IBV_WC_WITH_IMM) ?
			FI_MSG | FI_RECV | FI_REMOTE_CQ_DATA : FI_MSG | FI_RECV;
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
	default:
		return 0;
	}
}

/* A completion's context and flags: the request's own, or its slot's. Only
 * fetch-adds and RDMA writes can carry a slot, so other opcodes skip the
 * range test. */
FDV_INLINE const struct fdv_wr_slot *fdv_wc_slot(const struct ibv_wc *wc)
{
	if (fdv_unlikely(wc->opcode == IBV_WC_FETCH_ADD || wc->opcode == IBV_WC_RDMA_WRITE))
		return fdv_wr_slot_of(wc->wr_id);
	return NULL;
}

FDV_INLINE void *fdv_wc_context(const struct ibv_wc *wc)
{
	const struct fdv_wr_slot *slot = fdv_wc_slot(wc);

	return slot ? slot->context : (void *)(uintptr_t)wc->wr_id;
}

FDV_INLINE uint64_t fdv_wc_all_flags(const struct ibv_wc *wc)
{
	const struct fdv_wr_slot *slot = fdv_wc_slot(wc);

	return slot ? slot->flags : fdv_wc_flags(wc);
}

/* Send-side byte_len is undefined in verbs: only receives report one. */
FDV_INLINE size_t fdv_wc_len(const struct ibv_wc *wc)
{
	return (wc->opcode & IBV_WC_RECV) ? wc->byte_len : 0;
}

FDV_INLINE uint64_t fdv_wc_data(const struct ibv_wc *wc)
{
	return (wc->wc_flags & IBV_WC_WITH_IMM) ? (uint64_t)fdv_be32toh(wc->imm_data) : 0;
}

/* Write one successful completion in the CQ's format, computing only the
 * fields that format has: a CONTEXT CQ pays for the context alone. */
FDV_INLINE void fdv_cq_fill(uint32_t format, void *buf, size_t i,
			    const struct ibv_wc *wc)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT: {
		struct fi_cq_entry *e = (struct fi_cq_entry *)buf + i;
		e->op_context = fdv_wc_context(wc);
		break;
	}
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *e = (struct fi_cq_msg_entry *)buf + i;
		e->op_context = fdv_wc_context(wc);
		e->flags = fdv_wc_all_flags(wc);
		e->len = fdv_wc_len(wc);
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *e = (struct fi_cq_data_entry *)buf + i;
		e->op_context = fdv_wc_context(wc);
		e->flags = fdv_wc_all_flags(wc);
		e->len = fdv_wc_len(wc);
		e->buf = NULL;
		e->data = fdv_wc_data(wc);
		break;
	}
	default: { /* FI_CQ_FORMAT_TAGGED: validated at open */
		struct fi_cq_tagged_entry *e = (struct fi_cq_tagged_entry *)buf + i;
		e->op_context = fdv_wc_context(wc);
		e->flags = fdv_wc_all_flags(wc);
		e->len = fdv_wc_len(wc);
		e->buf = NULL;
		e->data = fdv_wc_data(wc);
		e->tag = 0;
		break;
	}
	}
}

FDV_INLINE ssize_t fdv_cq_readfrom(struct fid_cq *cq_fid, void *buf,
				   size_t count, fi_addr_t *src_addr)
{
	struct fdv_cq *cq = fdv_cq_of(cq_fid);
	struct ibv_wc wc[FDV_CQ_BATCH];
	int n, i;

	/* The entry size follows the CQ's format, known only at run time.
	 * Once inlined, the compiler would check the caller's buffer against
	 * every format's size and warn about formats this CQ does not have;
	 * an empty asm hides the buffer's origin and costs no instruction. */
	__asm__("" : "+r"(buf));
	fdv_lock(&cq->lock);
	if (fdv_unlikely(cq->backlog || !count || !buf)) {
		fdv_unlock(&cq->lock);
		return fdv_cq_read_slow(cq, buf, count, src_addr);
	}
	n = ibv_poll_cq(cq->ibcq, count < FDV_CQ_BATCH ? (int)count : FDV_CQ_BATCH, wc);
	for (i = 0; i < n; i++) {
		/* Errors and silent completions leave the loop together:
		 * one predictable test per entry on the common path. */
		if (fdv_unlikely(wc[i].status != IBV_WC_SUCCESS ||
				 wc[i].wr_id == FDV_WR_ID_SILENT)) {
			ssize_t ret = fdv_cq_deliver_slow(cq, wc + i, n - i, buf,
							  (size_t)i, src_addr);
			fdv_unlock(&cq->lock);
			return ret;
		}
		fdv_cq_fill(cq->format, buf, (size_t)i, &wc[i]);
		if (src_addr)
			src_addr[i] = FI_ADDR_NOTAVAIL;
	}
	fdv_unlock(&cq->lock);
	if (fdv_likely(n > 0))
		return n;
	return n == 0 ? -FI_EAGAIN : fdv_cq_poll_failed(cq, n);
}

FDV_INLINE ssize_t fdv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return fdv_cq_readfrom(cq_fid, buf, count, NULL);
}

FDV_EXTERN_C_END

#endif /* FDV_CQ_H */
