/* RDM endpoints' eager data path: fi_send, fi_tsend, fi_inject,
 * fi_tinject and fi_recv, fi_trecv on an RDM endpoint, the ops tables'
 * entries in both builds (fdm_msg.c). Private to the library.
 *
 * The common case is a short straight line: a send of up to the eager
 * limit to a peer whose connection is up and has nothing queued takes a
 * transmit request, writes the header into its bounce buffer and posts
 * the connection's prebuilt work request (struct fdm_conn's wr) through
 * the verbs endpoint's inline post: header and payload as two inline
 * SGEs when they fit the inline size (no copy of the payload here), else
 * both copied into the bounce buffer (the layer contract,
 * prov_verbs/layer/fdv_layer.h, lets it use the inline verbs calls); a
 * receive with nothing in the unexpected queue takes a receive slot and
 * joins the posted list. Everything else (no connection yet, rendezvous
 * sizes, unexpected messages to match, FI_THREAD_SAFE domains, errors)
 * goes to the library, out of line, which does it under the domain lock.
 * The wire format is docs/rdm-protocol.md's. */
#ifndef FDM_MSG_H
#define FDM_MSG_H

#include <string.h>
#include <rdma/fi_endpoint.h>
#include <fdv/fdv_ep.h>
#include "fdm_ep.h"

/* fdm_send_slow's mode */
#define FDM_SEND_TAGGED	1u
#define FDM_SEND_INJECT	2u

/* Out of line: the general send and receive (under the domain lock), and
 * a post the verbs endpoint refused (-FI_EAGAIN: queued in order; else an
 * error completion). */
ssize_t fdm_send_slow(struct fid_ep *ep, const void *buf, size_t len,
				 void *desc, fi_addr_t dest, uint64_t tag, void *context,
				 unsigned int mode);
ssize_t fdm_recv_slow(struct fid_ep *ep, void *buf, size_t len, void *desc,
				 fi_addr_t src, uint64_t tag, uint64_t ignore,
				 void *context, int tagged);
FDV_COLD ssize_t fdm_tx_post_failed(struct fdm_ep *ep, struct fdm_tx *tx,
					       ssize_t ret);

FDV_INLINE uint32_t fdm_be32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

FDV_INLINE uint64_t fdm_be64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

/* The 32-byte header (big endian) of an eager message with no remote CQ
 * data: version, op, flags 0, zero, the receiver's connection id, tag,
 * data 0, payload length. */
FDV_INLINE void fdm_hdr_put_eager(uint8_t *p, uint8_t op, uint32_t conn_id,
				  uint64_t tag, uint64_t len)
{
	uint32_t w0 = fdm_be32((uint32_t)FDM_PROTO_VERSION << 24 | (uint32_t)op << 16);
	uint32_t id = fdm_be32(conn_id);
	uint64_t t = fdm_be64(tag), z = 0, l = fdm_be64(len);

	memcpy(p, &w0, 4);
	memcpy(p + 4, &id, 4);
	memcpy(p + 8, &t, 8);
	memcpy(p + 16, &z, 8);
	memcpy(p + 24, &l, 8);
}

FDV_INLINE ssize_t fdm_send_inline(struct fid_ep *ep_fid, const void *buf,
				   size_t len, void *desc, fi_addr_t dest,
				   uint64_t tag, void *context,
				   const unsigned int mode)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	/* an inject may overdraw the credits (FDM_CREDIT_OVERDRAFT); mode
	 * is a constant, so this stays one signed compare */
	const int32_t credit_floor = (mode & FDM_SEND_INJECT) ? -FDM_CREDIT_OVERDRAFT : 0;
	struct fdm_conn *c;
	struct fdm_tx *tx;
	struct fdv_ep *vep;
	ssize_t ret;

	/* the connection cached for dest, valid while the AV has not
	 * changed since */
	if (fdv_unlikely(!ep->tx_fast || dest >= ep->by_addr_cap ||
			 ep->by_addr_gen != *ep->av_gen))
		goto slow;
	c = ep->by_addr[dest];
	/* no credit left (down to the overdraft for an inject): the
	 * library looks for more, and queues a send with a completion or
	 * says -FI_EAGAIN to an inject if none came back */
	if (fdv_unlikely(!c || !c->tx_vep || c->tx_credits <= credit_floor ||
			 ep->tx_nfree <= ep->tx_reserve))
		goto slow;
	if (fdv_unlikely(len > ((mode & FDM_SEND_INJECT) ? ep->inject_size : FDM_EAGER_MAX) ||
			 (!buf && len)))
		goto slow;
	tx = &ep->txs[ep->tx_free[--ep->tx_nfree]];
	tx->in_use = true;
	tx->rts_done = false;
	tx->done_rcvd = false;
	tx->gen++;
	tx->kind = FDM_TX_EAGER;
	tx->cntr = FDM_CNTR_SEND;
	tx->report = (mode & FDM_SEND_INJECT) ? false : ep->tx_report;
	tx->context = context;
	tx->cq_flags = ((mode & FDM_SEND_TAGGED) ? FI_TAGGED : FI_MSG) | FI_SEND;
	tx->len = len;
	tx->conn = c;
	tx->vep = c->tx_vep;
	tx->wire_len = (uint32_t)(FDM_HDR_LEN + len);
	fdm_hdr_put_eager(tx->buf, (mode & FDM_SEND_TAGGED) ? FDM_OP_EAGER_TAG :
			  FDM_OP_EAGER_MSG, c->remote_id,
			  (mode & FDM_SEND_TAGGED) ? tag : 0, len);
	vep = fdv_ep_of(c->tx_vep);
	c->tx_credits--;	/* given back if the post fails */
	c->sge[0].addr = (uintptr_t)tx->buf;
	if (fdv_likely(FDM_HDR_LEN + len <= vep->inject_size)) {
		/* header and payload inline, the payload read where it is
		 * (the device copies both at the post) */
		c->sge[0].length = FDM_HDR_LEN;
		c->sge[1].addr = (uintptr_t)buf;
		c->sge[1].length = (uint32_t)len;
		c->wr.num_sge = len ? 2 : 1;
		ret = fdv_ep_post_send_flags(vep, &c->wr, IBV_SEND_INLINE, FDV_COMP_EP, tx);
		if (fdv_unlikely(ret)) {
			/* a retry sends tx->buf: the whole message there */
			if (len)
				memcpy(tx->buf + FDM_HDR_LEN, buf, len);
			return fdm_tx_post_failed(ep, tx, ret);
		}
		return 0;
	}
	memcpy(tx->buf + FDM_HDR_LEN, buf, len);
	c->sge[0].length = (uint32_t)(FDM_HDR_LEN + len);
	c->wr.num_sge = 1;
	ret = fdv_ep_post_send_flags(vep, &c->wr, 0, FDV_COMP_EP, tx);
	if (fdv_unlikely(ret))
		return fdm_tx_post_failed(ep, tx, ret);
	return 0;
