/*
 * fabric-direct: domains, address vectors and memory registration
 * (libfabric 1.17 API).
 */
#ifndef FD_RDMA_FI_DOMAIN_H
#define FD_RDMA_FI_DOMAIN_H

#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- address vectors ------------------------------------------------ */

/* AV flags; the high ones share bits with op flags that never reach an AV. */
#define FI_SYMMETRIC		(1ULL << 59)
#define FI_SYNC_ERR		(1ULL << 58)
#define FI_UNIVERSE		(1ULL << 57)

/* AV-set flags: which collectives the set will be used for. */
#define FI_BARRIER_SET		(1ULL << 40)
#define FI_BROADCAST_SET	(1ULL << 41)
#define FI_ALLTOALL_SET		(1ULL << 42)
#define FI_ALLREDUCE_SET	(1ULL << 43)
#define FI_ALLGATHER_SET	(1ULL << 44)
#define FI_REDUCE_SCATTER_SET	(1ULL << 45)
#define FI_REDUCE_SET		(1ULL << 46)
#define FI_SCATTER_SET		(1ULL << 47)
#define FI_GATHER_SET		(1ULL << 48)

struct fi_av_attr {
	enum fi_av_type		type;
	int			rx_ctx_bits;	/* see fi_rx_addr() */
	size_t			count;
	size_t			ep_per_node;
	const char		*name;		/* shared AV name, or NULL */
	void			*map_addr;
	uint64_t		flags;
};

struct fi_av_set_attr {
	size_t			count;
	fi_addr_t		start_addr;
	fi_addr_t		end_addr;
	uint64_t		stride;
	size_t			comm_key_size;
	uint8_t			*comm_key;
	uint64_t		flags;
};

struct fid_av_set;

struct fi_ops_av {
	size_t	size;
	int	(*insert)(struct fid_av *av, const void *addr, size_t count,
			  fi_addr_t *fi_addr, uint64_t flags, void *context);
	int	(*insertsvc)(struct fid_av *av, const char *node,
			     const char *service, fi_addr_t *fi_addr,
			     uint64_t flags, void *context);
	int	(*insertsym)(struct fid_av *av, const char *node,
			     size_t nodecnt, const char *service,
			     size_t svccnt, fi_addr_t *fi_addr,
			     uint64_t flags, void *context);
	int	(*remove)(struct fid_av *av, fi_addr_t *fi_addr, size_t count,
			  uint64_t flags);
	int	(*lookup)(struct fid_av *av, fi_addr_t fi_addr, void *addr,
			  size_t *addrlen);
	const char *(*straddr)(struct fid_av *av, const void *addr,
			       char *buf, size_t *len);
	int	(*av_set)(struct fid_av *av, struct fi_av_set_attr *attr,
			  struct fid_av_set **av_set, void *context);
};

struct fid_av {
	struct fid		fid;
	struct fi_ops_av	*ops;
};

/* ---- memory regions ------------------------------------------------- */

/*
 * mem_desc and key are plain fields, not ops, so that fi_mr_desc() and
 * fi_mr_key() cost a load: they sit on every data-path call.
 */
struct fid_mr {
	struct fid		fid;
	void			*mem_desc;	/* local descriptor for ops */
	uint64_t		key;		/* what a peer needs for RMA */
};

/* Where registered memory lives (host or an accelerator API). */
enum fi_hmem_iface {
	FI_HMEM_SYSTEM	= 0,
	FI_HMEM_CUDA,
	FI_HMEM_ROCR,
	FI_HMEM_ZE,
	FI_HMEM_NEURON,
	FI_HMEM_SYNAPSEAI,
};

struct fi_mr_attr {
	const struct iovec	*mr_iov;
	size_t			iov_count;
	uint64_t		access;		/* FI_READ/WRITE/REMOTE_* ... */
	uint64_t		offset;
	uint64_t		requested_key;
	void			*context;
	size_t			auth_key_size;
	uint8_t			*auth_key;
	enum fi_hmem_iface	iface;
	union {			/* device id, meaning depends on iface */
		uint64_t	reserved;
		int		cuda;
		int		ze;
		int		neuron;
		int		synapseai;
	} device;
};

/* Argument of fi_control(FI_REFRESH). */
struct fi_mr_modify {
	uint64_t		flags;
	struct fi_mr_attr	attr;
};

/* fi_set_ops() name for replacing the library's device-memory copies. */
#define FI_SET_OPS_HMEM_OVERRIDE "hmem_override_ops"

