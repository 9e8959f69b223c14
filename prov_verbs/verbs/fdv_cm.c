/* Connection management over rdma_cm: passive endpoints, the CM calls of
 * active endpoints, and the translation of rdma_cm events into EQ entries
 * (which is where the connection state machine advances). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdv_internal.h"

static int fdv_cm_check_param(const void *param, size_t len)
{
	if (len > FDV_CM_DATA_MAX || (len && !param))
		return -FI_EINVAL;
	return 0;
}

static int fdv_copy_addr(const struct sockaddr *sa, void *addr, size_t *addrlen)
{
	size_t need = sa ? fd_sockaddr_len(sa) : 0;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	if (!need)
		return -FI_EADDRNOTAVAIL;
	if (*addrlen < need) {
		*addrlen = need;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, sa, need);
	*addrlen = need;
	return 0;
}

/* The peer of id as a log message shows it ("fi_sockaddr_in://a.b.c.d:p").
 * Only ever evaluated inside a log macro whose level is enabled; one
 * buffer per thread, so one use per message. */
static inline const char *fdv_peer_str(struct rdma_cm_id *id)
{
	static _Thread_local char buf[96];
	struct sockaddr *sa = id ? rdma_get_peer_addr(id) : NULL;

	fd_addr_str(buf, sizeof(buf), FI_SOCKADDR, sa,
		    sa ? fd_sockaddr_len(sa) : 0);
	return buf;
}

static int fdv_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rdma_cm_id *id;

	if (!fid)
		return -FI_EINVAL;
	if (fid->fclass == FI_CLASS_PEP) {
		id = FDV_OBJ(struct fdv_pep, pep_fid.fid, fid)->id;
		if (!id)
			return -FI_EOPBADSTATE;	/* an active endpoint took it */
	} else if (fid->fclass == FI_CLASS_EP)
		id = FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, fid)->id;
	else
		return -FI_EINVAL;
	return fdv_copy_addr(rdma_get_local_addr(id), addr, addrlen);
}

/* A source address a program may bind: a complete IPv4 or IPv6 socket
 * address of the length given. */
static int fdv_check_setname_addr(const void *addr, size_t addrlen)
{
	const struct sockaddr *sa = addr;

	if (!addr || addrlen < sizeof(sa_family_t))
		return -FI_EINVAL;
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -FI_EINVAL;
	if (addrlen != fd_sockaddr_len(sa))
		return -FI_EINVAL;
	return 0;
}

/* A passive endpoint binds before fi_listen; its id is still unbound
 * unless fi_passive_ep had a source address or setname ran before, and a
 * bound rdma_cm id cannot move, so a fresh id replaces it. */
static int fdv_pep_setname(struct fdv_pep *pep, void *addr)
{
	struct rdma_cm_id *id;
	int err;

	if (pep->listening || !pep->id)
		return -FI_EOPBADSTATE;
	if (rdma_create_id(pep->eq ? pep->eq->channel : NULL, &id,
			   &pep->pep_fid.fid, RDMA_PS_TCP))
		return -fd_errno_to_fi(errno);
	if (rdma_bind_addr(id, addr)) {
		err = errno;
		FD_DBG(FD_LOG_EP_CTRL, "fi_setname: rdma_bind_addr: %s", strerror(err));
		rdma_destroy_id(id);
		return -fd_errno_to_fi(err);
	}
	rdma_destroy_id(pep->id);
	pep->id = id;
	return 0;
}

/* An active endpoint takes a source address until fi_enable creates its
 * QP on the id's device. The id fi_endpoint resolved toward the peer is
 * replaced by one resolved from the new address (rdma_resolve_addr binds
 * it), or merely bound when there is no peer yet. */
