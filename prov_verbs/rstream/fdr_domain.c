/* An rstream domain is a verbs domain (the device and protection domain
 * its endpoints' rings are registered in) whose application-facing ops
 * offer endpoints and nothing else: a stream reports no completions and
 * registers no user memory. The layer itself reaches the verbs functions
 * directly, not through these tables. */
#include "fdr.h"

static int fdr_no_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
			  struct fid_av **av, void *context)
{
	(void)domain; (void)attr; (void)av; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			  struct fid_cq **cq, void *context)
{
	(void)domain; (void)attr; (void)cq; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_scalable_ep(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **sep, void *context)
{
	(void)domain; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			    struct fid_cntr **cntr, void *context)
{
	(void)domain; (void)attr; (void)cntr; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			    struct fid_poll **pollset)
{
	(void)domain; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}

static int fdr_no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			  struct fid_stx **stx, void *context)
{
	(void)domain; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context)
{
	(void)domain; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_query_atomic(struct fid_domain *domain,
			       enum fi_datatype datatype, enum fi_op op,
			       struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain; (void)datatype; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

static int fdr_no_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags)
{
	(void)domain; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

static int fdr_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
				struct fid_ep **ep, uint64_t flags,
				void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return fdr_ep_open(domain, info, ep, context);
}

static struct fi_ops_domain fdr_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = fdr_no_av_open,
	.cq_open = fdr_no_cq_open,
	.endpoint = fdr_ep_open,
	.scalable_ep = fdr_no_scalable_ep,
	.cntr_open = fdr_no_cntr_open,
	.poll_open = fdr_no_poll_open,
	.stx_ctx = fdr_no_stx_ctx,
	.srx_ctx = fdr_no_srx_ctx,
	.query_atomic = fdr_no_query_atomic,
	.query_collective = fdr_no_query_collective,
	.endpoint2 = fdr_domain_endpoint2,
};

static int fdr_no_mr_reg(struct fid *fid, const void *buf, size_t len,
			 uint64_t access, uint64_t offset, uint64_t requested_key,
			 uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid; (void)buf; (void)len; (void)access; (void)offset;
	(void)requested_key; (void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_mr_regv(struct fid *fid, const struct iovec *iov,
			  size_t count, uint64_t access, uint64_t offset,
			  uint64_t requested_key, uint64_t flags,
			  struct fid_mr **mr, void *context)
{
	(void)fid; (void)iov; (void)count; (void)access; (void)offset;
	(void)requested_key; (void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

static int fdr_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			     uint64_t flags, struct fid_mr **mr)
{
	(void)fid; (void)attr; (void)flags; (void)mr;
	return -FI_ENOSYS;
}

static struct fi_ops_mr fdr_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = fdr_no_mr_reg,
	.regv = fdr_no_mr_regv,
	.regattr = fdr_no_mr_regattr,
};

void fdr_domain_init(struct fdv_domain *dom)
{
	dom->domain_fid.ops = &fdr_domain_ops;
	dom->domain_fid.mr = &fdr_mr_ops;
}
