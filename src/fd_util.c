/* The out-of-line parts of the layer kit (src/include/fd_util.h). */
#include <string.h>

#include <rdma/fi_endpoint.h>

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
