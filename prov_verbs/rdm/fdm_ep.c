/* RDM endpoints: the object, its bindings, and what fi_enable builds under
 * it through the public verbs API: an EQ, one CQ for every connection, a
 * shared receive context holding the eager pool, a passive endpoint whose
 * address is the endpoint's name, and one registered region for the pool
 * and the transmit bounce buffers. Connections come later, on first use
 * (fdm_conn.c). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "fd_core.h"
#include "fd_enosys.h"
#include "fdm.h"
#include "fdm_cntr.h"

/* What the inline calls may do on their own (fdm_msg.h): nothing
 * before fi_enable or after close, nothing in a domain whose calls lock
 * (FI_THREAD_SAFE), and only what the operation flags leave plain. */
void fdm_ep_fast_update(struct fdm_ep *ep)
{
	bool on = ep->enabled && !ep->domain->locked;

	ep->tx_fast = on && !(ep->tx_op_flags & (FI_INJECT | FI_REMOTE_CQ_DATA |
						  FI_DELIVERY_COMPLETE | FI_FENCE));
	ep->tx_report = !(ep->tx_cq_flags & FI_SELECTIVE_COMPLETION) ||
		(ep->tx_op_flags & FI_COMPLETION);
	ep->rx_fast = on && !(ep->rx_op_flags & (FI_MULTI_RECV | FI_PEEK | FI_CLAIM));
}

void fdm_count_slow(struct fdm_ep *ep, uint8_t which, int err)
{
	struct fid_cntr *c = ep->cntr[which];

	if (err)
		fdm_cntr_inc_err(c);
	else
		fdm_cntr_inc(c);
}

struct fdm_tx *fdm_tx_get(struct fdm_ep *ep)
{
	struct fdm_tx *tx;

	if (!ep->tx_nfree)
		return NULL;
	tx = &ep->txs[ep->tx_free[--ep->tx_nfree]];
	tx->in_use = true;
	tx->rts_done = false;
	tx->done_rcvd = false;
	tx->done_status = 0;
	tx->report = false;
	tx->vep = NULL;
	tx->cntr = FDM_CNTR_NONE;
	tx->gen++;
	return tx;
}

struct fdm_tx *fdm_tx_get_app(struct fdm_ep *ep)
{
	return ep->tx_nfree > ep->tx_reserve ? fdm_tx_get(ep) : NULL;
}

void fdm_tx_put_mrs(struct fdm_tx *tx)
{
	for (unsigned i = 0; i < FDM_IOV_LIMIT; i++) {
		if (tx->mr[i]) {
			fi_close(&tx->mr[i]->fid);
			tx->mr[i] = NULL;
		}
	}
}

/* ---- progress ---- */

static void fdm_ep_dispatch(struct fdm_ep *ep, const struct fi_cq_data_entry *e,
			    ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		void *ctx = e[i].op_context;

		if (e[i].flags & FI_RECV)
			fdm_handle_recv(ep, ctx, e[i].len);
		else if (e[i].flags & FI_REMOTE_WRITE)
			fdm_handle_remote_write(ep, ctx, e[i].data);
		else if (fdm_is_tx(ep, ctx))
			fdm_handle_tx_done(ep, ctx, 0);
		else
			fdm_handle_rndv_read(ep, ctx, 0);
	}
}

/* The verbs CQ through its ops table, translated to fi_cq_data_entry:
 * what the direct read below falls back to for completions it does not
 * handle itself (errors, held-back ones, library-owned requests). */
static FDV_COLD void fdm_ep_read_vcq_slow(struct fdm_ep *ep)
{
	struct fi_cq_data_entry e[FDM_CQ_BATCH];
	ssize_t n;

	for (;;) {
		n = fi_cq_read(ep->vcq, e, FDM_CQ_BATCH);
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;

			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(ep->vcq, &err, 0) != 1)
				return;
			if (fdm_is_rxbuf(ep, err.op_context)) {
				/* a pool buffer flushed or failed: put it back */
				fdm_repost(ep, err.op_context);
			} else if (fdm_is_tx(ep, err.op_context)) {
				fdm_handle_tx_done(ep, err.op_context,
						   err.err ? err.err : FI_EIO);
			} else if (err.op_context) {
				fdm_handle_rndv_read(ep, err.op_context,
						     err.err ? err.err : FI_EIO);
			}
			continue;
		}
		if (n <= 0)
			return;
		fdm_ep_dispatch(ep, e, n);
		if (n < FDM_CQ_BATCH)
			return;
	}
}

