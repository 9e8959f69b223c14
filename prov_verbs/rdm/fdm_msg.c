/* Messages and tagged messages on RDM endpoints: the fi_msg and fi_tagged
 * tables, matching against posted receives and the unexpected queue,
 * eager copy through the pool, and the rendezvous (the receiver reads the
 * sender's buffer, then says "done"). docs/rdm-protocol.md. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fdm.h"
#include "fdm_msg.h"

#define FDM_SEND_FLAGS (FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_INJECT | \
			FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
			FI_DELIVERY_COMPLETE | FI_MORE | FI_FENCE | FI_TAGGED | \
			FI_MSG)
#define FDM_RECV_FLAGS (FI_COMPLETION | FI_MORE | FI_PEEK | FI_CLAIM | \
			FI_DISCARD | FI_MULTI_RECV | FI_TAGGED | FI_MSG)

static size_t fdm_iov_len(const struct iovec *iov, size_t count)
{
	size_t len = 0;

	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

/* Copy len bytes of src into the iovs; returns what fit. */
static size_t fdm_scatter(const struct iovec *iov, size_t count,
			  const uint8_t *src, size_t len)
{
	size_t done = 0;

	for (size_t i = 0; i < count && done < len; i++) {
		size_t n = iov[i].iov_len < len - done ? iov[i].iov_len : len - done;

		memcpy(iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
}

/* ---- completions ---- */

static bool fdm_rx_wants(struct fdm_ep *ep, uint64_t op_flags)
{
	return !(ep->rx_cq_flags & FI_SELECTIVE_COMPLETION) || (op_flags & FI_COMPLETION);
}

static void fdm_rx_put(struct fdm_ep *ep, struct fdm_rx *rx)
{
	rx->in_use = false;
	ep->rx_free[ep->rx_nfree++] = (uint32_t)(rx - ep->rxs);
}

static FDV_COLD void fdm_complete_recv_err(struct fdm_ep *ep, void *context,
					    uint64_t flags, size_t total, size_t cap,
					    uint64_t tag, uint64_t data, int err)
{
	fdm_count(ep, FDM_CNTR_RECV, 1);
	/* errors are reported whatever the selective completion */
	fdm_cq_write_err(ep->rx_cq, context, flags, err ? err : FI_ETRUNC, 0,
			 total > cap ? cap : total, total > cap ? total - cap : 0,
			 data, tag);
}

/* Inline: the eager receive's straight line ends here, and a call with
 * its ten arguments cost more than the stores it makes. */
FDV_INLINE void fdm_complete_recv(struct fdm_ep *ep, void *context, uint64_t op_flags,
				  uint64_t flags, size_t total, size_t cap, uint64_t tag,
				  uint64_t data, struct fdm_conn *conn, void *buf, int err)
{
	if (fdv_unlikely(err || total > cap)) {
		fdm_complete_recv_err(ep, context, flags, total, cap, tag, data, err);
		return;
	}
	fdm_count(ep, FDM_CNTR_RECV, 0);
	if (fdm_rx_wants(ep, op_flags))
		fdm_cq_write(ep->rx_cq, context, flags, total, buf, data, tag,
			     fdm_conn_src(conn));
}

void fdm_handle_tx_done(struct fdm_ep *ep, struct fdm_tx *tx, int err)
{
	if (err && err != FI_ECANCELED && tx->conn && tx->vep &&
	    tx->conn->vep == tx->vep) {
		/* an RC send failed: the connection is gone (retries
		 * exhausted), and everything else on it with it */
		tx->vep = NULL;
		fdm_conn_fail(tx->conn, FI_EIO);
	}
	switch (tx->kind) {
	case FDM_TX_RNDV:
		if (!err && !tx->rts_done) {
			tx->rts_done = true;
			if (!tx->done_rcvd)
				return;		/* the peer is still reading */
		}
		if (!err && tx->done_status) {
			/* the receiver could not read the data */
			fdm_count(ep, tx->cntr, 1);
			fdm_cq_write_err(ep->tx_cq, tx->context, tx->cq_flags, FI_EIO,
					 tx->done_status, 0, 0, 0, 0);
			fdm_tx_put(ep, tx);
			return;
		}
		/* fall through */
	case FDM_TX_EAGER:
		if (err) {
			fdm_count(ep, tx->cntr, 1);
			fdm_cq_write_err(ep->tx_cq, tx->context, tx->cq_flags, err, 0,
					 0, 0, 0, 0);
			fdm_tx_put(ep, tx);
		} else {
			fdm_eager_sent(ep, tx);
		}
		return;
	case FDM_TX_RMA:
		fdm_handle_rma_done(ep, tx, err);
		return;
	case FDM_TX_ATOMIC:
		fdm_atomic_tx_done(ep, tx, err);
		return;
	default:
		fdm_tx_put(ep, tx);
		return;
	}
}

/* ---- sends ---- */

static ssize_t fdm_send_common(struct fdm_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest,
			       uint64_t tag, uint64_t data, uint64_t flags,
			       void *context, bool tagged)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_hdr h = { .tag = tag, .data = data };
	struct fdm_conn *conn;
	struct fdm_tx *tx;
	size_t len;
	int err = 0;
	/* FI_DELIVERY_COMPLETE: an eager message waits for the receiver's
	 * "done" (FDM_HF_ACK); a rendezvous does anyway. An inject reports
	 * no completion, so it has nothing to wait for. */
	bool ack = (flags & (FI_DELIVERY_COMPLETE | FI_INJECT)) == FI_DELIVERY_COMPLETE;
	size_t eager_max = ack ? FDM_EAGER_MAX - FDM_ACK_ID_LEN : FDM_EAGER_MAX;

	(void)desc;
	if (fdv_unlikely(count > FDM_IOV_LIMIT || (count && !iov)))
		return -FI_EINVAL;
	len = fdm_iov_len(iov, count);
	if (fdv_unlikely(len > FDM_MAX_MSG_SIZE))
		return -FI_EMSGSIZE;
	if (fdv_unlikely((flags & FI_INJECT) && len > ep->info->tx_attr->inject_size))
		return -FI_EMSGSIZE;
	fdm_lock(d);
	if (fdv_unlikely(!ep->enabled)) {
		fdm_unlock(d);
		return -FI_EOPBADSTATE;
	}
	conn = fdm_conn_for_addr(ep, dest, &err);
	if (fdv_unlikely(!conn)) {
		fdm_unlock(d);
		return err;
	}
	/* FI_FENCE: an RDMA read or a fetching atomic ahead of this message
	 * may still be writing the buffer it carries, which an eager send
	 * copies now and a rendezvous lets the peer read later; so the
	 * message waits (-FI_EAGAIN) until nothing of the kind is out. */
	if (fdv_unlikely(flags & FI_FENCE) && fdm_conn_fence_busy(conn)) {
		fdm_ep_progress(ep);
		if (fdm_conn_fence_busy(conn)) {
			fdm_unlock(d);
			return -FI_EAGAIN;
		}
	}
	tx = fdm_tx_get_app(ep);
	if (fdv_unlikely(!tx)) {
		fdm_ep_progress(ep);
		tx = fdm_tx_get_app(ep);
		if (!tx) {
			fdm_unlock(d);
			return -FI_EAGAIN;
		}
	}
	tx->context = context;
	tx->cq_flags = (tagged ? FI_TAGGED : FI_MSG) | FI_SEND;
	tx->report = !(flags & FI_INJECT) &&
		(!(ep->tx_cq_flags & FI_SELECTIVE_COMPLETION) || (flags & FI_COMPLETION));
	tx->cntr = FDM_CNTR_SEND;
	tx->len = len;
	h.flags = (flags & FI_REMOTE_CQ_DATA) ? FDM_HF_DATA : 0;
	h.size = len;
	if (len <= eager_max) {
		uint8_t *p = tx->buf + FDM_HDR_LEN;

		h.op = tagged ? FDM_OP_EAGER_TAG : FDM_OP_EAGER_MSG;
		if (ack) {
			h.flags |= FDM_HF_ACK;
			h.ack_id = (uint64_t)tx->gen << 32 | tx->idx;
			p += FDM_ACK_ID_LEN;
		}
		fdm_hdr_encode(tx->buf, &h);
		for (size_t i = 0; i < count; i++) {
			if (iov[i].iov_len)
				memcpy(p, iov[i].iov_base, iov[i].iov_len);
			p += iov[i].iov_len;
		}
		/* with the ack: complete on the send completion and the
		 * "done" both, as a rendezvous does */
		tx->kind = ack ? FDM_TX_RNDV : FDM_TX_EAGER;
		tx->wire_len = (uint32_t)(p - tx->buf);
	} else {
		struct fdm_rndv_info ri;
		uint32_t n = 0;

		ri.req_id = (uint64_t)tx->gen << 32 | tx->idx;
		tx->kind = FDM_TX_RNDV;	/* before registering: fdm_tx_put closes */
		for (size_t i = 0; i < count; i++) {
			int ret;

			if (!iov[i].iov_len)
				continue;
			ret = fi_mr_reg(d->vdomain, iov[i].iov_base, iov[i].iov_len,
					FI_REMOTE_READ, 0, 0, 0, &tx->mr[n], NULL);
			if (ret) {
				fdm_tx_put(ep, tx);
				fdm_unlock(d);
				return ret;
			}
			ri.iov[n].addr = (uint64_t)(uintptr_t)iov[i].iov_base;
			ri.iov[n].len = iov[i].iov_len;
			ri.iov[n].key = (uint32_t)fi_mr_key(tx->mr[n]);
			n++;
		}
		ri.count = n;
		h.op = tagged ? FDM_OP_RNDV_TAG : FDM_OP_RNDV_MSG;
		fdm_hdr_encode(tx->buf, &h);
		tx->kind = FDM_TX_RNDV;
		tx->wire_len = (uint32_t)(FDM_HDR_LEN + fdm_rndv_encode(tx->buf + FDM_HDR_LEN, &ri));
	}
	if (fdv_unlikely(!tx->report && tx->kind == FDM_TX_EAGER)) {
		/* nothing will come back for it: on the wire now, or the
		 * caller retries */
		ssize_t ret = fdm_conn_send_unreported(ep, conn, tx);

		fdm_unlock(d);
		return ret;
	}
	fdm_conn_submit(conn, tx);
	fdm_unlock(d);
	return 0;
}

/* What the eager calls (fdm_msg.h) leave to the general path: fi_send,
 * fi_tsend, fi_inject, fi_tinject in every case but an eager send to a
 * connected peer with nothing queued. */
ssize_t fdm_send_slow(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, uint64_t tag, void *context, unsigned int mode)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct fdm_ep *e = fdm_ep_of(ep);

	if (mode & FDM_SEND_INJECT)
		return fdm_send_common(e, &iov, NULL, 1, dest, tag, 0, FI_INJECT, NULL,
				       (mode & FDM_SEND_TAGGED) != 0);
	return fdm_send_common(e, &iov, &desc, 1, dest, tag, 0, e->tx_op_flags, context,
			       (mode & FDM_SEND_TAGGED) != 0);
}

