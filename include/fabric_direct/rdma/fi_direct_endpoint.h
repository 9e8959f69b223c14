/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_ENDPOINT_H
/* Included on its own: go through the public header, which includes this
 * one at the point where its types are complete. */
#ifndef FD_RDMA_FI_ENDPOINT_H
#include <rdma/fi_endpoint.h>
#else
#define FD_DIRECT_ENDPOINT_H

#define FABRIC_DIRECT_ENDPOINT

#include <fdv/fdv_msg.h>
#include <fdv/fdv_config.h>

#ifdef __cplusplus
extern "C" {
#endif

#if FDV_EP_LAYERS && !defined(FDV_DGRAM_H)
/* defined in <fdv/fdv_dgram.h>, included at the end of this file */
FDV_INLINE ssize_t fdv_dgram_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void *context);
FDV_INLINE ssize_t fdv_dgram_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr);
FDV_INLINE ssize_t fdv_dgram_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context);
#endif

static inline int fi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
				struct fid_pep **pep, void *context)
{
	return fabric->ops->passive_ep(fabric, info, pep, context);
}

static inline int fi_endpoint(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, void *context)
{
	return domain->ops->endpoint(domain, info, ep, context);
}

static inline int fi_endpoint2(struct fid_domain *domain, struct fi_info *info,
			       struct fid_ep **ep, uint64_t flags,
			       void *context)
{
	if (flags == 0)
		return fi_endpoint(domain, info, ep, context);
	if (!FI_CHECK_OP(domain->ops, struct fi_ops_domain, endpoint2))
		return -FI_ENOSYS;
	return domain->ops->endpoint2(domain, info, ep, flags, context);
}

static inline int fi_scalable_ep(struct fid_domain *domain,
				 struct fi_info *info, struct fid_ep **sep,
				 void *context)
{
	return domain->ops->scalable_ep(domain, info, sep, context);
}

static inline int fi_ep_bind(struct fid_ep *ep, struct fid *bfid,
			     uint64_t flags)
{
	return ep->fid.ops->bind(&ep->fid, bfid, flags);
}

static inline int fi_pep_bind(struct fid_pep *pep, struct fid *bfid,
			      uint64_t flags)
{
	return pep->fid.ops->bind(&pep->fid, bfid, flags);
}

static inline int fi_scalable_ep_bind(struct fid_ep *sep, struct fid *bfid,
				      uint64_t flags)
{
	return sep->fid.ops->bind(&sep->fid, bfid, flags);
}

static inline int fi_enable(struct fid_ep *ep)
{
	return ep->fid.ops->control(&ep->fid, FI_ENABLE, NULL);
}

static inline ssize_t fi_cancel(fid_t fid, void *context)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->cancel(fid, context);
}

static inline int fi_setopt(fid_t fid, int level, int optname,
			    const void *optval, size_t optlen)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->setopt(fid, level, optname, optval, optlen);
}

static inline int fi_getopt(fid_t fid, int level, int optname,
			    void *optval, size_t *optlen)
{
	struct fid_ep *ep = container_of(fid, struct fid_ep, fid);

	return ep->ops->getopt(fid, level, optname, optval, optlen);
}

static inline int fi_ep_alias(struct fid_ep *ep, struct fid_ep **alias_ep,
			      uint64_t flags)
{
	struct fid *alias_fid;
	int ret;

	ret = fi_alias(&ep->fid, &alias_fid, flags);
	if (ret == 0)
		*alias_ep = container_of(alias_fid, struct fid_ep, fid);
	return ret;
}

static inline int fi_tx_context(struct fid_ep *ep, int idx,
				struct fi_tx_attr *attr, struct fid_ep **tx_ep,
				void *context)
{
	return ep->ops->tx_ctx(ep, idx, attr, tx_ep, context);
}

static inline int fi_rx_context(struct fid_ep *ep, int idx,
				struct fi_rx_attr *attr, struct fid_ep **rx_ep,
				void *context)
{
	return ep->ops->rx_ctx(ep, idx, attr, rx_ep, context);
}

