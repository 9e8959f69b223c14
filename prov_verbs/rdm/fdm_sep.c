/* Scalable endpoints on RDM (fi_scalable_ep, fi_tx_context,
 * fi_rx_context; docs/fi_rdm.7.md "Scalable endpoints").
 *
 * A scalable endpoint with T transmit and R receive contexts is built
 * from n = max(T, R) ordinary RDM endpoints of the layer, "context
 * pairs": pair k is transmit context k and receive context k. Pair k
 * listens on the SEP's port + k, so one name (pair 0's, what fi_getname
 * gives) reaches every context: fi_rx_addr(addr, k, bits) is turned into
 * a connection to port + k by fdm_conn_for_addr. A connection between
 * our pair i and the peer's pair j carries our transmit context i's
 * messages to the peer's receive context j and the peer's transmit
 * context j's to our receive context i: matching, receive queue and
 * CQs stay the pair's, the protocol unchanged but for the requester's
 * context index in the handshake (docs/rdm-protocol.md), from which the
 * acceptor names the source as the peer's SEP (fi_cq_readfrom).
 *
 * A transmit context is its pair's endpoint itself (its send, RMA and
 * atomic calls are the layer's own, straight line included); a receive
 * context is a small object whose receive calls go to the pair's. Pairs
 * are enabled all at once by the first fi_enable of the SEP or of a
 * context (the ports are taken together); until a context is enabled,
 * its side of the pair completes into a private CQ nobody reads. */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"
#include "fdm_msg.h"

/* How many blocks of consecutive ports the SEP tries before giving up. */
#define FDM_SEP_PORT_TRIES	32

struct fdm_sep;

struct fdm_sep_rx {
	/* struct fdv_ep_head: what the direct wrappers dispatch on */
	struct fid_ep ep_fid;
	uint32_t kind;
	struct fdm_ep *e;		/* the pair's endpoint */
	struct fdm_sep *sep;
};

_Static_assert(offsetof(struct fdm_sep_rx, kind) == offsetof(struct fdv_ep_head, kind),
	       "struct fdm_sep_rx must start like struct fdv_ep_head");

/* One side of a pair as the application opened it. */
struct fdm_sep_side {
	bool open, enabled;
	struct fdm_cq *cq;
	uint64_t cq_flags;
};

struct fdm_sep {
	struct fid_ep ep_fid;
	uint32_t kind;
	struct fdm_domain *d;
	struct fi_info *pinfo;		/* the pairs' info */
	unsigned int ntx, nrx, n;
	bool fixed_port;		/* the application named the port */
	/* pairs enabled: ports taken. Under up_lock, which the first
	 * enables of contexts in several threads (FI_THREAD_SAFE) take:
	 * the pairs' own enable takes the domain lock itself. */
	pthread_mutex_t up_lock;
	bool up;
	struct fdm_ep *e[FDM_SEP_MAX_CTX];
	struct fdm_sep_side tx[FDM_SEP_MAX_CTX], rxs[FDM_SEP_MAX_CTX];
	struct fdm_sep_rx rx[FDM_SEP_MAX_CTX];
	struct fdm_av *av;
	struct fdm_cq *sink;
	/* the pairs' own tables (fdm_ep.c), which the contexts' wrap */
	struct fi_ops *e_fi_ops;
	struct fi_ops_ep *e_ops;
	struct fi_ops_cm *e_cm;
};

int fdm_name_shift(struct fdm_name *n, int delta)
{
	in_port_t *p = n->u.sa.sa_family == AF_INET6 ? &n->u.sin6.sin6_port :
		       &n->u.sin.sin_port;
	long port = (long)ntohs(*p) + delta;

	if (port < 1 || port > 65535)
		return -FI_EINVAL;
	*p = htons((uint16_t)port);
	return 0;
}

static in_port_t *fdm_sa_port(void *sa)
{
	struct sockaddr *s = sa;

	if (s->sa_family == AF_INET)
		return &((struct sockaddr_in *)sa)->sin_port;
	if (s->sa_family == AF_INET6)
		return &((struct sockaddr_in6 *)sa)->sin6_port;
	return NULL;
}

static struct fdm_sep *fdm_sep_of(struct fid *fid)
{
	return fdv_container_of(fid, struct fdm_sep, ep_fid.fid);
}