static ssize_t fdm_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t dest, void *context)
{
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_send_common(e, iov, desc, count, dest, 0, 0, e->tx_op_flags, context, false);
}

static ssize_t fdm_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_SEND_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_send_common(fdm_ep_of(ep), msg->msg_iov, msg->desc, msg->iov_count,
			       msg->addr, 0, msg->data, flags, msg->context, false);
}

static ssize_t fdm_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_send_common(e, &iov, &desc, 1, dest, 0, data,
			       e->tx_op_flags | FI_REMOTE_CQ_DATA, context, false);
}

static ssize_t fdm_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_send_common(fdm_ep_of(ep), &iov, NULL, 1, dest, 0, data,
			       FI_INJECT | FI_REMOTE_CQ_DATA, NULL, false);
}

static ssize_t fdm_tsendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t dest, uint64_t tag, void *context)
{
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_send_common(e, iov, desc, count, dest, tag, 0, e->tx_op_flags, context, true);
}

static ssize_t fdm_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_SEND_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_send_common(fdm_ep_of(ep), msg->msg_iov, msg->desc, msg->iov_count,
			       msg->addr, msg->tag, msg->data, flags, msg->context, true);
}

static ssize_t fdm_tsenddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_send_common(e, &iov, &desc, 1, dest, tag, data,
			       e->tx_op_flags | FI_REMOTE_CQ_DATA, context, true);
}

