/*
 * fabric-direct: endpoint objects and untagged messaging (libfabric 1.17 API).
 *
 * Every structure below is part of the binary interface: applications built
 * against libfabric's headers inline the wrappers at the bottom of this file,
 * so they read struct fid_ep and the ops tables at fixed offsets. Field order
 * and types therefore follow libfabric 1.17 exactly; only append, never
 * reorder.
 */
#ifndef FD_RDMA_FI_ENDPOINT_H
#define FD_RDMA_FI_ENDPOINT_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Descriptor for the *msg calls; the shape shared by the RMA/tagged forms. */
struct fi_msg {
	const struct iovec *msg_iov;
	void **desc;            /* one MR descriptor per iov entry, or NULL */
	size_t iov_count;
	fi_addr_t addr;
	void *context;
	uint64_t data;          /* remote CQ data, used with FI_REMOTE_CQ_DATA */
};

/* Option levels for fi_setopt/fi_getopt (only one is defined by 1.17). */
enum {
	FI_OPT_ENDPOINT
};

/*
 * Option names at FI_OPT_ENDPOINT. The value is an index into the
 * provider's switch, so the numbering (0, 1, 2, ...) is fixed. The comment
 * gives the type optval must point to.
 */
enum {
	FI_OPT_MIN_MULTI_RECV,  /* size_t */
	FI_OPT_CM_DATA_SIZE,    /* size_t */
	FI_OPT_BUFFERED_MIN,    /* size_t */
	FI_OPT_BUFFERED_LIMIT,  /* size_t */
	FI_OPT_SEND_BUF_SIZE,   /* size_t */
	FI_OPT_RECV_BUF_SIZE,   /* size_t */
	FI_OPT_TX_SIZE,         /* size_t */
	FI_OPT_RX_SIZE,         /* size_t */
	FI_OPT_FI_HMEM_P2P,     /* int: one of the FI_HMEM_P2P_* values */
	FI_OPT_XPU_TRIGGER      /* struct fi_trigger_xpu (fi_trigger.h) */
};

/* Values for FI_OPT_FI_HMEM_P2P; ENABLED (0) is the provider's default. */
enum {
	FI_HMEM_P2P_ENABLED,
	FI_HMEM_P2P_REQUIRED,
	FI_HMEM_P2P_PREFERRED,
	FI_HMEM_P2P_DISABLED
};

/*
 * Control-path operations shared by active, passive and shared-context
 * endpoints. 'size' lets callers probe for members added in later releases
 * (see FI_CHECK_OP in fabric.h).
 */
struct fi_ops_ep {
	size_t size;
	ssize_t (*cancel)(fid_t fid, void *context);
	int (*getopt)(fid_t fid, int level, int optname,
		      void *optval, size_t *optlen);
	int (*setopt)(fid_t fid, int level, int optname,
		      const void *optval, size_t optlen);
	int (*tx_ctx)(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context);
	int (*rx_ctx)(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context);
	ssize_t (*rx_size_left)(struct fid_ep *ep);
	ssize_t (*tx_size_left)(struct fid_ep *ep);
};

/* Untagged send/receive. This is the hot path for MSG endpoints. */
struct fi_ops_msg {
	size_t size;
	ssize_t (*recv)(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context);
	ssize_t (*recvv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 void *context);
	ssize_t (*recvmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*send)(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context);
	ssize_t (*sendv)(struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 void *context);
	ssize_t (*sendmsg)(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags);
	ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr);
	ssize_t (*senddata)(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context);
	ssize_t (*injectdata)(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr);
};

/* Defined by the headers that use them; fid_ep only stores pointers. */
struct fi_ops_cm;
struct fi_ops_rma;
struct fi_ops_tagged;
struct fi_ops_atomic;
struct fi_ops_collective;