/* ---- the tables ---- */

/* The transmit context's message tables: the pair's own sends, no
 * receives (those are the receive context's). What the SEP itself and
 * its contexts do not serve at all is the core's fd_no_ops_* tables. */
static struct fi_ops_msg fdm_sep_tx_msg;
static struct fi_ops_tagged fdm_sep_tx_tagged;
static pthread_once_t fdm_sep_once = PTHREAD_ONCE_INIT;

static void fdm_sep_tables(void)
{
	fdm_sep_tx_msg = fdm_msg_ops;
	fdm_sep_tx_msg.recv = fd_no_msg_recv;
	fdm_sep_tx_msg.recvv = fd_no_msg_recvv;
	fdm_sep_tx_msg.recvmsg = fd_no_msg_recvmsg;
	fdm_sep_tx_tagged = fdm_tagged_ops;
	fdm_sep_tx_tagged.recv = fd_no_tagged_recv;
	fdm_sep_tx_tagged.recvv = fd_no_tagged_recvv;
	fdm_sep_tx_tagged.recvmsg = fd_no_tagged_recvmsg;
}

/* ---- pairs ---- */

/* Put cq on one side of pair e (sink when the context is not enabled).
 * The lock is held. */
static int fdm_sep_set_cq(struct fdm_sep *s, struct fdm_ep *e, bool tx,
			  struct fdm_cq *cq, uint64_t flags)
{
	struct fdm_cq *old = tx ? e->tx_cq : e->rx_cq;
	struct fdm_cq *other = tx ? e->rx_cq : e->tx_cq;
	int ret = fdm_cq_add_ep(cq, e);

	(void)s;
	if (ret)
		return ret;
	if (old && old != other && old != cq)
		fdm_cq_del_ep(old, e);
	if (tx) {
		e->tx_cq = cq;
		e->tx_cq_flags = flags;
	} else {
		e->rx_cq = cq;
		e->rx_cq_flags = flags;
	}
	fdm_ep_fast_update(e);
	return 0;
}

/* A passive endpoint bound to sa (a placeholder while the SEP looks for
 * free ports); its port in *port. */
static int fdm_sep_hold(struct fdm_sep *s, void *sa, size_t salen, struct fid_pep **pep,
			in_port_t *port)
{
	struct fi_info *pi = fi_dupinfo(s->d->core);
	struct sockaddr_in6 name;
	size_t len = sizeof(name);
	int ret;

	if (!pi)
		return -FI_ENOMEM;
	free(pi->src_addr);
	free(pi->dest_addr);
	pi->dest_addr = NULL;
	pi->dest_addrlen = 0;
	pi->src_addr = malloc(salen);
	if (!pi->src_addr) {
		fi_freeinfo(pi);
		return -FI_ENOMEM;
	}
	memcpy(pi->src_addr, sa, salen);
	pi->src_addrlen = salen;
	ret = fi_passive_ep(s->d->fabric->lower, pi, pep, NULL);
	fi_freeinfo(pi);
	if (ret)
		return ret;
	ret = fi_getname(&(*pep)->fid, &name, &len);
	if (ret) {
		fi_close(&(*pep)->fid);
		return ret;
	}
	*port = *fdm_sa_port(&name);
	return 0;
}

/* Find n consecutive free ports (the application's, or an ephemeral one
 * and those after it): *base in network order. */
static int fdm_sep_find_ports(struct fdm_sep *s, in_port_t *base)
{
	void *sa = s->pinfo->src_addr;
	size_t salen = s->pinfo->src_addrlen;
	in_port_t *sp = fdm_sa_port(sa), want = *sp;
	struct fid_pep *hold[FDM_SEP_MAX_CTX];
	int ret = -FI_EADDRINUSE;

	for (int t = 0; t < FDM_SEP_PORT_TRIES; t++) {
		unsigned int k, held = 0;
		in_port_t p0 = 0;

		for (k = 0; k < s->n; k++) {
			in_port_t got;

			if (k) {
				if (ntohs(p0) + k > 65535) {
					ret = -FI_EADDRINUSE;
					break;
				}
				*sp = htons((uint16_t)(ntohs(p0) + k));
			} else {
				*sp = want;
			}
			ret = fdm_sep_hold(s, sa, salen, &hold[k], &got);
			if (ret)
				break;
			held++;
			if (!k)
				p0 = got;
		}
		/* the pairs bind them again right after */
		for (unsigned int i = 0; i < held; i++)
			fi_close(&hold[i]->fid);
		*sp = want;
		if (k == s->n) {
			*base = p0;
			return 0;
		}
		if (s->fixed_port)
			break;
	}
	FD_WARN(FD_LOG_EP_CTRL, "scalable endpoint: no %u consecutive ports: %s", s->n,
		fi_strerror(-ret));
	return ret;
}

