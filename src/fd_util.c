/* The out-of-line parts of the layer kit (src/include/fd_util.h). */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "fd_core.h"
#include "fd_util.h"

int fd_opt_get_cm_data_size(int level, int optname, void *optval, size_t *optlen,
			    size_t max)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(size_t)) {
		*optlen = sizeof(size_t);	/* fi_endpoint(3): the size needed */
		return -FI_ETOOSMALL;
	}
	memcpy(optval, &max, sizeof(max));	/* optval: any alignment */
	*optlen = sizeof(size_t);
	return 0;
}

int fd_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return fabric->ops->domain(fabric, info, domain, context);
}

void fd_fabric_init(struct fid_fabric *fabric, const struct fi_fabric_attr *attr,
		    void *context, struct fi_ops *fid_ops, struct fi_ops_fabric *ops)
{
	fd_fid_init(&fabric->fid, FI_CLASS_FABRIC, context, fid_ops);
	fabric->ops = ops;
	fabric->api_version = attr->api_version ? attr->api_version : FD_API_VERSION;
}

static int fd_layer_fabric_close(struct fid *fid)
{
	struct fd_layer_fabric *fab =
		fd_container_of(fid, struct fd_layer_fabric, fabric_fid.fid);
	int ret;

	if (atomic_load(&fab->refs))
		return -FI_EBUSY;
	ret = fi_close(&fab->lower->fid);
	if (ret)
		return ret;
	free(fab);
	return 0;
}

static struct fi_ops fd_layer_fabric_fid_ops =
	FD_FI_OPS(fd_layer_fabric_close, fd_no_fid_bind, fd_no_fid_control, fd_no_fid_tostr);

int fd_layer_fabric_open(const char *lower_prov, struct fi_fabric_attr *attr,
			 void *context, struct fi_ops_fabric *ops,
			 struct fid_fabric **fabric)
{
	struct fi_fabric_attr lower_attr;
	struct fd_layer_fabric *fab;
	int ret;

	if (!attr || !fabric)
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	lower_attr = *attr;
	lower_attr.prov_name = (char *)lower_prov;
	ret = fi_fabric(&lower_attr, &fab->lower, fab);
	if (ret) {
		free(fab);
		return ret;
	}
	atomic_init(&fab->refs, 0);
	fd_fabric_init(&fab->fabric_fid, attr, context, &fd_layer_fabric_fid_ops, ops);
	*fabric = &fab->fabric_fid;
	return 0;
}

int fd_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
			struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return domain->ops->endpoint(domain, info, ep, context);
}

const char *fd_straddr_out(char *buf, size_t *len, const char *str)
{
	size_t need = strlen(str) + 1;

	if (*len) {
		size_t n = need < *len ? need : *len;

		memcpy(buf, str, n);
		buf[n - 1] = '\0';
	}
	*len = need;
	return buf;
}

void fd_ep_fid_init(struct fid_ep *ep, size_t fclass, void *context,
		    struct fi_ops *fid_ops, struct fi_ops_ep *ops,
		    struct fi_ops_cm *cm)
{
	fd_fid_init(&ep->fid, fclass, context, fid_ops);
	ep->ops = ops;
	ep->cm = cm;
	ep->msg = &fd_no_ops_msg;
	ep->rma = &fd_no_ops_rma;
	ep->tagged = &fd_no_ops_tagged;
	ep->atomic = &fd_no_ops_atomic;
	ep->collective = &fd_no_ops_collective;
}

int fd_info_getopsflag(const struct fi_info *info, uint64_t *flags)
{
	if (!flags)
		return -FI_EINVAL;
	if (*flags & FI_TRANSMIT)
		*flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	else if (*flags & FI_RECV)
		*flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	else
		return -FI_EINVAL;
	return 0;
}
