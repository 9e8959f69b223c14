/* The rstream event queue: the core EQ (src/fd_eq.c: the list, read,
 * readerr, write, sread, wait fd, sets) plus its sources. What the
 * application reads here is made by the layer: each bound endpoint or
 * passive endpoint owns a verbs EQ for its verbs object, and reading this
 * EQ first runs every bound object's pump, which reads that verbs EQ and
 * queues here what it means for the stream (connection requests whose
 * peer speaks the protocol, FI_CONNECTED once the rings are known,
 * FI_SHUTDOWN, errors naming the rstream object). The verbs EQs' wait fds
 * join this EQ's, so fi_eq_sread and FI_GETWAIT waiters wake when a verbs
 * EQ has news. */
#include <stdlib.h>

#include "fdr.h"

void fdr_eq_push_cm(struct fdr_eq *eq, uint32_t event, struct fid *fid,
		    struct fi_info *info, const uint8_t *data, size_t len)
{
	pthread_mutex_lock(&eq->core.lock);
	if (fd_eq_push_cm_locked(&eq->core, event, fid, info, data, len)) {
		FD_WARN(FD_LOG_EQ, "rstream: no memory to queue event %u", event);
		if (info)
			fdr_connreq_drop(info);
	}
	pthread_mutex_unlock(&eq->core.lock);
}

void fdr_eq_push_error(struct fdr_eq *eq, struct fid *fid, void *context,
		       int err, int prov_errno, const void *err_data,
		       size_t err_len)
{
	if (fd_eq_push_error(&eq->core, fid, context, 0, err, prov_errno,
			     err_data, err_len))
		FD_WARN(FD_LOG_EQ, "rstream: no memory to queue error %d", err);
}

/* An entry nobody will read: a connection request in it is refused. */
static void fdr_eq_drop_entry(struct fd_eq_entry *e)
{
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)e->data;

	if (!e->is_error && e->event == FI_CONNREQ &&
	    e->len >= sizeof(*cm) && cm->info)
		fdr_connreq_drop(cm->info);
}

/* ---- sources ---- */

int fdr_eq_add_src(struct fdr_eq *eq, struct fdr_eq_src *src)
{
	int ret;

	if (src->fd >= 0) {
		ret = fd_eq_add_fd(&eq->core, src->fd);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&eq->src_lock);
	src->next = eq->srcs;
	eq->srcs = src;
	pthread_mutex_unlock(&eq->src_lock);
	fd_eq_ref(&eq->core, 1);
	return 0;
}

void fdr_eq_del_src(struct fdr_eq *eq, struct fdr_eq_src *src,
		    const struct fid *owner)
{
	struct fdr_eq_src **pp;

	/* Waits for a pump in progress: the source is freed after this. */
	pthread_mutex_lock(&eq->src_lock);
	for (pp = &eq->srcs; *pp; pp = &(*pp)->next) {
		if (*pp == src) {
			*pp = src->next;
			break;
		}
	}
	pthread_mutex_unlock(&eq->src_lock);
	if (src->fd >= 0)
		fd_eq_del_fd(&eq->core, src->fd);
	/* Nobody may read a dangling fid. */
	fd_eq_forget(&eq->core, owner);
	fd_eq_ref(&eq->core, -1);
}

static void fdr_eq_pump(struct fd_eq *core)
{
	struct fdr_eq *eq = fd_container_of(core, struct fdr_eq, core);
	struct fdr_eq_src *src;

	pthread_mutex_lock(&eq->src_lock);
	for (src = eq->srcs; src; src = src->next)
		src->pump(src);
	pthread_mutex_unlock(&eq->src_lock);
}

/* ---- fid ---- */

static void fdr_eq_close(struct fd_eq *core)
{
	struct fdr_eq *eq = fd_container_of(core, struct fdr_eq, core);

	pthread_mutex_destroy(&eq->src_lock);
	free(eq);
}

static const struct fd_eq_class fdr_eq_class = {
	.pump = fdr_eq_pump,
	.drop = fdr_eq_drop_entry,
	.close = fdr_eq_close,
	.status_text = "rdma_cm event status (reject reason or errno)",
};

struct fdr_eq *fdr_eq_of_fid(struct fid *fid)
{
	struct fd_eq *core = fd_eq_of_class(fid, &fdr_eq_class);

	return core ? fd_container_of(core, struct fdr_eq, core) : NULL;
}

int fdr_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq_out, void *context)
{
	struct fd_eq *core;
	struct fdr_eq *eq;
	int ret;

	if (!fabric || !eq_out)
		return -FI_EINVAL;
	ret = fd_eq_new(sizeof(*eq), attr, fabric->api_version,
			&fd_layer_fabric_of(fabric)->refs, &fdr_eq_class, context, &core);
	if (ret)
		return ret;
	eq = fd_container_of(core, struct fdr_eq, core);
	pthread_mutex_init(&eq->src_lock, NULL);
	*eq_out = &eq->core.eq_fid;
	return 0;
}
