/* FI_EP_DGRAM on a verbs UD queue pair: the inline calls (fi_send,
 * fi_inject, fi_recv) and the structures they read. The other calls of a
 * datagram endpoint (the vector and msg forms, senddata) go through its
 * ops table, out of line in prov_verbs/verbs/fdv_dgram.c.
 *
 * A datagram endpoint starts like a MSG endpoint (struct fdv_ep, so the
 * CQ's slot machinery finds it by QP number) with its own kind,
 * FDV_EP_KIND_DGRAM: odd, so the direct wrappers' one test of the
 * FDV_EP_KIND_LAYER bit keeps the MSG line as it was and sends a datagram
 * endpoint to a second compare (gen/api.spec, @inline-layer dgram). */
#include <rdma/fi_endpoint.h>

#ifndef FDV_DGRAM_H
#define FDV_DGRAM_H

#include <fdv/fdv_ep.h>

FDV_EXTERN_C_BEGIN

/* FI_MSG_PREFIX: the first 40 bytes of every receive buffer take the
 * Global Route Header verbs writes ahead of a UD payload. Sends carry no
 * prefix (as upstream's verbs provider: its tx_attr->mode is 0). */
#define FDV_DGRAM_PREFIX 40u

/* The Q_Key every datagram endpoint of this library uses and checks (the
 * value upstream's verbs provider uses too); bit 31 clear, so no
 * privileged key. */
#define FDV_DGRAM_QKEY 0x11111111u

/* One AV entry: what a send needs (ah, qpn, qkey) first, then what the
 * CQ matches a source against. ah is NULL for a removed entry. */
struct fdv_ud_dest {
	struct ibv_ah *ah;
	uint32_t qpn;
	uint32_t qkey;
	uint8_t gid[16];
	uint16_t lid;
	uint16_t unused16;
	uint32_t unused32;
};

/* fi_addr_t i is entry i & FDV_AV_PAGE_MASK of page i >> FDV_AV_PAGE_SHIFT.
 * Pages never move once allocated and the page array is part of the AV,
 * so a send reading an entry never races a realloc of an insert; count
 * is published (release) after the entry is written. */
#define FDV_AV_PAGE_SHIFT 10
#define FDV_AV_PAGE_MASK ((1u << FDV_AV_PAGE_SHIFT) - 1)
#define FDV_AV_PAGES 4096u	/* 4 Mi addresses */

struct fdv_ud_av {
	struct fid_av av_fid;	/* first: the application holds &av_fid */
	uint32_t count;		/* fi_addr_t values handed out so far */
	uint32_t unused;
	struct fdv_ud_dest *pages[FDV_AV_PAGES];
};

struct fdv_dgram_ep {
	struct fdv_ep ep;	/* first; ep.kind is FDV_EP_KIND_DGRAM */
	struct fdv_ud_av *av;	/* bound AV, NULL before fi_ep_bind */
	uint32_t max_msg;	/* payload limit: the port's active MTU */
	uint32_t unused;
	/* Per receive slot (ep.slots, one per receive-queue entry): the
	 * buffer whose first 40 bytes take the GRH, read by the CQ for the
	 * source address. */
	void **rx_buf;
};

/* Out of line and cold (fdv_dgram.c): the refusals. */
FDV_EXPORT FDV_COLD ssize_t fdv_dgram_refuse(struct fdv_dgram_ep *d, fi_addr_t addr,
					     size_t len, int why);
/* Out of line (fdv_dgram.c): a receive buffer shorter than the prefix
 * plus max_msg_size. The device would fail a datagram too long for it
 * with an error completion that also moves the UD QP to the error state
 * (every verbs device does; the endpoint would be dead), so such a
 * receive takes a full-size bounce buffer of the library's, and the CQ
 * copies the datagram over (or reports FI_ETRUNC with the datagram cut at
 * the buffer's end). */
FDV_EXPORT ssize_t fdv_dgram_recv_short(struct fdv_dgram_ep *d, void *buf, size_t len,
					void *desc, void *context);

/* Internal slot flag of a bounced receive (never reported: the CQ masks
 * it): a mode bit, meaningless among completion flags. */
