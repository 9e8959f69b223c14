/* The verbs provider's contract with the layers built over it (not
 * installed). A layer opens verbs objects with the public fi_* calls on a
 * "verbs" fi_info; this header adds only what the public API cannot give
 * a provider that runs inside fi_getinfo:
 *
 *  - fdv_getinfo: the verbs entries themselves. Calling fi_getinfo from a
 *    layer's getinfo would apply the application's provider selection
 *    (FI_PROVIDER="verbs;ofi_rxm" names the layer, not the provider under
 *    it) and re-enter the layers.
 *  - fdv_abi_check: a layer refuses like verbs when the program was built
 *    against other inline headers (fdv/fdv_abi.h).
 *
 * Nothing here exposes a verbs structure. */
#ifndef FDV_LAYER_H
#define FDV_LAYER_H

#include <stdint.h>

#include <rdma/fabric.h>

int fdv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
int fdv_abi_check(void);

#endif /* FDV_LAYER_H */
