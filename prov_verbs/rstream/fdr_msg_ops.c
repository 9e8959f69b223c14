/* rstream (FI_EP_SOCK_STREAM) fi_msg calls: the fi_ops_msg table every
 * rstream endpoint installs. The direct build's wrappers reach it through
 * ep->msg too (an endpoint that is not MSG goes through its own table),
 * so both builds run this code.
 *
 * A stream call is not one work request: it takes the endpoint lock,
 * drives progress, copies between the caller's buffers and the rings and
 * posts writes and credit messages (fdr_stream_send / fdr_stream_recv).
 * Each call here only turns its fi_ form into one iovec form. Descriptors,
 * addresses and contexts mean nothing to a stream and are ignored. */
#include "fdr.h"

static ssize_t fdr_send(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };

	(void)desc;
	(void)dest_addr;
	(void)context;
	return fdr_stream_send(ep, &iov, 1, 0);
}

static ssize_t fdr_sendv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 void *context)
{
	(void)desc;
	(void)dest_addr;
	(void)context;
	return fdr_stream_send(ep, iov, count, 0);
}

/* FI_PEEK (the rstream extension): how many bytes a send would accept
 * now, nothing sent. Other flags have no meaning for a stream. */
static ssize_t fdr_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return fdr_stream_send(ep, msg->msg_iov, msg->iov_count, flags);
}

static ssize_t fdr_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)desc;
	(void)src_addr;
	(void)context;
	return fdr_stream_recv(ep, &iov, 1, 0);
}

static ssize_t fdr_recvv(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 void *context)
{
	(void)desc;
	(void)src_addr;
	(void)context;
	return fdr_stream_recv(ep, iov, count, 0);
}

/* FI_PEEK: copy what is readable without consuming it (MSG_PEEK). */
static ssize_t fdr_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return fdr_stream_recv(ep, msg->msg_iov, msg->iov_count, flags);
}

/* inject and remote CQ data have no meaning on a byte stream */
struct fi_ops_msg fdr_ops_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdr_recv,
	.recvv = fdr_recvv,
	.recvmsg = fdr_recvmsg,
	.send = fdr_send,
	.sendv = fdr_sendv,
	.sendmsg = fdr_sendmsg,
	.inject = fd_no_msg_inject,
	.senddata = fd_no_msg_senddata,
	.injectdata = fd_no_msg_injectdata,
};
