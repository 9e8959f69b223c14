/* fi_domain: one verbs device and a protection domain on it. The device
 * context is rdma_cm's own (rdma_get_devices), because queue pairs are
 * created on rdma_cm ids and must share their id's context and PD. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"
#include "fdv_dgram_int.h"
#include "fdv_layer.h"

static int fdv_domain_close(struct fid *fid)
{
	struct fdv_domain *dom = FDV_OBJ(struct fdv_domain, domain_fid.fid, fid);

	if (atomic_load(&dom->refs)) {
		FD_INFO(FD_LOG_DOMAIN, "domain %s still has %d open objects",
			ibv_get_device_name(dom->verbs->device),
			atomic_load(&dom->refs));
		return -FI_EBUSY;
	}
	if (dom->scratch_mr && ibv_dereg_mr(dom->scratch_mr))
		FD_WARN(FD_LOG_DOMAIN, "ibv_dereg_mr: %s", strerror(errno));
	free(dom->scratch);
	pthread_mutex_destroy(&dom->scratch_lock);
	if (ibv_dealloc_pd(dom->pd))
		FD_WARN(FD_LOG_DOMAIN, "ibv_dealloc_pd: %s", strerror(errno));
	atomic_fetch_sub(&dom->fabric->refs, 1);
	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

static struct fi_ops fdv_domain_fid_ops =
	FD_FI_OPS(fdv_domain_close, fd_no_fid_bind, fd_no_fid_control, NULL);

static int fdv_domain_query_atomic(struct fid_domain *domain,
				   enum fi_datatype datatype, enum fi_op op,
				   struct fi_atomic_attr *attr, uint64_t flags)
{
	enum fdv_atomic_kind kind;

	(void)domain;
	if (!attr)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC))
		return -FI_EBADFLAGS;
	kind = (flags & FI_COMPARE_ATOMIC) ? FDV_ATOMIC_COMPARE :
	       (flags & FI_FETCH_ATOMIC) ? FDV_ATOMIC_FETCH : FDV_ATOMIC_WRITE;
	if (!fdv_atomic_supported(kind, datatype, op))
		return -FI_EOPNOTSUPP;
	attr->size = sizeof(uint64_t);
	attr->count = 1;
	return 0;
}

static struct fi_ops_domain fdv_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = fdv_av_open,		/* UD addresses, for FI_EP_DGRAM (fdv_av.c) */
	.cq_open = fdv_cq_open,
	.endpoint = fdv_ep_open,
	.scalable_ep = fd_no_domain_scalable_ep,
	.cntr_open = fd_no_domain_cntr_open,	/* counters are not built */
	.poll_open = fd_poll_open,	/* the core's poll sets (fd_sets.h) */
	.stx_ctx = fd_no_domain_stx_ctx,
	.srx_ctx = fdv_srx_open,
	.query_atomic = fdv_domain_query_atomic,
	.query_collective = fd_no_domain_query_collective,
	.endpoint2 = fd_domain_endpoint2,
};

static struct ibv_context *fdv_find_device(const char *name)
{
	struct ibv_context **list, *found = NULL;
	int i, n;

	list = rdma_get_devices(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *dev = ibv_get_device_name(list[i]->device);
		size_t len = strlen(dev);

		/* "<device>-dgram" is the name fi_getinfo gives the device's
		 * FI_EP_DGRAM entries (as upstream's verbs provider does). */
		if (!name || !strcmp(dev, name) ||
		    (!strncmp(dev, name, len) && !strcmp(name + len, "-dgram"))) {
			found = list[i];
			break;
		}
	}
	/* The contexts stay open for the process's life; only the array is ours. */
	rdma_free_devices(list);
	return found;
}

int fdv_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct fdv_fabric *fab;
	struct fdv_domain *dom;
	enum fi_threading threading;
	const char *name;
	int ret;

	if (!fabric || !info || !domain)
		return -FI_EINVAL;
	ret = fdv_abi_check();
	if (ret)
		return ret;
	fab = FDV_OBJ(struct fdv_fabric, fabric_fid, fabric);
	name = info->domain_attr ? info->domain_attr->name : NULL;
	threading = info->domain_attr ? info->domain_attr->threading : FI_THREAD_UNSPEC;
	if (fdv_thread_strength(threading) > fdv_thread_strength(fdv_threading_max())) {
		FD_WARN(FD_LOG_DOMAIN, "threading %s: this build serves up to %s",
			fi_tostr(&threading, FI_TYPE_THREADING),
			fdv_threading_max() == FI_THREAD_SAFE ? "FI_THREAD_SAFE" :
			"FI_THREAD_COMPLETION");
		return -FI_ENODATA;
	}
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->verbs = fdv_find_device(name);
	if (!dom->verbs) {
		FD_WARN(FD_LOG_DOMAIN, "no verbs device named %s", name ? name : "(any)");
		ret = -FI_ENODEV;
		goto err;
	}
	if (ibv_query_device(dom->verbs, &dom->dev_attr)) {
		ret = -fd_errno_to_fi(errno);
		goto err;
	}
	dom->pd = ibv_alloc_pd(dom->verbs);
	if (!dom->pd) {
		ret = -fd_errno_to_fi(errno);
		FD_WARN(FD_LOG_DOMAIN, "ibv_alloc_pd on %s: %s", name, strerror(errno));
		goto err;
	}
	dom->info = fi_dupinfo(info);
	if (!dom->info) {
		ibv_dealloc_pd(dom->pd);
		ret = -FI_ENOMEM;
		goto err;
	}
	pthread_mutex_init(&dom->scratch_lock, NULL);
	dom->fabric = fab;
	dom->version = fabric->api_version;
	dom->threading = threading;
	fdv_read_params(&dom->params);
	fd_fid_init(&dom->domain_fid.fid, FI_CLASS_DOMAIN, context, &fdv_domain_fid_ops);
	dom->domain_fid.ops = &fdv_domain_ops;
	dom->domain_fid.mr = &fdv_mr_ops;
	atomic_fetch_add(&fab->refs, 1);
	*domain = &dom->domain_fid;
	FD_DBG(FD_LOG_DOMAIN, "opened domain %s", ibv_get_device_name(dom->verbs->device));
	return 0;
err:
	free(dom);
	return ret;
}

size_t fdv_layer_max_queue(struct fid_domain *domain)
{
	if (!domain || domain->fid.fclass != FI_CLASS_DOMAIN ||
	    domain->fid.ops != &fdv_domain_fid_ops)
		return 0;
	return (size_t)FDV_OBJ(struct fdv_domain, domain_fid, domain)->dev_attr.max_qp_wr;
}
