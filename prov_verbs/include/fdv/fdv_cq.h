/* Completion queue: the inline reaping path. */
/* The public header comes first, outside our guard: when this file is the
 * first one an application includes, fi_eq.h pulls in the direct wrappers,
 * which include this file again, and by then every type below is known. */
#include <rdma/fi_eq.h>

#ifndef FDV_CQ_H
#define FDV_CQ_H

#include <string.h>
#include <fdv/fdv_verbs.h>
#include <fdv/fdv_compiler.h>
#include <fdv/fdv_lock.h>

FDV_EXTERN_C_BEGIN

/* wr_ids the library gives its own requests live at the very top of the
 * 64-bit range, which is kernel address space on every platform verbs runs
 * on: no user context (a pointer, or a small cookie) can fall there. One
 * compare against FDV_WR_ID_TAGGED (an immediate, no memory load) then
 * tells a plain user request from every library-owned one, which is all
 * the inline read loop needs to decide.
 *
 * FDV_WR_ID_SILENT marks a request whose completion the user did not ask
 * for (an inject, a selective-completion op without FI_COMPLETION, or the
 * periodic signaled request that lets the driver reclaim send-queue
 * slots). The FDV_WR_SLOTS values below it name completion slots. */
#define FDV_WR_ID_SILENT UINT64_MAX

/* Completions polled from the device per fi_cq_read call at most: a stack
 * array of this many ibv_wc is the only buffer between device and user. */
#define FDV_CQ_BATCH 16

/* A request whose completion must report other flags than its verbs
 * opcode implies (a non-fetching atomic is a fetch-add or an RDMA write
 * underneath) carries as wr_id FDV_WR_ID_TAGGED + i, naming slot i of its
 * endpoint's slot ring, which holds the user's context and the flags. The
 * CQ finds the endpoint from the completion's QP number. A slot is busy
 * (flags != 0) from the post until the CQ hands its completion to the
 * application, and a post that finds its slot still busy gets -FI_EAGAIN:
 * a slot is never reused while its completion may still be read. The ring
 * has one slot per send-queue entry, so it fills only when the application
 * leaves that many completions unread. */
struct fdv_wr_slot {
	void *context;
	uint64_t flags;		/* 0: free */
};

#define FDV_WR_SLOTS_MAX (1u << 24)
#define FDV_WR_ID_TAGGED (UINT64_MAX - FDV_WR_SLOTS_MAX)

/* CQ kinds one library serves, as for endpoints (fdv_ep.h): every CQ
 * object starts with the public fid_cq followed by its kind, so a direct
 * fi_cq_* wrapper tells a verbs CQ, whose reads it inlines, from a layer's
 * (RDM) with one compare against an immediate; a layer's CQ is reached
 * through its own ops table. Not compiled without layers (FDV_EP_LAYERS). */
enum fdv_cq_kind {
	FDV_CQ_KIND_VERBS = 0,
	FDV_CQ_KIND_LAYER = 1,
};

struct fdv_cq_head {
	struct fid_cq cq_fid;
	uint32_t kind;
};

FDV_INLINE uint32_t fdv_cq_kind(struct fid_cq *cq_fid)
{
	return fdv_container_of(cq_fid, struct fdv_cq_head, cq_fid)->kind;
}

struct fdv_cq {
	struct fid_cq cq_fid;	/* first: the application holds &cq_fid */
	uint32_t kind;		/* FDV_CQ_KIND_VERBS; as in struct fdv_cq_head */
	/* 0 for a CONTEXT CQ with nothing held back, else 1: with kind
	 * (0 for a verbs CQ) one aligned 8-byte word that is 0 exactly when
	 * a read may take the straight CONTEXT line, so the read tests kind,
	 * format and backlog with one compare against 0
	 * (fdv_cq_readfrom_k). A layer's CQ has another kind and fails it
	 * whatever follows its head. Set with fdv_cq_set_backlog. */
	uint32_t not_fast;
	struct ibv_cq *ibcq;
	/* format and backlog share one aligned 8-byte word (the layout
	 * is checked below), so the read path tests "a CONTEXT CQ with nothing
	 * held back" with one 64-bit compare against an immediate. */
	uint32_t format;	/* enum fi_cq_format of the user's entries */
	/* Non-zero while polled completions wait in the library (after an
	 * error, the rest of that batch): reads then take the slow path. */
	uint32_t backlog;
	fdv_lock_t lock;
};