/* Enable every pair, pair k on port base + k: once, at the first enable
 * of the SEP or of a context. */
static int fdm_sep_up_locked(struct fdm_sep *s)
{
	in_port_t base;
	int ret;

	if (s->up)
		return 0;
	if (!s->av)
		return -FI_ENOAV;
	ret = fdm_sep_find_ports(s, &base);
	if (ret)
		return ret;
	for (unsigned int k = 0; k < s->n; k++) {
		struct fdm_ep *e = s->e[k];

		*fdm_sa_port(e->info->src_addr) = htons((uint16_t)(ntohs(base) + k));
		ret = s->e_fi_ops->control(&e->ep_fid.fid, FI_ENABLE, NULL);
		if (ret)
			return ret;
	}
	s->up = true;
	return 0;
}

static int fdm_sep_up(struct fdm_sep *s)
{
	int ret;

	pthread_mutex_lock(&s->up_lock);
	ret = fdm_sep_up_locked(s);
	pthread_mutex_unlock(&s->up_lock);
	return ret;
}

/* ---- contexts: shared parts ---- */

static int fdm_sep_ctx_bind(struct fdm_sep *s, struct fdm_sep_side *side, bool tx,
			    struct fid *bfid, uint64_t flags)
{
	uint64_t dir = tx ? FI_TRANSMIT : FI_RECV;
	struct fdm_cq *cq;

	if (!bfid)
		return -FI_EINVAL;
	if (side->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		cq = fdv_container_of(bfid, struct fdm_cq, cq_fid.fid);
		if (cq->kind != FDV_CQ_KIND_LAYER || cq->domain != s->d)
			return -FI_EINVAL;
		if (!(flags & dir) || (flags & ~(dir | FI_SELECTIVE_COMPLETION)))
			return -FI_EBADFLAGS;
		if (side->cq)
			return -FI_EINVAL;
		side->cq = cq;
		side->cq_flags = flags & FI_SELECTIVE_COMPLETION;
		return 0;
	case FI_CLASS_CNTR:
		return -FI_ENOSYS;	/* not on contexts (fi_rdm(7)) */
	default:
		return -FI_EINVAL;
	}
}

static int fdm_sep_ctx_enable(struct fdm_sep *s, unsigned int k, bool tx)
{
	struct fdm_sep_side *side = tx ? &s->tx[k] : &s->rxs[k];
	int ret;

	if (side->enabled)
		return 0;
	if (!side->cq)
		return -FI_ENOCQ;
	ret = fdm_sep_up(s);
	if (ret)
		return ret;
	fdm_lock(s->d);
	ret = fdm_sep_set_cq(s, s->e[k], tx, side->cq, side->cq_flags);
	fdm_unlock(s->d);
	if (!ret)
		side->enabled = true;
	return ret;
}

static void fdm_sep_ctx_close(struct fdm_sep *s, unsigned int k, bool tx)
{
	struct fdm_sep_side *side = tx ? &s->tx[k] : &s->rxs[k];

	if (side->enabled) {
		/* what completes from now on goes nowhere the application
		 * reads: its CQ may close next */
		fdm_lock(s->d);
		fdm_ep_progress(s->e[k]);
		if (fdm_sep_set_cq(s, s->e[k], tx, s->sink, 0))
			FD_WARN(FD_LOG_EP_CTRL, "closing a context: out of memory");
		fdm_unlock(s->d);
	}
	memset(side, 0, sizeof(*side));
}

static int fdm_sep_getname_of(struct fdm_sep *s, void *addr, size_t *addrlen)
{
	bool up;

	pthread_mutex_lock(&s->up_lock);
	up = s->up;
	pthread_mutex_unlock(&s->up_lock);
	if (!up)
		return -FI_EOPBADSTATE;
	return s->e_cm->getname(&s->e[0]->ep_fid.fid, addr, addrlen);
}

