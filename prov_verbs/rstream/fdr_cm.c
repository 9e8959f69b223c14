/* rstream connection management: passive endpoints, connect / accept /
 * reject / shutdown, and the translation of the internal verbs EQs into
 * the events the application reads from its own EQ.
 *
 * Each rstream object owns a verbs EQ for its verbs object and, once bound
 * to the user's EQ (an rstream EQ, fdr_eq.c), is one of its sources:
 * reading the user's EQ runs the object's pump, which reads the verbs EQ
 * and queues what it means on the user's EQ. The data path reads the same
 * verbs EQ (under the same endpoint lock) when it needs to know. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fd_enosys.h"
#include "fdr.h"

#define FDR_EVENT_BUF (sizeof(struct fi_eq_cm_entry) + FDR_CM_BUF)

/* ---- connection requests ---- */

static void fdr_connreq_release(struct fdr_connreq *req)
{
	if (req->core_info) {
		struct fid *h = req->core_info->handle;

		/* Nobody will answer: refuse it as the verbs EQ would. */
		if (h && fi_reject(req->ipep, h, NULL, 0))
			FD_DBG(FD_LOG_EP_CTRL, "rstream: reject failed");
		req->core_info->handle = NULL;
		fi_freeinfo(req->core_info);
	}
	free(req);
}

/* An unread FI_CONNREQ dropped by the EQ (its pep closed, or the EQ)
 * releases its request through the handle's close. */
static int fdr_connreq_close(struct fid *fid)
{
	fdr_connreq_release(fd_container_of(fid, struct fdr_connreq, handle));
	return 0;
}

static struct fi_ops fdr_connreq_fid_ops =
	FD_FI_OPS(fdr_connreq_close, fd_no_fid_bind, fd_no_fid_control, NULL);

struct fdr_connreq *fdr_connreq_of(struct fid *handle)
{
	if (!handle || handle->fclass != FI_CLASS_CONNREQ ||
	    handle->ops != &fdr_connreq_fid_ops)
		return NULL;
	return fd_container_of(handle, struct fdr_connreq, handle);
}

void fdr_connreq_drop(struct fi_info *info)
{
	struct fdr_connreq *req = fdr_connreq_of(info->handle);

	if (req) {
		fdr_connreq_release(req);
		info->handle = NULL;
	}
	fi_freeinfo(info);
}

/* The user's share of a verbs object's connection data, after our blob. */
int fdr_cm_share(struct fid *ifid, size_t *out)
{
	size_t core = 0, len = sizeof(core);
	int ret = fi_getopt(ifid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &core, &len);

	if (ret)
		return ret;
	if (core < FDR_BLOB_LEN || core > FDR_CM_BUF)
		return -FI_EINVAL;
	*out = core - FDR_BLOB_LEN;
	return 0;
}

/* ---- writing to the user's EQ ---- */

static void fdr_user_cm_event(struct fdr_eq *ueq, uint32_t event,
			      struct fid *fid, struct fi_info *info,
			      const uint8_t *data, size_t len)
{
	fdr_eq_push_cm(ueq, event, fid, info, data, len > FDR_CM_BUF ? FDR_CM_BUF : len);
}

static void fdr_blob_of(struct fdr_ep *ep, uint8_t *out)
{
	struct fdr_blob b;

	b.ring_addr = (uintptr_t)ep->rx_ring;
	b.rkey = fi_mr_key(ep->imr);
	b.ring_size = ep->rx_buf;
	b.credits = (uint16_t)ep->rx_size;
	b.version = FDR_PROTO_VERSION;
	b.flags = ep->iwarp ? FDR_BLOB_FLAG_IWARP : 0;
	fdr_blob_encode(out, &b);
}

/* ---- active endpoint events ---- */

