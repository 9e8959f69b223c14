/* rstream endpoints: creation, options, enabling (the internal verbs
 * endpoint, CQ, EQ and the registered rings) and close. The stream data
 * path is in fdr_stream.c.
 *
 * Locking: one mutex per endpoint guards everything (see fdr_stream.c). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fd_enosys.h"
#include "fdr.h"

/* ---- options ---- */

static int fdr_opt_value(const void *optval, size_t optlen, size_t *out)
{
	if (!optval)
		return -FI_EINVAL;
	/* size_t is what the man page says; int is what most callers
	 * pass. Both are taken, told apart by the length. */
	if (optlen == sizeof(size_t)) {
		memcpy(out, optval, sizeof(size_t));
		return 0;
	}
	if (optlen == sizeof(int)) {
		int v;

		memcpy(&v, optval, sizeof(v));
		if (v < 0)
			return -FI_EINVAL;
		*out = (size_t)v;
		return 0;
	}
	return -FI_EINVAL;
}

static int fdr_opt_put(void *optval, size_t *optlen, size_t v)
{
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen >= sizeof(size_t)) {
		memcpy(optval, &v, sizeof(v));
		*optlen = sizeof(size_t);
		return 0;
	}
	if (*optlen == sizeof(int)) {
		int i = v > INT32_MAX ? INT32_MAX : (int)v;

		memcpy(optval, &i, sizeof(i));
		return 0;
	}
	*optlen = sizeof(size_t);
	return -FI_ETOOSMALL;
}

static int fdr_ep_setopt(fid_t fid, int level, int optname,
			 const void *optval, size_t optlen)
{
	struct fdr_ep *ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));
	size_t v;
	int ret;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
	case FI_OPT_RECV_BUF_SIZE:
	case FI_OPT_TX_SIZE:
	case FI_OPT_RX_SIZE:
		break;
	case FI_OPT_CM_DATA_SIZE:
		return -FI_ENOSYS;	/* fixed by the transport */
	default:
		return -FI_ENOPROTOOPT;
	}
	ret = fdr_opt_value(optval, optlen, &v);
	if (ret)
		return ret;
	if (optname == FI_OPT_SEND_BUF_SIZE || optname == FI_OPT_RECV_BUF_SIZE) {
		if (v < FDR_RING_MIN || v > FDR_RING_MAX)
			return -FI_EINVAL;
	} else if (v < FDR_MIN_QUEUE_SIZE || v > FDR_MAX_QUEUE_SIZE ||
		   v > ep->domain->max_queue) {
		return -FI_EINVAL;
	}
	fd_mutex_lock(&ep->lock);
	if (ep->state != FDR_IDLE) {
		fd_mutex_unlock(&ep->lock);
		return -FI_EOPBADSTATE;	/* the rings exist already */
	}
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
		ep->tx_buf = (uint32_t)v;
		break;
	case FI_OPT_RECV_BUF_SIZE:
		ep->rx_buf = (uint32_t)v;
		break;
	case FI_OPT_TX_SIZE:
		ep->tx_size = (uint32_t)v;
		break;
	default:
		ep->rx_size = (uint32_t)v;
		break;
	}
	fd_mutex_unlock(&ep->lock);
	return 0;
}

static int fdr_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct fdr_ep *ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_SEND_BUF_SIZE:
		return fdr_opt_put(optval, optlen, ep->tx_buf);
	case FI_OPT_RECV_BUF_SIZE:
		return fdr_opt_put(optval, optlen, ep->rx_buf);
	case FI_OPT_TX_SIZE:
		return fdr_opt_put(optval, optlen, ep->tx_size);
	case FI_OPT_RX_SIZE:
		return fdr_opt_put(optval, optlen, ep->rx_size);
	case FI_OPT_CM_DATA_SIZE:
		return fdr_opt_put(optval, optlen, ep->cm_data_max);
	default:
		return -FI_ENOPROTOOPT;
	}
}