/* Completions the direct read does not handle, from wc on (n of them,
 * already polled): the verbs provider's own out-of-line translation
 * (library-owned requests, silent ones, errors held back for readerr),
 * then the general loop for what it held back. */
static FDV_COLD void fdm_ep_vcq_odd(struct fdm_ep *ep, struct fdv_cq *vcq,
				    struct ibv_wc *wc, int n)
{
	struct fi_cq_data_entry e[FDM_CQ_BATCH];
	ssize_t got;

	fdv_lock(&vcq->lock);
	got = fdv_cq_deliver_slow(vcq, wc, n, e, 0, NULL);
	fdv_unlock(&vcq->lock);
	if (got > 0)
		fdm_ep_dispatch(ep, e, got);
	if (vcq->backlog)
		fdm_ep_read_vcq_slow(ep);
}

/* Read the endpoint's verbs CQ directly (the layer contract,
 * prov_verbs/layer/fdv_layer.h: the installed inline verbs calls on the
 * verbs objects the layer opened): each work completion goes from the
 * ibv_wc to its handler, which matches, copies and writes the RDM CQ
 * entry, into the reader's buffer when it has room (fdm_cq_write). No
 * ops-table call and no intermediate fi_cq_data_entry on the common path:
 * a successful completion of a request the layer posted with a completion
 * (wr_id is then the request's own pointer, below FDV_WR_ID_TAGGED). */
void fdm_ep_read_vcq(struct fdm_ep *ep)
{
	struct fdv_cq *vcq = fdv_cq_of(ep->vcq);
	struct ibv_wc wc[FDM_CQ_BATCH];
	int n;

	for (;;) {
		if (fdv_unlikely(vcq->backlog)) {
			fdm_ep_read_vcq_slow(ep);
			return;
		}
		fdv_lock(&vcq->lock);
		n = fdv_ibv_poll_cq(vcq->ibcq, FDM_CQ_BATCH, wc);
		fdv_unlock(&vcq->lock);
		if (n > FDM_CQ_BATCH)
			__builtin_unreachable();
		if (fdv_unlikely(n <= 0)) {
			if (n < 0)
				(void)fdv_cq_poll_failed(vcq, n);
			return;
		}
		for (int i = 0; i < n; i++) {
			void *ctx = (void *)(uintptr_t)wc[i].wr_id;

			if (fdv_unlikely(wc[i].status != IBV_WC_SUCCESS ||
					 wc[i].wr_id >= FDV_WR_ID_TAGGED)) {
				fdm_ep_vcq_odd(ep, vcq, wc + i, n - i);
				break;
			}
			if (wc[i].opcode == IBV_WC_RECV)
				fdm_handle_recv(ep, ctx, wc[i].byte_len);
			else if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM)
				fdm_handle_remote_write(ep, ctx, fdv_be32toh(wc[i].imm_data));
			else if (!fdm_is_tx(ep, ctx))
				fdm_handle_rndv_read(ep, ctx, 0);
			else if (fdv_likely(((struct fdm_tx *)ctx)->kind == FDM_TX_EAGER))
				fdm_eager_sent(ep, ctx);
			else
				fdm_handle_tx_done(ep, ctx, 0);
		}
		if (n < FDM_CQ_BATCH)
			return;
	}
}

/* What progress does beyond the CQ: the EQ when it is due or a
 * connection is on its way, owed credit reports, connections to flush,
 * rendezvous and atomic answers to push on. */
FDV_COLD void fdm_ep_progress_more(struct fdm_ep *ep)
{
	/* Reading the EQ is a system call (rdma_cm's event channel): every
	 * FDM_EQ_EVERY-th progress only, and always while a connection is
	 * being made or waited for. */
	if (ep->nconnecting || !ep->eq_left) {
		ep->eq_left = FDM_EQ_EVERY;
		fdm_conn_handle_events(ep);
	}
	if (ep->credit_owed)
		fdm_credit_report_owed(ep);
	if (!fdm_list_empty(&ep->flush))
		fdm_conn_flush(ep);
	if (!fdm_list_empty(&ep->rndv_active))
		fdm_rndv_pump(ep);
	if (!fdm_list_empty(&ep->atomic_wait))
		fdm_atomic_pump(ep);
	ep->work = ep->nconnecting || ep->credit_owed || !fdm_list_empty(&ep->flush) ||
		!fdm_list_empty(&ep->rndv_active) || !fdm_list_empty(&ep->atomic_wait);
}

