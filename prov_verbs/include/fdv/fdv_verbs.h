/* rdma-core's verbs.h for the inline headers. The public libfabric headers
 * include the direct wrappers (and so this file) inside their extern "C"
 * block; verbs.h declares C++ templates when compiled as C++, which must
 * not get C linkage, so it is included from an extern "C++" block. It
 * wraps its own C declarations in extern "C" itself. */
#ifndef FDV_VERBS_H
#define FDV_VERBS_H

#ifdef __cplusplus
extern "C++" {
#endif
#include <infiniband/verbs.h>
#ifdef __cplusplus
}
#endif

#include <stdint.h>

/* Immediate data travels big-endian. Spelled out here because htobe32 and
 * friends are hidden by a strict -std=c11. */
static inline uint32_t fdv_htobe32(uint32_t x)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(x);
#else
	return x;
#endif
}

#define fdv_be32toh fdv_htobe32

#endif /* FDV_VERBS_H */
