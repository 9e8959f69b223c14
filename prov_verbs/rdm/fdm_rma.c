/* RMA on RDM endpoints, addressed by fi_addr_t: verbs RDMA reads and
 * writes on the peer's connection. The application needs no descriptors
 * (no FI_MR_LOCAL): what fits a bounce buffer goes through one (copied in
 * at the call, out at the completion), larger buffers without a descriptor
 * are registered for the operation. With FI_RMA_EVENT the initiator tells
 * the target afterwards (an RMA event message), which counts it on its
 * FI_REMOTE_WRITE / FI_REMOTE_READ counters: verbs gives the target no
 * completion of its own. Atomics are not verbs atomics: fdm_atomic.c. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

#define FDM_RMA_FLAGS (FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_INJECT | \
		       FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		       FI_DELIVERY_COMPLETE | FI_MORE | FI_FENCE)

ssize_t fdm_rma_post(struct fdm_conn *c, struct fdm_tx *tx)
{
	struct fdm_ep *ep = c->ep;
	struct fdm_rma_op *r = &tx->rma;
	struct fi_rma_iov rio = { .addr = r->raddr, .len = tx->len, .key = r->rkey };
	struct fi_msg_rma msg = {
		.rma_iov = &rio, .rma_iov_count = 1, .context = tx, .data = r->data,
	};
	struct iovec biov;
	void *bdesc = ep->vdesc;
	uint64_t fence = r->flags & FI_FENCE;
	ssize_t ret;

	/* Data order (max_order_{raw,war,waw}_size, fdm_getinfo.c): an
	 * atomic is applied by the target's software after its request
	 * arrives, and the device would read or place later RMA before
	 * that, so RMA waits in the connection's queue until its atomics
	 * are answered (fdm_conn_order_done flushes it). */
	if (fdv_unlikely(c->atomics_out))
		return -FI_EAGAIN;
	/* A write may pass a read still running (RC ordering): fenced
	 * behind it (FI_ORDER_WAR). */
	if (fdv_unlikely(c->reads_out) && r->op != FDM_RMA_READ)
		fence = FI_FENCE;
	tx->vep = c->vep;
	if (r->bounce) {
		biov.iov_base = tx->buf;
		biov.iov_len = tx->len;
		msg.msg_iov = &biov;
		msg.desc = &bdesc;
		msg.iov_count = 1;
	} else {
		msg.msg_iov = r->iov;
		msg.desc = r->desc;
		msg.iov_count = r->count;
	}
	if (r->op != FDM_RMA_READ)
		return fi_writemsg(c->vep, &msg, FI_COMPLETION | fence |
				   (r->flags & FI_REMOTE_CQ_DATA));
	ret = fi_readmsg(c->vep, &msg, FI_COMPLETION | fence);
	if (!ret) {
		tx->ordered = FDM_ORD_READ;
		c->reads_out++;
	}
	return ret;
}

static void fdm_rma_event(struct fdm_ep *ep, struct fdm_conn *c, uint64_t what)
{
	struct fdm_hdr h = { .op = FDM_OP_RMA_EVENT, .tag = what };
	struct fdm_tx *tx = fdm_tx_get(ep);

	if (!tx) {
		FD_WARN(FD_LOG_EP_DATA, "no buffer for an RMA event: the target's "
			"counter misses one");
		return;
	}
	fdm_hdr_encode(tx->buf, &h);
	tx->kind = FDM_TX_CTRL;
	tx->wire_len = FDM_HDR_LEN;
	fdm_conn_submit(c, tx);
}

void fdm_handle_rma_done(struct fdm_ep *ep, struct fdm_tx *tx, int err)
{
	struct fdm_rma_op *r = &tx->rma;
	uint64_t flags = FI_RMA | (r->op == FDM_RMA_READ ? FI_READ : FI_WRITE);

	if (!err) {
		if (r->op == FDM_RMA_READ && r->bounce) {
			size_t done = 0;

			for (size_t i = 0; i < r->count; i++) {
				memcpy(r->iov[i].iov_base, tx->buf + done, r->iov[i].iov_len);
				done += r->iov[i].iov_len;
			}
		}
		if (ep->rma_event && tx->conn && tx->conn->state == FDM_C_CONNECTED)
			fdm_rma_event(ep, tx->conn, r->op == FDM_RMA_READ ?
				      FDM_EV_READ : FDM_EV_WRITE);
	}
	fdm_rma_complete(ep, tx, flags, err);
}

