/* The contract between the verbs MSG provider and the layers built on it.
 * Not installed.
 *
 * A layer opens verbs fabrics, domains, EQs, CQs, passive endpoints,
 * endpoints and memory regions through the public fi_* calls and keeps
 * them behind objects of its own. Of the verbs provider it may include
 * this header and the installed <fdv/...> headers, nothing else (the build
 * gives it no other verbs include directory; tests/layers checks that).
 * This header holds only what the public API cannot express. Public calls
 * the verbs MSG endpoint answers for a layer's sake, documented in
 * fi_direct_verbs(7): fi_setopt / fi_getopt FI_OPT_TX_SIZE and
 * FI_OPT_RX_SIZE (size_t, before fi_enable) size the QP.
 *
 * Nothing here exposes a verbs structure.
 *
 * The installed inline headers are part of this contract too: they are
 * what a direct-build application compiles against, so the layouts and
 * calls they hold are stable for as long as FDV_ABI_VERSION is, and a
 * layer may use them on the verbs objects it opened itself, where the
 * public call would only add an ops-table hop and a translation:
 *   - <fdv/fdv_cq.h>: struct fdv_cq (fdv_cq_of on a verbs CQ), polling
 *     its ibv_cq with fdv_ibv_poll_cq under fdv_lock(&cq->lock) while
 *     cq->backlog is 0, taking successful completions whose wr_id is
 *     below FDV_WR_ID_TAGGED as its own (the context it posted with), and
 *     handing every other one, with the rest of that poll, to
 *     fdv_cq_deliver_slow (under the lock), which translates them as
 *     fi_cq_read would and holds errors back for fi_cq_readerr; with a
 *     backlog the layer reads through fi_cq_read / fi_cq_readerr.
 *   - <fdv/fdv_ep.h>: struct fdv_ep (fdv_ep_of on a verbs endpoint or
 *     shared receive context): posting to a shared receive context's
 *     srq with ibv_post_srq_recv (wr_id: the context, as fi_recv gives
 *     it), and the inline send and receive calls of <fdv/fdv_msg.h> and
 *     friends, as the direct build's fi_* wrappers use them.
 *   - <fdv/fdv_mr.h>: fdv_desc_lkey on a descriptor of a verbs MR.
 * Nothing else of a verbs object may be read or written: the rest is the
 * provider's own state. */
#ifndef FDV_LAYER_H
#define FDV_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

struct fd_provider;

/* The verbs provider itself (src/fd_core.h): a layer's fi_getinfo asks it
 * for the MSG entries it wraps directly, whatever provider names the
 * application's hints or FI_PROVIDER select. */
extern const struct fd_provider fdv_provider;

/* The deepest work queue an endpoint of this verbs domain can have (the
 * device's limit), or 0 when `domain` is not an open verbs domain. */
size_t fdv_layer_max_queue(struct fid_domain *domain);

/* The verbs entries themselves, for a layer's getinfo (the RDM layer's):
 * fi_getinfo from inside a provider's getinfo would apply the
 * application's provider selection (FI_PROVIDER="verbs;ofi_rxm" names the
 * layer, not the provider under it) and re-enter the layers. */
int fdv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);

/* 0, or -FI_ENOSYS when the program was built against other inline
 * headers (fdv/fdv_abi.h): a layer refuses like verbs does. */
int fdv_abi_check(void);

/* fdv_abi_check(), and for a layer whose data path is inline in programs
 * (gen/api.spec @inline-layer): 0 when every unit that reported in
 * `slot` (fdv_abi_announce_layer) was compiled with `layout`, the
 * layer's own; else -FI_ENOSYS, logged once. */
int fdv_abi_check_layer(unsigned int slot, uint64_t layout);

#endif /* FDV_LAYER_H */