static ssize_t fdm_tinjectdata(struct fid_ep *ep, const void *buf, size_t len,
			       uint64_t data, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_send_common(fdm_ep_of(ep), &iov, NULL, 1, dest, tag, data,
			       FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

/* ---- rendezvous, receiver side ---- */

static void fdm_rndv_start(struct fdm_ep *ep, struct fdm_conn *conn,
			   const struct iovec *iov, void **desc, size_t count,
			   void *context, uint64_t op_flags, uint64_t flags,
			   uint64_t tag, uint64_t data, uint64_t size,
			   const struct fdm_rndv_info *ri, void *buf)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_rndv *rv = calloc(1, sizeof(*rv));
	size_t cap = fdm_iov_len(iov, count);

	if (!rv) {
		fdm_complete_recv(ep, context, op_flags, flags, 0, 0, tag, data, conn,
				  NULL, FI_ENOMEM);
		return;
	}
	rv->conn = conn;
	rv->rinfo = *ri;
	if (!conn->vep)
		rv->err = FI_ECONNRESET;	/* its sender is gone */
	rv->count = count;
	memcpy(rv->iov, iov, count * sizeof(*iov));
	rv->total = size < cap ? size : cap;
	rv->olen = size - rv->total;
	rv->context = context;
	rv->buf = buf;
	rv->cq_flags = flags;
	rv->op_flags = op_flags;
	rv->tag = tag;
	rv->data = data;
	for (size_t i = 0; i < count && !rv->err; i++) {
		int ret;

		if (!iov[i].iov_len)
			continue;
		if (desc && desc[i]) {
			rv->desc[i] = desc[i];
			continue;
		}
		ret = fi_mr_reg(d->vdomain, iov[i].iov_base, iov[i].iov_len, FI_READ,
				0, 0, 0, &rv->mr[i], NULL);
		if (ret) {
			rv->err = -ret;
			break;
		}
		rv->desc[i] = fi_mr_desc(rv->mr[i]);
	}
	fdm_list_add_tail(&ep->rndv_active, &rv->node);
	ep->work = 1;
	fdm_rndv_pump(ep);
}

static bool fdm_send_done(struct fdm_ep *ep, struct fdm_rndv *rv, int status)
{
	struct fdm_hdr h = { .op = FDM_OP_RNDV_DONE, .tag = rv->rinfo.req_id,
			     .data = (uint64_t)(uint32_t)status };
	struct fdm_tx *tx = fdm_tx_get(ep);

	if (!tx)
		return false;
	fdm_hdr_encode(tx->buf, &h);
	tx->kind = FDM_TX_CTRL;
	tx->wire_len = FDM_HDR_LEN;
	fdm_conn_submit(rv->conn, tx);
	return true;
}

/* Tell an FI_DELIVERY_COMPLETE sender its eager message was taken in:
 * the rendezvous "done" with the id it sent. false: no transmit request
 * free (fdm_owe_ack keeps it for later). */
bool fdm_send_ack(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t req_id)
{
	struct fdm_hdr h = { .op = FDM_OP_RNDV_DONE, .tag = req_id };
	struct fdm_tx *tx;

	/* a connection that broke since: the sender's operation fails with
	 * it, and a new connection must not be made for the answer */
	if (conn->state != FDM_C_CONNECTED && conn->state != FDM_C_ACCEPTING)
		return true;
	tx = fdm_tx_get(ep);
	if (!tx)
		return false;
	fdm_hdr_encode(tx->buf, &h);
	tx->kind = FDM_TX_CTRL;
	tx->wire_len = FDM_HDR_LEN;
	fdm_conn_submit(conn, tx);
	return true;
}

static void fdm_rndv_finish(struct fdm_ep *ep, struct fdm_rndv *rv)
{
	fdm_list_del(&rv->node);
	for (size_t i = 0; i < rv->count; i++)
		if (rv->mr[i])
			fi_close(&rv->mr[i]->fid);
	fdm_complete_recv(ep, rv->context, rv->op_flags, rv->cq_flags,
			  rv->total + rv->olen, rv->err ? 0 : rv->total, rv->tag,
			  rv->data, rv->conn, rv->buf, rv->err);
	free(rv);
}

/* A rendezvous that failed, once its reads are all back. The sender
 * holds its send until it hears from us: on a connection that still
 * works (the failure was ours before any read failed on it: a buffer
 * that cannot be registered, a read the device refused to post) a done
 * carrying the status tells it; a failed connection told it by its
 * disconnect (fdm_conn_fail). */
static void fdm_rndv_fail_finish(struct fdm_ep *ep, struct fdm_rndv *rv)
{
	struct fdm_conn *c = rv->conn;

	if (rv->inflight)
		return;
	if (!rv->done_sent && c->vep && c->state == FDM_C_CONNECTED &&
	    (!rv->vep || rv->vep == c->vep)) {
		if (!fdm_send_done(ep, rv, rv->err))
			return;		/* no transmit request: next round */
		rv->done_sent = true;
	}
	fdm_rndv_finish(ep, rv);
}

/* Post the reads that can go, finish what is read. */
void fdm_rndv_pump(struct fdm_ep *ep)
{
	struct fdm_node *n = ep->rndv_active.next;
	size_t max = ep->domain->core_max_msg;

	while (n != &ep->rndv_active) {
		struct fdm_rndv *rv = fdm_entry(n, struct fdm_rndv, node);

		n = n->next;
		if (rv->err) {
			fdm_rndv_fail_finish(ep, rv);
			continue;
		}
		if (rv->conn->state != FDM_C_CONNECTED)
			continue;
		while (rv->posted < rv->total) {
			/* where offset `posted` is on both sides */
			size_t off = rv->posted, li = 0, lo = off, ri = 0, ro = off, chunk;
			ssize_t ret;

			while (li < rv->count && lo >= rv->iov[li].iov_len)
				lo -= rv->iov[li++].iov_len;
			while (ri < rv->rinfo.count && ro >= rv->rinfo.iov[ri].len)
				ro -= rv->rinfo.iov[ri++].len;
			if (li == rv->count || ri == rv->rinfo.count)
				break;
			chunk = rv->iov[li].iov_len - lo;
			if (rv->rinfo.iov[ri].len - ro < chunk)
				chunk = rv->rinfo.iov[ri].len - ro;
			if (rv->total - off < chunk)
				chunk = rv->total - off;
			if (chunk > max)
				chunk = max;
			ret = fi_read(rv->conn->vep, (uint8_t *)rv->iov[li].iov_base + lo, chunk,
				      rv->desc[li], 0, rv->rinfo.iov[ri].addr + ro,
				      rv->rinfo.iov[ri].key, rv);
			if (ret == -FI_EAGAIN)
				break;
			if (ret) {
				rv->err = (int)-ret;
				break;
			}
			rv->vep = rv->conn->vep;
			rv->inflight++;
			rv->posted += chunk;
		}
		if (rv->err) {
			fdm_rndv_fail_finish(ep, rv);
			continue;
		}
		if (rv->posted == rv->total && !rv->inflight) {
			if (!rv->done_sent) {
				if (!fdm_send_done(ep, rv, 0))
					continue;	/* no bounce buffer: next round */
				rv->done_sent = true;
			}
			fdm_rndv_finish(ep, rv);
		}
	}
}

void fdm_handle_rndv_read(struct fdm_ep *ep, struct fdm_rndv *rv, int err)
{
	(void)ep;
	rv->inflight--;
	if (!err)
		return;
	if (!rv->err)
		rv->err = err;
	/* A read that failed (not one flushed behind another failure) left
	 * its QP in error: nothing more goes on that connection, a done
	 * included, and the sender would wait for ever. Failing the
	 * connection disconnects it, which the sender sees and fails its
	 * send on. */
	if (err != FI_ECANCELED && rv->vep && rv->conn->vep == rv->vep)
		fdm_conn_fail(rv->conn, FI_EIO);
}

void fdm_rndv_fail_conn(struct fdm_ep *ep, struct fdm_conn *c, int err)
{
	for (struct fdm_node *n = ep->rndv_active.next; n != &ep->rndv_active; n = n->next) {
		struct fdm_rndv *rv = fdm_entry(n, struct fdm_rndv, node);

		if (rv->conn == c && !rv->err)
			rv->err = err;
	}
}

/* ---- receives ---- */

/* A directed receive names its peer by any of the peer's AV entries: one
 * process may be inserted more than once (Open MPI inserts a process again
 * when it joins an intercommunicator, and then receives from the new
 * fi_addr_t), while a connection reports the first entry as its source. */
static bool fdm_src_ok_directed(struct fdm_ep *ep, fi_addr_t want,
				struct fdm_conn *conn)
{
	const struct fdm_name *name;

	if (fdm_conn_src(conn) == want)
		return true;
	name = fdm_av_name(ep->av, want);
	return name && fdm_name_eq(name, &conn->peer);
}

/* Inline for the matching loop: a receive from any source costs two
 * tests, a directed one goes out of line. */
FDV_INLINE bool fdm_src_ok(struct fdm_ep *ep, fi_addr_t want, struct fdm_conn *conn)
{
	return !ep->directed || want == FI_ADDR_UNSPEC ||
		fdm_src_ok_directed(ep, want, conn);
}

/* Inline: one loop the eager receive runs for every message. */
FDV_INLINE struct fdm_rx *fdm_match_posted(struct fdm_ep *ep, bool tagged,
					   struct fdm_conn *conn, uint64_t tag)
{
	struct fdm_node *h = tagged ? &ep->posted_tag : &ep->posted_msg;
	/* an FI_COLLECTIVE endpoint's bit 63 is never ignored (fdm_coll.c) */
	uint64_t keep = fdm_coll_ignore_mask(ep);

	for (struct fdm_node *n = h->next; n != h; n = n->next) {
		struct fdm_rx *rx = fdm_entry(n, struct fdm_rx, node);

		if (tagged && ((rx->tag ^ tag) & ~(rx->ignore & keep)))
			continue;
		if (!fdm_src_ok(ep, rx->src, conn))
			continue;
		return rx;
	}
	return NULL;
}

/* Where a message of size bytes lands in a matched receive: the receive's
 * own iovs, or for FI_MULTI_RECV the next slice of its buffer. Returns
 * whether the receive is used up (then it leaves the posted list). */
struct fdm_slice {
	const struct iovec *iov;
	size_t count;
	struct iovec one;
	void *buf;
	uint64_t flags;
};

static bool fdm_rx_slice(struct fdm_ep *ep, struct fdm_rx *rx, size_t size,
			 struct fdm_slice *sl)
{
	size_t cap, n;

	sl->buf = NULL;
	sl->flags = 0;
	if (!rx->multi) {
		sl->iov = rx->iov;
		sl->count = rx->count;
		return true;
	}
	cap = rx->iov[0].iov_len;
	n = size < cap - rx->used ? size : cap - rx->used;
	sl->one.iov_base = (uint8_t *)rx->iov[0].iov_base + rx->used;
	sl->one.iov_len = cap - rx->used;
	sl->iov = &sl->one;
	sl->count = 1;
	sl->buf = sl->one.iov_base;
	rx->used += n;
	if (cap - rx->used < ep->min_multi_recv) {
		sl->flags = FI_MULTI_RECV;
		return true;
	}
	return false;
}

/* Straight onto the shared receive context's SRQ (the layer contract,
 * fdv_layer.h): what fi_recv on it does after an ops-table call and its
 * no-QP branch, with the request built here. */
void fdm_repost(struct fdm_ep *ep, struct fdm_rxbuf *rb)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rb->buf, .length = FDM_BUF_SIZE,
		.lkey = fdv_desc_lkey(ep->vdesc),
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uintptr_t)rb, .sg_list = &sge, .num_sge = 1,
	}, *bad;
	int ret = ibv_post_srq_recv(fdv_ep_of(ep->vsrx)->srq, &wr, &bad);

	if (fdv_unlikely(ret))
		FD_WARN(FD_LOG_EP_DATA, "reposting an eager buffer: %s (the pool shrinks)",
			strerror(ret));
}

