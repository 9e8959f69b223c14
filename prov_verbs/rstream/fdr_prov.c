/* What the core knows of the rstream layer (src/fd_core.h).  Its fabric is
 * still the verbs one: the layer's objects hang off verbs domains. */
#include "fdr.h"

const struct fd_provider fdr_provider = {
	.name = "verbs;rstream",
	.getinfo = fdr_getinfo,
	.fabric = fdv_fabric_open,
	.init = fdr_getinfo_init,
};