/* ---- wait objects ---- */

int fdm_ep_wait_attach(struct fdm_ep *ep, bool add)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fds[2], ret;

	ret = fi_control(&ep->vcq->fid, FI_GETWAIT, &fds[0]);
	if (!ret)
		ret = fi_control(&ep->veq->fid, FI_GETWAIT, &fds[1]);
	if (ret)
		return ret;
	for (int i = 0; i < 2; i++) {
		if (epoll_ctl(ep->domain->wait_epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
			      fds[i], &ev) && add) {
			ret = -errno;
			if (i)
				(void)epoll_ctl(ep->domain->wait_epfd, EPOLL_CTL_DEL, fds[0], &ev);
			return ret;
		}
	}
	return 0;
}

/* Whether progress has work that no fd announces: sends waiting for a
 * post to go through or for credits (the peer's credit writes raise no
 * event), rendezvous with no read in flight (to post or finish), atomic answers waiting
 * for a request, a connection being made (the layer's own deadlines). */
static bool fdm_ep_busy(struct fdm_ep *ep)
{
	if (!fdm_list_empty(&ep->flush) || ep->credit_owed ||
	    !fdm_list_empty(&ep->atomic_wait) || ep->nconnecting || ep->nwait)
		return true;
	for (struct fdm_node *n = ep->rndv_active.next; n != &ep->rndv_active; n = n->next) {
		struct fdm_rndv *rv = fdm_entry(n, struct fdm_rndv, node);

		/* with reads in flight their completions wake us */
		if (!rv->inflight)
			return true;
	}
	return false;
}

int fdm_domain_trywait(struct fdm_domain *d)
{
	for (struct fdm_node *n = d->eps.next; n != &d->eps; n = n->next) {
		struct fdm_ep *ep = fdm_entry(n, struct fdm_ep, dom_node);
		struct fid *fids[2] = { &ep->vcq->fid, &ep->veq->fid };
		int ret;

		fdm_ep_progress(ep);
		/* progress reads the EQ only now and then: all of it now,
		 * or its fd stays readable */
		fdm_conn_handle_events(ep);
		if (fdm_ep_busy(ep))
			return -FI_EAGAIN;
		ret = fi_trywait(ep->domain->fabric->lower, fids, 2);
		if (ret)
			return ret;
	}
	return 0;
}

/* For counters (fdm_cntr), which call without the lock. A counter wait
 * drives every endpoint of the domain, not only those bound to it: a
 * program waiting on its send counter must still see its peer endpoint in
 * the same domain accept the connection and take the messages. */
void fdm_ep_progress_cb(void *arg)
{
	struct fdm_ep *ep = arg;
	struct fdm_domain *d = ep->domain;

	fdm_lock(d);
	for (struct fdm_node *n = d->eps.next; n != &d->eps; n = n->next)
		fdm_ep_progress(fdm_entry(n, struct fdm_ep, dom_node));
	fdm_unlock(d);
}

/* ---- bind ---- */