static void fdm_handle_done(struct fdm_ep *ep, struct fdm_conn *conn, uint64_t id,
			    uint64_t status)
{
	uint32_t idx = (uint32_t)id, gen = (uint32_t)(id >> 32);
	struct fdm_tx *tx;

	if (idx >= ep->ntx) {
		FD_WARN(FD_LOG_EP_DATA, "rendezvous done for an unknown request: dropped");
		return;
	}
	tx = &ep->txs[idx];
	if (!tx->in_use || tx->kind != FDM_TX_RNDV || tx->gen != gen || tx->conn != conn ||
	    tx->done_rcvd) {
		FD_WARN(FD_LOG_EP_DATA, "rendezvous done for an unknown request: dropped");
		return;
	}
	tx->done_rcvd = true;
	/* the receiver's status (decode kept it below 2^32): any nonzero
	 * one fails the send; kept as prov_errno, clamped to its field */
	if (status)
		tx->done_status = status > UINT16_MAX ? UINT16_MAX : (uint16_t)status;
	if (tx->rts_done)
		fdm_handle_tx_done(ep, tx, 0);
}

/* The commonest message: eager, no remote CQ data, no acknowledgement,
 * on a known connection, for a posted receive that is not FI_MULTI_RECV.
 * The header's checks are fdm_hdr_decode's for that case (flags 0, the
 * length the payload's; the length is at most the eager limit since the
 * pool buffer is that big). Returns false, having changed nothing, for
 * anything else: the general path below decodes and matches again. */