static void fdr_ep_connected(struct fdr_ep *ep, const uint8_t *data, size_t len)
{
	const uint8_t *user = NULL;
	size_t ulen = 0;

	if (ep->state != FDR_CONNECTING)
		return;
	if (!ep->passive) {
		/* The accepting side's blob rides on its accept. */
		int why = fdr_blob_decode(&ep->peer, data, len);

		if (!why && !(ep->peer.flags & FDR_BLOB_FLAG_IWARP) != !ep->iwarp)
			why = FDR_BAD_FLAGS;
		if (why) {
			FD_WARN(FD_LOG_EP_CTRL, "rstream: the accepting peer's "
				"connection data is unusable (%s)", fdr_bad_str(why));
			fdr_set_error(ep, -FI_ECONNREFUSED);
			ep->state = FDR_CLOSED;
			fi_shutdown(ep->iep, 0);
			fdr_eq_push_error(ep->ueq, &ep->ep_fid.fid,
					  ep->ep_fid.fid.context,
					  FI_ECONNREFUSED, 0, NULL, 0);
			return;
		}
		user = data + FDR_BLOB_LEN;
		ulen = len - FDR_BLOB_LEN;
	}
	fdr_flow_init(&ep->flow, ep->tx_buf, ep->rx_buf, ep->rx_size, &ep->peer);
	ep->state = FDR_CONNECTED;
	ep->connected_reported = true;
	fdr_user_cm_event(ep->ueq, FI_CONNECTED, &ep->ep_fid.fid, NULL, user, ulen);
}

static void fdr_ep_disconnected(struct fdr_ep *ep)
{
	if (ep->cm_closed)
		return;
	ep->cm_closed = true;
	fdr_drain_after_close(ep);
	/* No FIN before the connection went: the peer died or gave up. */
	if (ep->state == FDR_CONNECTED && !ep->flow.fin_rcvd &&
	    !ep->local_shutdown && !ep->err)
		fdr_set_error(ep, -FI_ECONNRESET);
	ep->state = FDR_CLOSED;
	if (ep->connected_reported && !ep->shutdown_reported) {
		ep->shutdown_reported = true;
		fdr_user_cm_event(ep->ueq, FI_SHUTDOWN, &ep->ep_fid.fid, NULL, NULL, 0);
	}
}

/* Lock held. */
void fdr_ep_pump_eq(struct fdr_ep *ep)
{
	uint8_t buf[FDR_EVENT_BUF];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)buf;
	uint32_t event;
	ssize_t n;

	if (!ep->ieq || !ep->ueq)
		return;
	for (;;) {
		n = fi_eq_read(ep->ieq, &event, buf, sizeof(buf), 0);
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_eq_readerr(ep->ieq, &err, 0) < 0)
				break;
			/* Refused, unreachable, device gone: the user hears
			 * it with its own endpoint named. */
			ep->cm_closed = true;
			fdr_drain_after_close(ep);
			fdr_set_error(ep, -(err.err ? err.err : FI_EIO));
			ep->state = FDR_CLOSED;
			fdr_eq_push_error(ep->ueq, &ep->ep_fid.fid,
					  ep->ep_fid.fid.context, err.err,
					  err.prov_errno, err.err_data,
					  err.err_data_size);
			continue;
		}
		if (n < 0)
			break;
		if ((size_t)n < sizeof(*cm))
			continue;
		switch (event) {
		case FI_CONNECTED:
			fdr_ep_connected(ep, cm->data, (size_t)n - sizeof(*cm));
			break;
		case FI_SHUTDOWN:
			fdr_ep_disconnected(ep);
			break;
		default:
			break;
		}
	}
	fdr_wait_update(ep);
}

void fdr_ep_eq_pump(struct fdr_eq_src *src)
{
	struct fdr_ep *ep = fd_container_of(src, struct fdr_ep, src);

	fd_mutex_lock(&ep->lock);
	fdr_ep_pump_eq(ep);
	fd_mutex_unlock(&ep->lock);
}

/* ---- active endpoint CM calls ---- */

static int fdr_check_param(const void *param, size_t len, size_t max)
{
	return len > max || (len && !param) ? -FI_EINVAL : 0;
}

