/* The verbs fabric object, which owns nothing of the device and is the
 * parent of domains, passive endpoints and event queues; and the
 * provider's descriptor, the one symbol the core knows it by. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"
#include "fdv_layer.h"

static int fdv_fabric_close(struct fid *fid)
{
	struct fdv_fabric *fab = FDV_OBJ(struct fdv_fabric, fabric_fid.fid, fid);

	if (atomic_load(&fab->refs))
		return -FI_EBUSY;
	free(fab->name);
	free(fab);
	return 0;
}

static struct fi_ops fdv_fabric_fid_ops =
	FD_FI_OPS(fdv_fabric_close, fd_no_fid_bind, fd_no_fid_control, NULL);

/* Wait sets: the core's (fd_sets.h). */
static struct fi_ops_fabric fdv_fabric_ops =
	FD_FABRIC_OPS(fdv_domain_open, fdv_pep_open, fdv_eq_open, fd_wait_open);

int fdv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct fdv_fabric *fab;

	if (!attr || !fabric)
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	if (attr->name && !(fab->name = strdup(attr->name))) {
		free(fab);
		return -FI_ENOMEM;
	}
	fd_fabric_init(&fab->fabric_fid, attr, context, &fdv_fabric_fid_ops,
		       &fdv_fabric_ops);
	*fabric = &fab->fabric_fid;
	return 0;
}

/* What the core knows of this provider (src/fd_core.h). */
const struct fd_provider fdv_provider = {
	.name = FDV_PROV_NAME,
	.getinfo = fdv_getinfo,
	.fabric = fdv_fabric_open,
	.init = fdv_params_define,
};
