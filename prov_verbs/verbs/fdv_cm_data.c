/* CM private data: [length byte][user bytes], as upstream frames it. Pure
 * byte handling with no rdma_cm in sight, so the fuzzer can link it alone. */
#include <string.h>

#include <rdma/fi_errno.h>

#include "fdv_cm_data.h"

size_t fdv_cm_pack(uint8_t *out, const void *param, size_t len)
{
	out[0] = (uint8_t)len;
	if (len)
		memcpy(out + 1, param, len);
	return len + 1;
}

/* Private data arrives from the network: trust nothing. RDMA CM may hand
 * us more bytes than the peer sent (the transport pads), never fewer than
 * the header claims from a well-behaved peer. */
int fdv_cm_unpack(const void *priv, size_t priv_len, const uint8_t **data,
		  size_t *len)
{
	const uint8_t *p = (const uint8_t *)priv;

	*data = NULL;
	*len = 0;
	if (!p || !priv_len)
		return 0;	/* a peer that sent nothing at all */
	if ((size_t)p[0] > priv_len - 1 || p[0] > FDV_CM_DATA_MAX)
		return -FI_EINVAL;
	*data = p + 1;
	*len = p[0];
	return 0;
}