static inline bool fdm_recv_eager_fast(struct fdm_ep *ep, struct fdm_rxbuf *rb,
				       size_t len)
{
	const uint8_t *p = rb->buf;
	uint32_t w0, id;
	uint64_t tag, data, size;
	struct fdm_conn *conn;
	struct fdm_rx *rx;
	size_t cap;
	bool tagged;

	memcpy(&w0, p, 4);
	if (w0 == fdm_be32((uint32_t)FDM_PROTO_VERSION << 24 | (uint32_t)FDM_OP_EAGER_TAG << 16))
		tagged = true;
	else if (w0 == fdm_be32((uint32_t)FDM_PROTO_VERSION << 24 |
				(uint32_t)FDM_OP_EAGER_MSG << 16))
		tagged = false;
	else
		return false;
	memcpy(&size, p + 24, 8);
	size = fdm_be64(size);
	if (fdv_unlikely(len < FDM_HDR_LEN || size != len - FDM_HDR_LEN))
		return false;
	memcpy(&id, p + 4, 4);
	conn = fdm_conn_by_id(ep, fdm_be32(id));
	if (fdv_unlikely(!conn))
		return false;
	memcpy(&tag, p + 8, 8);
	tag = fdm_be64(tag);
	rx = fdm_match_posted(ep, tagged, conn, tag);
	if (!rx || rx->multi)
		return false;
	memcpy(&data, p + 16, 8);
	fdm_list_del(&rx->node);
	if (fdv_likely(rx->count == 1)) {
		size_t n;

		cap = rx->iov[0].iov_len;
		n = size < cap ? size : cap;
		/* a zero-byte receive may have no buffer at all: memcpy's
		 * pointers must be valid even for length 0 */
		if (fdv_likely(n))
			memcpy(rx->iov[0].iov_base, p + FDM_HDR_LEN, n);
	} else {
		cap = fdm_iov_len(rx->iov, rx->count);
		fdm_scatter(rx->iov, rx->count, p + FDM_HDR_LEN, size);
	}
	fdm_complete_recv(ep, rx->context, rx->op_flags,
			  (tagged ? FI_TAGGED : FI_MSG) | FI_RECV, size, cap,
			  tagged ? tag : 0, fdm_be64(data), conn, NULL, 0);
	fdm_rx_put(ep, rx);
	fdm_repost(ep, rb);
	fdm_credit_freed(conn);
	return true;
}

