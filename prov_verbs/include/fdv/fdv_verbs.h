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

/* The driver's entry points, reached from several call sites of one inlined
 * call (signaled or not, one per CQ format). The empty asm makes the queue
 * pointer opaque at each site, so the compiler cannot load the entry point
 * ahead of the branch into a register shared by the sites: each stays a
 * single call through the driver's ops table (what tests/hotpath checks),
 * with no load on the paths that do not post. */
static inline __attribute__((always_inline)) int
fdv_ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	__asm__("" : "+r"(qp));
	return ibv_post_send(qp, wr, bad);
}

static inline __attribute__((always_inline)) int
fdv_ibv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	__asm__("" : "+r"(cq));
	return ibv_poll_cq(cq, n, wc);
}

#endif /* FDV_VERBS_H */