static struct fi_ops_ep fdr_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fd_no_ep_cancel,
	.getopt = fdr_ep_getopt,
	.setopt = fdr_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fd_no_ep_rx_size_left,
	.tx_size_left = fd_no_ep_tx_size_left,
};

/* ---- enable ---- */

static size_t fdr_align(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static int fdr_ep_enable(struct fdr_ep *ep)
{
	struct fi_cq_attr cq_attr;
	struct epoll_event ev;
	size_t tx_at, rx_at, rxs_at, txs_at, tx_size, rx_size;
	int ret, fd;

	if (ep->state != FDR_IDLE)
		return -FI_EOPBADSTATE;
	if (!ep->ueq)
		return -FI_ENOEQ;

	/* One region, one registration: [tx ring | rx ring | receive
	 * slots | send slots], the slots holding iWARP's 4-byte words. */
	tx_at = 0;
	rx_at = fdr_align(tx_at + ep->tx_buf, 64);
	rxs_at = fdr_align(rx_at + ep->rx_buf, 64);
	txs_at = fdr_align(rxs_at + 4 * (size_t)ep->rx_size, 64);
	ep->region_len = fdr_align(txs_at + 4 * (size_t)ep->tx_size, 4096);
	if (posix_memalign((void **)&ep->region, 4096, ep->region_len)) {
		ep->region = NULL;
		return -FI_ENOMEM;
	}
	memset(ep->region, 0, ep->region_len);
	ep->tx_ring = ep->region + tx_at;
	ep->rx_ring = ep->region + rx_at;
	ep->rx_slots = ep->region + rxs_at;
	ep->tx_slots = ep->region + txs_at;
	ret = fi_mr_reg(ep->domain->idom, ep->region, ep->region_len,
			FI_SEND | FI_RECV | FI_WRITE | FI_REMOTE_WRITE, 0, 0, 0,
			&ep->imr, NULL);
	if (ret)
		goto err;
	ep->desc = fi_mr_desc(ep->imr);

	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.size = (size_t)ep->tx_size + ep->rx_size + 8;
	cq_attr.format = FI_CQ_FORMAT_DATA;
	cq_attr.wait_obj = FI_WAIT_FD;
	ret = fi_cq_open(ep->domain->idom, &cq_attr, &ep->icq, ep);
	if (ret)
		goto err;
	ret = fi_ep_bind(ep->iep, &ep->icq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		goto err;
	/* The QP's queues as the options left them. */
	tx_size = ep->tx_size;
	rx_size = ep->rx_size;
	ret = fi_setopt(&ep->iep->fid, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE,
			&tx_size, sizeof(tx_size));
	if (!ret)
		ret = fi_setopt(&ep->iep->fid, FI_OPT_ENDPOINT, FI_OPT_RX_SIZE,
				&rx_size, sizeof(rx_size));
	if (ret)
		goto err;
	ret = fi_enable(ep->iep);
	if (ret)
		goto err;
	ret = fi_control(&ep->icq->fid, FI_GETWAIT, &fd);
	if (ret)
		goto err;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(ep->waitfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -fd_errno_to_fi(errno);
		goto err;
	}
	/* Every credit the peer will be given is a receive posted now. */
	for (uint32_t i = 0; i < ep->rx_size; i++) {
		ret = fdr_post_rx(ep, i);
		if (ret)
			goto err;
	}
	ep->sq_free = ep->tx_size;
	ep->state = FDR_ENABLED;
	return 0;
err:
	/* What was created stays for close to release; the endpoint
	 * cannot be enabled twice. */
	FD_WARN(FD_LOG_EP_CTRL, "rstream: enabling the endpoint failed: %s",
		fi_strerror(-ret));
	ep->state = FDR_CLOSED;
	return ret;
}

/* ---- fid ops ---- */

static int fdr_ep_control(struct fid *fid, int command, void *arg)
{
	struct fdr_ep *ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));
	int ret;

	switch (command) {
	case FI_ENABLE:
		fd_mutex_lock(&ep->lock);
		ret = fdr_ep_enable(ep);
		fd_mutex_unlock(&ep->lock);
		return ret;
	case FI_GETWAIT:
		if (!arg)
			return -FI_EINVAL;
		fd_mutex_lock(&ep->lock);
		fdr_wait_fd_used(ep);
		fd_mutex_unlock(&ep->lock);
		/* fall through */
	default:
		return fd_wait_control(command, arg, ep->waitfd, FI_WAIT_FD);
	}
}

