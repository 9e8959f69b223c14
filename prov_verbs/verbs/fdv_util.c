/* Completion-status translation and the "not supported" fid ops shared
 * by every object of the verbs provider (errno: fd_errno_to_fi, core). */
#include <errno.h>

#include "fdv_internal.h"

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

/* Setting the CM data size (fd_opt_get_cm_data_size reads it): RDMA CM
 * fixes it. Any other option is not ours. */
int fdv_opt_set_cm_data_size(int level, int optname)
{
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	return optname == FI_OPT_CM_DATA_SIZE ? -FI_ENOSYS : -FI_ENOPROTOOPT;
}