#ifndef __cplusplus
_Static_assert(offsetof(struct fdv_cq, not_fast) == offsetof(struct fdv_cq, kind) + 4 &&
	       offsetof(struct fdv_cq, kind) % 8 == 0 &&
	       offsetof(struct fdv_cq, kind) == offsetof(struct fdv_cq_head, kind) &&
	       FDV_CQ_KIND_VERBS == 0,
	       "fdv_cq: kind and not_fast must share one aligned 8-byte word, 0 when fast");
#endif

/* The word (kind, not_fast) of a verbs CONTEXT CQ with an empty backlog:
 * 0, so the compare needs no immediate wider than a byte. */
#define FDV_CQ_FAST_CONTEXT ((uint64_t)0)

/* Read through the fid (the CQ may be a layer's): only the head's kind
 * and the 4 bytes after it, which every CQ object has. */
FDV_INLINE uint64_t fdv_cq_kind_format(const struct fid_cq *cq_fid)
{
	uint64_t word;

	memcpy(&word, &fdv_container_of(cq_fid, struct fdv_cq, cq_fid)->kind, sizeof(word));
	return word;
}

/* Every change of the backlog goes through here (in the library, under
 * the CQ's lock), which keeps fast_format in step. */
FDV_INLINE void fdv_cq_set_backlog(struct fdv_cq *cq, uint32_t n)
{
	cq->backlog = n;
	cq->not_fast = n || cq->format != FI_CQ_FORMAT_CONTEXT;
}

/* Out of line, in the library; the first three are the read path's slow
 * and error cases, cold so their calls stay off the fast path. */
FDV_EXPORT FDV_COLD ssize_t fdv_cq_read_slow(struct fdv_cq *cq, void *buf, size_t count,
					     fi_addr_t *src_addr);
FDV_EXPORT FDV_COLD ssize_t fdv_cq_deliver_slow(struct fdv_cq *cq, struct ibv_wc *wc,
						int n, void *buf, size_t done,
						fi_addr_t *src_addr);
FDV_EXPORT FDV_COLD ssize_t fdv_cq_poll_failed(struct fdv_cq *cq, int ret);
FDV_EXPORT ssize_t fdv_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf,
				  uint64_t flags);
FDV_EXPORT ssize_t fdv_cq_sread(struct fid_cq *cq, void *buf, size_t count,
				const void *cond, int timeout);
FDV_EXPORT ssize_t fdv_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count,
				    fi_addr_t *src_addr, const void *cond, int timeout);
FDV_EXPORT int fdv_cq_signal(struct fid_cq *cq);
FDV_EXPORT const char *fdv_cq_strerror(struct fid_cq *cq, int prov_errno,
				       const void *err_data, char *buf, size_t len);

FDV_INLINE struct fdv_cq *fdv_cq_of(struct fid_cq *cq_fid)
{
	return fdv_container_of(cq_fid, struct fdv_cq, cq_fid);
}

/* Completion flags of a successful work completion, from a table rather
 * than a switch: compilers lower a switch of this size to a jump table,
 * an indirect branch in the middle of fi_cq_read.  The index keeps the
 * opcode's low three bits and moves bit 7 (set on every receive opcode:
 * IBV_WC_RECV is 128) to bit 3; any other opcode bit means an opcode this
 * provider never posts, with no flags. */
FDV_INLINE uint64_t fdv_wc_flags(const struct ibv_wc *wc)
{
	static const uint64_t flags_of_opcode[16] = {
		FI_MSG | FI_SEND,			/* IBV_WC_SEND */
		FI_RMA | FI_WRITE,			/* IBV_WC_RDMA_WRITE */
		FI_RMA | FI_READ,			/* IBV_WC_RDMA_READ */
		FI_ATOMIC | FI_READ,			/* IBV_WC_COMP_SWAP */
		FI_ATOMIC | FI_READ,			/* IBV_WC_FETCH_ADD */
		0, 0, 0,
		FI_MSG | FI_RECV,			/* IBV_WC_RECV */
		FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, /* IBV_WC_RECV_RDMA_WITH_IMM */
		0, 0, 0, 0, 0, 0,
	};
	unsigned int op = (unsigned int)wc->opcode;

	if (fdv_unlikely(op & ~0x87u))
		return 0;
	/* wc_flags is meaningful on receive completions only (a send's may
	 * hold anything). */
	return flags_of_opcode[(op & 7) | ((op >> 4) & 8)] |
	       ((op & IBV_WC_RECV) && (wc->wc_flags & IBV_WC_WITH_IMM) ?
		FI_REMOTE_CQ_DATA : 0);
}