static int fdr_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdr_ep *ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));
	struct fdr_eq *eq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		break;
	case FI_CLASS_CQ:
	case FI_CLASS_CNTR:
	case FI_CLASS_SRX_CTX:
	case FI_CLASS_STX_CTX:
		/* A stream reports nothing per operation. */
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}
	if (flags)
		return -FI_EBADFLAGS;
	eq = fdr_eq_of_fid(bfid);
	if (!eq)
		return -FI_EINVAL;	/* not an EQ of an rstream fabric */
	fd_mutex_lock(&ep->lock);
	if (ep->ueq || ep->state != FDR_IDLE) {
		fd_mutex_unlock(&ep->lock);
		return ep->ueq ? -FI_EINVAL : -FI_EOPBADSTATE;
	}
	/* Reading the user's EQ runs our translation of the internal one,
	 * and the internal EQ's fd wakes the user's waiters.  The EQ's pump
	 * takes its source lock, then ours: claim the binding, and join the
	 * EQ's sources without holding ours (lock order EQ -> endpoint). */
	ep->ueq = eq;
	fd_mutex_unlock(&ep->lock);
	ret = fdr_eq_add_src(eq, &ep->src);
	if (ret) {
		fd_mutex_lock(&ep->lock);
		ep->ueq = NULL;
		fd_mutex_unlock(&ep->lock);
	}
	return ret;
}