void fdm_handle_recv(struct fdm_ep *ep, struct fdm_rxbuf *rb, size_t len)
{
	struct fdm_hdr h;
	struct fdm_conn *conn;
	struct fdm_rx *rx;
	bool tagged;
	uint64_t flags;

	/* rb is a pool buffer: receives complete only from the layer's
	 * own SRQ, which holds nothing else (fdm_is_rxbuf) */
	if (fdv_likely(fdm_recv_eager_fast(ep, rb, len)))
		return;
	if (fdv_unlikely(fdm_hdr_decode(&h, rb->buf, len, FDM_EAGER_MAX))) {
		FD_WARN(FD_LOG_EP_DATA, "malformed RDM message (%zu bytes): dropped", len);
		if (len >= FDM_HDR_LEN && (conn = fdm_conn_by_id(ep, h.conn_id)) &&
		    conn->vep)
			fdm_conn_fail(conn, FI_EIO);
		fdm_repost(ep, rb);
		return;
	}
	/* A connection that failed since still delivers what arrived on it
	 * before (a peer's last messages, then its disconnect). */
	conn = fdm_conn_by_id(ep, h.conn_id);
	if (fdv_unlikely(!conn)) {
		FD_WARN(FD_LOG_EP_DATA, "RDM message on no known connection (%u): dropped",
			h.conn_id);
		fdm_repost(ep, rb);
		return;
	}
	switch (h.op) {
	case FDM_OP_EAGER_MSG:
	case FDM_OP_EAGER_TAG: {
		const uint8_t *payload = rb->buf + FDM_HDR_LEN +
			((h.flags & FDM_HF_ACK) ? FDM_ACK_ID_LEN : 0);

		tagged = h.op == FDM_OP_EAGER_TAG;
		flags = (tagged ? FI_TAGGED : FI_MSG) | FI_RECV |
			((h.flags & FDM_HF_DATA) ? FI_REMOTE_CQ_DATA : 0);
		rx = fdm_match_posted(ep, tagged, conn, h.tag);
		if (rx) {
			struct fdm_slice sl;
			bool used_up = fdm_rx_slice(ep, rx, h.size, &sl);
			size_t cap = fdm_iov_len(sl.iov, sl.count);

			if (used_up)
				fdm_list_del(&rx->node);
			fdm_scatter(sl.iov, sl.count, payload, h.size);
			fdm_complete_recv(ep, rx->context, rx->op_flags, flags | sl.flags,
					  h.size, cap, tagged ? h.tag : 0, h.data, conn,
					  sl.buf, 0);
			if (used_up)
				fdm_rx_put(ep, rx);
		} else {
			struct fdm_unexp *u = calloc(1, sizeof(*u));

			if (!u || (h.size && !(u->payload = malloc(h.size)))) {
				FD_WARN(FD_LOG_EP_DATA, "out of memory: a message is lost");
				free(u);
				/* a sender waiting for delivery must hear of it:
				 * its operations on this connection fail */
				if (h.flags & FDM_HF_ACK)
					fdm_conn_fail(conn, FI_ENOMEM);
				break;
			}
			u->conn = conn;
			u->tag = h.tag;
			u->data = h.data;
			u->flags = h.flags;
			u->len = h.size;
			/* a zero-byte message has no payload buffer: memcpy
			 * of NULL is undefined even for 0 bytes (UBSan) */
			if (h.size)
				memcpy(u->payload, payload, h.size);
			fdm_list_add_tail(tagged ? &ep->unexp_tag : &ep->unexp_msg, &u->node);
		}
		/* delivered: in the receive's buffer, or buffered here until
		 * one is posted (fi_cq(3)'s FI_DELIVERY_COMPLETE) */
		if (h.flags & FDM_HF_ACK)
			fdm_owe_ack(ep, conn, h.ack_id);
		break;
	}
	case FDM_OP_RNDV_MSG:
	case FDM_OP_RNDV_TAG: {
		struct fdm_rndv_info ri;

		if (fdm_rndv_decode(&ri, rb->buf + FDM_HDR_LEN, len - FDM_HDR_LEN, h.size)) {
			FD_WARN(FD_LOG_EP_DATA, "malformed rendezvous request: connection dropped");
			fdm_conn_fail(conn, FI_EIO);
			break;
		}
		tagged = h.op == FDM_OP_RNDV_TAG;
		flags = (tagged ? FI_TAGGED : FI_MSG) | FI_RECV |
			((h.flags & FDM_HF_DATA) ? FI_REMOTE_CQ_DATA : 0);
		rx = fdm_match_posted(ep, tagged, conn, h.tag);
		if (rx) {
			struct fdm_slice sl;
			bool used_up = fdm_rx_slice(ep, rx, h.size, &sl);

			if (used_up)
				fdm_list_del(&rx->node);
			fdm_rndv_start(ep, conn, sl.iov, rx->multi ? NULL : rx->desc, sl.count,
				       rx->context, rx->op_flags, flags | sl.flags,
				       tagged ? h.tag : 0, h.data, h.size, &ri, sl.buf);
			if (used_up)
				fdm_rx_put(ep, rx);
		} else {
			struct fdm_unexp *u = calloc(1, sizeof(*u));

			if (!u) {
				FD_WARN(FD_LOG_EP_DATA, "out of memory: a message is lost");
				break;
			}
			u->conn = conn;
			u->tag = h.tag;
			u->data = h.data;
			u->flags = h.flags;
			u->len = h.size;
			u->rndv = true;
			u->rinfo = ri;
			fdm_list_add_tail(tagged ? &ep->unexp_tag : &ep->unexp_msg, &u->node);
		}
		break;
	}
	case FDM_OP_RNDV_DONE:
		fdm_handle_done(ep, conn, h.tag, h.data);
		break;
	case FDM_OP_RMA_EVENT:
		fdm_count(ep, h.tag == FDM_EV_WRITE ? FDM_CNTR_RWRITE : FDM_CNTR_RREAD, 0);
		break;
	case FDM_OP_ATOMIC_REQ:
		fdm_atomic_handle_req(ep, conn, &h, rb->buf + FDM_HDR_LEN, h.size);
		break;
	case FDM_OP_ATOMIC_RESP:
		fdm_atomic_handle_resp(ep, conn, &h, rb->buf + FDM_HDR_LEN, h.size);
		break;
	}
	fdm_repost(ep, rb);
	fdm_credit_freed(conn);
}

