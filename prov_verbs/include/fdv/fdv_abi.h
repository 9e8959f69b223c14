/* The guard between an application's inline data path and the library.
 *
 * The direct build compiles struct layouts (struct fdv_ep, fdv_cq) and the
 * knobs of fdv_config.h into the application. A program built against
 * other headers, or with other knobs, than the library it runs with would
 * read those structures wrongly; instead, every translation unit that
 * includes the data path reports what it was compiled with, from a
 * constructor, before main. The library compares that with its own, and
 * on any difference fi_getinfo and fi_domain fail with -FI_ENOSYS and a
 * log line naming both sides, so nothing ever runs on a wrong layout. */
#ifndef FDV_ABI_H
#define FDV_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <fdv/fdv_config.h>
#include <fdv/fdv_compiler.h>

FDV_EXTERN_C_BEGIN

/* The same for a layer whose data path the wrappers inline
 * (gen/api.spec @inline-layer): its header reports one word describing
 * its layouts in a slot of its own (0..FDV_ABI_LAYER_SLOTS-1), and the
 * layer compares it with its own (fdv_abi_check_layer, in
 * prov_verbs/layer/fdv_layer.h). Declared before the includes below: they
 * can reach a layer's inline header, which calls it. No layer has an
 * inline data path at present (the RDM layer's was removed, issue 23), so
 * no slot is used; the mechanism stays for gen/api.spec's @inline-layer. */
#define FDV_ABI_LAYER_SLOTS 4u
FDV_EXPORT FDV_COLD __attribute__((weak))
void fdv_abi_announce_layer(unsigned int slot, uint64_t layout);

FDV_EXTERN_C_END

#include <fdv/fdv_cq.h>
#include <fdv/fdv_ep.h>

FDV_EXTERN_C_BEGIN

/* In the library: records what a caller compiled against. A weak
 * reference, so a unit that includes the headers without linking the
 * library (a header probe) still loads. */
FDV_EXPORT FDV_COLD __attribute__((weak))
void fdv_abi_announce(unsigned int tag, size_t ep_size, size_t cq_size);

static void __attribute__((constructor, used)) fdv_abi_announce_unit(void)
{
	if (fdv_abi_announce)
		fdv_abi_announce(FDV_ABI_TAG, sizeof(struct fdv_ep),
				 sizeof(struct fdv_cq));
}

FDV_EXTERN_C_END

#endif /* FDV_ABI_H */
