/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_TAGGED_H
/* Included on its own: go through the public header, which includes this
 * one at the point where its types are complete. */
#ifndef FD_RDMA_FI_TAGGED_H
#include <rdma/fi_tagged.h>
#else
#define FD_DIRECT_TAGGED_H

#define FABRIC_DIRECT_TAGGED

#include <fdv/fdv_ep.h>
#include <fdv/fdv_config.h>

#ifdef __cplusplus
extern "C" {
#endif

FDV_INLINE ssize_t fi_trecv(struct fid_ep *ep, void *buf, size_t len,
			       void *desc, fi_addr_t src_addr, uint64_t tag,
			       uint64_t ignore, void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)src_addr;
	(void)tag;
	(void)ignore;
	(void)context;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->recv(ep, buf, len, desc, src_addr, tag, ignore, context);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_trecvv(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t src_addr,
				uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)src_addr;
	(void)tag;
	(void)ignore;
	(void)context;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->recvv(ep, iov, desc, count, src_addr, tag, ignore, context);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_trecvmsg(struct fid_ep *ep,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->recvmsg(ep, msg, flags);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tsend(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest_addr, uint64_t tag,
			       void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)dest_addr;
	(void)tag;
	(void)context;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->send(ep, buf, len, desc, dest_addr, tag, context);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tsendv(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest_addr,
				uint64_t tag, void *context)
{
	(void)ep;
	(void)iov;
	(void)desc;
	(void)count;
	(void)dest_addr;
	(void)tag;
	(void)context;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->sendv(ep, iov, desc, count, dest_addr, tag, context);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tsendmsg(struct fid_ep *ep,
				  const struct fi_msg_tagged *msg,
				  uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->sendmsg(ep, msg, flags);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tinject(struct fid_ep *ep, const void *buf,
				 size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	(void)tag;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->inject(ep, buf, len, dest_addr, tag);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tsenddata(struct fid_ep *ep, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t tag,
				   void *context)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)desc;
	(void)data;
	(void)dest_addr;
	(void)tag;
	(void)context;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->senddata(ep, buf, len, desc, data, dest_addr, tag, context);
#endif
	return -FI_ENOSYS;
}

FDV_INLINE ssize_t fi_tinjectdata(struct fid_ep *ep, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)data;
	(void)dest_addr;
	(void)tag;
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->tagged->injectdata(ep, buf, len, data, dest_addr, tag);
#endif
	return -FI_ENOSYS;
}

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_TAGGED_H */
#endif /* FD_DIRECT_TAGGED_H */
