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
 * FI_OPT_RX_SIZE (size_t, before fi_enable) size the QP. */
#ifndef FDV_LAYER_H
#define FDV_LAYER_H

#include <stddef.h>

#include <rdma/fi_domain.h>

struct fd_provider;

/* The verbs provider itself (src/fd_core.h): a layer's fi_getinfo asks it
 * for the MSG entries it wraps directly, whatever provider names the
 * application's hints or FI_PROVIDER select. */
extern const struct fd_provider fdv_provider;

/* The deepest work queue an endpoint of this verbs domain can have (the
 * device's limit), or 0 when `domain` is not an open verbs domain. */
size_t fdv_layer_max_queue(struct fid_domain *domain);

#endif /* FDV_LAYER_H */
