/* rstream (FI_EP_SOCK_STREAM) fi_msg calls. The direct wrappers call these
 * when an endpoint's kind is FDV_EP_KIND_STREAM; the OFF build's
 * fdv_rstream_ops_msg table calls the same functions.
 *
 * A stream call is not one work request: it takes the endpoint lock,
 * drives progress, copies between the caller's buffers and the rings and
 * posts writes and credit messages. That work lives in the library
 * (fdr_stream_send / fdr_stream_recv); what stays inline is turning each
 * fi_ call into one iovec form, so every call costs one direct call and
 * no table lookup. Descriptors, addresses and contexts mean nothing to a
 * stream and are ignored. */
#include <rdma/fi_endpoint.h>

#ifndef FDR_MSG_H
#define FDR_MSG_H

#include <fdv/fdv_compiler.h>

FDV_EXTERN_C_BEGIN

/* Out of line, in the library. flags: 0 or FI_PEEK. Return the bytes
 * accepted / delivered (> 0), 0 for a zero-length call or, on receive, at
 * the end of the stream, or a negative fi error (-FI_EAGAIN: nothing can
 * move now). */
ssize_t fdr_stream_send(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags);
ssize_t fdr_stream_recv(struct fid_ep *ep, const struct iovec *iov,
			size_t count, uint64_t flags);

FDV_INLINE ssize_t fdr_msg_send(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest_addr, void *context)
{
	struct iovec iov;

	(void)desc;
	(void)dest_addr;
	(void)context;
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	return fdr_stream_send(ep, &iov, 1, 0);
}

FDV_INLINE ssize_t fdr_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
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
FDV_INLINE ssize_t fdr_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				   uint64_t flags)
{
	if (fdv_unlikely(!msg))
		return -FI_EINVAL;
	return fdr_stream_send(ep, msg->msg_iov, msg->iov_count, flags);
}

FDV_INLINE ssize_t fdr_msg_recv(struct fid_ep *ep, void *buf, size_t len,
				void *desc, fi_addr_t src_addr, void *context)
{
	struct iovec iov;

	(void)desc;
	(void)src_addr;
	(void)context;
	iov.iov_base = buf;
	iov.iov_len = len;
	return fdr_stream_recv(ep, &iov, 1, 0);
}

FDV_INLINE ssize_t fdr_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t src_addr,
				 void *context)
{
	(void)desc;
	(void)src_addr;
	(void)context;
	return fdr_stream_recv(ep, iov, count, 0);
}

/* FI_PEEK: copy what is readable without consuming it (MSG_PEEK). */
FDV_INLINE ssize_t fdr_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				   uint64_t flags)
{
	if (fdv_unlikely(!msg))
		return -FI_EINVAL;
	return fdr_stream_recv(ep, msg->msg_iov, msg->iov_count, flags);
}

FDV_EXTERN_C_END

#endif /* FDR_MSG_H */
