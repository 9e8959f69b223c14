/* The rstream domain: a verbs domain underneath (the device and the
 * protection domain the endpoints' rings are registered in), opened with
 * the verbs MSG info the stream info stands for. To the application it
 * offers endpoints and nothing else: a stream reports no completions and
 * registers no user memory. */
#include <stdlib.h>

#include "fdr.h"

static struct fdr_domain *fdr_domain_of(struct fid *fid)
{
	return fd_container_of(fid, struct fdr_domain, domain_fid.fid);
}

static int fdr_domain_close(struct fid *fid)
{
	struct fdr_domain *dom = fdr_domain_of(fid);
	int ret;

	if (atomic_load(&dom->refs))
		return -FI_EBUSY;
	ret = fi_close(&dom->idom->fid);
	if (ret)
		return ret;
	atomic_fetch_sub(&dom->fabric->refs, 1);
	free(dom);
	return 0;
}

static struct fi_ops fdr_domain_fid_ops =
	FD_FI_OPS(fdr_domain_close, fd_no_fid_bind, fd_no_fid_control, NULL);

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
	.endpoint2 = fd_domain_endpoint2,
};

int fdr_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct fdr_domain *dom;
	struct fi_info *core;
	int ret;

	if (!fabric || !domain || !fdr_info_complete(info) ||
	    info->ep_attr->type != FI_EP_SOCK_STREAM)
		return -FI_EINVAL;
	core = fdr_core_info(info);
	if (!core)
		return -FI_ENOMEM;
	dom = calloc(1, sizeof(*dom));
	if (!dom) {
		fi_freeinfo(core);
		return -FI_ENOMEM;
	}
	dom->fabric = fd_layer_fabric_of(fabric);
	ret = fi_domain(dom->fabric->lower, core, &dom->idom, dom);
	fi_freeinfo(core);
	if (ret) {
		free(dom);
		return ret;
	}
	dom->max_queue = fdv_layer_max_queue(dom->idom);
	fd_fid_init(&dom->domain_fid.fid, FI_CLASS_DOMAIN, context, &fdr_domain_fid_ops);
	dom->domain_fid.ops = &fdr_domain_ops;
	dom->domain_fid.mr = &fd_no_ops_mr;
	atomic_fetch_add(&dom->fabric->refs, 1);
	*domain = &dom->domain_fid;
	return 0;
}
