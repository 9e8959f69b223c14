/* What the core knows of the RDM layer (src/fd_core.h). */
#include "fd_core.h"
#include "fdm.h"

static void fdm_init(void)
{
	/* Sizes come from fi_getinfo hints. Not in upstream rxm, whose
	 * sends to a peer with no listener say -FI_EAGAIN for as long as
	 * the application retries. */
	fd_param_define(FDM_PARAM_PROV, "connect_retry", FI_PARAM_INT,
			"Milliseconds an RDM endpoint keeps trying to connect to "
			"a peer at whose address nothing listens yet (its process "
			"may not have enabled its endpoint) before what waits for "
			"that peer fails with FI_ECONNREFUSED, 0 - 3600000 "
			"(default: 10000; 0: fail at the first refusal)");
}

const struct fd_provider fdm_provider = {
	.name = FDM_PROV_NAME,
	.getinfo = fdm_getinfo,
	.fabric = fdm_fabric_open,
	.init = fdm_init,
};