void fdm_handle_remote_write(struct fdm_ep *ep, struct fdm_rxbuf *rb, uint64_t data)
{
	/* counted by the RMA event that follows when FI_RMA_EVENT is on */
	fdm_cq_write(ep->rx_cq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, 0,
		     NULL, data, 0, FI_ADDR_NOTAVAIL);
	fdm_repost(ep, rb);
}

static struct fdm_unexp *fdm_match_unexp(struct fdm_ep *ep, bool tagged, fi_addr_t src,
					 uint64_t tag, uint64_t ignore, bool claimed_ok)
{
	struct fdm_node *h = tagged ? &ep->unexp_tag : &ep->unexp_msg;

	ignore &= fdm_coll_ignore_mask(ep);
	for (struct fdm_node *n = h->next; n != h; n = n->next) {
		struct fdm_unexp *u = fdm_entry(n, struct fdm_unexp, node);

		if (u->claimed && !claimed_ok)
			continue;
		if (tagged && ((u->tag ^ tag) & ~ignore))
			continue;
		if (!fdm_src_ok(ep, src, u->conn))
			continue;
		return u;
	}
	return NULL;
}

/* Deliver an unexpected message to a receive. */
static void fdm_deliver_unexp(struct fdm_ep *ep, struct fdm_unexp *u, bool tagged,
			      const struct iovec *iov, void **desc, size_t count,
			      void *context, uint64_t op_flags, uint64_t extra, void *buf)
{
	uint64_t flags = (tagged ? FI_TAGGED : FI_MSG) | FI_RECV | extra |
		((u->flags & FDM_HF_DATA) ? FI_REMOTE_CQ_DATA : 0);

	fdm_list_del(&u->node);
	if (u->rndv) {
		fdm_rndv_start(ep, u->conn, iov, desc, count, context, op_flags, flags,
			       tagged ? u->tag : 0, u->data, u->len, &u->rinfo, buf);
	} else {
		size_t cap = fdm_iov_len(iov, count);

		fdm_scatter(iov, count, u->payload, u->len);
		fdm_complete_recv(ep, context, op_flags, flags, u->len, cap,
				  tagged ? u->tag : 0, u->data, u->conn, buf, 0);
	}
	free(u->payload);
	free(u);
}

/* A rendezvous nobody will read: tell the sender it is over. */
static void fdm_discard_unexp(struct fdm_ep *ep, struct fdm_unexp *u)
{
	fdm_list_del(&u->node);
	if (u->rndv) {
		struct fdm_rndv rv = { .conn = u->conn, .rinfo = u->rinfo };

		if (u->conn->state == FDM_C_CONNECTED || u->conn->state == FDM_C_ACCEPTING)
			fdm_send_done(ep, &rv, 0);
	}
	free(u->payload);
	free(u);
}

static ssize_t fdm_peek(struct fdm_ep *ep, bool tagged, const struct iovec *iov,
			void **desc, size_t count, fi_addr_t src, uint64_t tag,
			uint64_t ignore, void *context, uint64_t flags)
{
	struct fdm_unexp *u;
	struct fi_context *fc = context;

	fdm_ep_progress(ep);
	if (flags & FI_CLAIM && !(flags & FI_PEEK)) {
		/* the message an earlier FI_PEEK|FI_CLAIM reserved */
		if (!fc || !fc->internal[0])
			return -FI_EINVAL;
		u = fc->internal[0];
		fc->internal[0] = NULL;
		if (flags & FI_DISCARD) {
			uint64_t f = (tagged ? FI_TAGGED : FI_MSG) | FI_RECV;

			fdm_cq_write(ep->rx_cq, context, f, 0, NULL, u->data,
				     tagged ? u->tag : 0, fdm_conn_src(u->conn));
			fdm_discard_unexp(ep, u);
			return 0;
		}
		fdm_deliver_unexp(ep, u, tagged, iov, desc, count, context, flags, 0, NULL);
		return 0;
	}
	u = fdm_match_unexp(ep, tagged, src, tag, ignore, false);
	if (!u) {
		fdm_cq_write_err(ep->rx_cq, context, (tagged ? FI_TAGGED : FI_MSG) | FI_RECV,
				 FI_ENOMSG, 0, 0, 0, 0, tag);
		return 0;
	}
	fdm_cq_write(ep->rx_cq, context,
		     (tagged ? FI_TAGGED : FI_MSG) | FI_RECV |
		     ((u->flags & FDM_HF_DATA) ? FI_REMOTE_CQ_DATA : 0),
		     u->len, NULL, u->data, tagged ? u->tag : 0, fdm_conn_src(u->conn));
	if (flags & FI_DISCARD) {
		fdm_discard_unexp(ep, u);
	} else if (flags & FI_CLAIM) {
		if (!fc)
			return -FI_EINVAL;
		u->claimed = true;
		fc->internal[0] = u;
	}
	return 0;
}