slow:
	return fdm_send_slow(ep_fid, buf, len, desc, dest, tag, context, mode);
}

FDV_INLINE ssize_t fdm_recv_inline(struct fid_ep *ep_fid, void *buf, size_t len,
				   void *desc, fi_addr_t src, uint64_t tag,
				   uint64_t ignore, void *context,
				   const int tagged)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);
	struct fdm_node *unexp = tagged ? &ep->unexp_tag : &ep->unexp_msg;
	struct fdm_rx *rx;

	/* an unexpected message may match: the library looks */
	if (fdv_unlikely(!ep->rx_fast || unexp->next != unexp || !ep->rx_nfree))
		return fdm_recv_slow(ep_fid, buf, len, desc, src, tag, ignore,
				     context, tagged);
	rx = &ep->rxs[ep->rx_free[--ep->rx_nfree]];
	rx->multi = false;
	rx->used = 0;
	rx->in_use = true;
	rx->count = 1;
	rx->iov[0].iov_base = buf;
	rx->iov[0].iov_len = len;
	rx->desc[0] = desc;
	rx->src = src;
	rx->tag = tag;
	rx->ignore = ignore;
	rx->context = context;
	rx->op_flags = ep->rx_op_flags;
	rx->tagged = tagged;
	fdm_list_add_tail(tagged ? &ep->posted_tag : &ep->posted_msg, &rx->node);
	return 0;
}

/* The calls, with exactly the fi_* signatures (the ops tables'). */
FDV_INLINE ssize_t fdm_fast_send(struct fid_ep *ep, const void *buf, size_t len,
				 void *desc, fi_addr_t dest_addr, void *context)
{
	return fdm_send_inline(ep, buf, len, desc, dest_addr, 0, context, 0);
}

FDV_INLINE ssize_t fdm_fast_tsend(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, fi_addr_t dest_addr,
				  uint64_t tag, void *context)
{
	return fdm_send_inline(ep, buf, len, desc, dest_addr, tag, context,
			       FDM_SEND_TAGGED);
}

FDV_INLINE ssize_t fdm_fast_inject(struct fid_ep *ep, const void *buf,
				   size_t len, fi_addr_t dest_addr)
{
	return fdm_send_inline(ep, buf, len, NULL, dest_addr, 0, NULL,
			       FDM_SEND_INJECT);
}

FDV_INLINE ssize_t fdm_fast_tinject(struct fid_ep *ep, const void *buf,
				    size_t len, fi_addr_t dest_addr,
				    uint64_t tag)
{
	return fdm_send_inline(ep, buf, len, NULL, dest_addr, tag, NULL,
			       FDM_SEND_INJECT | FDM_SEND_TAGGED);
}

FDV_INLINE ssize_t fdm_fast_recv(struct fid_ep *ep, void *buf, size_t len,
				 void *desc, fi_addr_t src_addr, void *context)
{
	return fdm_recv_inline(ep, buf, len, desc, src_addr, 0, 0, context, 0);
}

FDV_INLINE ssize_t fdm_fast_trecv(struct fid_ep *ep, void *buf, size_t len,
				  void *desc, fi_addr_t src_addr, uint64_t tag,
				  uint64_t ignore, void *context)
{
	return fdm_recv_inline(ep, buf, len, desc, src_addr, tag, ignore,
			       context, 1);
}

#endif /* FDM_MSG_H */
