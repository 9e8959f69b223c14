/* RMA and atomics on RDM endpoints, addressed by fi_addr_t: verbs RDMA
 * reads, writes and atomics on the peer's connection. The application
 * needs no descriptors (no FI_MR_LOCAL): what fits a bounce buffer goes
 * through one (copied in at the call, out at the completion), larger
 * buffers without a descriptor are registered for the operation. With
 * FI_RMA_EVENT the initiator tells the target afterwards (an RMA event
 * message), which counts it on its FI_REMOTE_WRITE / FI_REMOTE_READ
 * counters: verbs gives the target no completion of its own. */
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"

#define FDM_RMA_FLAGS (FI_REMOTE_CQ_DATA | FI_COMPLETION | FI_INJECT | \
		       FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		       FI_DELIVERY_COMPLETE | FI_MORE | FI_FENCE)

static size_t fdm_dt_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT64:
	case FI_UINT64:
	case FI_DOUBLE:
		return 8;
	case FI_INT32:
	case FI_UINT32:
	case FI_FLOAT:
		return 4;
	default:
		return 0;
	}
}

ssize_t fdm_rma_post(struct fdm_conn *c, struct fdm_tx *tx)
{
	struct fdm_ep *ep = c->ep;
	struct fdm_rma_op *r = &tx->rma;
	struct fi_rma_iov rio = { .addr = r->raddr, .len = 0, .key = r->rkey };
	struct iovec biov;
	void *bdesc = ep->vdesc;

	tx->vep = c->vep;
	switch (r->op) {
	case FDM_RMA_WRITE:
	case FDM_RMA_READ: {
		struct fi_msg_rma msg = {
			.rma_iov = &rio, .rma_iov_count = 1, .context = tx, .data = r->data,
		};

		rio.len = tx->len;
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
		if (r->op == FDM_RMA_READ)
			return fi_readmsg(c->vep, &msg, FI_COMPLETION);
		return fi_writemsg(c->vep, &msg, FI_COMPLETION |
				   (r->flags & FI_REMOTE_CQ_DATA));
	}
	default: {
		struct fi_ioc ioc = { .addr = tx->buf, .count = r->acount };
		struct fi_ioc res = { .addr = tx->buf + 64, .count = r->acount };
		struct fi_ioc cmp = { .addr = tx->buf + 128, .count = r->acount };
		struct fi_rma_ioc rioc = { .addr = r->raddr, .count = r->acount, .key = r->rkey };
		struct fi_msg_atomic msg = {
			.msg_iov = &ioc, .desc = &bdesc, .iov_count = 1,
			.rma_iov = &rioc, .rma_iov_count = 1, .datatype = r->dt,
			.op = r->aop, .context = tx,
		};

		if (r->op == FDM_RMA_ATOMIC)
			return fi_atomicmsg(c->vep, &msg, FI_COMPLETION);
		if (r->op == FDM_RMA_FETCH)
			return fi_fetch_atomicmsg(c->vep, &msg, &res, &bdesc, 1, FI_COMPLETION);
		return fi_compare_atomicmsg(c->vep, &msg, &cmp, &bdesc, 1, &res, &bdesc, 1,
					    FI_COMPLETION);
	}
	}
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
	uint64_t flags;

	switch (r->op) {
	case FDM_RMA_WRITE:
		flags = FI_RMA | FI_WRITE;
		break;
	case FDM_RMA_READ:
		flags = FI_RMA | FI_READ;
		break;
	case FDM_RMA_ATOMIC:
		flags = FI_ATOMIC | FI_WRITE;
		break;
	default:
		flags = FI_ATOMIC | FI_READ;
		break;
	}
	if (!err) {
		if (r->op == FDM_RMA_READ && r->bounce) {
			size_t done = 0;

			for (size_t i = 0; i < r->count; i++) {
				memcpy(r->iov[i].iov_base, tx->buf + done, r->iov[i].iov_len);
				done += r->iov[i].iov_len;
			}
		} else if ((r->op == FDM_RMA_FETCH || r->op == FDM_RMA_CSWAP) && r->result) {
			memcpy(r->result, tx->buf + 64, r->acount * fdm_dt_size(r->dt));
		}
		if (ep->rma_event && tx->conn && tx->conn->state == FDM_C_CONNECTED)
			fdm_rma_event(ep, tx->conn, r->op == FDM_RMA_READ ||
				      r->op == FDM_RMA_FETCH ? FDM_EV_READ : FDM_EV_WRITE);
	}
	fdm_count(ep, tx->cntr, err);
	if (err)
		fdm_cq_write_err(ep->tx_cq, tx->context, flags, err, 0, 0, 0, 0, 0);
	else if (tx->report)
		fdm_cq_write(ep->tx_cq, tx->context, flags, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
	fdm_tx_put(ep, tx);
}

/* What every RMA and atomic starts with: the domain lock, the connection
 * to dest and a free request (after one progress pass if none is free).
 * 0 with the lock held and *conn, *txp set, or the error with the lock
 * released. */
static int fdm_rma_begin(struct fdm_ep *ep, fi_addr_t dest, void *context,
			 uint64_t flags, struct fdm_conn **conn, struct fdm_tx **txp)
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
	tx = fdm_tx_get(ep);
	if (!tx) {
		fdm_ep_progress(ep);
		tx = fdm_tx_get(ep);
		if (!tx) {
			fdm_unlock(d);
			return -FI_EAGAIN;
		}
	}
	tx->kind = FDM_TX_RMA;
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
	err = fdm_rma_begin(ep, dest, context, flags, &conn, &tx);
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

/* ---- atomics: one element of 8 (or 4) bytes, the ops verbs has ---- */

static int fdm_atomic_ok(enum fi_datatype dt, enum fi_op op, uint8_t kind)
{
	if (fdm_dt_size(dt) != 8 || (dt != FI_INT64 && dt != FI_UINT64))
		return 0;
	if (kind == FDM_RMA_CSWAP)
		return op == FI_CSWAP;
	if (kind == FDM_RMA_FETCH)
		return op == FI_SUM || op == FI_ATOMIC_READ;
	return op == FI_SUM;
}

static ssize_t fdm_atomic_common(struct fdm_ep *ep, uint8_t kind, const void *buf,
				 size_t count, const void *compare, void *result,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op, uint64_t flags,
				 void *context)
{
	struct fdm_domain *d = ep->domain;
	struct fdm_conn *conn;
	struct fdm_tx *tx;
	int err = 0;

	if (count != 1 || (!buf && op != FI_ATOMIC_READ))
		return -FI_EINVAL;
	if (!fdm_atomic_ok(dt, op, kind))
		return -FI_EOPNOTSUPP;
	if ((kind != FDM_RMA_ATOMIC && !result) || (kind == FDM_RMA_CSWAP && !compare))
		return -FI_EINVAL;
	err = fdm_rma_begin(ep, dest, context, flags, &conn, &tx);
	if (err)
		return err;
	tx->cntr = kind == FDM_RMA_ATOMIC ? FDM_CNTR_WRITE : FDM_CNTR_READ;
	tx->rma.op = kind;
	tx->rma.count = 0;
	tx->rma.raddr = addr;
	tx->rma.rkey = key;
	tx->rma.dt = dt;
	tx->rma.aop = op;
	tx->rma.acount = 1;
	tx->rma.result = result;
	tx->rma.bounce = true;
	memset(tx->buf, 0, 192);
	if (buf)
		memcpy(tx->buf, buf, 8);
	if (compare)
		memcpy(tx->buf + 128, compare, 8);
	fdm_conn_submit(conn, tx);
	fdm_unlock(d);
	return 0;
}

static ssize_t fdm_atomic(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			  fi_addr_t dest, uint64_t addr, uint64_t key,
			  enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_ATOMIC, buf, count, NULL, NULL, dest,
				 addr, key, dt, op, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_atomicv(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			   size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			   enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc;
	if (count != 1 || !iov)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_ATOMIC, iov->addr, iov->count, NULL,
				 NULL, dest, addr, key, dt, op, fdm_ep_of(ep)->tx_op_flags,
				 context);
}

static ssize_t fdm_atomicmsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			     uint64_t flags)
{
	if (!msg || msg->iov_count != 1 || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_ATOMIC, msg->msg_iov->addr,
				 msg->msg_iov->count, NULL, NULL, msg->addr, msg->rma_iov->addr,
				 msg->rma_iov->key, msg->datatype, msg->op, flags, msg->context);
}

