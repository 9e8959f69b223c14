/* The rstream fabric: a verbs fabric underneath, opened through fi_fabric,
 * and the parent of the layer's domains, passive endpoints and EQs; and
 * the layer's descriptor, the one symbol the core knows it by. */

#include "fdr.h"

/* No wait sets; fi_trywait takes its EQs, and an endpoint is waited for
 * through its FI_GETWAIT fd. The fabric itself is the layer kit's
 * (fd_layer_fabric, src/include/fd_util.h): the verbs fabric underneath,
 * counting the domains, passive endpoints and EQs opened on it. */
static struct fi_ops_fabric fdr_fabric_ops =
	FD_FABRIC_OPS(fdr_domain_open, fdr_pep_open, fdr_eq_open, fd_no_fabric_wait_open);

int fdr_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	return fd_layer_fabric_open(FDR_CORE_PROV_NAME, attr, context, &fdr_fabric_ops,
				    fabric);
}

const struct fd_provider fdr_provider = {
	.name = FDR_PROV_NAME,
	.getinfo = fdr_getinfo,
	.fabric = fdr_fabric_open,
	.init = fdr_getinfo_init,
};