static int fdm_sep_ctx_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fdm_sep *s = fid->fclass == FI_CLASS_TX_CTX ?
		fdm_ep_of(fdv_container_of(fid, struct fid_ep, fid))->sep :
		fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid)->sep;

	if (!addrlen)
		return -FI_EINVAL;
	return fdm_sep_getname_of(s, addr, addrlen);
}

static struct fi_ops_cm fdm_sep_ctx_cm =
	FD_CM_OPS_CONNECTIONLESS(fdm_sep_ctx_getname, fd_no_cm_join);

/* FI_GETOPSFLAG / FI_SETOPSFLAG on a context: its own direction only. */
static int fdm_sep_ctx_opsflag(struct fdm_sep *s, struct fdm_ep *e, bool tx, int command,
			       uint64_t *f)
{
	uint64_t dir = tx ? FI_TRANSMIT : FI_RECV;

	if (!f || !(*f & dir) || (*f & (tx ? FI_RECV : FI_TRANSMIT)))
		return -FI_EINVAL;
	return s->e_fi_ops->control(&e->ep_fid.fid, command, f);
}

/* ---- transmit contexts: the pair's endpoint itself ---- */

static int fdm_sep_tx_close(struct fid *fid)
{
	struct fdm_ep *e = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);

	fdm_sep_ctx_close(e->sep, e->sep_ctx, true);
	e->ep_fid.fid.context = NULL;
	return 0;
}

static int fdm_sep_tx_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdm_ep *e = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);

	return fdm_sep_ctx_bind(e->sep, &e->sep->tx[e->sep_ctx], true, bfid, flags);
}

static int fdm_sep_tx_control(struct fid *fid, int command, void *arg)
{
	struct fdm_ep *e = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);

	switch (command) {
	case FI_ENABLE:
		return fdm_sep_ctx_enable(e->sep, e->sep_ctx, true);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		return fdm_sep_ctx_opsflag(e->sep, e, true, command, arg);
	default:
		return -FI_ENOSYS;
	}
}

static ssize_t fdm_sep_tx_cancel(fid_t fid, void *context)
{
	(void)fid;
	(void)context;
	return -FI_ENOENT;	/* sends are not cancelled (as on an endpoint) */
}

static ssize_t fdm_sep_tx_size_left(struct fid_ep *ep)
{
	return fdm_ep_of(ep)->sep->e_ops->tx_size_left(ep);
}

static struct fi_ops fdm_sep_tx_fi_ops =
	FD_FI_OPS(fdm_sep_tx_close, fdm_sep_tx_bind, fdm_sep_tx_control, fd_no_fid_tostr);

static struct fi_ops_ep fdm_sep_tx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fdm_sep_tx_cancel,
	.getopt = fd_no_ep_getopt,
	.setopt = fd_no_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fdm_sep_tx_size_left,
};

/* ---- receive contexts ---- */

static struct fdm_sep_rx *fdm_sep_rx_of(struct fid_ep *ep)
{
	return fdv_container_of(ep, struct fdm_sep_rx, ep_fid);
}

static ssize_t fdm_sep_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			    fi_addr_t src, void *context)
{
	return fdm_fast_recv(&fdm_sep_rx_of(ep)->e->ep_fid, buf, len, desc, src, context);
}

static ssize_t fdm_sep_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			     size_t count, fi_addr_t src, void *context)
{
	return fdm_msg_ops.recvv(&fdm_sep_rx_of(ep)->e->ep_fid, iov, desc, count, src, context);
}

static ssize_t fdm_sep_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	return fdm_msg_ops.recvmsg(&fdm_sep_rx_of(ep)->e->ep_fid, msg, flags);
}

static ssize_t fdm_sep_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			     fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	return fdm_fast_trecv(&fdm_sep_rx_of(ep)->e->ep_fid, buf, len, desc, src, tag,
			      ignore, context);
}

static ssize_t fdm_sep_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			      size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			      void *context)
{
	return fdm_tagged_ops.recvv(&fdm_sep_rx_of(ep)->e->ep_fid, iov, desc, count, src,
				    tag, ignore, context);
}

static ssize_t fdm_sep_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
				uint64_t flags)
{
	return fdm_tagged_ops.recvmsg(&fdm_sep_rx_of(ep)->e->ep_fid, msg, flags);
}

