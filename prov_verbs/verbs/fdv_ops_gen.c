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