static int fdr_ep_connect(struct fid_ep *ep_fid, const void *addr,
			  const void *param, size_t paramlen)
{
	uint8_t priv[FDR_CM_BUF];
	struct fdr_ep *ep;
	int ret;

	if (!ep_fid)
		return -FI_EINVAL;
	ep = fdr_ep_of(ep_fid);
	ret = fdr_check_param(param, paramlen, ep->cm_data_max);
	if (ret)
		return ret;
	fd_mutex_lock(&ep->lock);
	if (ep->passive || ep->state != FDR_ENABLED) {
		ret = -FI_EOPBADSTATE;
	} else {
		fdr_blob_of(ep, priv);
		if (paramlen)
			memcpy(priv + FDR_BLOB_LEN, param, paramlen);
		ret = fi_connect(ep->iep, addr, priv, FDR_BLOB_LEN + paramlen);
		if (!ret)
			ep->state = FDR_CONNECTING;
	}
	fd_mutex_unlock(&ep->lock);
	return ret;
}

static int fdr_ep_accept(struct fid_ep *ep_fid, const void *param,
			 size_t paramlen)
{
	uint8_t priv[FDR_CM_BUF];
	struct fdr_ep *ep;
	int ret;

	if (!ep_fid)
		return -FI_EINVAL;
	ep = fdr_ep_of(ep_fid);
	ret = fdr_check_param(param, paramlen, ep->cm_data_max);
	if (ret)
		return ret;
	fd_mutex_lock(&ep->lock);
	if (!ep->passive || ep->state != FDR_ENABLED) {
		ret = -FI_EOPBADSTATE;
	} else {
		fdr_blob_of(ep, priv);
		if (paramlen)
			memcpy(priv + FDR_BLOB_LEN, param, paramlen);
		ret = fi_accept(ep->iep, priv, FDR_BLOB_LEN + paramlen);
		if (!ret)
			ep->state = FDR_CONNECTING;
	}
	fd_mutex_unlock(&ep->lock);
	return ret;
}

static int fdr_ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct fdr_ep *ep;
	int ret;

	if (!ep_fid)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	ep = fdr_ep_of(ep_fid);
	fd_mutex_lock(&ep->lock);
	ret = fdr_ep_shutdown_locked(ep);
	fd_mutex_unlock(&ep->lock);
	return ret;
}

static int fdr_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fdr_ep *ep;

	if (!fid)
		return -FI_EINVAL;
	ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));
	return fi_getname(&ep->iep->fid, addr, addrlen);
}

static int fdr_ep_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	if (!ep_fid)
		return -FI_EINVAL;
	return fi_getpeer(fdr_ep_of(ep_fid)->iep, addr, addrlen);
}

struct fi_ops_cm fdr_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fd_no_cm_setname,
	.getname = fdr_ep_getname,
	.getpeer = fdr_ep_getpeer,
	.connect = fdr_ep_connect,
	.listen = fd_no_cm_listen,
	.accept = fdr_ep_accept,
	.reject = fd_no_cm_reject,
	.shutdown = fdr_ep_shutdown,
	.join = fd_no_cm_join,
};

/* ---- passive endpoint ---- */

static struct fdr_pep *fdr_pep_of(struct fid_pep *pep)
{
	return fd_container_of(pep, struct fdr_pep, pep_fid);
}

/* A verbs connection request: keep it for the user if the peer speaks
 * our protocol, refuse it here otherwise. */
static void fdr_pep_connreq(struct fdr_pep *pep, struct fi_info *core,
			    const uint8_t *data, size_t len)
{
	struct fdr_connreq *req;
	struct fi_info *info;
	struct fdr_blob blob;
	int why;

	why = fdr_blob_decode(&blob, data, len);
	if (!why && !(blob.flags & FDR_BLOB_FLAG_IWARP) != !pep->iwarp)
		why = FDR_BAD_FLAGS;
	if (why) {
		FD_WARN(FD_LOG_EP_CTRL, "rstream: connection request with "
			"unusable connection data (%s): rejected", fdr_bad_str(why));
		goto reject;
	}
	req = calloc(1, sizeof(*req));
	info = req ? fdr_stream_info(pep->info, core) : NULL;
	if (!info) {
		free(req);
		goto reject;
	}
	req->handle.fclass = FI_CLASS_CONNREQ;
	req->handle.ops = &fdr_connreq_fid_ops;
	req->core_info = core;
	req->ipep = pep->ipep;
	req->peer = blob;
	info->handle = &req->handle;
	fdr_user_cm_event(pep->ueq, FI_CONNREQ, &pep->pep_fid.fid, info,
			  data + FDR_BLOB_LEN, len - FDR_BLOB_LEN);
	return;
reject:
	if (fi_reject(pep->ipep, core->handle, NULL, 0))
		FD_DBG(FD_LOG_EP_CTRL, "rstream: reject failed");
	core->handle = NULL;
	fi_freeinfo(core);
}