struct fi_hmem_override_ops {
	size_t	size;
	ssize_t	(*copy_from_hmem_iov)(void *dest, size_t size,
				      enum fi_hmem_iface iface,
				      uint64_t device,
				      const struct iovec *hmem_iov,
				      size_t hmem_iov_count,
				      uint64_t hmem_iov_offset);
	ssize_t	(*copy_to_hmem_iov)(enum fi_hmem_iface iface,
				    uint64_t device,
				    const struct iovec *hmem_iov,
				    size_t hmem_iov_count,
				    uint64_t hmem_iov_offset,
				    const void *src, size_t size);
};

/* ---- atomic and collective type enums -------------------------------- */

/*
 * A direct provider may define these enums itself (to size tables at
 * compile time).  Upstream's fi_domain.h tested FABRIC_DIRECT_COLLECTIVE_DEF
 * without ever including the header that defines it, so a direct build that
 * also included fi_collective.h saw the collective enum twice; pulling
 * fi_direct_collective_def.h in here makes the guard effective.
 */
#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_atomic_def.h>
#include <rdma/fi_direct_collective_def.h>
#endif

#ifndef FABRIC_DIRECT_ATOMIC_DEF

/* Collective-only values start here so they never collide with atomics. */
#define FI_COLLECTIVE_OFFSET	256

enum fi_datatype {
	FI_INT8,
	FI_UINT8,
	FI_INT16,
	FI_UINT16,
	FI_INT32,
	FI_UINT32,
	FI_INT64,
	FI_UINT64,
	FI_FLOAT,
	FI_DOUBLE,
	FI_FLOAT_COMPLEX,
	FI_DOUBLE_COMPLEX,
	FI_LONG_DOUBLE,
	FI_LONG_DOUBLE_COMPLEX,
	FI_DATATYPE_LAST,
	/*
	 * The 128-bit types came later; they start at the old LAST value so
	 * tables sized by FI_DATATYPE_LAST in older binaries stay valid.
	 */
	FI_INT128 = FI_DATATYPE_LAST,
	FI_UINT128,
	FI_VOID = FI_COLLECTIVE_OFFSET,
};

enum fi_op {
	FI_MIN,
	FI_MAX,
	FI_SUM,
	FI_PROD,
	FI_LOR,
	FI_LAND,
	FI_BOR,
	FI_BAND,
	FI_LXOR,
	FI_BXOR,
	FI_ATOMIC_READ,
	FI_ATOMIC_WRITE,
	FI_CSWAP,
	FI_CSWAP_NE,
	FI_CSWAP_LE,
	FI_CSWAP_LT,
	FI_CSWAP_GE,
	FI_CSWAP_GT,
	FI_MSWAP,
	FI_ATOMIC_OP_LAST,
	FI_NOOP = FI_COLLECTIVE_OFFSET,
};

#endif /* FABRIC_DIRECT_ATOMIC_DEF */

#ifndef FABRIC_DIRECT_COLLECTIVE_DEF

enum fi_collective_op {
	FI_BARRIER,
	FI_BROADCAST,
	FI_ALLTOALL,
	FI_ALLREDUCE,
	FI_ALLGATHER,
	FI_REDUCE_SCATTER,
	FI_REDUCE,
	FI_SCATTER,
	FI_GATHER,
};

#endif /* FABRIC_DIRECT_COLLECTIVE_DEF */

/* ---- domain ---------------------------------------------------------- */

struct fi_atomic_attr;
struct fi_cq_attr;
struct fi_cntr_attr;
struct fi_collective_attr;

struct fi_ops_domain {
	size_t	size;
	int	(*av_open)(struct fid_domain *domain, struct fi_av_attr *attr,
			   struct fid_av **av, void *context);
	int	(*cq_open)(struct fid_domain *domain, struct fi_cq_attr *attr,
			   struct fid_cq **cq, void *context);
	int	(*endpoint)(struct fid_domain *domain, struct fi_info *info,
			    struct fid_ep **ep, void *context);
	int	(*scalable_ep)(struct fid_domain *domain,
			       struct fi_info *info, struct fid_ep **sep,
			       void *context);
	int	(*cntr_open)(struct fid_domain *domain,
			     struct fi_cntr_attr *attr,
			     struct fid_cntr **cntr, void *context);
	int	(*poll_open)(struct fid_domain *domain,
			     struct fi_poll_attr *attr,
			     struct fid_poll **pollset);
	int	(*stx_ctx)(struct fid_domain *domain, struct fi_tx_attr *attr,
			   struct fid_stx **stx, void *context);
	int	(*srx_ctx)(struct fid_domain *domain, struct fi_rx_attr *attr,
			   struct fid_ep **rx_ep, void *context);
	int	(*query_atomic)(struct fid_domain *domain,
				enum fi_datatype datatype, enum fi_op op,
				struct fi_atomic_attr *attr, uint64_t flags);
	int	(*query_collective)(struct fid_domain *domain,
				    enum fi_collective_op coll,
				    struct fi_collective_attr *attr,
				    uint64_t flags);
	int	(*endpoint2)(struct fid_domain *domain, struct fi_info *info,
			     struct fid_ep **ep, uint64_t flags,
			     void *context);
};