/*
 * An active endpoint. Each operation class has its own table pointer so a
 * provider may point classes it does not support at stub tables, and may
 * switch tables when bind/enable fixes the configuration. Because of that,
 * calls that change an endpoint's configuration must not run concurrently
 * with data transfers on it.
 */
struct fid_ep {
	struct fid fid;
	struct fi_ops_ep *ops;
	struct fi_ops_cm *cm;
	struct fi_ops_msg *msg;
	struct fi_ops_rma *rma;
	struct fi_ops_tagged *tagged;
	struct fi_ops_atomic *atomic;
	struct fi_ops_collective *collective;
};

/* A listening endpoint: only options and connection management. */
struct fid_pep {
	struct fid fid;
	struct fi_ops_ep *ops;
	struct fi_ops_cm *cm;
};

/* A shared transmit context. */
struct fid_stx {
	struct fid fid;
	struct fi_ops_ep *ops;
};

#ifdef FABRIC_DIRECT
#include <rdma/fi_direct_endpoint.h>
#endif

/*
 * Default wrappers: dispatch through the ops tables. A FABRIC_DIRECT
 * provider defines FABRIC_DIRECT_ENDPOINT in fi_direct_endpoint.h and
 * supplies its own definitions of every function in this block instead.
 */
#ifndef FABRIC_DIRECT_ENDPOINT

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

/*
 * endpoint2 was appended to fi_ops_domain late, so an older provider's
 * table may end before it; flags == 0 is plain fi_endpoint anyway.
 */
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

/* Binding (to CQs, counters, EQs, AVs, STX/SRX) goes through fid->ops. */
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

/*
 * The next three take a bare fid (they also apply to passive endpoints and
 * shared contexts). All those objects start with a fid followed by a
 * struct fi_ops_ep pointer, so viewing the fid as a fid_ep to reach 'ops'
 * is valid for each of them.
 */
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

/* *alias_ep is written only on success. */
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

/* Deprecated since 1.x; kept only so existing sources still build. */
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

/* Data transfer: one indirect call each, no added logic. */

static inline ssize_t fi_recv(struct fid_ep *ep, void *buf, size_t len,
			      void *desc, fi_addr_t src_addr, void *context)
{
	return ep->msg->recv(ep, buf, len, desc, src_addr, context);
}

static inline ssize_t fi_recvv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t src_addr,
			       void *context)
{
	return ep->msg->recvv(ep, iov, desc, count, src_addr, context);
}

static inline ssize_t fi_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->recvmsg(ep, msg, flags);
}

static inline ssize_t fi_send(struct fid_ep *ep, const void *buf, size_t len,
			      void *desc, fi_addr_t dest_addr, void *context)
{
	return ep->msg->send(ep, buf, len, desc, dest_addr, context);
}

static inline ssize_t fi_sendv(struct fid_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, fi_addr_t dest_addr,
			       void *context)
{
	return ep->msg->sendv(ep, iov, desc, count, dest_addr, context);
}

static inline ssize_t fi_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				 uint64_t flags)
{
	return ep->msg->sendmsg(ep, msg, flags);
}

static inline ssize_t fi_inject(struct fid_ep *ep, const void *buf, size_t len,
				fi_addr_t dest_addr)
{
	return ep->msg->inject(ep, buf, len, dest_addr);
}

static inline ssize_t fi_senddata(struct fid_ep *ep, const void *buf,
				  size_t len, void *desc, uint64_t data,
				  fi_addr_t dest_addr, void *context)
{
	return ep->msg->senddata(ep, buf, len, desc, data, dest_addr, context);
}

static inline ssize_t fi_injectdata(struct fid_ep *ep, const void *buf,
				    size_t len, uint64_t data,
				    fi_addr_t dest_addr)
{
	return ep->msg->injectdata(ep, buf, len, data, dest_addr);
}

#endif /* !FABRIC_DIRECT_ENDPOINT */

#ifdef __cplusplus
}
#endif

#endif /* FD_RDMA_FI_ENDPOINT_H */
