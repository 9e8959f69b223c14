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
#include <rdma/fi_collective.h>
#include <fdv/fdv_msg.h>
#include <fdv/fdv_cq.h>
#include <fdv/fdv_rma.h>
#include <fdv/fdv_atomic.h>
#include <fdv/fdv_ep.h>
#include "fdv_ops.h"

ssize_t fdv_no_msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)dest_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)dest_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)data;
	(void)dest_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)data;
	(void)dest_addr;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)src_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)src_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)src_addr;
	(void)addr;
	(void)key;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)src_addr;
	(void)addr;
	(void)key;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	(void)addr;
	(void)key;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)data;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)data;
	(void)dest_addr;
	(void)addr;
	(void)key;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)resultv;
	(void)result_desc;
	(void)result_count;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)resultv;
	(void)result_desc;
	(void)result_count;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare, void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)compare;
	(void)compare_desc;
	(void)result;
	(void)result_desc;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)comparev;
	(void)compare_desc;
	(void)compare_count;
	(void)resultv;
	(void)result_desc;
	(void)result_count;
	(void)dest_addr;
	(void)addr;
	(void)key;
	(void)datatype;
	(void)op;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)comparev;
	(void)compare_desc;
	(void)compare_count;
	(void)resultv;
	(void)result_desc;
	(void)result_count;
	(void)flags;
	return -FI_ENOSYS;
}

int fdv_no_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep;
	(void)datatype;
	(void)op;
	(void)count;
	return -FI_ENOSYS;
}

int fdv_no_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep;
	(void)datatype;
	(void)op;
	(void)count;
	return -FI_ENOSYS;
}

int fdv_no_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep;
	(void)datatype;
	(void)op;
	(void)count;
	return -FI_ENOSYS;
}

ssize_t fdv_no_tagged_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
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

ssize_t fdv_no_tagged_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
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

ssize_t fdv_no_tagged_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_tagged_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t tag, void *context)
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

ssize_t fdv_no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t tag, void *context)
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

ssize_t fdv_no_tagged_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

ssize_t fdv_no_tagged_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context)
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

ssize_t fdv_no_tagged_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)data;
	(void)dest_addr;
	(void)tag;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	(void)ep;
	(void)coll_addr;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)coll_addr;
	(void)root_addr;
	(void)datatype;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)datatype;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)datatype;
	(void)op;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)datatype;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_reduce_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)datatype;
	(void)op;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)root_addr;
	(void)datatype;
	(void)op;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)root_addr;
	(void)datatype;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep;
	(void)buf;
	(void)count;
	(void)desc;
	(void)result;
	(void)result_desc;
	(void)coll_addr;
	(void)root_addr;
	(void)datatype;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)resultv;
	(void)result_desc;
	(void)result_count;
	(void)flags;
	return -FI_ENOSYS;
}

ssize_t fdv_no_collective_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	(void)ep;
	(void)coll_addr;
	(void)flags;
	(void)context;
	return -FI_ENOSYS;
}

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

struct fi_ops_collective fdv_msg_ops_collective = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = fdv_no_collective_barrier,
	.broadcast = fdv_no_collective_broadcast,
	.alltoall = fdv_no_collective_alltoall,
	.allreduce = fdv_no_collective_allreduce,
	.allgather = fdv_no_collective_allgather,
	.reduce_scatter = fdv_no_collective_reduce_scatter,
	.reduce = fdv_no_collective_reduce,
	.scatter = fdv_no_collective_scatter,
	.gather = fdv_no_collective_gather,
	.msg = fdv_no_collective_msg,
	.barrier2 = fdv_no_collective_barrier2,
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
	.recv = fdv_no_tagged_recv,
	.recvv = fdv_no_tagged_recvv,
	.recvmsg = fdv_no_tagged_recvmsg,
	.send = fdv_no_tagged_send,
	.sendv = fdv_no_tagged_sendv,
	.sendmsg = fdv_no_tagged_sendmsg,
	.inject = fdv_no_tagged_inject,
	.senddata = fdv_no_tagged_senddata,
	.injectdata = fdv_no_tagged_injectdata,
};

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

struct fi_ops_atomic fdv_no_ops_atomic = {
	.size = sizeof(struct fi_ops_atomic),
	.write = fdv_no_atomic_write,
	.writev = fdv_no_atomic_writev,
	.writemsg = fdv_no_atomic_writemsg,
	.inject = fdv_no_atomic_inject,
	.readwrite = fdv_no_atomic_readwrite,
	.readwritev = fdv_no_atomic_readwritev,
	.readwritemsg = fdv_no_atomic_readwritemsg,
	.compwrite = fdv_no_atomic_compwrite,
	.compwritev = fdv_no_atomic_compwritev,
	.compwritemsg = fdv_no_atomic_compwritemsg,
	.writevalid = fdv_no_atomic_writevalid,
	.readwritevalid = fdv_no_atomic_readwritevalid,
	.compwritevalid = fdv_no_atomic_compwritevalid,
};

struct fi_ops_collective fdv_no_ops_collective = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = fdv_no_collective_barrier,
	.broadcast = fdv_no_collective_broadcast,
	.alltoall = fdv_no_collective_alltoall,
	.allreduce = fdv_no_collective_allreduce,
	.allgather = fdv_no_collective_allgather,
	.reduce_scatter = fdv_no_collective_reduce_scatter,
	.reduce = fdv_no_collective_reduce,
	.scatter = fdv_no_collective_scatter,
	.gather = fdv_no_collective_gather,
	.msg = fdv_no_collective_msg,
	.barrier2 = fdv_no_collective_barrier2,
};

struct fi_ops_msg fdv_no_ops_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdv_no_msg_recv,
	.recvv = fdv_no_msg_recvv,
	.recvmsg = fdv_no_msg_recvmsg,
	.send = fdv_no_msg_send,
	.sendv = fdv_no_msg_sendv,
	.sendmsg = fdv_no_msg_sendmsg,
	.inject = fdv_no_msg_inject,
	.senddata = fdv_no_msg_senddata,
	.injectdata = fdv_no_msg_injectdata,
};

struct fi_ops_rma fdv_no_ops_rma = {
	.size = sizeof(struct fi_ops_rma),
	.read = fdv_no_rma_read,
	.readv = fdv_no_rma_readv,
	.readmsg = fdv_no_rma_readmsg,
	.write = fdv_no_rma_write,
	.writev = fdv_no_rma_writev,
	.writemsg = fdv_no_rma_writemsg,
	.inject = fdv_no_rma_inject,
	.writedata = fdv_no_rma_writedata,
	.injectdata = fdv_no_rma_injectdata,
};

struct fi_ops_tagged fdv_no_ops_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = fdv_no_tagged_recv,
	.recvv = fdv_no_tagged_recvv,
	.recvmsg = fdv_no_tagged_recvmsg,
	.send = fdv_no_tagged_send,
	.sendv = fdv_no_tagged_sendv,
	.sendmsg = fdv_no_tagged_sendmsg,
	.inject = fdv_no_tagged_inject,
	.senddata = fdv_no_tagged_senddata,
	.injectdata = fdv_no_tagged_injectdata,
};