#ifndef __cplusplus
_Static_assert(IBV_WC_SEND == 0 && IBV_WC_RDMA_WRITE == 1 && IBV_WC_RDMA_READ == 2 &&
	       IBV_WC_COMP_SWAP == 3 && IBV_WC_FETCH_ADD == 4 && IBV_WC_RECV == 128 &&
	       IBV_WC_RECV_RDMA_WITH_IMM == 129, "fdv_wc_flags: verbs opcode values");
#endif

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
 * fields that format has: a CONTEXT CQ pays for the context alone.
 * context and flags come from the caller, which knows whether the request
 * carried a slot (the inline loop only sees requests that did not). */
FDV_INLINE void fdv_cq_fill_as(uint32_t format, void *buf, size_t i,
			       const struct ibv_wc *wc, void *context,
			       uint64_t flags)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT: {
		struct fi_cq_entry *e = (struct fi_cq_entry *)buf + i;
		e->op_context = context;
		break;
	}
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *e = (struct fi_cq_msg_entry *)buf + i;
		e->op_context = context;
		e->flags = flags;
		e->len = fdv_wc_len(wc);
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *e = (struct fi_cq_data_entry *)buf + i;
		e->op_context = context;
		e->flags = flags;
		e->len = fdv_wc_len(wc);
		e->buf = NULL;
		e->data = fdv_wc_data(wc);
		break;
	}
	default: { /* FI_CQ_FORMAT_TAGGED: validated at open */
		struct fi_cq_tagged_entry *e = (struct fi_cq_tagged_entry *)buf + i;
		e->op_context = context;
		e->flags = flags;
		e->len = fdv_wc_len(wc);
		e->buf = NULL;
		e->data = fdv_wc_data(wc);
		e->tag = 0;
		break;
	}
	}
}

/* The inline loop for one format, which the caller passes as a constant:
 * each format gets its own loop with no format test inside. An entry
 * leaves the loop when it failed or is not a plain user request (silent,
 * or carrying a slot): one status test and one compare against an
 * immediate per entry on the common path. */
FDV_INLINE ssize_t fdv_cq_reap(struct fdv_cq *cq, const uint32_t format,
			       struct ibv_wc *wc, int n, void *buf,
			       fi_addr_t *src_addr)
{
	for (int i = 0; i < n; i++) {
		if (fdv_unlikely(wc[i].status != IBV_WC_SUCCESS ||
				 wc[i].wr_id >= FDV_WR_ID_TAGGED))
			return fdv_cq_deliver_slow(cq, wc + i, n - i, buf,
						   (size_t)i, src_addr);
		fdv_cq_fill_as(format, buf, (size_t)i, &wc[i],
			       (void *)(uintptr_t)wc[i].wr_id,
			       format == FI_CQ_FORMAT_CONTEXT ? 0 : fdv_wc_flags(&wc[i]));
		if (src_addr)
			src_addr[i] = FI_ADDR_NOTAVAIL;
	}
	return n;
}

/* Poll and translate for one format, a constant: each format gets its
 * own straight line. Called with the lock held; drops it. */
FDV_INLINE ssize_t fdv_cq_poll_as(struct fdv_cq *cq, const uint32_t format,
				  void *buf, size_t count, fi_addr_t *src_addr)
{
	struct ibv_wc wc[FDV_CQ_BATCH];
	ssize_t ret;
	int n, max;

	/* The entry size follows the CQ's format, known only at run time.
	 * Once inlined, the compiler would check the caller's buffer against
	 * every format's size and warn about formats this CQ does not have;
	 * an empty asm hides the buffer's origin and costs no instruction. */
	__asm__("" : "+r"(buf));
	max = count < FDV_CQ_BATCH ? (int)count : FDV_CQ_BATCH;
	n = fdv_ibv_poll_cq(cq->ibcq, max, wc);
	/* verbs never returns more than asked for. Telling the compiler so
	 * lets a caller that reads one entry at a time (count 1, the usual
	 * latency loop) get straight-line code with no loop around it. */
	if (n > max)
		__builtin_unreachable();
	/* An empty poll, the commonest call of all, leaves first. */
	if (fdv_unlikely(n <= 0)) {
		fdv_unlock(&cq->lock);
		return n == 0 ? -FI_EAGAIN : fdv_cq_poll_failed(cq, n);
	}
	ret = fdv_cq_reap(cq, format, wc, n, buf, src_addr);
	fdv_unlock(&cq->lock);
	return ret;
}

/* Every read but the CONTEXT line with nothing held back: called with
 * the lock held, which it drops. */