/* The entries receive the owning domain as &domain->fid, not the domain. */
struct fi_ops_mr {
	size_t	size;
	int	(*reg)(struct fid *fid, const void *buf, size_t len,
		       uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags,
		       struct fid_mr **mr, void *context);
	int	(*regv)(struct fid *fid, const struct iovec *iov,
			size_t count, uint64_t access, uint64_t offset,
			uint64_t requested_key, uint64_t flags,
			struct fid_mr **mr, void *context);
	int	(*regattr)(struct fid *fid, const struct fi_mr_attr *attr,
			   uint64_t flags, struct fid_mr **mr);
};

/* fi_domain_bind() flag: the bound EQ receives MR completion events. */
#define FI_REG_MR		(1ULL << 59)

struct fid_domain {
	struct fid		fid;
	struct fi_ops_domain	*ops;
	struct fi_ops_mr	*mr;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_domain.h>
#endif

#ifndef FABRIC_DIRECT_DOMAIN

static inline int fi_domain(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_domain **domain, void *context)
{
	return fabric->ops->domain(fabric, info, domain, context);
}

/* Without flags this is fi_domain(), so old providers without domain2 work. */
static inline int fi_domain2(struct fid_fabric *fabric, struct fi_info *info,
			     struct fid_domain **domain, uint64_t flags,
			     void *context)
{
	if (!flags)
		return fi_domain(fabric, info, domain, context);
	if (!FI_CHECK_OP(fabric->ops, struct fi_ops_fabric, domain2))
		return -FI_ENOSYS;
	return fabric->ops->domain2(fabric, info, domain, flags, context);
}

static inline int fi_domain_bind(struct fid_domain *domain, struct fid *fid,
				 uint64_t flags)
{
	return domain->fid.ops->bind(&domain->fid, fid, flags);
}

static inline int fi_cq_open(struct fid_domain *domain,
			     struct fi_cq_attr *attr, struct fid_cq **cq,
			     void *context)
{
	return domain->ops->cq_open(domain, attr, cq, context);
}

static inline int fi_cntr_open(struct fid_domain *domain,
			       struct fi_cntr_attr *attr,
			       struct fid_cntr **cntr, void *context)
{
	return domain->ops->cntr_open(domain, attr, cntr, context);
}

static inline int fi_wait_open(struct fid_fabric *fabric,
			       struct fi_wait_attr *attr,
			       struct fid_wait **waitset)
{
	return fabric->ops->wait_open(fabric, attr, waitset);
}

static inline int fi_poll_open(struct fid_domain *domain,
			       struct fi_poll_attr *attr,
			       struct fid_poll **pollset)
{
	return domain->ops->poll_open(domain, attr, pollset);
}

static inline int fi_mr_reg(struct fid_domain *domain, const void *buf,
			    size_t len, uint64_t acs, uint64_t offset,
			    uint64_t requested_key, uint64_t flags,
			    struct fid_mr **mr, void *context)
{
	return domain->mr->reg(&domain->fid, buf, len, acs, offset,
			       requested_key, flags, mr, context);
}

static inline int fi_mr_regv(struct fid_domain *domain,
			     const struct iovec *iov, size_t count,
			     uint64_t acs, uint64_t offset,
			     uint64_t requested_key, uint64_t flags,
			     struct fid_mr **mr, void *context)
{
	return domain->mr->regv(&domain->fid, iov, count, acs, offset,
				requested_key, flags, mr, context);
}

static inline int fi_mr_regattr(struct fid_domain *domain,
				const struct fi_mr_attr *attr,
				uint64_t flags, struct fid_mr **mr)
{
	return domain->mr->regattr(&domain->fid, attr, flags, mr);
}

static inline void *fi_mr_desc(struct fid_mr *mr)
{
	return mr->mem_desc;
}

static inline uint64_t fi_mr_key(struct fid_mr *mr)
{
	return mr->key;
}

static inline int fi_mr_raw_attr(struct fid_mr *mr, uint64_t *base_addr,
				 uint8_t *raw_key, size_t *key_size,
				 uint64_t flags)
{
	struct fi_mr_raw_attr req;

	req.flags = flags;
	req.base_addr = base_addr;
	req.raw_key = raw_key;
	req.key_size = key_size;
	return mr->fid.ops->control(&mr->fid, FI_GET_RAW_MR, &req);
}

static inline int fi_mr_map_raw(struct fid_domain *domain,
				uint64_t base_addr, uint8_t *raw_key,
				size_t key_size, uint64_t *key,
				uint64_t flags)
{
	struct fi_mr_map_raw req;

	req.flags = flags;
	req.base_addr = base_addr;
	req.raw_key = raw_key;
	req.key_size = key_size;
	req.key = key;
	return domain->fid.ops->control(&domain->fid, FI_MAP_RAW_MR, &req);
}

static inline int fi_mr_unmap_key(struct fid_domain *domain, uint64_t key)
{
	return domain->fid.ops->control(&domain->fid, FI_UNMAP_KEY, &key);
}

static inline int fi_mr_bind(struct fid_mr *mr, struct fid *bfid,
			     uint64_t flags)
{
	return mr->fid.ops->bind(&mr->fid, bfid, flags);
}

/* Only flags and the iov are meaningful to a refresh; the rest is zeroed. */
static inline int fi_mr_refresh(struct fid_mr *mr, const struct iovec *iov,
				size_t count, uint64_t flags)
{
	struct fi_mr_modify req;

	memset(&req, 0, sizeof(req));
	req.flags = flags;
	req.attr.mr_iov = iov;
	req.attr.iov_count = count;
	return mr->fid.ops->control(&mr->fid, FI_REFRESH, &req);
}

static inline int fi_mr_enable(struct fid_mr *mr)
{
	return mr->fid.ops->control(&mr->fid, FI_ENABLE, NULL);
}

static inline int fi_av_open(struct fid_domain *domain,
			     struct fi_av_attr *attr, struct fid_av **av,
			     void *context)
{
	return domain->ops->av_open(domain, attr, av, context);
}

static inline int fi_av_bind(struct fid_av *av, struct fid *fid,
			     uint64_t flags)
{
	return av->fid.ops->bind(&av->fid, fid, flags);
}

static inline int fi_av_insert(struct fid_av *av, const void *addr,
			       size_t count, fi_addr_t *fi_addr,
			       uint64_t flags, void *context)
{
	return av->ops->insert(av, addr, count, fi_addr, flags, context);
}

static inline int fi_av_insertsvc(struct fid_av *av, const char *node,
				  const char *service, fi_addr_t *fi_addr,
				  uint64_t flags, void *context)
{
	return av->ops->insertsvc(av, node, service, fi_addr, flags,
				  context);
}

static inline int fi_av_insertsym(struct fid_av *av, const char *node,
				  size_t nodecnt, const char *service,
				  size_t svccnt, fi_addr_t *fi_addr,
				  uint64_t flags, void *context)
{
	return av->ops->insertsym(av, node, nodecnt, service, svccnt,
				  fi_addr, flags, context);
}

static inline int fi_av_remove(struct fid_av *av, fi_addr_t *fi_addr,
			       size_t count, uint64_t flags)
{
	return av->ops->remove(av, fi_addr, count, flags);
}

static inline int fi_av_lookup(struct fid_av *av, fi_addr_t fi_addr,
			       void *addr, size_t *addrlen)
{
	return av->ops->lookup(av, fi_addr, addr, addrlen);
}

static inline const char *fi_av_straddr(struct fid_av *av, const void *addr,
					char *buf, size_t *len)
{
	return av->ops->straddr(av, addr, buf, len);
}

/*
 * Scalable endpoints: the receive-context index rides in the top
 * rx_ctx_bits of the address.  With no such bits the address is unchanged
 * (a shift by 64 would be undefined).
 */
static inline fi_addr_t fi_rx_addr(fi_addr_t fi_addr, int rx_index,
				   int rx_ctx_bits)
{
	if (rx_ctx_bits <= 0)
		return fi_addr;
	return (fi_addr_t)(((uint64_t)rx_index << (64 - rx_ctx_bits)) |
			   fi_addr);
}

#endif /* FABRIC_DIRECT_DOMAIN */

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_DOMAIN_H */
