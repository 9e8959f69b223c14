/* Event queues of the RDM fabric: the core EQ (src/fd_eq.c: one list of
 * entries in arrival order, read / readerr / write / sread, the wait fd,
 * wait sets and poll sets) with nothing of the layer's own but its events.
 * An RDM endpoint makes its connections on a verbs EQ of its own; what the
 * application reads here is what the layer writes: FI_AV_COMPLETE of an
 * AV opened with FI_EVENT, FI_JOIN_COMPLETE of a collective join, and
 * their error entries (which carry no error data). */
#include <stdlib.h>

#include "fd_core.h"
#include "fd_eq.h"
#include "fdm.h"

struct fdm_eq {
	struct fd_eq core;		/* first; holds the fabric's reference */
};

/* No sources and no entries of its own: the core does all, this object
 * only names the RDM EQ's class (fdm_eq_from_fid). */
static const struct fd_eq_class fdm_eq_class = {
	.status_text = NULL,
};

struct fdm_eq *fdm_eq_from_fid(struct fid *fid)
{
	/* only ours: an EQ of another fabric is not the layer's to write */
	struct fd_eq *core = fd_eq_of_class(fid, &fdm_eq_class);

	return core ? fd_container_of(core, struct fdm_eq, core) : NULL;
}

void fdm_eq_ref(struct fdm_eq *eq, int delta)
{
	fd_eq_ref(&eq->core, delta);
}

int fdm_eq_write_event(struct fdm_eq *eq, uint32_t event, const void *buf, size_t len)
{
	return fd_eq_push_event(&eq->core, event, buf, len);
}

int fdm_eq_write_error(struct fdm_eq *eq, struct fid *fid, void *context,
		       uint64_t data, int err)
{
	return fd_eq_push_error(&eq->core, fid, context, data, err, 0, NULL, 0);
}

/* An object is closing: drop the entries that name it, so nobody reads a
 * dangling fid (fi_av(3) asks callers to read first; this keeps those who
 * did not from a use after free). */
void fdm_eq_forget(struct fdm_eq *eq, const struct fid *fid)
{
	fd_eq_forget(&eq->core, fid);
}

int fdm_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	struct fd_eq *core;
	int ret;

	if (!fabric || !eq_out)
		return -FI_EINVAL;
	ret = fd_eq_new(sizeof(struct fdm_eq), attr, fabric->api_version,
			&fd_layer_fabric_of(fabric)->refs, &fdm_eq_class, context, &core);
	if (ret)
		return ret;
	*eq_out = &core->eq_fid;
	return 0;
}
