/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


/* The ops tables an object hands out in the OFF build (and to programs
 * compiled without FABRIC_DIRECT): the same provider functions the
 * direct wrappers call, here compiled out of line. */

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_eq.h>
#include <fdv/fdv_msg.h>
#include <fdv/fdv_cq.h>
#include <fdv/fdv_rma.h>
#include <fdv/fdv_atomic.h>
#include <fdv/fdv_ep.h>
#include "fdv_ops.h"

static ssize_t fdv_enosys_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)src_addr;
	(void)tag;
	(void)ignore;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)src_addr;
	(void)tag;
	(void)ignore;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)dest_addr;
	(void)tag;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tsendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)dest_addr;
	(void)tag;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tinject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tsenddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)data;
	(void)dest_addr;
	(void)tag;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t fdv_enosys_tinjectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)data;
	(void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

struct fi_ops_cq fdv_ops_cq = {
	.size = sizeof(struct fi_ops_cq),
	.read = fdv_cq_read,
	.readfrom = fdv_cq_readfrom,
	.readerr = fdv_cq_readerr,
	.sread = fdv_cq_sread,
	.sreadfrom = fdv_cq_sreadfrom,
	.signal = fdv_cq_signal,
	.strerror = fdv_cq_strerror,
};

struct fi_ops_atomic fdv_msg_ops_atomic = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fdv_atomic_write,
	.writev = fdv_atomic_writev,
	.writemsg = fdv_atomic_writemsg,
	.inject = fdv_atomic_inject,
	.readwrite = fdv_atomic_readwrite,
	.readwritev = fdv_atomic_readwritev,
	.readwritemsg = fdv_atomic_readwritemsg,
	.compwrite = fdv_atomic_compwrite,
	.compwritev = fdv_atomic_compwritev,
	.compwritemsg = fdv_atomic_compwritemsg,
	.writevalid = fdv_atomic_writevalid,
	.readwritevalid = fdv_atomic_readwritevalid,
	.compwritevalid = fdv_atomic_compwritevalid,
};

struct fi_ops_msg fdv_msg_ops_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdv_msg_recv,
	.recvv = fdv_msg_recvv,
	.recvmsg = fdv_msg_recvmsg,
	.send = fdv_msg_send,
	.sendv = fdv_msg_sendv,
	.sendmsg = fdv_msg_sendmsg,
	.inject = fdv_msg_inject,
	.senddata = fdv_msg_senddata,
	.injectdata = fdv_msg_injectdata,
};

struct fi_ops_rma fdv_msg_ops_rma = {
	.size = sizeof(struct fi_ops_rma),
	.read = fdv_rma_read,
	.readv = fdv_rma_readv,
	.readmsg = fdv_rma_readmsg,
	.write = fdv_rma_write,
	.writev = fdv_rma_writev,
	.writemsg = fdv_rma_writemsg,
	.inject = fdv_rma_inject,
	.writedata = fdv_rma_writedata,
	.injectdata = fdv_rma_injectdata,
};

struct fi_ops_tagged fdv_msg_ops_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = fdv_enosys_trecv,
	.recvv = fdv_enosys_trecvv,
	.recvmsg = fdv_enosys_trecvmsg,
	.send = fdv_enosys_tsend,
	.sendv = fdv_enosys_tsendv,
	.sendmsg = fdv_enosys_tsendmsg,
	.inject = fdv_enosys_tinject,
	.senddata = fdv_enosys_tsenddata,
	.injectdata = fdv_enosys_tinjectdata,
};
