/* What the core knows of the RDM layer (src/fd_core.h). */
#include "fd_core.h"
#include "fdm.h"

/* Sizes come from fi_getinfo hints. connect_retry is not in upstream rxm,
 * whose sends to a peer with no listener say -FI_EAGAIN for as long as the
 * application retries. */
static const struct fd_param_def fdm_param_defs[] = {
	{ "connect_retry", FI_PARAM_INT,
	  "Milliseconds an RDM endpoint keeps trying to connect to a peer at "
	  "whose address nothing listens yet (its process may not have "
	  "enabled its endpoint) before what waits for that peer fails with "
	  "FI_ECONNREFUSED, 0 - 3600000 (default: 10000; 0: fail at the "
	  "first refusal)" },
};

static void fdm_init(void)
{
	FD_PARAM_DEFINE_TABLE(FDM_PARAM_PROV, fdm_param_defs);
}

const struct fd_provider fdm_provider = {
	.name = FDM_PROV_NAME,
	.getinfo = fdm_getinfo,
	.fabric = fdm_fabric_open,
	.init = fdm_init,
};
