/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_ATOMIC_H
/* Included on its own: go through the public header, which includes this
 * one at the point where its types are complete. */
#ifndef FD_RDMA_FI_ATOMIC_H
#include <rdma/fi_atomic.h>
#else
#define FD_DIRECT_ATOMIC_H

#define FABRIC_DIRECT_ATOMIC

#include <fdv/fdv_atomic.h>
#include <fdv/fdv_config.h>

#ifdef __cplusplus
extern "C" {
#endif

FDV_INLINE ssize_t fi_atomic(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->write(ep, buf, count, desc, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_write(ep, buf, count, desc, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_atomicv(struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->writev(ep, iov, desc, count, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_writev(ep, iov, desc, count, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_atomicmsg(struct fid_ep *ep,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->writemsg(ep, msg, flags);
#endif
	return fdv_atomic_writemsg(ep, msg, flags);
}

FDV_INLINE ssize_t fi_inject_atomic(struct fid_ep *ep, const void *buf,
				       size_t count, fi_addr_t dest_addr,
				       uint64_t addr, uint64_t key,
				       enum fi_datatype datatype,
				       enum fi_op op)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->inject(ep, buf, count, dest_addr, addr, key, datatype, op);
#endif
	return fdv_atomic_inject(ep, buf, count, dest_addr, addr, key, datatype, op);
}

FDV_INLINE ssize_t fi_fetch_atomic(struct fid_ep *ep, const void *buf,
				      size_t count, void *desc, void *result,
				      void *result_desc, fi_addr_t dest_addr,
				      uint64_t addr, uint64_t key,
				      enum fi_datatype datatype, enum fi_op op,
				      void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->readwrite(ep, buf, count, desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_readwrite(ep, buf, count, desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_fetch_atomicv(struct fid_ep *ep,
				       const struct fi_ioc *iov, void **desc,
				       size_t count, struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       fi_addr_t dest_addr, uint64_t addr,
				       uint64_t key, enum fi_datatype datatype,
				       enum fi_op op, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->readwritev(ep, iov, desc, count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_readwritev(ep, iov, desc, count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_fetch_atomicmsg(struct fid_ep *ep,
					 const struct fi_msg_atomic *msg,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count, uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->readwritemsg(ep, msg, resultv, result_desc, result_count, flags);
#endif
	return fdv_atomic_readwritemsg(ep, msg, resultv, result_desc, result_count, flags);
}

FDV_INLINE ssize_t fi_compare_atomic(struct fid_ep *ep, const void *buf,
					size_t count, void *desc,
					const void *compare,
					void *compare_desc, void *result,
					void *result_desc, fi_addr_t dest_addr,
					uint64_t addr, uint64_t key,
					enum fi_datatype datatype,
					enum fi_op op, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->compwrite(ep, buf, count, desc, compare, compare_desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_compwrite(ep, buf, count, desc, compare, compare_desc, result, result_desc, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_compare_atomicv(struct fid_ep *ep,
					 const struct fi_ioc *iov, void **desc,
					 size_t count,
					 const struct fi_ioc *comparev,
					 void **compare_desc,
					 size_t compare_count,
					 struct fi_ioc *resultv,
					 void **result_desc,
					 size_t result_count,
					 fi_addr_t dest_addr, uint64_t addr,
					 uint64_t key,
					 enum fi_datatype datatype,
					 enum fi_op op, void *context)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->compwritev(ep, iov, desc, count, comparev, compare_desc, compare_count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
#endif
	return fdv_atomic_compwritev(ep, iov, desc, count, comparev, compare_desc, compare_count, resultv, result_desc, result_count, dest_addr, addr, key, datatype, op, context);
}

FDV_INLINE ssize_t fi_compare_atomicmsg(struct fid_ep *ep,
					   const struct fi_msg_atomic *msg,
					   const struct fi_ioc *comparev,
					   void **compare_desc,
					   size_t compare_count,
					   struct fi_ioc *resultv,
					   void **result_desc,
					   size_t result_count, uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->compwritemsg(ep, msg, comparev, compare_desc, compare_count, resultv, result_desc, result_count, flags);
#endif
	return fdv_atomic_compwritemsg(ep, msg, comparev, compare_desc, compare_count, resultv, result_desc, result_count, flags);
}

FDV_INLINE int fi_atomicvalid(struct fid_ep *ep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->writevalid(ep, datatype, op, count);
#endif
	return fdv_atomic_writevalid(ep, datatype, op, count);
}

FDV_INLINE int fi_fetch_atomicvalid(struct fid_ep *ep,
				       enum fi_datatype datatype,
				       enum fi_op op, size_t *count)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->readwritevalid(ep, datatype, op, count);
#endif
	return fdv_atomic_readwritevalid(ep, datatype, op, count);
}

FDV_INLINE int fi_compare_atomicvalid(struct fid_ep *ep,
					 enum fi_datatype datatype,
					 enum fi_op op, size_t *count)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_ep_kind(ep) & FDV_EP_KIND_LAYER))
		return ep->atomic->compwritevalid(ep, datatype, op, count);
#endif
	return fdv_atomic_compwritevalid(ep, datatype, op, count);
}

static inline int fi_query_atomic(struct fid_domain *domain,
				  enum fi_datatype datatype, enum fi_op op,
				  struct fi_atomic_attr *attr, uint64_t flags)
{
	if (!FI_CHECK_OP(domain->ops, struct fi_ops_domain, query_atomic))
		return -FI_ENOSYS;
	return domain->ops->query_atomic(domain, datatype, op, attr, flags);
}

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_ATOMIC_H */
#endif /* FD_DIRECT_ATOMIC_H */