static int fdv_ep_setname(struct fdv_msg_ep *ep, void *addr)
{
	const struct fi_info *info = ep->info;
	struct rdma_cm_id *id;
	int err = 0;

	if (ep->passive || ep->state != FDV_EP_IDLE)
		return -FI_EOPBADSTATE;
	/* Synchronous resolution (no channel), then the EQ's channel. */
	if (rdma_create_id(NULL, &id, &ep->ep.ep_fid.fid, RDMA_PS_TCP))
		return -fd_errno_to_fi(errno);
	if (info->dest_addr) {
		if (rdma_resolve_addr(id, addr, (struct sockaddr *)info->dest_addr,
				      FDV_RESOLVE_TIMEOUT_MS) ||
		    rdma_resolve_route(id, FDV_RESOLVE_TIMEOUT_MS))
			err = errno;
	} else if (rdma_bind_addr(id, addr)) {
		err = errno;
	}
	if (!err && ep->eq && rdma_migrate_id(id, ep->eq->channel))
		err = errno;
	if (err) {
		FD_DBG(FD_LOG_EP_CTRL, "fi_setname: %s", strerror(err));
		rdma_destroy_id(id);
		return -fd_errno_to_fi(err);
	}
	rdma_destroy_id(ep->id);
	ep->id = id;
	return 0;
}

static int fdv_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	int ret;

	if (!fid)
		return -FI_EINVAL;
	ret = fdv_check_setname_addr(addr, addrlen);
	if (ret)
		return ret;
	if (fid->fclass == FI_CLASS_PEP)
		return fdv_pep_setname(FDV_OBJ(struct fdv_pep, pep_fid.fid, fid), addr);
	if (fid->fclass == FI_CLASS_EP)
		return fdv_ep_setname(FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, fid), addr);
	return -FI_EINVAL;
}

/* ---- active endpoint CM calls ---- */

static struct fdv_msg_ep *fdv_msg_ep_of(struct fid_ep *ep)
{
	return FDV_OBJ(struct fdv_msg_ep, ep.ep_fid, ep);
}

static int fdv_ep_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct fdv_msg_ep *ep;

	if (!ep_fid)
		return -FI_EINVAL;
	ep = fdv_msg_ep_of(ep_fid);
	if (ep->state < FDV_EP_CONNECTING && !ep->passive)
		return -FI_ENOTCONN;
	return fdv_copy_addr(rdma_get_peer_addr(ep->id), addr, addrlen);
}

static void fdv_conn_param(struct fdv_msg_ep *ep, struct rdma_conn_param *cp,
			   uint8_t *priv, const void *param, size_t len)
{
	const struct ibv_device_attr *da = &ep->domain->dev_attr;

	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = (uint8_t)fdv_cm_pack(priv, param, len);
	/* Outstanding RDMA reads and atomics: as many as the device allows,
	 * and on accept no more than the connecting side offered. */
	cp->responder_resources = (uint8_t)(da->max_qp_rd_atom < 255 ? da->max_qp_rd_atom : 255);
	cp->initiator_depth = (uint8_t)(da->max_qp_init_rd_atom < 255 ? da->max_qp_init_rd_atom : 255);
	if (ep->passive) {
		if (cp->responder_resources > ep->peer_initiator_depth)
			cp->responder_resources = ep->peer_initiator_depth;
		if (cp->initiator_depth > ep->peer_responder_resources)
			cp->initiator_depth = ep->peer_responder_resources;
	}
	cp->flow_control = 1;
	/* 6, not 7: Soft-RoCE reads a transport retry count of 7 as "retry for
	 * ever" (only the RNR count has that meaning in the spec), so a cut
	 * link never failed a send there (tests/faults/test_link_fault.c). */
	cp->retry_count = 6;
	cp->rnr_retry_count = 7;	/* 7: retry for ever while the peer has no receive posted */
}

static int fdv_ep_connect(struct fid_ep *ep_fid, const void *addr,
			  const void *param, size_t paramlen)
{
	struct fdv_msg_ep *ep;
	struct rdma_conn_param cp;
	uint8_t priv[FDV_CM_PRIV_MAX];
	unsigned int timeout_ms;
	int ret;

	(void)addr;	/* the destination came with fi_endpoint's info */
	if (!ep_fid)
		return -FI_EINVAL;
	ep = fdv_msg_ep_of(ep_fid);
	ret = fdv_cm_check_param(param, paramlen);
	if (ret)
		return ret;
	if (ep->passive || ep->state != FDV_EP_ENABLED)
		return -FI_EOPBADSTATE;
	if (!ep->eq)
		return -FI_ENOEQ;
	fdv_conn_param(ep, &cp, priv, param, paramlen);
	if (rdma_connect(ep->id, &cp)) {
		int err = errno;

		ret = -fd_errno_to_fi(err);
		FD_WARN(FD_LOG_EP_CTRL, "rdma_connect to %s: %s",
			fdv_peer_str(ep->id), strerror(err));
		return ret;
	}
	ep->state = FDV_EP_CONNECTING;
	timeout_ms = ep->domain->params.connect_timeout_ms;
	if (timeout_ms)
		fdv_eq_watch_connect(ep->eq, ep, timeout_ms);
	FD_DBG(FD_LOG_EP_CTRL, "connecting qp %u on %s to %s",
	       ep->id->qp->qp_num, ibv_get_device_name(ep->id->verbs->device),
	       fdv_peer_str(ep->id));
	return 0;
}