#define FDV_SLOT_BOUNCED FI_MSG_PREFIX
enum { FDV_DGRAM_BAD_ADDR = 1, FDV_DGRAM_BAD_LEN, FDV_DGRAM_BAD_BUF,
       FDV_DGRAM_NOT_ENABLED };

FDV_INLINE struct fdv_dgram_ep *fdv_dgram_of(struct fid_ep *ep_fid)
{
	return fdv_container_of(ep_fid, struct fdv_dgram_ep, ep.ep_fid);
}

/* The entry of an address this AV handed out and did not remove, else
 * NULL: an untrusted fi_addr_t never reaches a page it does not name. */
FDV_INLINE const struct fdv_ud_dest *fdv_ud_dest_of(const struct fdv_ud_av *av,
						    fi_addr_t addr)
{
	const struct fdv_ud_dest *to;

	if (fdv_unlikely(!av || addr >= __atomic_load_n(&av->count, __ATOMIC_ACQUIRE)))
		return NULL;
	to = &av->pages[addr >> FDV_AV_PAGE_SHIFT][addr & FDV_AV_PAGE_MASK];
	return fdv_likely(to->ah != NULL) ? to : NULL;
}

/* Address, signaling and post, under the endpoint's lock. wr has its
 * opcode, SGEs and send_flags (but the signaling bit) filled in. */
FDV_INLINE ssize_t fdv_dgram_post(struct fdv_dgram_ep *d, struct ibv_send_wr *wr,
				  fi_addr_t dest, uint64_t want_comp, void *context)
{
	const struct fdv_ud_dest *to;
	struct ibv_send_wr *bad;
	struct ibv_qp *qp;
	uint32_t unsignaled = 0;
	int ret;

	fdv_lock(&d->ep.lock);
	qp = d->ep.qp_tx;
	to = fdv_ud_dest_of(d->av, dest);
	if (fdv_unlikely(!qp || !to)) {
		fdv_unlock(&d->ep.lock);
		return fdv_dgram_refuse(d, dest, 0, qp ? FDV_DGRAM_BAD_ADDR :
					FDV_DGRAM_NOT_ENABLED);
	}
	wr->wr.ud.ah = to->ah;
	wr->wr.ud.remote_qpn = to->qpn;
	wr->wr.ud.remote_qkey = to->qkey;
	wr->next = NULL;
	if (want_comp) {
		wr->wr_id = (uintptr_t)context;
		wr->send_flags |= IBV_SEND_SIGNALED;
	} else {
		/* The driver reclaims send-queue slots only on a signaled
		 * completion (as on MSG endpoints). */
		wr->wr_id = FDV_WR_ID_SILENT;
		unsignaled = d->ep.unsignaled + 1;
		if (unsignaled >= d->ep.signal_every) {
			wr->send_flags |= IBV_SEND_SIGNALED;
			unsignaled = 0;
		}
	}
	ret = fdv_ibv_post_send(qp, wr, &bad);
	if (fdv_likely(!ret) && !want_comp)
		d->ep.unsignaled = unsignaled;
	fdv_unlock(&d->ep.lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(&d->ep, ret);
}

/* One buffer: inline up to inject_size (no descriptor needed), else the
 * registration's lkey. A datagram is at most one MTU of payload. */
FDV_INLINE ssize_t fdv_dgram_send_one(struct fdv_dgram_ep *d, const void *buf,
				      size_t len, void *desc, fi_addr_t dest,
				      uint64_t want_comp, void *context,
				      unsigned int send_flags)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	if (fdv_unlikely(len > d->max_msg))
		return fdv_dgram_refuse(d, dest, len, FDV_DGRAM_BAD_LEN);
	if (fdv_unlikely(!buf && len))
		return fdv_dgram_refuse(d, dest, len, FDV_DGRAM_BAD_BUF);
	if (len <= d->ep.inject_size) {
		send_flags |= IBV_SEND_INLINE;
		sge.lkey = 0;
	} else if (fdv_likely(desc != NULL)) {
		sge.lkey = fdv_desc_lkey(desc);
	} else {
		return fdv_dgram_refuse(d, dest, len, FDV_DGRAM_BAD_BUF);
	}
	sge.addr = (uintptr_t)buf;
	sge.length = (uint32_t)len;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = send_flags;
	return fdv_dgram_post(d, &wr, dest, want_comp, context);
}