void fdm_rma_complete(struct fdm_ep *ep, struct fdm_tx *tx, uint64_t flags, int err)
{
	if (tx->ordered)
		fdm_conn_order_done(tx);
	fdm_count(ep, tx->cntr, err);
	if (err)
		fdm_cq_write_err(ep->tx_cq, tx->context, flags, err, 0, 0, 0, 0, 0);
	else if (tx->report)
		fdm_cq_write(ep->tx_cq, tx->context, flags, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
	fdm_tx_put(ep, tx);
}


int fdm_rma_begin(struct fdm_ep *ep, fi_addr_t dest, void *context, uint64_t flags,
		  uint8_t kind, struct fdm_conn **conn, struct fdm_tx **txp)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_tx *tx;
	int err = 0;

	fdm_lock(d);
	if (!ep->enabled) {
		fdm_unlock(d);
		return -FI_EOPBADSTATE;
	}
	*conn = fdm_conn_for_addr(ep, dest, &err);
	if (!*conn) {
		fdm_unlock(d);
		return err;
	}
	tx = fdm_tx_get_app(ep);
	if (!tx) {
		fdm_ep_progress(ep);
		tx = fdm_tx_get_app(ep);
		if (!tx) {
			fdm_unlock(d);
			return -FI_EAGAIN;
		}
	}
	tx->kind = kind;
	tx->context = context;
	tx->report = !(flags & FI_INJECT) &&
		(!(ep->tx_cq_flags & FI_SELECTIVE_COMPLETION) || (flags & FI_COMPLETION));
	*txp = tx;
	return 0;
}

/* Take a request, fill what every RMA has, submit. */
static ssize_t fdm_rma_common(struct fdm_ep *ep, uint8_t op, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest, uint64_t raddr,
			      uint64_t rkey, uint64_t data, uint64_t flags, void *context)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_conn *conn;
	struct fdm_tx *tx;
	size_t len = 0;
	int err = 0;

	if (count < 1 || count > FDM_IOV_LIMIT || !iov)
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	if ((flags & FI_INJECT) && len > ep->info->tx_attr->inject_size)
		return -FI_EMSGSIZE;
	err = fdm_rma_begin(ep, dest, context, flags, FDM_TX_RMA, &conn, &tx);
	if (err)
		return err;
	tx->len = len;
	tx->cntr = op == FDM_RMA_READ ? FDM_CNTR_READ : FDM_CNTR_WRITE;
	tx->rma.op = op;
	tx->rma.count = count;
	memcpy(tx->rma.iov, iov, count * sizeof(*iov));
	tx->rma.raddr = raddr;
	tx->rma.rkey = rkey;
	tx->rma.data = data;
	tx->rma.flags = flags;
	tx->rma.bounce = len <= FDM_BUF_SIZE;
	if (tx->rma.bounce) {
		if (op == FDM_RMA_WRITE) {
			size_t done = 0;

			for (size_t i = 0; i < count; i++) {
				memcpy(tx->buf + done, iov[i].iov_base, iov[i].iov_len);
				done += iov[i].iov_len;
			}
		}
	} else {
		for (size_t i = 0; i < count; i++) {
			int ret;

			tx->rma.desc[i] = desc ? desc[i] : NULL;
			if (tx->rma.desc[i] || !iov[i].iov_len)
				continue;
			ret = fi_mr_reg(d->vdomain, iov[i].iov_base, iov[i].iov_len,
					op == FDM_RMA_READ ? FI_READ : FI_WRITE, 0, 0, 0,
					&tx->mr[i], NULL);
			if (ret) {
				fdm_tx_put(ep, tx);
				fdm_unlock(d);
				return ret;
			}
			tx->rma.desc[i] = fi_mr_desc(tx->mr[i]);
		}
	}
	fdm_conn_submit(conn, tx);
	fdm_unlock(d);
	return 0;
}

static ssize_t fdm_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { buf, len };

	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_READ, &iov, &desc, 1, src, addr, key,
			      0, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_readv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src, uint64_t addr, uint64_t key,
			 void *context)
{
	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_READ, iov, desc, count, src, addr, key,
			      0, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_RMA_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_READ, msg->msg_iov, msg->desc,
			      msg->iov_count, msg->addr, msg->rma_iov->addr, msg->rma_iov->key,
			      0, flags, msg->context);
}

static ssize_t fdm_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, &iov, &desc, 1, dest, addr, key,
			      0, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_writev(struct fid_ep *ep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			  void *context)
{
	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, iov, desc, count, dest, addr, key,
			      0, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FDM_RMA_FLAGS)
		return -FI_EBADFLAGS;
	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, msg->msg_iov, msg->desc,
			      msg->iov_count, msg->addr, msg->rma_iov->addr, msg->rma_iov->key,
			      msg->data, flags, msg->context);
}

static ssize_t fdm_inject_write(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, &iov, NULL, 1, dest, addr, key,
			      0, FI_INJECT, NULL);
}

static ssize_t fdm_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *context)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, &iov, &desc, 1, dest, addr, key,
			      data, fdm_ep_of(ep)->tx_op_flags | FI_REMOTE_CQ_DATA, context);
}

static ssize_t fdm_inject_writedata(struct fid_ep *ep, const void *buf, size_t len,
				    uint64_t data, fi_addr_t dest, uint64_t addr,
				    uint64_t key)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return fdm_rma_common(fdm_ep_of(ep), FDM_RMA_WRITE, &iov, NULL, 1, dest, addr, key,
			      data, FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_rma fdm_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = fdm_read,
	.readv = fdm_readv,
	.readmsg = fdm_readmsg,
	.write = fdm_write,
	.writev = fdm_writev,
	.writemsg = fdm_writemsg,
	.inject = fdm_inject_write,
	.writedata = fdm_writedata,
	.injectdata = fdm_inject_writedata,
};