static int fdv_ep_accept(struct fid_ep *ep_fid, const void *param,
			 size_t paramlen)
{
	struct fdv_msg_ep *ep;
	struct rdma_conn_param cp;
	uint8_t priv[FDV_CM_PRIV_MAX];
	int ret;

	if (!ep_fid)
		return -FI_EINVAL;
	ep = fdv_msg_ep_of(ep_fid);
	ret = fdv_cm_check_param(param, paramlen);
	if (ret)
		return ret;
	if (!ep->passive || ep->state != FDV_EP_ENABLED)
		return -FI_EOPBADSTATE;
	if (!ep->eq)
		return -FI_ENOEQ;
	fdv_conn_param(ep, &cp, priv, param, paramlen);
	if (rdma_accept(ep->id, &cp)) {
		int err = errno;

		ret = -fd_errno_to_fi(err);
		FD_WARN(FD_LOG_EP_CTRL, "rdma_accept from %s: %s",
			fdv_peer_str(ep->id), strerror(err));
		return ret;
	}
	ep->state = FDV_EP_CONNECTING;
	FD_DBG(FD_LOG_EP_CTRL, "accepting on qp %u on %s from %s",
	       ep->id->qp->qp_num, ibv_get_device_name(ep->id->verbs->device),
	       fdv_peer_str(ep->id));
	return 0;
}

/* The EQ's side of the connection state the data path reads: under the
 * endpoint's lock when its calls take one. */
void fdv_msg_ep_set_qp_tx(struct fdv_msg_ep *ep, struct ibv_qp *qp)
{
	if (ep->mt_locked)
		pthread_mutex_lock(&ep->mt_lock);
	fdv_lock(&ep->ep.lock);
	ep->ep.qp_tx = qp;
	ep->ep.qp_tx_comp = ep->ep.tx_comp ? qp : NULL;
	fdv_unlock(&ep->ep.lock);
	if (ep->mt_locked)
		pthread_mutex_unlock(&ep->mt_lock);
}

int fdv_msg_ep_disconnect(struct fdv_msg_ep *ep)
{
	fdv_msg_ep_set_qp_tx(ep, NULL);
	ep->state = FDV_EP_SHUTDOWN;
	if (ep->disconnect_sent)
		return 0;
	ep->disconnect_sent = true;
	/* Moves the QP to the error state: everything still posted flushes
	 * into the CQs as FI_ECANCELED, and the peer sees FI_SHUTDOWN. */
	if (rdma_disconnect(ep->id)) {
		FD_DBG(FD_LOG_EP_CTRL, "rdma_disconnect: %s", strerror(errno));
		return -fd_errno_to_fi(errno);
	}
	return 0;
}

static int fdv_ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct fdv_msg_ep *ep;

	if (!ep_fid)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	ep = fdv_msg_ep_of(ep_fid);
	if (ep->state == FDV_EP_SHUTDOWN)
		return 0;
	if (ep->state != FDV_EP_CONNECTED && ep->state != FDV_EP_CONNECTING)
		return -FI_ENOTCONN;
	return fdv_msg_ep_disconnect(ep);
}

struct fi_ops_cm fdv_msg_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fdv_cm_setname,
	.getname = fdv_cm_getname,
	.getpeer = fdv_ep_getpeer,
	.connect = fdv_ep_connect,
	.listen = fd_no_cm_listen,
	.accept = fdv_ep_accept,
	.reject = fd_no_cm_reject,
	.shutdown = fdv_ep_shutdown,
	.join = fd_no_cm_join,
};

/* ---- passive endpoint ---- */

static struct fdv_pep *fdv_pep_of(struct fid_pep *pep)
{
	return FDV_OBJ(struct fdv_pep, pep_fid, pep);
}