static struct fi_ops_msg fdm_sep_rx_msg = {
	.size = sizeof(struct fi_ops_msg),
	.recv = fdm_sep_recv, .recvv = fdm_sep_recvv, .recvmsg = fdm_sep_recvmsg,
	.send = fd_no_msg_send, .sendv = fd_no_msg_sendv, .sendmsg = fd_no_msg_sendmsg,
	.inject = fd_no_msg_inject, .senddata = fd_no_msg_senddata,
	.injectdata = fd_no_msg_injectdata,
};

static struct fi_ops_tagged fdm_sep_rx_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = fdm_sep_trecv, .recvv = fdm_sep_trecvv, .recvmsg = fdm_sep_trecvmsg,
	.send = fd_no_tagged_send, .sendv = fd_no_tagged_sendv,
	.sendmsg = fd_no_tagged_sendmsg, .inject = fd_no_tagged_inject,
	.senddata = fd_no_tagged_senddata, .injectdata = fd_no_tagged_injectdata,
};

static int fdm_sep_rx_close(struct fid *fid)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	fdm_sep_ctx_close(r->sep, r->e->sep_ctx, false);
	return 0;
}

static int fdm_sep_rx_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	return fdm_sep_ctx_bind(r->sep, &r->sep->rxs[r->e->sep_ctx], false, bfid, flags);
}

static int fdm_sep_rx_control(struct fid *fid, int command, void *arg)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	switch (command) {
	case FI_ENABLE:
		return fdm_sep_ctx_enable(r->sep, r->e->sep_ctx, false);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		return fdm_sep_ctx_opsflag(r->sep, r->e, false, command, arg);
	default:
		return -FI_ENOSYS;
	}
}

static ssize_t fdm_sep_rx_cancel(fid_t fid, void *context)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	return fdm_ep_cancel(&r->e->ep_fid.fid, context);
}

static int fdm_sep_rx_getopt(fid_t fid, int level, int optname, void *optval,
			     size_t *optlen)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	return r->sep->e_ops->getopt(&r->e->ep_fid.fid, level, optname, optval, optlen);
}

static int fdm_sep_rx_setopt(fid_t fid, int level, int optname, const void *optval,
			     size_t optlen)
{
	struct fdm_sep_rx *r = fdv_container_of(fid, struct fdm_sep_rx, ep_fid.fid);

	return r->sep->e_ops->setopt(&r->e->ep_fid.fid, level, optname, optval, optlen);
}

static ssize_t fdm_sep_rx_size_left(struct fid_ep *ep)
{
	struct fdm_sep_rx *r = fdm_sep_rx_of(ep);

	return r->sep->e_ops->rx_size_left(&r->e->ep_fid);
}

static struct fi_ops fdm_sep_rx_fi_ops =
	FD_FI_OPS(fdm_sep_rx_close, fdm_sep_rx_bind, fdm_sep_rx_control, fd_no_fid_tostr);

static struct fi_ops_ep fdm_sep_rx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fdm_sep_rx_cancel,
	.getopt = fdm_sep_rx_getopt,
	.setopt = fdm_sep_rx_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fdm_sep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

/* ---- the scalable endpoint ---- */

static int fdm_sep_tx_ctx(struct fid_ep *sep, int idx, struct fi_tx_attr *attr,
			  struct fid_ep **tx_ep, void *context)
{
	struct fdm_sep *s = fdm_sep_of(&sep->fid);
	struct fdm_ep *e;

	if (!tx_ep || idx < 0 || (unsigned int)idx >= s->ntx)
		return -FI_EINVAL;
	if (s->tx[idx].open)
		return -FI_EBUSY;
	e = s->e[idx];
	if (attr) {
		/* the pair was made from the SEP's info: what a context
		 * may still choose is its operation flags */
		if (attr->caps & ~s->pinfo->caps)
			return -FI_EINVAL;
		fdm_lock(s->d);
		e->tx_op_flags = attr->op_flags;
		fdm_ep_fast_update(e);
		fdm_unlock(s->d);
	}
	s->tx[idx].open = true;
	e->ep_fid.fid.context = context;
	*tx_ep = &e->ep_fid;
	return 0;
}