static ssize_t fdm_inject_atomic(struct fid_ep *ep, const void *buf, size_t count,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op)
{
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_ATOMIC, buf, count, NULL, NULL, dest,
				 addr, key, dt, op, FI_INJECT, NULL);
}

static ssize_t fdm_fetch_atomic(struct fid_ep *ep, const void *buf, size_t count,
				void *desc, void *result, void *result_desc, fi_addr_t dest,
				uint64_t addr, uint64_t key, enum fi_datatype dt,
				enum fi_op op, void *context)
{
	(void)desc;
	(void)result_desc;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_FETCH, buf, count, NULL, result, dest,
				 addr, key, dt, op, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_fetch_atomicv(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				 size_t count, struct fi_ioc *resultv, void **result_desc,
				 size_t result_count, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype dt, enum fi_op op,
				 void *context)
{
	(void)desc;
	(void)result_desc;
	if (count != 1 || result_count != 1 || !iov || !resultv)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_FETCH, iov->addr, iov->count, NULL,
				 resultv->addr, dest, addr, key, dt, op,
				 fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_fetch_atomicmsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{
	(void)result_desc;
	if (!msg || msg->iov_count != 1 || msg->rma_iov_count != 1 || !msg->rma_iov ||
	    result_count != 1 || !resultv)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_FETCH, msg->msg_iov->addr,
				 msg->msg_iov->count, NULL, resultv->addr, msg->addr,
				 msg->rma_iov->addr, msg->rma_iov->key, msg->datatype,
				 msg->op, flags, msg->context);
}

static ssize_t fdm_compare_atomic(struct fid_ep *ep, const void *buf, size_t count,
				  void *desc, const void *compare, void *compare_desc,
				  void *result, void *result_desc, fi_addr_t dest,
				  uint64_t addr, uint64_t key, enum fi_datatype dt,
				  enum fi_op op, void *context)
{
	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_CSWAP, buf, count, compare, result,
				 dest, addr, key, dt, op, fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_compare_atomicv(struct fid_ep *ep, const struct fi_ioc *iov,
				   void **desc, size_t count, const struct fi_ioc *comparev,
				   void **compare_desc, size_t compare_count,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, fi_addr_t dest, uint64_t addr,
				   uint64_t key, enum fi_datatype dt, enum fi_op op,
				   void *context)
{
	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	if (count != 1 || compare_count != 1 || result_count != 1 || !iov || !comparev ||
	    !resultv)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_CSWAP, iov->addr, iov->count,
				 comparev->addr, resultv->addr, dest, addr, key, dt, op,
				 fdm_ep_of(ep)->tx_op_flags, context);
}

static ssize_t fdm_compare_atomicmsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				     const struct fi_ioc *comparev, void **compare_desc,
				     size_t compare_count, struct fi_ioc *resultv,
				     void **result_desc, size_t result_count, uint64_t flags)
{
	(void)compare_desc;
	(void)result_desc;
	if (!msg || msg->iov_count != 1 || msg->rma_iov_count != 1 || !msg->rma_iov ||
	    compare_count != 1 || result_count != 1 || !comparev || !resultv)
		return -FI_EINVAL;
	return fdm_atomic_common(fdm_ep_of(ep), FDM_RMA_CSWAP, msg->msg_iov->addr,
				 msg->msg_iov->count, comparev->addr, resultv->addr, msg->addr,
				 msg->rma_iov->addr, msg->rma_iov->key, msg->datatype,
				 msg->op, flags, msg->context);
}