/* Lock held. */
static void fdr_pep_pump_eq(struct fdr_pep *pep)
{
	uint8_t buf[FDR_EVENT_BUF];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)buf;
	uint32_t event;
	ssize_t n;

	if (!pep->ueq)
		return;
	for (;;) {
		n = fi_eq_read(pep->ieq, &event, buf, sizeof(buf), 0);
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_eq_readerr(pep->ieq, &err, 0) < 0)
				break;
			fdr_eq_push_error(pep->ueq, &pep->pep_fid.fid,
					  pep->pep_fid.fid.context, err.err,
					  err.prov_errno, err.err_data,
					  err.err_data_size);
			continue;
		}
		if (n < 0)
			break;
		if ((size_t)n < sizeof(*cm) || event != FI_CONNREQ || !cm->info)
			continue;
		fdr_pep_connreq(pep, cm->info, cm->data, (size_t)n - sizeof(*cm));
	}
}

static void fdr_pep_eq_pump(struct fdr_eq_src *src)
{
	struct fdr_pep *pep = fd_container_of(src, struct fdr_pep, src);

	pthread_mutex_lock(&pep->lock);
	fdr_pep_pump_eq(pep);
	pthread_mutex_unlock(&pep->lock);
}

static int fdr_pep_listen(struct fid_pep *pep_fid)
{
	struct fdr_pep *pep;

	if (!pep_fid)
		return -FI_EINVAL;
	pep = fdr_pep_of(pep_fid);
	if (!pep->ueq)
		return -FI_ENOEQ;
	return fi_listen(pep->ipep);
}

static int fdr_pep_reject(struct fid_pep *pep_fid, fid_t handle,
			  const void *param, size_t paramlen)
{
	struct fdr_connreq *req;
	struct fdr_pep *pep;
	int ret;

	if (!pep_fid)
		return -FI_EINVAL;
	req = fdr_connreq_of(handle);
	if (!req || !req->core_info)
		return -FI_EINVAL;
	pep = fdr_pep_of(pep_fid);
	/* A refusal carries no blob: the whole verbs CM data is the user's. */
	if (paramlen > pep->cm_data_max + FDR_BLOB_LEN || (paramlen && !param))
		return -FI_EINVAL;
	ret = fi_reject(pep->ipep, req->core_info->handle, param, paramlen);
	/* The verbs reject consumed its request either way. */
	req->core_info->handle = NULL;
	fdr_connreq_release(req);
	return ret;
}

static int fdr_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fdr_pep *pep;

	if (!fid)
		return -FI_EINVAL;
	pep = fdr_pep_of(fd_container_of(fid, struct fid_pep, fid));
	return fi_getname(&pep->ipep->fid, addr, addrlen);
}

static struct fi_ops_cm fdr_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fd_no_cm_setname,
	.getname = fdr_pep_getname,
	.getpeer = fd_no_cm_getpeer,
	.connect = fd_no_cm_connect,
	.listen = fdr_pep_listen,
	.accept = fd_no_cm_accept,
	.reject = fdr_pep_reject,
	.shutdown = fd_no_cm_shutdown,
	.join = fd_no_cm_join,
};

static int fdr_pep_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	struct fdr_pep *pep = fdr_pep_of(fd_container_of(fid, struct fid_pep, fid));

	return fd_opt_get_cm_data_size(level, optname, optval, optlen, pep->cm_data_max);
}

static int fdr_pep_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	(void)fid; (void)optval; (void)optlen;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	/* fixed by the transport */
	return optname == FI_OPT_CM_DATA_SIZE ? -FI_ENOSYS : -FI_ENOPROTOOPT;
}

static struct fi_ops_ep fdr_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdr_pep_getopt,
	.setopt = fdr_pep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