static int fdm_ep_bind_cntr(struct fdm_ep *ep, struct fid_cntr *c, uint64_t flags)
{
	static const struct { uint64_t flag; int idx; } map[] = {
		{ FI_SEND, FDM_CNTR_SEND }, { FI_RECV, FDM_CNTR_RECV },
		{ FI_READ, FDM_CNTR_READ }, { FI_WRITE, FDM_CNTR_WRITE },
		{ FI_REMOTE_READ, FDM_CNTR_RREAD }, { FI_REMOTE_WRITE, FDM_CNTR_RWRITE },
	};
	int ret;

	if (!flags || (flags & ~(uint64_t)(FI_SEND | FI_RECV | FI_READ | FI_WRITE |
					  FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if ((flags & map[i].flag) && ep->cntr[map[i].idx])
			return -FI_EINVAL;
	ret = fdm_cntr_add_progress(c, fdm_ep_progress_cb, ep);
	if (ret)
		return ret;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (flags & map[i].flag)
			ep->cntr[map[i].idx] = c;
	return 0;
}

static int fdm_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ: {
		struct fdm_cq *cq = fdv_container_of(bfid, struct fdm_cq, cq_fid.fid);

		if (cq->kind != FDV_CQ_KIND_LAYER || cq->domain != ep->domain)
			return -FI_EINVAL;
		if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		if (!(flags & (FI_TRANSMIT | FI_RECV)))
			return -FI_EBADFLAGS;
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
			return -FI_EINVAL;
		fdm_lock(ep->domain);
		ret = fdm_cq_add_ep(cq, ep);
		fdm_unlock(ep->domain);
		if (ret)
			return ret;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_cq_flags = flags & FI_SELECTIVE_COMPLETION;
		}
		return 0;
	}
	case FI_CLASS_AV: {
		struct fdm_av *av = fdv_container_of(bfid, struct fdm_av, av_fid.fid);

		if (flags)
			return -FI_EBADFLAGS;
		if (ep->av || av->domain != ep->domain)
			return -FI_EINVAL;
		ep->av = av;
		ep->av_gen = &av->gen;
		av->refs++;
		return 0;
	}
	case FI_CLASS_CNTR:
		return fdm_ep_bind_cntr(ep, fdv_container_of(bfid, struct fid_cntr, fid), flags);
	case FI_CLASS_EQ:
		/* the collective joins' events (fdm_coll.c); flags were
		 * ignored before and still are */
		return fdm_coll_bind_eq(ep, bfid);
	default:
		return -FI_EINVAL;
	}
}

/* ---- enable: the verbs objects ---- */

static int fdm_ep_setup_region(struct fdm_ep *ep)
{
	struct fdm_domain *d = ep->domain;
	size_t rx_bytes, tx_bytes;
	int ret;

	ep->nrxbufs = d->pool_size;
	/* tx_attr->size is what the application may have outstanding: the
	 * reserve for the layer's own messages comes on top of it */
	ep->tx_reserve = (uint32_t)(ep->info->tx_attr->size / 4);
	if (ep->tx_reserve > FDM_TX_RESERVE)
		ep->tx_reserve = FDM_TX_RESERVE;
	if (!ep->tx_reserve)
		ep->tx_reserve = 1;
	ep->ntx = (uint32_t)ep->info->tx_attr->size + ep->tx_reserve;
	ep->nrx = (uint32_t)ep->info->rx_attr->size;
	rx_bytes = (size_t)ep->nrxbufs * FDM_BUF_SIZE;
	tx_bytes = (size_t)ep->ntx * FDM_BUF_SIZE;
	ep->region_len = rx_bytes + tx_bytes;
	if (posix_memalign((void **)&ep->region, 4096, ep->region_len))
		return -FI_ENOMEM;
	ep->rxbufs = calloc(ep->nrxbufs, sizeof(*ep->rxbufs));
	ep->txs = calloc(ep->ntx, sizeof(*ep->txs));
	ep->tx_free = calloc(ep->ntx, sizeof(*ep->tx_free));
	ep->rxs = calloc(ep->nrx, sizeof(*ep->rxs));
	ep->rx_free = calloc(ep->nrx, sizeof(*ep->rx_free));
	if (!ep->rxbufs || !ep->txs || !ep->tx_free || !ep->rxs || !ep->rx_free)
		return -FI_ENOMEM;
	for (uint32_t i = 0; i < ep->nrxbufs; i++) {
		ep->rxbufs[i].idx = i;
		ep->rxbufs[i].buf = ep->region + (size_t)i * FDM_BUF_SIZE;
	}
	for (uint32_t i = 0; i < ep->ntx; i++) {
		ep->txs[i].idx = i;
		ep->txs[i].buf = ep->region + rx_bytes + (size_t)i * FDM_BUF_SIZE;
		fdm_list_init(&ep->txs[i].node);
		ep->tx_free[i] = ep->ntx - 1 - i;
	}
	ep->tx_nfree = ep->ntx;
	for (uint32_t i = 0; i < ep->nrx; i++) {
		fdm_list_init(&ep->rxs[i].node);
		ep->rx_free[i] = ep->nrx - 1 - i;
	}
	ep->rx_nfree = ep->nrx;
	ret = fi_mr_reg(d->vdomain, ep->region, ep->region_len,
			FI_SEND | FI_RECV | FI_READ | FI_WRITE, 0, 0, 0, &ep->vmr, NULL);
	if (ret)
		return ret;
	ep->vdesc = fi_mr_desc(ep->vmr);
	return 0;
}

