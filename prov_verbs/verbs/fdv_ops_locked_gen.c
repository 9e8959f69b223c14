/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


/* The OFF build's locked ops tables: each call of a msg endpoint or a CQ
 * opened at FI_THREAD_ENDPOINT, FID or SAFE holds that object's lock
 * (fdv_mt.h) around the same provider function the lock-free table
 * calls. Objects opened at FI_THREAD_DOMAIN or COMPLETION keep the
 * lock-free tables of fdv_ops_gen.c and never reach this file. */

#include <fdv/fdv_config.h>
#if FDV_OPS_LOCKED

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_eq.h>
#include <fdv/fdv_msg.h>
#include <fdv/fdv_cq.h>
#include <fdv/fdv_rma.h>
#include <fdv/fdv_atomic.h>
#include <fdv/fdv_ep.h>
#include "fd_enosys.h"
#include "fdv_mt.h"
#include "fdv_ops.h"

static ssize_t fdv_atomic_write_locked(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_write(ep, buf, count, desc, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_writev_locked(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_writev(ep, iov, desc, count, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_writemsg_locked(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_writemsg(ep, msg, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_inject_locked(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_inject(ep, buf, count, dest_addr, addr, key, datatype, op);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_readwrite_locked(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_readwrite(ep, buf, count, desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_readwritev_locked(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_readwritev(ep, iov, desc, count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_readwritemsg_locked(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_readwritemsg(ep, msg, resultv, result_desc, result_count, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_compwrite_locked(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare, void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_compwrite(ep, buf, count, desc, compare, compare_desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_compwritev_locked(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_compwritev(ep, iov, desc, count, comparev, compare_desc, compare_count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_atomic_compwritemsg_locked(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_compwritemsg(ep, msg, comparev, compare_desc, compare_count, resultv, result_desc, result_count, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static int fdv_atomic_writevalid_locked(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	int ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_writevalid(ep, datatype, op, count);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static int fdv_atomic_readwritevalid_locked(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	int ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_readwritevalid(ep, datatype, op, count);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static int fdv_atomic_compwritevalid_locked(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	int ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_atomic_compwritevalid(ep, datatype, op, count);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_cq_read_locked(struct fid_cq *cq, void *buf, size_t count)
{
	ssize_t ret;

	fdv_mt_cq_lock(cq);
	ret = fdv_cq_read(cq, buf, count);
	fdv_mt_cq_unlock(cq);
	return ret;
}

static ssize_t fdv_cq_readfrom_locked(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr)
{
	ssize_t ret;

	fdv_mt_cq_lock(cq);
	ret = fdv_cq_readfrom(cq, buf, count, src_addr);
	fdv_mt_cq_unlock(cq);
	return ret;
}

static ssize_t fdv_cq_readerr_locked(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_cq_lock(cq);
	ret = fdv_cq_readerr(cq, buf, flags);
	fdv_mt_cq_unlock(cq);
	return ret;
}

static ssize_t fdv_msg_recv_locked(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_recv(ep, buf, len, desc, src_addr, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_recvv_locked(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_recvv(ep, iov, desc, count, src_addr, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_recvmsg_locked(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_recvmsg(ep, msg, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_send_locked(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_send(ep, buf, len, desc, dest_addr, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_sendv_locked(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_sendv(ep, iov, desc, count, dest_addr, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_sendmsg_locked(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_sendmsg(ep, msg, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_inject_locked(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_inject(ep, buf, len, dest_addr);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_senddata_locked(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_senddata(ep, buf, len, desc, data, dest_addr, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_msg_injectdata_locked(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_msg_injectdata(ep, buf, len, data, dest_addr);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_read_locked(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_read(ep, buf, len, desc, src_addr, addr, key, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_readv_locked(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_readv(ep, iov, desc, count, src_addr, addr, key, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_readmsg_locked(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_readmsg(ep, msg, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_write_locked(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_write(ep, buf, len, desc, dest_addr, addr, key, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_writev_locked(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_writev(ep, iov, desc, count, dest_addr, addr, key, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_writemsg_locked(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_writemsg(ep, msg, flags);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_inject_locked(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_inject(ep, buf, len, dest_addr, addr, key);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_writedata_locked(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_writedata(ep, buf, len, desc, data, dest_addr, addr, key, context);
	fdv_mt_ep_unlock(ep);
	return ret;
}

static ssize_t fdv_rma_injectdata_locked(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	ssize_t ret;

	fdv_mt_ep_lock(ep);
	ret = fdv_rma_injectdata(ep, buf, len, data, dest_addr, addr, key);
	fdv_mt_ep_unlock(ep);
	return ret;
}

struct fi_ops_atomic fdv_msg_ops_locked_atomic = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fdv_atomic_write_locked,
	.writev = fdv_atomic_writev_locked,
	.writemsg = fdv_atomic_writemsg_locked,
	.inject = fdv_atomic_inject_locked,
	.readwrite = fdv_atomic_readwrite_locked,
	.readwritev = fdv_atomic_readwritev_locked,
	.readwritemsg = fdv_atomic_readwritemsg_locked,
	.compwrite = fdv_atomic_compwrite_locked,
	.compwritev = fdv_atomic_compwritev_locked,
	.compwritemsg = fdv_atomic_compwritemsg_locked,
	.writevalid = fdv_atomic_writevalid_locked,
	.readwritevalid = fdv_atomic_readwritevalid_locked,
	.compwritevalid = fdv_atomic_compwritevalid_locked,
};

struct fi_ops_cq fdv_ops_locked_cq = {
	.size = sizeof(struct fi_ops_cq),
	.read = fdv_cq_read_locked,
	.readfrom = fdv_cq_readfrom_locked,
	.readerr = fdv_cq_readerr_locked,
	.sread = fdv_cq_sread,
	.sreadfrom = fdv_cq_sreadfrom,
	.signal = fdv_cq_signal,
	.strerror = fdv_cq_strerror,
};

struct fi_ops_msg fdv_msg_ops_locked_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdv_msg_recv_locked,
	.recvv = fdv_msg_recvv_locked,
	.recvmsg = fdv_msg_recvmsg_locked,
	.send = fdv_msg_send_locked,
	.sendv = fdv_msg_sendv_locked,
	.sendmsg = fdv_msg_sendmsg_locked,
	.inject = fdv_msg_inject_locked,
	.senddata = fdv_msg_senddata_locked,
	.injectdata = fdv_msg_injectdata_locked,
};

struct fi_ops_rma fdv_msg_ops_locked_rma = {
	.size = sizeof(struct fi_ops_rma),
	.read = fdv_rma_read_locked,
	.readv = fdv_rma_readv_locked,
	.readmsg = fdv_rma_readmsg_locked,
	.write = fdv_rma_write_locked,
	.writev = fdv_rma_writev_locked,
	.writemsg = fdv_rma_writemsg_locked,
	.inject = fdv_rma_inject_locked,
	.writedata = fdv_rma_writedata_locked,
	.injectdata = fdv_rma_injectdata_locked,
};

#endif /* FDV_OPS_LOCKED */
