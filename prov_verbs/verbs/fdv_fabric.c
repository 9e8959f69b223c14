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

static struct fi_ops_fabric fdv_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = fdv_domain_open,
	.passive_ep = fdv_pep_open,
	.eq_open = fdv_eq_open,
	.wait_open = fd_wait_open,	/* the core's wait sets (fd_sets.h) */
	.trywait = fd_trywait,
	.domain2 = fd_fabric_domain2,
};

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
	fab->version = attr->api_version ? attr->api_version : FD_API_VERSION;
	fd_fid_init(&fab->fabric_fid.fid, FI_CLASS_FABRIC, context, &fdv_fabric_fid_ops);
	fab->fabric_fid.ops = &fdv_fabric_ops;
	fab->fabric_fid.api_version = fab->version;
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