static int fdm_valid(enum fi_datatype dt, enum fi_op op, uint8_t kind, size_t *count)
{
	if (!count)
		return -FI_EINVAL;
	if (!fdm_atomic_ok(dt, op, kind)) {
		*count = 0;
		return -FI_EOPNOTSUPP;
	}
	*count = 1;
	return 0;
}

static int fdm_writevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
			  size_t *count)
{
	(void)ep;
	return fdm_valid(dt, op, FDM_RMA_ATOMIC, count);
}

static int fdm_readwritevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
			      size_t *count)
{
	(void)ep;
	return fdm_valid(dt, op, FDM_RMA_FETCH, count);
}

static int fdm_compwritevalid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
			      size_t *count)
{
	(void)ep;
	return fdm_valid(dt, op, FDM_RMA_CSWAP, count);
}

struct fi_ops_atomic fdm_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fdm_atomic,
	.writev = fdm_atomicv,
	.writemsg = fdm_atomicmsg,
	.inject = fdm_inject_atomic,
	.readwrite = fdm_fetch_atomic,
	.readwritev = fdm_fetch_atomicv,
	.readwritemsg = fdm_fetch_atomicmsg,
	.compwrite = fdm_compare_atomic,
	.compwritev = fdm_compare_atomicv,
	.compwritemsg = fdm_compare_atomicmsg,
	.writevalid = fdm_writevalid,
	.readwritevalid = fdm_readwritevalid,
	.compwritevalid = fdm_compwritevalid,
};