static ssize_t fdm_recv_common(struct fdm_ep *ep, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			       void *context, uint64_t flags, bool tagged)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_unexp *u;
	struct fdm_rx *rx;
	ssize_t ret;

	if (fdv_unlikely(count > FDM_IOV_LIMIT || (count && !iov)))
		return -FI_EINVAL;
	if (fdv_unlikely(flags & FI_MULTI_RECV) && (tagged || count != 1 || !iov[0].iov_len))
		return -FI_EINVAL;
	fdm_lock(d);
	if (fdv_unlikely(!ep->enabled)) {
		fdm_unlock(d);
		return -FI_EOPBADSTATE;
	}
	if (fdv_unlikely(flags & (FI_PEEK | FI_CLAIM))) {
		ret = fdm_peek(ep, tagged, iov, desc, count, src, tag, ignore, context, flags);
		fdm_unlock(d);
		return ret;
	}
	if (fdv_likely(!(flags & FI_MULTI_RECV))) {
		u = fdm_match_unexp(ep, tagged, src, tag, ignore, false);
		if (u) {
			fdm_deliver_unexp(ep, u, tagged, iov, desc, count, context, flags,
					  0, NULL);
			fdm_unlock(d);
			return 0;
		}
	}
	if (fdv_unlikely(!ep->rx_nfree)) {
		fdm_unlock(d);
		return -FI_EAGAIN;
	}
	rx = &ep->rxs[ep->rx_free[--ep->rx_nfree]];
	rx->multi = !!(flags & FI_MULTI_RECV);
	rx->used = 0;
	rx->in_use = true;
	rx->count = count;
	memcpy(rx->iov, iov, count * sizeof(*iov));
	for (size_t i = 0; i < count; i++)
		rx->desc[i] = desc ? desc[i] : NULL;
	rx->src = src;
	rx->tag = tag;
	rx->ignore = ignore;
	rx->context = context;
	rx->op_flags = flags;
	rx->tagged = tagged;
	if (rx->multi) {
		/* fill it from the unexpected queue first, in order */
		while ((u = fdm_match_unexp(ep, false, src, 0, 0, false))) {
			struct fdm_slice sl;
			bool used_up = fdm_rx_slice(ep, rx, u->len, &sl);

			fdm_deliver_unexp(ep, u, false, sl.iov, NULL, sl.count, context,
					  flags, sl.flags, sl.buf);
			if (used_up) {
				fdm_rx_put(ep, rx);
				fdm_unlock(d);
				return 0;
			}
		}
	}
	fdm_list_add_tail(tagged ? &ep->posted_tag : &ep->posted_msg, &rx->node);
	fdm_unlock(d);
	return 0;
}

ssize_t fdm_ep_cancel(fid_t fid, void *context)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);
	struct fdm_node *lists[2] = { &ep->posted_tag, &ep->posted_msg };
	ssize_t ret = -FI_ENOENT;

	fdm_lock(ep->domain);
	for (int l = 0; l < 2 && ret; l++) {
		for (struct fdm_node *n = lists[l]->next; n != lists[l]; n = n->next) {
			struct fdm_rx *rx = fdm_entry(n, struct fdm_rx, node);

			if (rx->context != context)
				continue;
			fdm_list_del(&rx->node);
			fdm_cq_write_err(ep->rx_cq, context,
					 (rx->tagged ? FI_TAGGED : FI_MSG) | FI_RECV,
					 FI_ECANCELED, 0, 0, 0, 0, rx->tag);
			fdm_rx_put(ep, rx);
			ret = 0;
			break;
		}
	}
	fdm_unlock(ep->domain);
	return ret;
}

void fdm_ep_drop_queues(struct fdm_ep *ep)
{
	struct fdm_node *lists[2] = { &ep->unexp_tag, &ep->unexp_msg };

	for (int l = 0; l < 2; l++) {
		while (!fdm_list_empty(lists[l])) {
			struct fdm_unexp *u = fdm_entry(lists[l]->next, struct fdm_unexp, node);

			fdm_list_del(&u->node);
			free(u->payload);
			free(u);
		}
	}
	while (!fdm_list_empty(&ep->rndv_active)) {
		struct fdm_rndv *rv = fdm_entry(ep->rndv_active.next, struct fdm_rndv, node);

		fdm_list_del(&rv->node);
		for (size_t i = 0; i < rv->count; i++)
			if (rv->mr[i])
				fi_close(&rv->mr[i]->fid);
		free(rv);
	}
	fdm_list_init(&ep->posted_tag);
	fdm_list_init(&ep->posted_msg);
}

/* fi_recv and fi_trecv when the inline call cannot post at once. */
ssize_t fdm_recv_slow(struct fid_ep *ep, void *buf, size_t len, void *desc,
		      fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
		      int tagged)
{
	struct iovec iov = { buf, len };
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_recv_common(e, &iov, &desc, 1, src, tag, ignore, context,
			       e->rx_op_flags, tagged != 0);
}

static ssize_t fdm_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src, void *context)
{
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_recv_common(e, iov, desc, count, src, 0, 0, context, e->rx_op_flags, false);
}

static ssize_t fdm_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_RECV_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_recv_common(fdm_ep_of(ep), msg->msg_iov, msg->desc, msg->iov_count,
			       msg->addr, 0, 0, msg->context, flags, false);
}

static ssize_t fdm_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			  void *context)
{
	struct fdm_ep *e = fdm_ep_of(ep);

	return fdm_recv_common(e, iov, desc, count, src, tag, ignore, context,
			       e->rx_op_flags, true);
}

static ssize_t fdm_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_RECV_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_recv_common(fdm_ep_of(ep), msg->msg_iov, msg->desc, msg->iov_count,
			       msg->addr, msg->tag, msg->ignore, msg->context, flags, true);
}

struct fi_ops_msg fdm_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdm_fast_recv,		/* fdm_msg.h */
	.recvv = fdm_recvv,
	.recvmsg = fdm_recvmsg,
	.send = fdm_fast_send,
	.sendv = fdm_sendv,
	.sendmsg = fdm_sendmsg,
	.inject = fdm_fast_inject,
	.senddata = fdm_senddata,
	.injectdata = fdm_injectdata,
};

struct fi_ops_tagged fdm_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = fdm_fast_trecv,
	.recvv = fdm_trecvv,
	.recvmsg = fdm_trecvmsg,
	.send = fdm_fast_tsend,
	.sendv = fdm_tsendv,
	.sendmsg = fdm_tsendmsg,
	.inject = fdm_fast_tinject,
	.senddata = fdm_tsenddata,
	.injectdata = fdm_tinjectdata,
};
