/* The rstream fabric: a verbs fabric underneath, opened through fi_fabric,
 * and the parent of the layer's domains, passive endpoints and EQs; and
 * the layer's descriptor, the one symbol the core knows it by. */
#include <stdlib.h>
#include <string.h>

#include "fdr.h"

static struct fdr_fabric *fdr_fabric_of(struct fid *fid)
{
	return fd_container_of(fid, struct fdr_fabric, fabric_fid.fid);
}

static int fdr_fabric_close(struct fid *fid)
{
	struct fdr_fabric *fab = fdr_fabric_of(fid);
	int ret;

	if (atomic_load(&fab->refs))
		return -FI_EBUSY;
	ret = fi_close(&fab->ifab->fid);
	if (ret)
		return ret;
	free(fab);
	return 0;
}

static struct fi_ops fdr_fabric_fid_ops =
	FD_FI_OPS(fdr_fabric_close, fd_no_fid_bind, fd_no_fid_control, NULL);

/* No wait sets; fi_trywait takes its EQs, and an endpoint is waited for
 * through its FI_GETWAIT fd. */
static struct fi_ops_fabric fdr_fabric_ops =
	FD_FABRIC_OPS(fdr_domain_open, fdr_pep_open, fdr_eq_open, fd_no_fabric_wait_open);

int fdr_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct fi_fabric_attr core_attr;
	struct fdr_fabric *fab;
	int ret;

	if (!attr || !fabric)
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	/* The same fabric, of the provider underneath. */
	core_attr = *attr;
	core_attr.prov_name = (char *)FDR_CORE_PROV_NAME;
	ret = fi_fabric(&core_attr, &fab->ifab, fab);
	if (ret) {
		free(fab);
		return ret;
	}
	fd_fabric_init(&fab->fabric_fid, attr, context, &fdr_fabric_fid_ops,
		       &fdr_fabric_ops);
	*fabric = &fab->fabric_fid;
	return 0;
}

const struct fd_provider fdr_provider = {
	.name = FDR_PROV_NAME,
	.getinfo = fdr_getinfo,
	.fabric = fdr_fabric_open,
	.init = fdr_getinfo_init,
};
