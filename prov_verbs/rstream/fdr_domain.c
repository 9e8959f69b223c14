/* An rstream domain is a verbs domain (the device and protection domain
 * its endpoints' rings are registered in) whose application-facing ops
 * offer endpoints and nothing else: a stream reports no completions and
 * registers no user memory. The layer itself reaches the verbs functions
 * directly, not through these tables. */
#include "fd_enosys.h"
#include "fdr.h"

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
	.av_open = fd_no_domain_av_open,
	.cq_open = fd_no_domain_cq_open,
	.endpoint = fdr_ep_open,
	.scalable_ep = fd_no_domain_scalable_ep,
	.cntr_open = fd_no_domain_cntr_open,
	.poll_open = fd_no_domain_poll_open,
	.stx_ctx = fd_no_domain_stx_ctx,
	.srx_ctx = fd_no_domain_srx_ctx,
	.query_atomic = fd_no_domain_query_atomic,
	.query_collective = fd_no_domain_query_collective,
	.endpoint2 = fdr_domain_endpoint2,
};

static struct fi_ops_mr fdr_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = fd_no_mr_reg,
	.regv = fd_no_mr_regv,
	.regattr = fd_no_mr_regattr,
};

void fdr_domain_init(struct fdv_domain *dom)
{
	dom->domain_fid.ops = &fdr_domain_ops;
	dom->domain_fid.mr = &fdr_mr_ops;
}
