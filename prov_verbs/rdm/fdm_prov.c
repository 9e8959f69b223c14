/* What the core knows of the RDM layer (src/fd_core.h). */
#include "fd_core.h"
#include "fdm.h"

static void fdm_init(void)
{
	/* Sizes come from fi_getinfo hints; nothing to define. */
}

const struct fd_provider fdm_provider = {
	.name = FDM_PROV_NAME,
	.getinfo = fdm_getinfo,
	.fabric = fdm_fabric_open,
	.init = fdm_init,
};