static int fdm_ep_enable(struct fdm_ep *ep)
{
	struct fdm_domain *d = ep->domain;
	/* With fds (a completion channel: nothing happens on it until a
	 * trywait arms the CQ, so reading costs the same): the wait objects
	 * of the layer's CQs and counters sleep on them. */
	struct fi_eq_attr eq_attr = { .size = 256, .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD };
	struct fi_rx_attr srx_attr;
	struct fi_info *pinfo = NULL;
	size_t len;
	int ret;

	if (ep->enabled)
		return 0;
	if (!ep->tx_cq || !ep->rx_cq)
		return -FI_ENOCQ;
	if (!ep->av)
		return -FI_ENOAV;
	ret = fdm_ep_setup_region(ep);
	if (ret)
		return ret;
	ret = fdm_credit_setup(ep);
	if (ret)
		return ret;
	ret = fi_eq_open(d->fabric->lower, &eq_attr, &ep->veq, NULL);
	if (ret)
		return ret;
	/* every pool buffer and every send in flight, twice over for the
	 * reads of rendezvous and the layer's own messages */
	cq_attr.size = (size_t)ep->nrxbufs + 2u * ep->ntx + 64u;
	ret = fi_cq_open(d->vdomain, &cq_attr, &ep->vcq, NULL);
	if (ret)
		return ret;
	memset(&srx_attr, 0, sizeof(srx_attr));
	srx_attr.size = ep->nrxbufs;
	srx_attr.iov_limit = 1;
	ret = fi_srx_context(d->vdomain, &srx_attr, &ep->vsrx, NULL);
	if (ret)
		return ret;

	/* the passive endpoint: the address the application asked for
	 * (its port too, as fi_pingpong's server does), else an ephemeral
	 * port on the device's address */
	pinfo = fi_dupinfo(d->core);
	if (!pinfo)
		return -FI_ENOMEM;
	if (ep->info->src_addr && ep->info->src_addrlen) {
		free(pinfo->src_addr);
		pinfo->src_addr = malloc(ep->info->src_addrlen);
		if (!pinfo->src_addr) {
			fi_freeinfo(pinfo);
			return -FI_ENOMEM;
		}
		memcpy(pinfo->src_addr, ep->info->src_addr, ep->info->src_addrlen);
		pinfo->src_addrlen = ep->info->src_addrlen;
	}
	free(pinfo->dest_addr);
	pinfo->dest_addr = NULL;
	pinfo->dest_addrlen = 0;
	ret = fi_passive_ep(d->fabric->lower, pinfo, &ep->vpep, ep);
	fi_freeinfo(pinfo);
	if (ret)
		return ret;
	ret = fi_pep_bind(ep->vpep, &ep->veq->fid, 0);
	if (ret)
		return ret;
	ret = fi_listen(ep->vpep);
	if (ret)
		return ret;
	{
		struct sockaddr_in6 rawbuf;
		uint8_t *raw = (uint8_t *)&rawbuf;

		len = sizeof(rawbuf);
		ret = fi_getname(&ep->vpep->fid, raw, &len);
		if (ret)
			return ret;
		if (fdm_wildcard(raw) && d->core->src_addr && !fdm_wildcard(d->core->src_addr) &&
		    ((struct sockaddr *)d->core->src_addr)->sa_family ==
		    ((struct sockaddr *)(void *)raw)->sa_family) {
			/* listening on every address: name the device's */
			if (((struct sockaddr *)(void *)raw)->sa_family == AF_INET)
				((struct sockaddr_in *)(void *)raw)->sin_addr =
					((struct sockaddr_in *)d->core->src_addr)->sin_addr;
			else
				((struct sockaddr_in6 *)(void *)raw)->sin6_addr =
					((struct sockaddr_in6 *)d->core->src_addr)->sin6_addr;
		}
		ret = fdm_name_parse(&ep->name, raw, len);
		if (ret) {
			FD_WARN(FD_LOG_EP_CTRL, "the RDM endpoint's address is not one a "
				"peer can reach (a wildcard?)");
			return ret;
		}
		fdm_name_key(&ep->name, ep->name_key);
	}

	ret = fdm_ep_wait_attach(ep, true);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < ep->nrxbufs; i++) {
		ret = (int)fi_recv(ep->vsrx, ep->rxbufs[i].buf, FDM_BUF_SIZE, ep->vdesc,
				   0, &ep->rxbufs[i]);
		if (ret)
			return ret;
	}
	ep->enabled = true;
	fdm_ep_fast_update(ep);
	fdm_list_add_tail(&d->eps, &ep->dom_node);
	return 0;
}