static int fdv_pep_listen(struct fid_pep *pep_fid)
{
	struct fdv_pep *pep;

	if (!pep_fid)
		return -FI_EINVAL;
	pep = fdv_pep_of(pep_fid);
	if (!pep->id)
		return -FI_EOPBADSTATE;
	if (!pep->eq)
		return -FI_ENOEQ;
	if (pep->listening)
		return 0;
	if (rdma_listen(pep->id, pep->backlog)) {
		int err = errno;

		FD_WARN(FD_LOG_EP_CTRL, "rdma_listen: %s", strerror(err));
		return -fd_errno_to_fi(err);
	}
	pep->listening = true;
	return 0;
}

static int fdv_pep_reject(struct fid_pep *pep_fid, fid_t handle,
			  const void *param, size_t paramlen)
{
	struct fdv_connreq *req;
	uint8_t priv[FDV_CM_PRIV_MAX];
	size_t n;
	int ret;

	if (!pep_fid || !handle || handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	ret = fdv_cm_check_param(param, paramlen);
	if (ret)
		return ret;
	req = FDV_OBJ(struct fdv_connreq, handle, handle);
	n = fdv_cm_pack(priv, param, paramlen);
	ret = rdma_reject(req->id, priv, (uint8_t)n) ? -fd_errno_to_fi(errno) : 0;
	rdma_destroy_id(req->id);
	free(req);
	return ret;
}

struct fi_ops_cm fdv_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fdv_cm_setname,
	.getname = fdv_cm_getname,
	.getpeer = fd_no_cm_getpeer,
	.connect = fd_no_cm_connect,
	.listen = fdv_pep_listen,
	.accept = fd_no_cm_accept,
	.reject = fdv_pep_reject,
	.shutdown = fd_no_cm_shutdown,
	.join = fd_no_cm_join,
};

static int fdv_pep_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	(void)fid;
	return fd_opt_get_cm_data_size(level, optname, optval, optlen, FDV_CM_DATA_MAX);
}

static int fdv_pep_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	(void)fid; (void)optval; (void)optlen;
	return fdv_opt_set_cm_data_size(level, optname);
}

static struct fi_ops_ep fdv_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdv_pep_getopt,
	.setopt = fdv_pep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

static int fdv_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdv_pep *pep = FDV_OBJ(struct fdv_pep, pep_fid.fid, fid);
	struct fdv_eq *eq;
	int ret;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (pep->eq)
		return -FI_EINVAL;	/* one EQ for the endpoint's life */
	if (!pep->id)
		return -FI_EOPBADSTATE;
	eq = fdv_eq_of_fid(bfid);
	if (!eq)
		return -FI_EINVAL;	/* not a verbs EQ */
	ret = fdv_eq_attach(eq, pep->id);
	if (ret)
		return ret;
	pep->eq = eq;
	fd_eq_ref(&eq->core, 1);
	return 0;
}