FDV_INLINE ssize_t fdv_cq_read_other(struct fdv_cq *cq, void *buf,
				     size_t count, fi_addr_t *src_addr)
{
	if (fdv_unlikely(!count || !buf || cq->backlog)) {
		fdv_unlock(&cq->lock);
		return fdv_cq_read_slow(cq, buf, count, src_addr);
	}
	switch (cq->format) {
	case FI_CQ_FORMAT_CONTEXT:
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_CONTEXT, buf, count, src_addr);
	case FI_CQ_FORMAT_MSG:
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_MSG, buf, count, src_addr);
	case FI_CQ_FORMAT_DATA:
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_DATA, buf, count, src_addr);
	default:	/* FI_CQ_FORMAT_TAGGED: validated at open */
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_TAGGED, buf, count, src_addr);
	}
}

FDV_INLINE ssize_t fdv_cq_readfrom(struct fid_cq *cq_fid, void *buf,
				   size_t count, fi_addr_t *src_addr)
{
	struct fdv_cq *cq = fdv_cq_of(cq_fid);

	fdv_lock(&cq->lock);
	/* Tested first, so a caller's stack buffer (never NULL) and a
	 * constant count fold these tests away. One compare of the (kind,
	 * not_fast) word against 0 then picks the commonest CQ, CONTEXT with
	 * nothing held back, before the poll: its line has no further format
	 * or backlog test. */
	if (fdv_likely(count && buf &&
		       fdv_cq_kind_format(cq_fid) == FDV_CQ_FAST_CONTEXT))
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_CONTEXT, buf, count, src_addr);
	return fdv_cq_read_other(cq, buf, count, src_addr);
}

FDV_INLINE ssize_t fdv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return fdv_cq_readfrom(cq_fid, buf, count, NULL);
}

#if FDV_EP_LAYERS
/* The direct wrappers' reads when layers' CQs exist (gen/api.spec
 * @cq-kind-inside): the kind is tested in the same compare as format and
 * backlog, where a separate test of it before fdv_cq_readfrom cost two
 * instructions more per read. Without FDV_THREAD_SAFE only: with it, the
 * verbs CQ's fields are read under its lock, which a layer's CQ does not
 * have, so the kind goes first. */
FDV_INLINE ssize_t fdv_cq_readfrom_k(struct fid_cq *cq_fid, void *buf,
				     size_t count, fi_addr_t *src_addr)
{
#if !FDV_THREAD_SAFE
	/* The word first, so that its "else" side is the only way to a
	 * layer's ops table; count and buf after it (constants in the
	 * common caller: folded). */
	if (fdv_likely(fdv_cq_kind_format(cq_fid) == FDV_CQ_FAST_CONTEXT)) {
		struct fdv_cq *cq = fdv_cq_of(cq_fid);

		if (fdv_unlikely(!count || !buf))
			return fdv_cq_read_slow(cq, buf, count, src_addr);
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_CONTEXT, buf, count, src_addr);
	}
#endif
	if (fdv_unlikely(fdv_cq_kind(cq_fid) == FDV_CQ_KIND_LAYER))
		return cq_fid->ops->readfrom(cq_fid, buf, count, src_addr);
#if FDV_THREAD_SAFE
	return fdv_cq_readfrom(cq_fid, buf, count, src_addr);
#else
	/* the word said: not the CONTEXT line (no lock to take) */
	return fdv_cq_read_other(fdv_cq_of(cq_fid), buf, count, src_addr);
#endif
}

FDV_INLINE ssize_t fdv_cq_read_k(struct fid_cq *cq_fid, void *buf, size_t count)
{
#if !FDV_THREAD_SAFE
	if (fdv_likely(fdv_cq_kind_format(cq_fid) == FDV_CQ_FAST_CONTEXT)) {
		struct fdv_cq *cq = fdv_cq_of(cq_fid);

		if (fdv_unlikely(!count || !buf))
			return fdv_cq_read_slow(cq, buf, count, NULL);
		return fdv_cq_poll_as(cq, FI_CQ_FORMAT_CONTEXT, buf, count, NULL);
	}
#endif
	if (fdv_unlikely(fdv_cq_kind(cq_fid) == FDV_CQ_KIND_LAYER))
		return cq_fid->ops->read(cq_fid, buf, count);
#if FDV_THREAD_SAFE
	return fdv_cq_readfrom(cq_fid, buf, count, NULL);
#else
	return fdv_cq_read_other(fdv_cq_of(cq_fid), buf, count, NULL);
#endif
}
#endif

FDV_EXTERN_C_END

#endif /* FDV_CQ_H */
