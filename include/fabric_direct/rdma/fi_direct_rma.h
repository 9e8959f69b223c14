/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_RMA_H
/* Included on its own: go through the public header, which includes this
 * one at the point where its types are complete. */
#ifndef FD_RDMA_FI_RMA_H
#include <rdma/fi_rma.h>
#else
#define FD_DIRECT_RMA_H

#define FABRIC_DIRECT_RMA

#include <fdv/fdv_rma.h>
#include <fdv/fdv_config.h>

#ifdef __cplusplus
extern "C" {
#endif

FDV_INLINE ssize_t fi_read(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, uint64_t addr,
			      uint64_t key, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->read(ep, buf, len, desc, src_addr, addr, key, context);
#endif
	return fdv_rma_read(ep, buf, len, desc, src_addr, addr, key, context);
}

FDV_INLINE ssize_t fi_readv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       uint64_t addr, uint64_t key, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->readv(ep, iov, desc, count, src_addr, addr, key, context);
#endif
	return fdv_rma_readv(ep, iov, desc, count, src_addr, addr, key, context);
}

FDV_INLINE ssize_t fi_readmsg(struct fid_ep *ep,
				 const struct fi_msg_rma *msg, uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->readmsg(ep, msg, flags);
#endif
	return fdv_rma_readmsg(ep, msg, flags);
}

FDV_INLINE ssize_t fi_write(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest_addr, uint64_t addr,
			       uint64_t key, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->write(ep, buf, len, desc, dest_addr, addr, key, context);
#endif
	return fdv_rma_write(ep, buf, len, desc, dest_addr, addr, key, context);
}

FDV_INLINE ssize_t fi_writev(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->writev(ep, iov, desc, count, dest_addr, addr, key, context);
#endif
	return fdv_rma_writev(ep, iov, desc, count, dest_addr, addr, key, context);
}

FDV_INLINE ssize_t fi_writemsg(struct fid_ep *ep,
				  const struct fi_msg_rma *msg, uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->writemsg(ep, msg, flags);
#endif
	return fdv_rma_writemsg(ep, msg, flags);
}

FDV_INLINE ssize_t fi_inject_write(struct fid_ep *ep, const void *buf,
				      size_t len, fi_addr_t dest_addr,
				      uint64_t addr, uint64_t key)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->inject(ep, buf, len, dest_addr, addr, key);
#endif
	return fdv_rma_inject(ep, buf, len, dest_addr, addr, key);
}

FDV_INLINE ssize_t fi_writedata(struct fid_ep *ep, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->writedata(ep, buf, len, desc, data, dest_addr, addr, key, context);
#endif
	return fdv_rma_writedata(ep, buf, len, desc, data, dest_addr, addr, key, context);
}

FDV_INLINE ssize_t fi_inject_writedata(struct fid_ep *ep, const void *buf,
					  size_t len, uint64_t data,
					  fi_addr_t dest_addr, uint64_t addr,
					  uint64_t key)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->rma->injectdata(ep, buf, len, data, dest_addr, addr, key);
#endif
	return fdv_rma_injectdata(ep, buf, len, data, dest_addr, addr, key);
}

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_RMA_H */
#endif /* FD_DIRECT_RMA_H */
