/* CM private-data framing of the verbs provider (private header).
 *
 * Kept apart from fdv_internal.h so that the pure encoder and decoder in
 * fdv_cm_data.c build and link without rdma_cm or the rest of the provider:
 * the fuzz target tests/fuzz/fuzz_cm_data.c links that one file alone. */
#ifndef FDV_CM_DATA_H
#define FDV_CM_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Upstream's verbs provider frames CM private data with a one-byte length
 * in front of the user's bytes; peers built on either side read it. RDMA CM
 * on IB/RoCE carries 56 bytes of private data in a connect request. */
#define FDV_CM_PRIV_MAX 56
#define FDV_CM_DATA_MAX (FDV_CM_PRIV_MAX - 1)

/* Frame len user bytes (len <= FDV_CM_DATA_MAX, checked by the caller) into
 * out, which holds at least len + 1 bytes; returns the framed length. */
size_t fdv_cm_pack(uint8_t *out, const void *param, size_t len);

/* Find the user bytes in what the peer sent (priv_len bytes at priv, either
 * may be 0/NULL). 0 with *data and *len set (NULL/0 when there is nothing), or
 * -FI_EINVAL when the length byte claims more than arrived or more than
 * FDV_CM_DATA_MAX; *data then is NULL and *len 0. *data points into priv. */
int fdv_cm_unpack(const void *priv, size_t priv_len, const uint8_t **data,
		  size_t *len);

#endif /* FDV_CM_DATA_H */