static inline FI_DEPRECATED_FUNC ssize_t fi_rx_size_left(struct fid_ep *ep)
{
	return ep->ops->rx_size_left(ep);
}

static inline FI_DEPRECATED_FUNC ssize_t fi_tx_size_left(struct fid_ep *ep)
{
	return ep->ops->tx_size_left(ep);
}

static inline int fi_stx_context(struct fid_domain *domain,
				 struct fi_tx_attr *attr, struct fid_stx **stx,
				 void *context)
{
	return domain->ops->stx_ctx(domain, attr, stx, context);
}

static inline int fi_srx_context(struct fid_domain *domain,
				 struct fi_rx_attr *attr, struct fid_ep **rx_ep,
				 void *context)
{
	return domain->ops->srx_ctx(domain, attr, rx_ep, context);
}

FDV_INLINE ssize_t fi_recv(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER)) {
#if FDV_EP_LAYERS
		if (fdv_likely(fdv_ep_kind_reload(ep) == FDV_EP_KIND_DGRAM))
			return fdv_dgram_recv(ep, buf, len, desc, src_addr, context);
#endif
		return ep->msg->recv(ep, buf, len, desc, src_addr, context);
	}
#endif
	return fdv_msg_recv(ep, buf, len, desc, src_addr, context);
}

FDV_INLINE ssize_t fi_recvv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->recvv(ep, iov, desc, count, src_addr, context);
#endif
	return fdv_msg_recvv(ep, iov, desc, count, src_addr, context);
}

FDV_INLINE ssize_t fi_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->recvmsg(ep, msg, flags);
#endif
	return fdv_msg_recvmsg(ep, msg, flags);
}

FDV_INLINE ssize_t fi_send(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest_addr, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER)) {
#if FDV_EP_LAYERS
		if (fdv_likely(fdv_ep_kind_reload(ep) == FDV_EP_KIND_DGRAM))
			return fdv_dgram_send(ep, buf, len, desc, dest_addr, context);
#endif
		return ep->msg->send(ep, buf, len, desc, dest_addr, context);
	}
#endif
	return fdv_msg_send(ep, buf, len, desc, dest_addr, context);
}

FDV_INLINE ssize_t fi_sendv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest_addr,
			       void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->sendv(ep, iov, desc, count, dest_addr, context);
#endif
	return fdv_msg_sendv(ep, iov, desc, count, dest_addr, context);
}

FDV_INLINE ssize_t fi_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->sendmsg(ep, msg, flags);
#endif
	return fdv_msg_sendmsg(ep, msg, flags);
}

FDV_INLINE ssize_t fi_inject(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest_addr)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER)) {
#if FDV_EP_LAYERS
		if (fdv_likely(fdv_ep_kind_reload(ep) == FDV_EP_KIND_DGRAM))
			return fdv_dgram_inject(ep, buf, len, dest_addr);
#endif
		return ep->msg->inject(ep, buf, len, dest_addr);
	}
#endif
	return fdv_msg_inject(ep, buf, len, dest_addr);
}

FDV_INLINE ssize_t fi_senddata(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, uint64_t data,
				  fi_addr_t dest_addr, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->senddata(ep, buf, len, desc, data, dest_addr, context);
#endif
	return fdv_msg_senddata(ep, buf, len, desc, data, dest_addr, context);
}

FDV_INLINE ssize_t fi_injectdata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->msg->injectdata(ep, buf, len, data, dest_addr);
#endif
	return fdv_msg_injectdata(ep, buf, len, data, dest_addr);
}

#ifdef __cplusplus
}
#endif

#if FDV_EP_LAYERS
#include <fdv/fdv_dgram.h>
#endif

#endif /* FD_RDMA_FI_ENDPOINT_H */
#endif /* FD_DIRECT_ENDPOINT_H */