static int fdv_pep_close(struct fid *fid)
{
	struct fdv_pep *pep = FDV_OBJ(struct fdv_pep, pep_fid.fid, fid);

	if (pep->eq)
		fd_eq_forget(&pep->eq->core, fid);
	if (pep->id && rdma_destroy_id(pep->id))
		FD_WARN(FD_LOG_EP_CTRL, "rdma_destroy_id: %s", strerror(errno));
	if (pep->eq)
		fd_eq_ref(&pep->eq->core, -1);
	atomic_fetch_sub(&pep->fabric->refs, 1);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

/* FI_BACKLOG: how many connection requests the kernel queues for the
 * listener before the EQ reads them; past it rdma_cm refuses new ones.
 * rdma_cm takes the value only with rdma_listen (a listening id cannot
 * listen again), so it is set before fi_listen. */
static int fdv_pep_control(struct fid *fid, int command, void *arg)
{
	struct fdv_pep *pep = FDV_OBJ(struct fdv_pep, pep_fid.fid, fid);

	if (command != FI_BACKLOG)
		return -FI_ENOSYS;
	if (!arg || *(int *)arg <= 0)
		return -FI_EINVAL;
	if (pep->listening)
		return -FI_EOPBADSTATE;
	pep->backlog = *(int *)arg;
	return 0;
}

static struct fi_ops fdv_pep_fid_ops =
	FD_FI_OPS(fdv_pep_close, fdv_pep_bind, fdv_pep_control, NULL);

/* fi_endpoint with info->handle naming a passive endpoint (fi_endpoint(3)):
 * the active endpoint acquires the passive one's rdma_cm id, so it keeps
 * the address fi_passive_ep or fi_setname bound (a program reserves a port
 * before it knows which side of a connection it will be). The id is made
 * synchronous for fi_endpoint's resolution of the peer, as a fresh one
 * would be, and then resolved toward info->dest_addr from its own bound
 * address. On success the passive endpoint has no id left: fi_close is
 * all it is still good for. On failure it keeps its id, its EQ channel
 * and its address (a failed route lookup leaves the address resolved,
 * which fi_listen then refuses; fi_setname gives a fresh id). */
int fdv_pep_yield_id(struct fid *fid, struct fdv_msg_ep *ep,
		     const struct fi_info *info, struct rdma_cm_id **id_out)
{
	struct fdv_pep *pep;
	struct rdma_cm_id *id;
	int err = 0;

	if (fid->ops != &fdv_pep_fid_ops)
		return -FI_EINVAL;	/* another provider's or layer's */
	pep = FDV_OBJ(struct fdv_pep, pep_fid.fid, fid);
	if (!pep->id || pep->listening)
		return -FI_EOPBADSTATE;
	id = pep->id;
	/* Without an EQ the id is synchronous already (created on no
	 * channel), and librdmacm refuses to make a synchronous id so again. */
	if (pep->eq && rdma_migrate_id(id, NULL))
		return -fd_errno_to_fi(errno);
	if (info->dest_addr &&
	    (rdma_resolve_addr(id, NULL, (struct sockaddr *)info->dest_addr,
			       FDV_RESOLVE_TIMEOUT_MS) ||
	     rdma_resolve_route(id, FDV_RESOLVE_TIMEOUT_MS)))
		err = errno;
	if (!err && id->verbs && id->verbs != ep->domain->verbs) {
		FD_WARN(FD_LOG_EP_CTRL, "the passive endpoint's address is on another device than the domain's");
		if (pep->eq)
			rdma_migrate_id(id, pep->eq->channel);
		return -FI_EDOMAIN;
	}
	if (err) {
		FD_WARN(FD_LOG_EP_CTRL, "resolving the peer address from the passive endpoint's: %s",
			strerror(err));
		if (pep->eq)
			rdma_migrate_id(id, pep->eq->channel);
		return -fd_errno_to_fi(err);
	}
	id->context = &ep->ep.ep_fid.fid;
	pep->id = NULL;
	*id_out = id;
	return 0;
}

int fdv_pep_open(struct fid_fabric *fabric, struct fi_info *info,
		 struct fid_pep **pep_out, void *context)
{
	struct fdv_pep *pep;
	int err;

	if (!fabric || !info || !pep_out)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_MSG &&
	    info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_EINVAL;
	pep = fd_calloc_info(sizeof(*pep), offsetof(struct fdv_pep, info), info);
	if (!pep)
		return -FI_ENOMEM;
	if (rdma_create_id(NULL, &pep->id, &pep->pep_fid.fid, RDMA_PS_TCP)) {
		err = errno;
		goto err;
	}
	if (info->src_addr && rdma_bind_addr(pep->id, (struct sockaddr *)info->src_addr)) {
		err = errno;
		FD_WARN(FD_LOG_EP_CTRL, "rdma_bind_addr: %s", strerror(err));
		rdma_destroy_id(pep->id);
		goto err;
	}
	pep->backlog = 128;
	pep->fabric = FDV_OBJ(struct fdv_fabric, fabric_fid, fabric);
	fd_fid_init(&pep->pep_fid.fid, FI_CLASS_PEP, context, &fdv_pep_fid_ops);
	pep->pep_fid.ops = &fdv_pep_ops;
	pep->pep_fid.cm = &fdv_pep_cm_ops;
	atomic_fetch_add(&pep->fabric->refs, 1);
	*pep_out = &pep->pep_fid;
	return 0;
err:
	fi_freeinfo(pep->info);
	free(pep);
	return -fd_errno_to_fi(err);
}

/* ---- rdma_cm events -> EQ entries (EQ lock held) ---- */

static struct fi_info *fdv_connreq_info(struct fdv_pep *pep, struct rdma_cm_id *id)
{
	struct fi_info *info = fi_dupinfo(pep->info);
	struct sockaddr *src = rdma_get_local_addr(id);
	struct sockaddr *dst = rdma_get_peer_addr(id);
	size_t slen = fd_sockaddr_len(src), dlen = fd_sockaddr_len(dst);

	if (!info)
		return NULL;
	free(info->src_addr);
	free(info->dest_addr);
	info->src_addr = slen ? malloc(slen) : NULL;
	info->dest_addr = dlen ? malloc(dlen) : NULL;
	if ((slen && !info->src_addr) || (dlen && !info->dest_addr)) {
		fi_freeinfo(info);
		return NULL;
	}
	if (slen)
		memcpy(info->src_addr, src, slen);
	if (dlen)
		memcpy(info->dest_addr, dst, dlen);
	info->src_addrlen = slen;
	info->dest_addrlen = dlen;
	info->addr_format = fd_sockaddr_format(src);
	if (info->domain_attr && id->verbs) {
		free(info->domain_attr->name);
		info->domain_attr->name = strdup(ibv_get_device_name(id->verbs->device));
	}
	return info;
}

static void fdv_cm_connect_request(struct fdv_eq *eq, struct rdma_cm_event *ev)
{
	struct fdv_pep *pep = FDV_OBJ(struct fdv_pep, pep_fid.fid,
				      (struct fid *)ev->listen_id->context);
	const uint8_t *data;
	size_t len;
	struct fdv_connreq *req = NULL;
	struct fi_info *info = NULL;

	if (fdv_cm_unpack(ev->param.conn.private_data,
			  ev->param.conn.private_data_len, &data, &len)) {
		FD_WARN(FD_LOG_EP_CTRL, "connection request with malformed private data: rejected");
		goto reject;
	}
	req = calloc(1, sizeof(*req));
	info = fdv_connreq_info(pep, ev->id);
	if (!req || !info)
		goto reject;
	req->handle.fclass = FI_CLASS_CONNREQ;
	req->id = ev->id;
	req->initiator_depth = ev->param.conn.initiator_depth;
	req->responder_resources = ev->param.conn.responder_resources;
	ev->id->context = &req->handle;
	info->handle = &req->handle;
	if (fdv_eq_push_cm(eq, FI_CONNREQ, &pep->pep_fid.fid, info, data, len))
		goto reject;
	FD_DBG(FD_LOG_EP_CTRL, "connection request on %s from %s with %zu bytes of data",
	       ibv_get_device_name(ev->id->verbs->device), fdv_peer_str(ev->id),
	       len);
	return;
reject:
	rdma_reject(ev->id, NULL, 0);
	rdma_destroy_id(ev->id);
	free(req);
	if (info)
		info->handle = NULL;
	fi_freeinfo(info);
}

/*
 * rdma_cm gives the QP whatever receiver-not-ready timer the kernel's CM
 * chose when it moved it to RTR, not the one the user asked for with
 * FI_VERBS_MIN_RNR_TIMER.  The timer may only
 * change on the RTR and RTS transitions, and rdma_cm makes those itself,
 * so it is set with an RTS -> RTS modify once the connection is up.
 * Failing it leaves a slower but working connection: warn, go on.
 */
static FDV_COLD void fdv_qp_set_min_rnr_timer(struct fdv_msg_ep *ep)
{
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.min_rnr_timer = ep->domain->params.min_rnr_timer;
	if (ibv_modify_qp(ep->id->qp, &attr, IBV_QP_MIN_RNR_TIMER))
		FD_WARN(FD_LOG_EP_CTRL, "qp %u: min_rnr_timer %u not set: %s",
			ep->id->qp->qp_num, attr.min_rnr_timer, strerror(errno));
}

static void fdv_cm_ep_event(struct fdv_eq *eq, struct fdv_msg_ep *ep,
			    struct rdma_cm_event *ev)
{
	struct fid *fid = &ep->ep.ep_fid.fid;
	const uint8_t *data;
	size_t len;

	/* whatever the answer, the connect is no longer waiting for one */
	fdv_eq_unwatch_connect_locked(eq, ep);
	if (ep->connect_expired) {
		/* FI_ETIMEDOUT was reported: a late acceptance must not
		 * revive the endpoint, nor a late failure be reported twice. */
		FD_DBG(FD_LOG_EP_CTRL, "%s after the connect deadline: dropped",
		       rdma_event_str(ev->event));
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
			rdma_disconnect(ep->id);
		return;
	}

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (fdv_cm_unpack(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &data, &len)) {
			FD_WARN(FD_LOG_EP_CTRL, "accept with malformed private data: dropped");
			len = 0;
		}
		ep->state = FDV_EP_CONNECTED;
		fdv_qp_set_min_rnr_timer(ep);
		fdv_msg_ep_set_qp_tx(ep, ep->id->qp);
		FD_DBG(FD_LOG_EP_CTRL, "qp %u on %s connected to %s",
		       ep->id->qp->qp_num,
		       ibv_get_device_name(ep->id->verbs->device),
		       fdv_peer_str(ep->id));
		fdv_eq_push_cm(eq, FI_CONNECTED, fid, NULL, data, len);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (fdv_cm_unpack(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &data, &len))
			len = 0;
		ep->state = FDV_EP_SHUTDOWN;
		FD_DBG(FD_LOG_EP_CTRL, "connection to %s rejected, status %d",
		       fdv_peer_str(ep->id), ev->status);
		fdv_eq_push_error(eq, fid, fid->context, FI_ECONNREFUSED,
				  ev->status, data, len);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		ep->state = FDV_EP_SHUTDOWN;
		fdv_msg_ep_set_qp_tx(ep, NULL);
		FD_DBG(FD_LOG_EP_CTRL, "%s with %s, status %d",
		       rdma_event_str(ev->event), fdv_peer_str(ep->id),
		       ev->status);
		fdv_eq_push_error(eq, fid, fid->context,
				  ev->event == RDMA_CM_EVENT_UNREACHABLE ?
				  FI_EHOSTUNREACH : FI_ECONNREFUSED,
				  ev->status, NULL, 0);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		FD_DBG(FD_LOG_EP_CTRL, "qp %u disconnected from %s",
		       ep->id->qp ? ep->id->qp->qp_num : 0,
		       fdv_peer_str(ep->id));
		fdv_msg_ep_disconnect(ep);
		fdv_eq_push_cm(eq, FI_SHUTDOWN, fid, NULL, NULL, 0);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		fdv_msg_ep_disconnect(ep);
		fdv_eq_push_error(eq, fid, fid->context, FI_ENODEV, ev->status, NULL, 0);
		break;
	default:
		/* TIMEWAIT_EXIT, ADDR_CHANGE and the like need nothing. */
		FD_DBG(FD_LOG_EP_CTRL, "ignored %s", rdma_event_str(ev->event));
		break;
	}
}