static int fdm_ep_control(struct fid *fid, int command, void *arg)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);
	int ret;

	switch (command) {
	case FI_ENABLE:
		fdm_lock(ep->domain);
		ret = fdm_ep_enable(ep);
		fdm_unlock(ep->domain);
		if (ret)
			FD_WARN(FD_LOG_EP_CTRL, "fi_enable of an RDM endpoint: %s",
				fi_strerror(-ret));
		return ret;
	case FI_GETOPSFLAG: {
		uint64_t *f = arg;

		if (!f)
			return -FI_EINVAL;
		if ((*f & FI_TRANSMIT) && (*f & FI_RECV))
			return -FI_EINVAL;
		*f = (*f & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	}
	case FI_SETOPSFLAG: {
		uint64_t *f = arg;

		if (!f)
			return -FI_EINVAL;
		if (*f & FI_TRANSMIT)
			ep->tx_op_flags = *f & ~(uint64_t)FI_TRANSMIT;
		else if (*f & FI_RECV)
			ep->rx_op_flags = *f & ~(uint64_t)FI_RECV;
		else
			return -FI_EINVAL;
		fdm_lock(ep->domain);
		fdm_ep_fast_update(ep);
		fdm_unlock(ep->domain);
		return 0;
	}
	default:
		return -FI_ENOSYS;
	}
}

static int fdm_ep_close(struct fid *fid)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);
	struct fdm_domain *d = ep->domain;
	/* joined collective groups first (fi_close of each) */
	int ret = fdm_coll_ep_close(ep);

	if (ret)
		return ret;
	fdm_lock(d);
	if (ep->enabled) {
		/* what completed already is taken, the rest dropped */
		fdm_ep_progress(ep);
	}
	if (ep->enabled)
		fdm_list_del(&ep->dom_node);
	ep->enabled = false;
	fdm_ep_fast_update(ep);
	fdm_conn_close_all(ep);
	fdm_ep_drop_queues(ep);
	fdm_atomic_drop(ep);
	if (ep->tx_cq)
		fdm_cq_del_ep(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		fdm_cq_del_ep(ep->rx_cq, ep);
	fdm_unlock(d);
	for (int i = 0; i < FDM_CNTR_N; i++) {
		struct fid_cntr *c = ep->cntr[i];

		if (!c)
			continue;
		for (int j = i; j < FDM_CNTR_N; j++)
			if (ep->cntr[j] == c)
				ep->cntr[j] = NULL;
		fdm_cntr_del_progress(c, ep);
	}
	if (ep->av)
		ep->av->refs--;
	if (ep->vpep)
		fi_close(&ep->vpep->fid);
	if (ep->vsrx)
		fi_close(&ep->vsrx->fid);
	if (ep->vcq && ep->veq)
		(void)fdm_ep_wait_attach(ep, false);
	if (ep->vcq)
		fi_close(&ep->vcq->fid);
	if (ep->veq)
		fi_close(&ep->veq->fid);
	if (ep->vmr)
		fi_close(&ep->vmr->fid);
	/* after the connections: no peer can write the words any more */
	fdm_credit_teardown(ep);
	free(ep->region);
	free(ep->rxbufs);
	free(ep->txs);
	free(ep->tx_free);
	free(ep->rxs);
	free(ep->rx_free);
	free(ep->conns);
	free(ep->by_addr);
	free(ep->zombies);
	fi_freeinfo(ep->info);
	__atomic_fetch_sub(&d->refs, 1, __ATOMIC_RELAXED);
	free(ep);
	return 0;
}

static int fdm_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);
	size_t have;

	if (!addrlen)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	have = *addrlen;
	*addrlen = ep->name.len;
	if (!addr || have < ep->name.len)
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->name.u, ep->name.len);
	return 0;
}

static int fdm_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = ep->min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int fdm_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	struct fdm_ep *ep = fdv_container_of(fid, struct fdm_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || optlen != sizeof(size_t))
			return -FI_EINVAL;
		ep->min_multi_recv = *(const size_t *)optval;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static ssize_t fdm_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct fdm_ep *ep = fdm_ep_of(ep_fid);

	return ep->tx_nfree > ep->tx_reserve ? ep->tx_nfree - ep->tx_reserve : 0;
}