static int fdr_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdr_pep *pep = fdr_pep_of(fd_container_of(fid, struct fid_pep, fid));
	struct fdr_eq *eq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	eq = fdr_eq_of_fid(bfid);
	if (!eq)
		return -FI_EINVAL;
	/* Lock order EQ -> passive endpoint (the EQ's pump takes its source
	 * lock, then ours): claim the binding, join the EQ unlocked. */
	pthread_mutex_lock(&pep->lock);
	if (pep->ueq) {
		pthread_mutex_unlock(&pep->lock);
		return -FI_EINVAL;
	}
	pep->ueq = eq;
	pthread_mutex_unlock(&pep->lock);
	ret = fdr_eq_add_src(eq, &pep->src);
	if (ret) {
		pthread_mutex_lock(&pep->lock);
		pep->ueq = NULL;
		pthread_mutex_unlock(&pep->lock);
	}
	return ret;
}

static int fdr_pep_control(struct fid *fid, int command, void *arg)
{
	struct fdr_pep *pep = fdr_pep_of(fd_container_of(fid, struct fid_pep, fid));

	switch (command) {
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		return fi_control(&pep->ieq->fid, FI_GETWAIT, arg);
	default:
		return fd_wait_control(command, arg, -1, FI_WAIT_FD);
	}
}

static int fdr_pep_close(struct fid *fid)
{
	struct fdr_pep *pep = fdr_pep_of(fd_container_of(fid, struct fid_pep, fid));

	if (pep->ueq)
		fdr_eq_del_src(pep->ueq, &pep->src, fid);
	if (pep->ipep)
		fi_close(&pep->ipep->fid);
	if (pep->ieq)
		fi_close(&pep->ieq->fid);
	atomic_fetch_sub(&pep->fabric->refs, 1);
	fi_freeinfo(pep->info);
	pthread_mutex_destroy(&pep->lock);
	free(pep);
	return 0;
}

static struct fi_ops fdr_pep_fid_ops =
	FD_FI_OPS(fdr_pep_close, fdr_pep_bind, fdr_pep_control, NULL);

int fdr_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep_out, void *context)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct fi_info *core = NULL;
	struct fdr_pep *pep;
	int ret;

	if (!fabric || !pep_out || !fdr_info_complete(info))
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_SOCK_STREAM)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pthread_mutex_init(&pep->lock, NULL);
	pep->fabric = fd_layer_fabric_of(fabric);
	pep->iwarp = fdr_info_iwarp(info);
	pep->info = fi_dupinfo(info);
	core = fdr_core_info(info);
	if (!pep->info || !core) {
		ret = -FI_ENOMEM;
		goto err;
	}
	pep->info->handle = NULL;
	ret = fi_eq_open(pep->fabric->lower, &eq_attr, &pep->ieq, pep);
	if (ret)
		goto err;
	ret = fi_passive_ep(pep->fabric->lower, core, &pep->ipep, pep);
	if (ret)
		goto err;
	ret = fi_pep_bind(pep->ipep, &pep->ieq->fid, 0);
	if (!ret)
		ret = fdr_cm_share(&pep->ipep->fid, &pep->cm_data_max);
	if (!ret)
		ret = fi_control(&pep->ieq->fid, FI_GETWAIT, &pep->src.fd);
	if (ret)
		goto err;
	fi_freeinfo(core);
	pep->src.pump = fdr_pep_eq_pump;
	fd_fid_init(&pep->pep_fid.fid, FI_CLASS_PEP, context, &fdr_pep_fid_ops);
	pep->pep_fid.ops = &fdr_pep_ops;
	pep->pep_fid.cm = &fdr_pep_cm_ops;
	atomic_fetch_add(&pep->fabric->refs, 1);
	*pep_out = &pep->pep_fid;
	return 0;
err:
	if (pep->ipep)
		fi_close(&pep->ipep->fid);
	if (pep->ieq)
		fi_close(&pep->ieq->fid);
	fi_freeinfo(core);
	fi_freeinfo(pep->info);
	pthread_mutex_destroy(&pep->lock);
	free(pep);
	return ret;
}
