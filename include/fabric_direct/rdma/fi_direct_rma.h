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

#include <fdv/fdv_ep.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline ssize_t fi_read(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, uint64_t addr,
			      uint64_t key, void *context)
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

static inline ssize_t fi_readv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       uint64_t addr, uint64_t key, void *context)
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

static inline ssize_t fi_readmsg(struct fid_ep *ep,
				 const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

static inline ssize_t fi_write(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, fi_addr_t dest_addr, uint64_t addr,
			       uint64_t key, void *context)
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

static inline ssize_t fi_writev(struct fid_ep *ep, const struct iovec *iov,
				void **desc, size_t count, fi_addr_t dest_addr,
				uint64_t addr, uint64_t key, void *context)
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

static inline ssize_t fi_writemsg(struct fid_ep *ep,
				  const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep;
	(void)msg;
	(void)flags;
	return -FI_ENOSYS;
}

static inline ssize_t fi_inject_write(struct fid_ep *ep, const void *buf,
				      size_t len, fi_addr_t dest_addr,
				      uint64_t addr, uint64_t key)
{
	(void)ep;
	(void)buf;
	(void)len;
	(void)dest_addr;
	(void)addr;
	(void)key;
	return -FI_ENOSYS;
}

static inline ssize_t fi_writedata(struct fid_ep *ep, const void *buf,
				   size_t len, void *desc, uint64_t data,
				   fi_addr_t dest_addr, uint64_t addr,
				   uint64_t key, void *context)
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

static inline ssize_t fi_inject_writedata(struct fid_ep *ep, const void *buf,
					  size_t len, uint64_t data,
					  fi_addr_t dest_addr, uint64_t addr,
					  uint64_t key)
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

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_RMA_H */
#endif /* FD_DIRECT_RMA_H */