FDV_INLINE ssize_t fdv_dgram_send(struct fid_ep *ep_fid, const void *buf,
				  size_t len, void *desc, fi_addr_t dest_addr,
				  void *context)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep_fid);

	return fdv_dgram_send_one(d, buf, len, desc, dest_addr, d->ep.tx_comp,
				  context, 0);
}

FDV_INLINE ssize_t fdv_dgram_inject(struct fid_ep *ep_fid, const void *buf,
				    size_t len, fi_addr_t dest_addr)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep_fid);

	if (fdv_unlikely(len > d->ep.inject_size))
		return fdv_dgram_refuse(d, dest_addr, len, FDV_DGRAM_BAD_LEN);
	return fdv_dgram_send_one(d, buf, len, NULL, dest_addr, 0, NULL, 0);
}

/* Post a receive request whose SGEs are filled in: it takes the next
 * receive slot (wr_id FDV_WR_ID_TAGGED + slot), which holds the
 * context, so the CQ can find the buffer and read the sender's address
 * from its GRH. buf is where the GRH lands. Every datagram receive
 * completes (FI_SELECTIVE_COMPLETION does not apply to receives here). */
FDV_INLINE ssize_t fdv_dgram_post_recv(struct fdv_dgram_ep *d, struct ibv_recv_wr *wr,
				       void *buf, void *context, uint64_t slot_flags)
{
	struct fdv_wr_slot *slot;
	struct ibv_recv_wr *bad;
	struct ibv_qp *qp;
	uint32_t i;
	int ret;

	fdv_lock(&d->ep.lock);
	qp = d->ep.qp_rx;
	if (fdv_unlikely(!qp)) {
		fdv_unlock(&d->ep.lock);
		return fdv_dgram_refuse(d, FI_ADDR_UNSPEC, 0, FDV_DGRAM_NOT_ENABLED);
	}
	i = d->ep.slot_next;
	slot = &d->ep.slots[i];
	/* Busy until its completion was read: the application left a whole
	 * receive queue of completions unread. */
	if (fdv_unlikely(__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE))) {
		fdv_unlock(&d->ep.lock);
		return -FI_EAGAIN;
	}
	slot->context = context;
	slot->flags = FI_MSG | FI_RECV | slot_flags;
	d->rx_buf[i] = buf;
	wr->wr_id = FDV_WR_ID_TAGGED + i;
	wr->next = NULL;
	ret = ibv_post_recv(qp, wr, &bad);
	if (fdv_likely(!ret))
		d->ep.slot_next = i + 1 == d->ep.slot_count ? 0 : i + 1;
	else
		slot->flags = 0;
	fdv_unlock(&d->ep.lock);
	return fdv_likely(!ret) ? 0 : fdv_ep_post_failed(&d->ep, ret);
}

/* The buffer starts with the 40-byte prefix the GRH fills; the payload
 * follows it, so a buffer of len bytes takes datagrams of up to
 * len - 40 bytes. One that holds the largest datagram (40 +
 * max_msg_size) is posted as it is; a shorter one goes out of line. */
FDV_INLINE ssize_t fdv_dgram_recv(struct fid_ep *ep_fid, void *buf, size_t len,
				  void *desc, fi_addr_t src_addr, void *context)
{
	struct fdv_dgram_ep *d = fdv_dgram_of(ep_fid);
	uint32_t full = FDV_DGRAM_PREFIX + d->max_msg;
	struct ibv_recv_wr wr;
	struct ibv_sge sge;

	(void)src_addr;	/* no FI_DIRECTED_RECV: every source matches */
	if (fdv_unlikely(len < full || !buf || !desc))
		return fdv_dgram_recv_short(d, buf, len, desc, context);
	sge.addr = (uintptr_t)buf;
	sge.length = full;	/* no datagram is longer */
	sge.lkey = fdv_desc_lkey(desc);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return fdv_dgram_post_recv(d, &wr, buf, context, 0);
}

FDV_EXTERN_C_END

#endif /* FDV_DGRAM_H */