static int fdm_sep_rx_ctx(struct fid_ep *sep, int idx, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context)
{
	struct fdm_sep *s = fdm_sep_of(&sep->fid);
	struct fdm_sep_rx *r;

	if (!rx_ep || idx < 0 || (unsigned int)idx >= s->nrx)
		return -FI_EINVAL;
	if (s->rxs[idx].open)
		return -FI_EBUSY;
	r = &s->rx[idx];
	if (attr) {
		if (attr->caps & ~s->pinfo->caps)
			return -FI_EINVAL;
		fdm_lock(s->d);
		r->e->rx_op_flags = attr->op_flags;
		fdm_ep_fast_update(r->e);
		fdm_unlock(s->d);
	}
	s->rxs[idx].open = true;
	r->ep_fid.fid.context = context;
	*rx_ep = &r->ep_fid;
	return 0;
}

static void fdm_sep_free(struct fdm_sep *s)
{
	for (unsigned int k = 0; k < s->n; k++)
		if (s->e[k])
			(void)s->e_fi_ops->close(&s->e[k]->ep_fid.fid);
	if (s->sink)
		fi_close(&s->sink->cq_fid.fid);
	fi_freeinfo(s->pinfo);
	pthread_mutex_destroy(&s->up_lock);
	__atomic_fetch_sub(&s->d->refs, 1, __ATOMIC_RELAXED);
	free(s);
}

static int fdm_sep_close(struct fid *fid)
{
	struct fdm_sep *s = fdm_sep_of(fid);

	for (unsigned int k = 0; k < s->n; k++)
		if (s->tx[k].open || s->rxs[k].open)
			return -FI_EBUSY;
	fdm_sep_free(s);
	return 0;
}

static int fdm_sep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdm_sep *s = fdm_sep_of(fid);
	struct fdm_av *av;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (bfid->fclass != FI_CLASS_AV)
		return -FI_EINVAL;	/* CQs bind to the contexts */
	if (flags)
		return -FI_EBADFLAGS;
	av = fdv_container_of(bfid, struct fdm_av, av_fid.fid);
	if (s->av || av->domain != s->d)
		return -FI_EINVAL;
	for (unsigned int k = 0; k < s->n; k++) {
		ret = s->e_fi_ops->bind(&s->e[k]->ep_fid.fid, bfid, 0);
		if (ret)
			return ret;	/* only a bad AV fails, and on the first */
	}
	s->av = av;
	return 0;
}

static int fdm_sep_control(struct fid *fid, int command, void *arg)
{
	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	return fdm_sep_up(fdm_sep_of(fid));
}

static int fdm_sep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	if (!addrlen)
		return -FI_EINVAL;
	return fdm_sep_getname_of(fdm_sep_of(fid), addr, addrlen);
}

static struct fi_ops fdm_sep_fi_ops =
	FD_FI_OPS(fdm_sep_close, fdm_sep_bind, fdm_sep_control, fd_no_fid_tostr);

static struct fi_ops_ep fdm_sep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fd_no_ep_getopt,
	.setopt = fd_no_ep_setopt,
	.tx_ctx = fdm_sep_tx_ctx,
	.rx_ctx = fdm_sep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

static struct fi_ops_cm fdm_sep_cm =
	FD_CM_OPS_CONNECTIONLESS(fdm_sep_getname, fd_no_cm_join);

/* The pairs' info: one context each, no collectives (their tag bit and
 * joins are for plain endpoints), a source address whose port the SEP
 * sets. */
static int fdm_sep_pinfo(struct fdm_sep *s, const struct fi_info *info)
{
	const void *sa = info->src_addr;
	size_t salen = info->src_addrlen;
	struct fi_info *p = fi_dupinfo(info);

	if (!p)
		return -FI_ENOMEM;
	s->pinfo = p;
	p->caps &= ~(uint64_t)FI_COLLECTIVE;
	if (p->tx_attr)
		p->tx_attr->caps &= ~(uint64_t)FI_COLLECTIVE;
	p->ep_attr->tx_ctx_cnt = 1;
	p->ep_attr->rx_ctx_cnt = 1;
	if (!sa || !salen) {
		sa = s->d->core->src_addr;
		salen = s->d->core->src_addrlen;
	}
	if (!sa || !fdm_sa_port((void *)(uintptr_t)sa))
		return -FI_EINVAL;	/* no address family to bind */
	if (sa != p->src_addr) {
		free(p->src_addr);
		p->src_addr = malloc(salen);
		if (!p->src_addr)
			return -FI_ENOMEM;
		memcpy(p->src_addr, sa, salen);
		p->src_addrlen = salen;
	}
	s->fixed_port = *fdm_sa_port(p->src_addr) != 0;
	return 0;
}

