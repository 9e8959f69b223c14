/* Error translation and the "not supported" fid ops shared by every
 * object of the verbs provider. */
#include <errno.h>

#include "fdv_internal.h"

int fdv_errno_to_fi(int err)
{
	switch (err) {
	case 0:
		return 0;
	case ENOMEM:
		return FI_ENOMEM;
	case EAGAIN:
		return FI_EAGAIN;
	case ENODEV:
		return FI_ENODEV;
	case ETIMEDOUT:
		return FI_ETIMEDOUT;
	case ECONNREFUSED:
		return FI_ECONNREFUSED;
	case EADDRINUSE:
		return FI_EADDRINUSE;
	case EADDRNOTAVAIL:
		return FI_EADDRNOTAVAIL;
	default:
		/* libfabric's codes below 256 are errno values */
		return err > 0 && err < FI_ERRNO_OFFSET ? err : FI_EOTHER;
	}
}

int fdv_wc_status_to_fi(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_LOC_LEN_ERR:
		return FI_ETRUNC;
	case IBV_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_MW_BIND_ERR:
		return FI_EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
		return FI_EINVAL;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
		return FI_EREMOTEIO;
	default:
		return FI_EIO;
	}
}

/* Options of an endpoint whose only one is the CM data size, which RDMA CM
 * fixes: it can be read, not set. Any other option is not ours. */
int fdv_opt_get_cm_data_size(int level, int optname, void *optval,
			     size_t *optlen, size_t cm_data_max)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(size_t)) {
		*optlen = sizeof(size_t);	/* fi_endpoint(3): the size needed */
		return -FI_ETOOSMALL;
	}
	*(size_t *)optval = cm_data_max;
	*optlen = sizeof(size_t);
	return 0;
}

int fdv_opt_set_cm_data_size(int level, int optname)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	return optname == FI_OPT_CM_DATA_SIZE ? -FI_ENOSYS : -FI_ENOPROTOOPT;
}
