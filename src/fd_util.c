/* The out-of-line parts of the layer kit (src/include/fd_util.h). */
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