static int fdr_ep_close(struct fid *fid)
{
	struct fdr_ep *ep = fdr_ep_of(fd_container_of(fid, struct fid_ep, fid));

	fd_mutex_lock(&ep->lock);
	/* Closing a connected stream ends it in order, as close(2) does. */
	if (ep->state == FDR_CONNECTED)
		fdr_ep_shutdown_locked(ep);
	fd_mutex_unlock(&ep->lock);
	if (ep->ueq)
		fdr_eq_del_src(ep->ueq, &ep->src, &ep->ep_fid.fid);
	if (ep->iep)
		fi_close(&ep->iep->fid);
	if (ep->imr)
		fi_close(&ep->imr->fid);
	if (ep->icq)
		fi_close(&ep->icq->fid);
	if (ep->ieq)
		fi_close(&ep->ieq->fid);
	free(ep->region);
	if (ep->efd >= 0)
		close(ep->efd);
	if (ep->waitfd >= 0)
		close(ep->waitfd);
	atomic_fetch_sub(&ep->domain->refs, 1);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static struct fi_ops fdr_ep_fid_ops =
	FD_FI_OPS(fdr_ep_close, fdr_ep_bind, fdr_ep_control, NULL);

/* ---- creation ---- */

static uint32_t fdr_queue_size(size_t asked)
{
	if (!asked)
		return FDR_DEF_QUEUE_SIZE;
	if (asked < FDR_MIN_QUEUE_SIZE)
		return FDR_MIN_QUEUE_SIZE;
	return asked > FDR_MAX_QUEUE_SIZE ? FDR_MAX_QUEUE_SIZE : (uint32_t)asked;
}

int fdr_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_out, void *context)
{
	struct fdr_connreq *req = NULL;
	struct fdr_domain *dom;
	struct fi_info *core = NULL;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct epoll_event ev;
	struct fdr_ep *ep;
	int ret;

	if (!domain || !ep_out || !fdr_info_complete(info))
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_SOCK_STREAM)
		return -FI_EINVAL;
	if (info->handle) {
		req = fdr_connreq_of(info->handle);
		if (!req)
			return -FI_EINVAL;	/* not one of our connection requests */
	}
	dom = fd_container_of(domain, struct fdr_domain, domain_fid);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	fd_mutex_init(&ep->lock);
	ep->domain = dom;
	ep->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ep->waitfd = epoll_create1(EPOLL_CLOEXEC);
	ep->info = fi_dupinfo(info);
	if (ep->efd < 0 || ep->waitfd < 0) {
		ret = -fd_errno_to_fi(errno);
		goto err;
	}
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto err;
	}
	ep->info->handle = NULL;
	ep->iwarp = fdr_info_iwarp(info);
	ep->tx_buf = FDR_DEF_BUF_SIZE;
	ep->rx_buf = FDR_DEF_BUF_SIZE;
	ep->tx_size = fdr_queue_size(info->tx_attr ? info->tx_attr->size : 0);
	ep->rx_size = fdr_queue_size(info->rx_attr ? info->rx_attr->size : 0);
	if (ep->tx_size > dom->max_queue)
		ep->tx_size = (uint32_t)dom->max_queue;
	if (ep->rx_size > dom->max_queue)
		ep->rx_size = (uint32_t)dom->max_queue;

	ret = fi_eq_open(dom->fabric->lower, &eq_attr, &ep->ieq, ep);
	if (!ret)
		ret = fi_control(&ep->ieq->fid, FI_GETWAIT, &ep->src.fd);
	if (ret)
		goto err;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(ep->waitfd, EPOLL_CTL_ADD, ep->efd, &ev) ||
	    epoll_ctl(ep->waitfd, EPOLL_CTL_ADD, ep->src.fd, &ev)) {
		ret = -fd_errno_to_fi(errno);
		goto err;
	}

	if (req) {
		/* The passive side: the verbs endpoint adopts the request. */
		core = req->core_info;
		req->core_info = NULL;
		ep->peer = req->peer;
		ep->passive = true;
	} else {
		core = fdr_core_info(info);
		if (!core) {
			ret = -FI_ENOMEM;
			goto err;
		}
	}
	ret = fi_endpoint(dom->idom, core, &ep->iep, ep);
	if (ret) {
		if (req)
			req->core_info = core;	/* still the user's to reject */
		else
			fi_freeinfo(core);
		goto err;
	}
	fi_freeinfo(core);
	if (req) {
		/* Consumed: the verbs endpoint owns the request's id now. */
		free(req);
		info->handle = NULL;
	}
	ret = fi_ep_bind(ep->iep, &ep->ieq->fid, 0);
	if (!ret)
		ret = fdr_cm_share(&ep->iep->fid, &ep->cm_data_max);
	if (ret)
		goto err;
	ep->src.pump = fdr_ep_eq_pump;

	ep->kind = FDV_EP_KIND_LAYER;
	ep->state = FDR_IDLE;
	/* A stream offers fi_msg alone: every other endpoint call is refused
	 * (the core's whole -FI_ENOSYS tables). */
	fd_ep_fid_init(&ep->ep_fid, FI_CLASS_EP, context, &fdr_ep_fid_ops,
		       &fdr_ep_ops, &fdr_ep_cm_ops);
	ep->ep_fid.msg = &fdr_ops_msg;
	atomic_fetch_add(&dom->refs, 1);
	*ep_out = &ep->ep_fid;
	return 0;
err:
	if (ep->iep)
		fi_close(&ep->iep->fid);
	if (ep->ieq)
		fi_close(&ep->ieq->fid);
	if (ep->efd >= 0)
		close(ep->efd);
	if (ep->waitfd >= 0)
		close(ep->waitfd);
	fi_freeinfo(ep->info);
	free(ep);
	return ret;
}
