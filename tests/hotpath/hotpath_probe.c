/* Each probe is one public data-path call compiled into its own function,
 * as an application would call it. tests/hotpath/check_hotpath.py reads the
 * probes' machine code in the FABRIC_DIRECT=verbs build and checks that the
 * only indirect call on each is the verbs driver's own entry point
 * (qp->context->ops.post_send and friends), i.e. no ops table stands between
 * the application and ibv_post_send / ibv_poll_cq. With a layer compiled in,
 * the endpoint calls test the kind first and send a layer's endpoint
 * through its ops table: the checker follows the MSG side of that test.
 *
 * Run without arguments it prints the displacements of those driver entry
 * points in struct ibv_context, which the checker compares against. */
#include <stddef.h>
#include <stdio.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <infiniband/verbs.h>
#include <fdv/fdv_config.h>
#include <fdv/fdv_ep.h>
#include <fdv/fdv_cq.h>

#define PROBE __attribute__((noinline, used))

PROBE ssize_t probe_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, void *ctx)
{
	return fi_send(ep, buf, len, desc, 0, ctx);
}

PROBE ssize_t probe_inject(struct fid_ep *ep, const void *buf, size_t len)
{
	return fi_inject(ep, buf, len, 0);
}

PROBE ssize_t probe_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, void *ctx)
{
	return fi_recv(ep, buf, len, desc, 0, ctx);
}

PROBE ssize_t probe_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  uint64_t addr, uint64_t key, void *ctx)
{
	return fi_write(ep, buf, len, desc, 0, addr, key, ctx);
}

PROBE ssize_t probe_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return fi_cq_read(cq, buf, count);
}

int main(void)
{
	size_t ops = offsetof(struct ibv_context, ops);

	printf("post_send %zu\n", ops + offsetof(struct ibv_context_ops, post_send));
	printf("post_recv %zu\n", ops + offsetof(struct ibv_context_ops, post_recv));
	printf("poll_cq %zu\n", ops + offsetof(struct ibv_context_ops, poll_cq));
	/* where the endpoint-kind test reads, when a layer is compiled in */
	printf("kind %zu\n", offsetof(struct fdv_ep_head, kind));
	printf("layer_kind %d\n", FDV_EP_KIND_LAYER);
	printf("dgram_kind %d\n", FDV_EP_KIND_DGRAM);
	printf("layers %d\n", FDV_EP_LAYERS);
	/* where the CQ-kind test of fi_cq_read reads */
	printf("cq_kind %zu\n", offsetof(struct fdv_cq_head, kind));
	printf("cq_layer_kind %d\n", FDV_CQ_KIND_LAYER);
	/* fi_cq_read tests kind and CQ state in one 8-byte word (fdv_cq.h,
	 * fdv_cq_readfrom_k) */
#if FDV_EP_LAYERS && !FDV_THREAD_SAFE
	printf("cq_kind_merged 1\n");
#endif
#ifdef FABRIC_DIRECT
	printf("direct 1\n");
#else
	printf("direct 0\n");
#endif
	return 0;
}