static unsigned int fdm_sep_count(size_t want)
{
	return want ? (unsigned int)want : 1u;
}

int fdm_sep_open(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **sep_out, void *context)
{
	struct fdm_domain *d = fdv_container_of(domain, struct fdm_domain, domain_fid);
	struct fi_cq_attr sink_attr = { .format = FI_CQ_FORMAT_CONTEXT,
					.wait_obj = FI_WAIT_NONE };
	struct fid_cq *sink;
	struct fdm_sep *s;
	int ret;

	if (!info || !sep_out || !info->ep_attr || info->ep_attr->type != FI_EP_RDM ||
	    !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	if (info->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT ||
	    info->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT)
		return -FI_ENOSYS;	/* no shared contexts */
	if (info->ep_attr->tx_ctx_cnt > FDM_SEP_MAX_CTX ||
	    info->ep_attr->rx_ctx_cnt > FDM_SEP_MAX_CTX)
		return -FI_EINVAL;
	pthread_once(&fdm_sep_once, fdm_sep_tables);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -FI_ENOMEM;
	s->d = d;
	pthread_mutex_init(&s->up_lock, NULL);
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	s->ntx = fdm_sep_count(info->ep_attr->tx_ctx_cnt);
	s->nrx = fdm_sep_count(info->ep_attr->rx_ctx_cnt);
	s->n = s->ntx > s->nrx ? s->ntx : s->nrx;
	ret = fdm_sep_pinfo(s, info);
	if (ret)
		goto fail;
	ret = fdm_cq_open(domain, &sink_attr, &sink, NULL);
	if (ret)
		goto fail;
	s->sink = fdv_container_of(sink, struct fdm_cq, cq_fid);
	for (unsigned int k = 0; k < s->n; k++) {
		struct fid_ep *ep;
		struct fdm_ep *e;

		ret = fdm_ep_open(domain, s->pinfo, &ep, NULL);
		if (ret)
			goto fail;
		e = fdm_ep_of(ep);
		s->e[k] = e;
		if (!k) {
			s->e_fi_ops = ep->fid.ops;
			s->e_ops = ep->ops;
			s->e_cm = ep->cm;
		}
		e->sep = s;
		e->sep_ctx = (uint8_t)k;
		/* both sides complete into the sink until their contexts
		 * are enabled */
		ret = s->e_fi_ops->bind(&ep->fid, &sink->fid, FI_TRANSMIT | FI_RECV);
		if (ret)
			goto fail;
		ep->fid.fclass = FI_CLASS_TX_CTX;
		ep->fid.ops = &fdm_sep_tx_fi_ops;
		ep->ops = &fdm_sep_tx_ep_ops;
		ep->cm = &fdm_sep_ctx_cm;
		ep->msg = &fdm_sep_tx_msg;
		ep->tagged = &fdm_sep_tx_tagged;
		ep->collective = &fd_no_ops_collective;

		s->rx[k].e = e;
		s->rx[k].sep = s;
		s->rx[k].kind = FDV_EP_KIND_LAYER;
		/* the context is the application's, from fi_rx_context */
		fd_ep_fid_init(&s->rx[k].ep_fid, FI_CLASS_RX_CTX, NULL,
			       &fdm_sep_rx_fi_ops, &fdm_sep_rx_ep_ops, &fdm_sep_ctx_cm);
		s->rx[k].ep_fid.msg = &fdm_sep_rx_msg;
		s->rx[k].ep_fid.tagged = &fdm_sep_rx_tagged;
	}
	s->kind = FDV_EP_KIND_LAYER;
	fd_ep_fid_init(&s->ep_fid, FI_CLASS_SEP, context, &fdm_sep_fi_ops,
		       &fdm_sep_ep_ops, &fdm_sep_cm);
	*sep_out = &s->ep_fid;
	return 0;
fail:
	fdm_sep_free(s);
	return ret;
}