static ssize_t fdm_ep_rx_size_left(struct fid_ep *ep_fid)
{
	return fdm_ep_of(ep_fid)->rx_nfree;
}


static struct fi_ops fdm_ep_fi_ops =
	FD_FI_OPS(fdm_ep_close, fdm_ep_bind, fdm_ep_control, fd_no_fid_tostr);

static struct fi_ops_ep fdm_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fdm_ep_cancel,
	.getopt = fdm_ep_getopt,
	.setopt = fdm_ep_setopt,
	.tx_ctx = fd_no_ep_tx_ctx,
	.rx_ctx = fd_no_ep_rx_ctx,
	.rx_size_left = fdm_ep_rx_size_left,
	.tx_size_left = fdm_ep_tx_size_left,
};

static struct fi_ops_cm fdm_cm_ops =
	FD_CM_OPS_CONNECTIONLESS(fdm_ep_getname, fdm_coll_join);

/* FI_OFI_RXM_CONNECT_RETRY, read at each endpoint's open (a program
 * may set it between endpoints); out of range: the default, warned. */
static uint32_t fdm_param_connect_retry(void)
{
	return (uint32_t)fd_param_int_range(FDM_PARAM_PROV, "connect_retry",
					    FDM_CONNECT_RETRY_DEF_MS, 0,
					    FDM_CONNECT_RETRY_MAX_MS);
}

int fdm_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_out, void *context)
{
	struct fdm_domain *d = fdv_container_of(domain, struct fdm_domain, domain_fid);
	struct fdm_ep *ep;

	if (!info || !ep_out || !info->ep_attr || info->ep_attr->type != FI_EP_RDM ||
	    !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	if (info->tx_attr->iov_limit > FDM_IOV_LIMIT ||
	    info->rx_attr->iov_limit > FDM_IOV_LIMIT ||
	    info->tx_attr->inject_size > FDM_EAGER_MAX)
		return -FI_EINVAL;
	ep = fd_calloc_info(sizeof(*ep), offsetof(struct fdm_ep, info), info);
	if (!ep)
		return -FI_ENOMEM;
	if (!ep->info->tx_attr->size)
		ep->info->tx_attr->size = FDM_DEF_TX_SIZE;
	if (!ep->info->rx_attr->size)
		ep->info->rx_attr->size = FDM_DEF_RX_SIZE;
	if (!ep->info->tx_attr->iov_limit)
		ep->info->tx_attr->iov_limit = FDM_IOV_LIMIT;
	if (!ep->info->rx_attr->iov_limit)
		ep->info->rx_attr->iov_limit = FDM_IOV_LIMIT;
	ep->domain = d;
	ep->kind = FDV_EP_KIND_LAYER;	/* every call through the ops tables */
	ep->directed = !!(info->caps & FI_DIRECTED_RECV);
	ep->rma_event = !!(info->caps & FI_RMA_EVENT);
	fdm_list_init(&ep->dom_node);
	ep->tx_op_flags = info->tx_attr->op_flags;
	ep->rx_op_flags = info->rx_attr->op_flags;
	ep->inject_size = (uint32_t)ep->info->tx_attr->inject_size;
	ep->min_multi_recv = 64;
	fdm_list_init(&ep->posted_msg);
	fdm_list_init(&ep->posted_tag);
	fdm_list_init(&ep->unexp_msg);
	fdm_list_init(&ep->unexp_tag);
	fdm_list_init(&ep->rndv_active);
	fdm_list_init(&ep->flush);
	fdm_list_init(&ep->atomic_wait);
	ep->eq_left = FDM_EQ_EVERY;
	ep->connect_retry_ms = fdm_param_connect_retry();
	fd_ep_fid_init(&ep->ep_fid, FI_CLASS_EP, context, &fdm_ep_fi_ops,
		       &fdm_ep_ops, &fdm_cm_ops);
	ep->ep_fid.msg = &fdm_msg_ops;
	ep->ep_fid.tagged = &fdm_tagged_ops;
	ep->ep_fid.rma = &fdm_rma_ops;
	ep->ep_fid.atomic = &fdm_atomic_ops;
	ep->ep_fid.collective = (info->caps & FI_COLLECTIVE) ? &fdm_coll_ops :
				&fd_no_ops_collective;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*ep_out = &ep->ep_fid;
	return 0;
}