/* The connect's deadline passed with no answer (EQ lock held). The
 * kernel keeps the request alive until the endpoint is closed. */
void fdv_cm_connect_expired(struct fdv_eq *eq, struct fdv_msg_ep *ep)
{
	struct fid *fid = &ep->ep.ep_fid.fid;

	ep->state = FDV_EP_SHUTDOWN;
	fdv_msg_ep_set_qp_tx(ep, NULL);
	ep->connect_expired = true;
	FD_WARN(FD_LOG_EP_CTRL, "connect of qp %u to %s: no answer by the deadline",
		ep->id->qp ? ep->id->qp->qp_num : 0, fdv_peer_str(ep->id));
	fdv_eq_push_error(eq, fid, fid->context, FI_ETIMEDOUT, 0, NULL, 0);
}

void fdv_cm_handle_event(struct fdv_eq *eq, struct rdma_cm_event *ev)
{
	struct fid *owner = ev->listen_id && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ?
		(struct fid *)ev->listen_id->context : (struct fid *)ev->id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && owner &&
	    owner->fclass == FI_CLASS_PEP)
		fdv_cm_connect_request(eq, ev);
	else if (owner && owner->fclass == FI_CLASS_EP)
		fdv_cm_ep_event(eq, FDV_OBJ(struct fdv_msg_ep, ep.ep_fid.fid, owner), ev);
	else
		FD_DBG(FD_LOG_EQ, "%s for an id nobody owns yet", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
}
