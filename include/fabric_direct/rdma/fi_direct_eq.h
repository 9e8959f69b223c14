/* Generated from gen/api.spec and include/rdma by gen/gen.py: do not
 * edit; regenerate with `python3 gen/gen.py`. */


#ifndef FD_DIRECT_EQ_H
/* Included on its own: go through the public header, which includes this
 * one at the point where its types are complete. */
#ifndef FD_RDMA_FI_EQ_H
#include <rdma/fi_eq.h>
#else
#define FD_DIRECT_EQ_H

#define FABRIC_DIRECT_EQ

#include <fdv/fdv_cq.h>
#include <fdv/fdv_config.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline int fi_trywait(struct fid_fabric *fabric, struct fid **fids,
			     int count)
{
	return fabric->ops->trywait(fabric, fids, count);
}

static inline int fi_wait(struct fid_wait *waitset, int timeout)
{
	return waitset->ops->wait(waitset, timeout);
}

static inline int fi_poll(struct fid_poll *pollset, void **context,
			  int count)
{
	return pollset->ops->poll(pollset, context, count);
}

static inline int fi_poll_add(struct fid_poll *pollset,
			      struct fid *event_fid, uint64_t flags)
{
	return pollset->ops->poll_add(pollset, event_fid, flags);
}

static inline int fi_poll_del(struct fid_poll *pollset,
			      struct fid *event_fid, uint64_t flags)
{
	return pollset->ops->poll_del(pollset, event_fid, flags);
}

static inline int fi_eq_open(struct fid_fabric *fabric,
			     struct fi_eq_attr *attr, struct fid_eq **eq,
			     void *context)
{
	return fabric->ops->eq_open(fabric, attr, eq, context);
}

static inline ssize_t fi_eq_read(struct fid_eq *eq, uint32_t *event,
				 void *buf, size_t len, uint64_t flags)
{
	return eq->ops->read(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_readerr(struct fid_eq *eq,
				    struct fi_eq_err_entry *buf,
				    uint64_t flags)
{
	return eq->ops->readerr(eq, buf, flags);
}

static inline ssize_t fi_eq_write(struct fid_eq *eq, uint32_t event,
				  const void *buf, size_t len,
				  uint64_t flags)
{
	return eq->ops->write(eq, event, buf, len, flags);
}

static inline ssize_t fi_eq_sread(struct fid_eq *eq, uint32_t *event,
				  void *buf, size_t len, int timeout,
				  uint64_t flags)
{
	return eq->ops->sread(eq, event, buf, len, timeout, flags);
}

static inline const char *fi_eq_strerror(struct fid_eq *eq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
	return eq->ops->strerror(eq, prov_errno, err_data, buf, len);
}

FDV_INLINE ssize_t fi_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
#if FDV_EP_LAYERS
	return fdv_cq_read_k(cq, buf, count);
#else
	return fdv_cq_read(cq, buf, count);
#endif
}

FDV_INLINE ssize_t fi_cq_readfrom(struct fid_cq *cq, void *buf,
				     size_t count, fi_addr_t *src_addr)
{
#if FDV_EP_LAYERS
	return fdv_cq_readfrom_k(cq, buf, count, src_addr);
#else
	return fdv_cq_readfrom(cq, buf, count, src_addr);
#endif
}

FDV_INLINE ssize_t fi_cq_readerr(struct fid_cq *cq,
				    struct fi_cq_err_entry *buf,
				    uint64_t flags)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_cq_kind(cq) == FDV_CQ_KIND_LAYER))
		return cq->ops->readerr(cq, buf, flags);
#endif
	return fdv_cq_readerr(cq, buf, flags);
}

FDV_INLINE ssize_t fi_cq_sread(struct fid_cq *cq, void *buf,
				  size_t count, const void *cond,
				  int timeout)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_cq_kind(cq) == FDV_CQ_KIND_LAYER))
		return cq->ops->sread(cq, buf, count, cond, timeout);
#endif
	return fdv_cq_sread(cq, buf, count, cond, timeout);
}

FDV_INLINE ssize_t fi_cq_sreadfrom(struct fid_cq *cq, void *buf,
				      size_t count, fi_addr_t *src_addr,
				      const void *cond, int timeout)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_cq_kind(cq) == FDV_CQ_KIND_LAYER))
		return cq->ops->sreadfrom(cq, buf, count, src_addr, cond, timeout);
#endif
	return fdv_cq_sreadfrom(cq, buf, count, src_addr, cond, timeout);
}

FDV_INLINE int fi_cq_signal(struct fid_cq *cq)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_cq_kind(cq) == FDV_CQ_KIND_LAYER))
		return cq->ops->signal(cq);
#endif
	return fdv_cq_signal(cq);
}

FDV_INLINE const char *fi_cq_strerror(struct fid_cq *cq, int prov_errno,
					 const void *err_data, char *buf,
					 size_t len)
{
#if FDV_EP_LAYERS
	if (fdv_unlikely(fdv_cq_kind(cq) == FDV_CQ_KIND_LAYER))
		return cq->ops->strerror(cq, prov_errno, err_data, buf, len);
#endif
	return fdv_cq_strerror(cq, prov_errno, err_data, buf, len);
}

static inline uint64_t fi_cntr_read(struct fid_cntr *cntr)
{
	return cntr->ops->read(cntr);
}

static inline uint64_t fi_cntr_readerr(struct fid_cntr *cntr)
{
	return cntr->ops->readerr(cntr);
}

static inline int fi_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->add(cntr, value);
}

static inline int fi_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, adderr))
		return -FI_ENOSYS;
	return cntr->ops->adderr(cntr, value);
}

static inline int fi_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	return cntr->ops->set(cntr, value);
}

static inline int fi_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	if (!FI_CHECK_OP(cntr->ops, struct fi_ops_cntr, seterr))
		return -FI_ENOSYS;
	return cntr->ops->seterr(cntr, value);
}

static inline int fi_cntr_wait(struct fid_cntr *cntr, uint64_t threshold,
			       int timeout)
{
	return cntr->ops->wait(cntr, threshold, timeout);
}

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_EQ_H */
#endif /* FD_DIRECT_EQ_H */
