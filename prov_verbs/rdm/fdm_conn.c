/* Connections of an RDM endpoint: one verbs MSG endpoint per peer, made
 * on first use, bound to the endpoint's EQ, CQ and shared receive
 * context. The handshake and the simultaneous-connect rule are in
 * docs/rdm-protocol.md. Nothing is posted on a connection before it is
 * established: transmit requests wait on its pending list, in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fdm.h"
#include "fdm_msg.h"

/* How long a peer that refused our request because its own is on the way
 * (FDM_CM_BUSY) has to get that request to us. */
#define FDM_WAIT_PEER_MS	10000

/* A connect refused by the peer's CM because nothing listens at its port
 * yet is tried again (fdm_conn_refused), first after this pause, then
 * after twice the last one, at most FDM_RETRY_GAP_MAX_MS. */
#define FDM_RETRY_GAP_MIN_MS	10u
#define FDM_RETRY_GAP_MAX_MS	500u

/* The reject status rdma_cm reports (the verbs EQ's prov_errno) when the
 * peer's CM has no listener for the port: the IB CM's reason 8, "invalid
 * service ID" (InfiniBand and RoCE, rxe included), or iWARP's refused TCP
 * connection. */
#define FDM_IB_REJ_INVALID_SERVICE_ID	8

static bool fdm_state_pending(enum fdm_conn_state st)
{
	return st == FDM_C_CONNECTING || st == FDM_C_ACCEPTING ||
	       st == FDM_C_WAIT_PEER || st == FDM_C_RETRY;
}

/* States with a deadline of the layer's own (fdm_conn_check_waits). */
static bool fdm_state_waits(enum fdm_conn_state st)
{
	return st == FDM_C_WAIT_PEER || st == FDM_C_RETRY;
}

/* tx_vep, what the inline send tests (fdm_msg.h): the verbs
 * endpoint while a send may go straight to it, connected with nothing
 * queued ahead; after every change of state, vep or the pending list. */
static void fdm_conn_sync(struct fdm_conn *c)
{
	c->tx_vep = c->state == FDM_C_CONNECTED && fdm_list_empty(&c->pending) ?
		c->vep : NULL;
}

/* Every state change goes here: progress reads the EQ on every round
 * while any connection is on its way (ep->nconnecting). */
static void fdm_conn_set_state(struct fdm_conn *c, enum fdm_conn_state st)
{
	c->ep->nconnecting += (uint32_t)fdm_state_pending(st) -
			      (uint32_t)fdm_state_pending(c->state);
	c->ep->nwait += (uint32_t)fdm_state_waits(st) - (uint32_t)fdm_state_waits(c->state);
	c->state = st;
	if (c->ep->nconnecting)
		c->ep->work = 1;
	fdm_conn_sync(c);
}

static void fdm_zombie(struct fdm_ep *ep, struct fid_ep *vep)
{
	if (!vep)
		return;
	if (ep->nzombies == ep->zombies_cap) {
		size_t cap = ep->zombies_cap ? ep->zombies_cap * 2 : 8;
		struct fid_ep **n = realloc(ep->zombies, cap * sizeof(*n));

		if (!n) {
			/* cannot keep it for later: close it now */
			fi_close(&vep->fid);
			return;
		}
		ep->zombies = n;
		ep->zombies_cap = cap;
	}
	/* Closed with the endpoint: sends posted on it may still complete
	 * into the shared CQ, and their requests must stay valid till then. */
	ep->zombies[ep->nzombies++] = vep;
}

static struct fdm_conn *fdm_conn_new(struct fdm_ep *ep, const struct fdm_name *peer)
{
	struct fdm_conn *c;

	if (ep->nconns == ep->conns_cap) {
		uint32_t cap = ep->conns_cap ? ep->conns_cap * 2 : 16;
		struct fdm_conn **n = realloc(ep->conns, cap * sizeof(*n));

		if (!n)
			return NULL;
		ep->conns = n;
		ep->conns_cap = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ep = ep;
	c->id = ep->nconns;
	c->peer = *peer;
	c->state = FDM_C_IDLE;
	c->src = FI_ADDR_NOTAVAIL;
	c->src_gen = UINT64_MAX;
	fdm_list_init(&c->pending);
	fdm_list_init(&c->flush_node);
	c->wr.opcode = IBV_WR_SEND;
	c->wr.sg_list = c->sge;
	c->wr.num_sge = 1;
	c->sge[0].lkey = fdv_desc_lkey(ep->vdesc);
	ep->conns[ep->nconns++] = c;
	return c;
}

static struct fdm_conn *fdm_conn_find(struct fdm_ep *ep, const struct fdm_name *peer)
{
	for (uint32_t i = 0; i < ep->nconns; i++)
		if (fdm_name_eq(&ep->conns[i]->peer, peer))
			return ep->conns[i];
	return NULL;
}

struct fdm_conn *fdm_conn_by_id(struct fdm_ep *ep, uint32_t id)
{
	return id < ep->nconns ? ep->conns[id] : NULL;
}

fi_addr_t fdm_conn_src_find(struct fdm_conn *conn)
{
	struct fdm_av *av = conn->ep->av;
	struct fdm_name base = conn->peer;

	/* a scalable endpoint's context pair k: the AV names the SEP, whose
	 * port is k below (checked when the connection was made) */
	if (conn->peer_ctx)
		(void)fdm_name_shift(&base, -(int)conn->peer_ctx);
	conn->src = fdm_av_find(av, &base);
	conn->src_gen = av->gen + av->count;
	return conn->src;
}

/* dest with a receive context index in its top av->rx_ctx_bits: the
 * peer's context pair listens on its port + index (fdm_sep.c). Not
 * cached in by_addr (indexed by the whole fi_addr_t): a lookup among
 * the connections, on the library's path. */
static struct fdm_conn *fdm_conn_for_ctx(struct fdm_ep *ep, fi_addr_t dest, int *err)
{
	unsigned int shift = 64u - (unsigned int)ep->av->rx_ctx_bits;
	uint64_t idx = dest >> shift;
	const struct fdm_name *base = fdm_av_name(ep->av, dest & ((1ULL << shift) - 1));
	struct fdm_name name;
	struct fdm_conn *c;

	if (!base || idx >= FDM_SEP_MAX_CTX)
		goto inval;
	name = *base;
	if (fdm_name_shift(&name, (int)idx))
		goto inval;
	c = fdm_conn_find(ep, &name);
	if (!c && !(c = fdm_conn_new(ep, &name))) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	c->peer_ctx = (uint8_t)idx;
	return c;
inval:
	*err = -FI_EINVAL;
	return NULL;
}

struct fdm_conn *fdm_conn_for_addr(struct fdm_ep *ep, fi_addr_t dest, int *err)
{
	struct fdm_av *av = ep->av;
	const struct fdm_name *name;
	struct fdm_conn *c;

	if (fdv_unlikely(ep->by_addr_gen != av->gen)) {
		memset(ep->by_addr, 0, ep->by_addr_cap * sizeof(*ep->by_addr));
		ep->by_addr_gen = av->gen;
	}
	if (fdv_likely(dest < ep->by_addr_cap && ep->by_addr[dest]))
		return ep->by_addr[dest];
	/* fi_rx_addr: a peer scalable endpoint's receive context */
	if (fdv_unlikely(av->rx_ctx_bits && (dest >> (64 - av->rx_ctx_bits))))
		return fdm_conn_for_ctx(ep, dest, err);
	name = fdm_av_name(av, dest);
	if (!name) {
		*err = -FI_EINVAL;
		return NULL;
	}
	c = fdm_conn_find(ep, name);
	if (!c && !(c = fdm_conn_new(ep, name))) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	if (dest >= ep->by_addr_cap) {
		size_t cap = ep->by_addr_cap ? ep->by_addr_cap : 64;
		struct fdm_conn **n;

		while (cap <= dest)
			cap *= 2;
		n = realloc(ep->by_addr, cap * sizeof(*n));
		if (!n)
			return c;	/* works, just not cached */
		memset(n + ep->by_addr_cap, 0, (cap - ep->by_addr_cap) * sizeof(*n));
		ep->by_addr = n;
		ep->by_addr_cap = cap;
	}
	ep->by_addr[dest] = c;
	return c;
}

static void fdm_conn_want_flush(struct fdm_conn *c)
{
	if (!c->on_flush) {
		c->on_flush = true;
		fdm_list_add_tail(&c->ep->flush, &c->flush_node);
		c->ep->work = 1;
	}
}

/* Bind a new verbs endpoint to the RDM endpoint's shared objects. */
static int fdm_conn_bind(struct fdm_ep *ep, struct fid_ep *vep)
{
	int ret;

	ret = fi_ep_bind(vep, &ep->veq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(vep, &ep->vcq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(vep, &ep->vsrx->fid, 0);
	if (!ret)
		ret = fi_enable(vep);
	return ret;
}

/* The send queue of one connection. Every connection of an RDM endpoint
 * is a verbs endpoint with its own send queue, and rxe keeps each queue's
 * ring in the process (~0.5 KiB an entry): at the verbs default of 384
 * that is most of the ~265 KiB a connection costs. A full queue is not an
 * error here (fdm_tx_post_failed queues the request on the connection
 * until a completion frees room), so a smaller queue costs only a wait
 * under a burst to one peer; 128 is upstream rxm's default for its
 * connections. */
#define FDM_CONN_TX_SIZE 128u

static void fdm_conn_size(struct fi_info *info)
{
	if (info->tx_attr && (!info->tx_attr->size || info->tx_attr->size > FDM_CONN_TX_SIZE))
		info->tx_attr->size = FDM_CONN_TX_SIZE;
}

static int fdm_conn_start(struct fdm_conn *c)
{
	struct fdm_ep *ep = c->ep;
	struct fi_info *info = fi_dupinfo(ep->domain->core);
	struct fdm_cm cm = { .kind = FDM_CM_REQ, .conn_id = c->id };
	uint8_t data[FDM_CM_LEN];
	struct fid_ep *vep = NULL;
	int ret;

	if (!info)
		return -FI_ENOMEM;
	free(info->dest_addr);
	info->dest_addr = malloc(c->peer.len);
	if (!info->dest_addr) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	memcpy(info->dest_addr, &c->peer.u, c->peer.len);
	info->dest_addrlen = c->peer.len;
	fdm_conn_size(info);
	if (info->src_addr) {
		struct sockaddr *sa = info->src_addr;

		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)info->src_addr)->sin_port = 0;
		else if (sa->sa_family == AF_INET6)
			((struct sockaddr_in6 *)info->src_addr)->sin6_port = 0;
	}
	ret = fi_endpoint(ep->domain->vdomain, info, &vep, c);
	fi_freeinfo(info);
	if (ret)
		return ret;
	ret = fdm_conn_bind(ep, vep);
	if (ret)
		goto fail;
	cm.name = ep->name;
	cm.ctx = ep->sep_ctx;
	fdm_credit_offer(c, &cm);
	fdm_cm_encode(data, &cm);
	ret = fi_connect(vep, NULL, data, sizeof(data));
	if (ret)
		goto fail;
	c->vep = vep;
	fdm_conn_set_state(c, FDM_C_CONNECTING);
	return 0;
fail:
	fi_close(&vep->fid);
	return ret;
}

/* Post one request on an established connection, if its credits are
 * above credit_floor: 0 for what may wait in the connection's queue,
 * -FDM_CREDIT_OVERDRAFT for an inject and what is queued before it. */
static ssize_t fdm_conn_post(struct fdm_conn *c, struct fdm_tx *tx, int32_t credit_floor)
{
	struct fdm_ep *ep = c->ep;
	ssize_t ret;

	/* An RDMA read or write takes no pool buffer at the peer
	 * (fi_writedata's immediate does, but the peer cannot tell which
	 * connection it came on: outside flow control); every message,
	 * atomic requests and answers included, takes one. */
	if (tx->kind == FDM_TX_RMA)
		return fdm_rma_post(c, tx);
	if (c->tx_credits <= credit_floor && fdm_credit_refresh(c) <= credit_floor)
		return -FI_EAGAIN;	/* waits on the connection, in order */
	tx->vep = c->vep;
	fdm_hdr_set_conn(tx->buf, c->remote_id);
	if (fdv_unlikely(tx->kind == FDM_TX_ATOMIC))
		return fdm_atomic_post(c, tx);
	ret = fi_send(c->vep, tx->buf, tx->wire_len, ep->vdesc, 0, tx);
	if (fdv_likely(!ret))
		c->tx_credits--;
	return ret;
}

/* An atomic request is a message the target's software applies when it
 * arrives: behind an RDMA read still running on the connection the
 * device could deliver it, and the target apply it, before the read has
 * fetched its data (the RC rules let later requests pass a read), so it
 * waits for the reads with IBV_SEND_FENCE (FI_ORDER_WAR, RAR for the
 * fetching ones). Counted until answered: RMA waits for it
 * (fdm_rma_post). */
ssize_t fdm_atomic_post(struct fdm_conn *c, struct fdm_tx *tx)
{
	struct iovec iov = { .iov_base = tx->buf, .iov_len = tx->wire_len };
	void *desc = c->ep->vdesc;
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .context = tx,
	};
	uint64_t fence = c->reads_out || (tx->rma.flags & FI_FENCE) ? FI_FENCE : 0;
	ssize_t ret = fi_sendmsg(c->vep, &msg, FI_COMPLETION | fence);

	if (!ret) {
		c->tx_credits--;
		tx->ordered = FDM_ORD_ATOMIC;
		c->atomics_out++;
	}
	return ret;
}

void fdm_conn_order_done(struct fdm_tx *tx)
{
	struct fdm_conn *c = tx->conn;

	if (tx->ordered == FDM_ORD_READ) {
		c->reads_out--;
	} else if (!--c->atomics_out && !fdm_list_empty(&c->pending) &&
		   c->state == FDM_C_CONNECTED) {
		fdm_conn_want_flush(c);	/* RMA waited for it */
	}
	tx->ordered = FDM_ORD_NONE;
}

void fdm_conn_submit(struct fdm_conn *c, struct fdm_tx *tx)
{
	ssize_t ret;

	tx->conn = c;
	if (fdv_likely(c->state == FDM_C_CONNECTED && fdm_list_empty(&c->pending))) {
		ret = fdm_conn_post(c, tx, 0);
		if (fdv_likely(!ret))
			return;
		if (ret != -FI_EAGAIN) {
			fdm_handle_tx_done(c->ep, tx, (int)-ret);
			return;
		}
	}
	fdm_list_add_tail(&c->pending, &tx->node);
	fdm_conn_sync(c);
	if (c->state == FDM_C_CONNECTED) {
		fdm_conn_want_flush(c);
	} else if (c->state == FDM_C_IDLE) {
		int err = fdm_conn_start(c);

		if (err) {
			FD_WARN(FD_LOG_EP_DATA, "connecting to a peer: %s", fi_strerror(-err));
			fdm_conn_fail(c, err == -FI_ENODATA || err == -FI_EADDRNOTAVAIL ?
				      FI_EHOSTUNREACH : -err);
		}
	}
}

/* Post the connection's queued requests in order while credits above
 * credit_floor (and send-queue room) last; whether the queue is empty now. */
static bool fdm_conn_drain(struct fdm_conn *c, int32_t credit_floor)
{
	while (c->state == FDM_C_CONNECTED && !fdm_list_empty(&c->pending)) {
		struct fdm_tx *tx = fdm_entry(c->pending.next, struct fdm_tx, node);
		ssize_t ret = fdm_conn_post(c, tx, credit_floor);

		if (ret == -FI_EAGAIN)
			break;
		fdm_list_del(&tx->node);
		if (ret)
			fdm_handle_tx_done(c->ep, tx, (int)-ret);
	}
	fdm_conn_sync(c);
	return fdm_list_empty(&c->pending);
}

/* A request that reports no completion (fi_inject, fi_tinject, a send
 * without FI_COMPLETION under FI_SELECTIVE_COMPLETION) gives the program
 * no reason to call the library again: MPICH injects, then sits in a PMI
 * barrier while the peer waits for the message. Queued, it would go out
 * only at the sender's next progress call, which may never come. So it
 * is posted now or not at all: -FI_EAGAIN (send queue full, overdraft
 * spent, the connection still being made, which this call starts) tells
 * the caller to progress and retry, as the API says. A failed connection
 * attempt is told once, as the call's error, so an inject to a dead peer
 * does not say -FI_EAGAIN forever; the call after that connects again.
 *
 * Such a request may overdraw the connection's credits (FDM_CREDIT_
 * OVERDRAFT), and so may what waits in the connection's queue before
 * it: messages go in the order the application issued them, so the
 * queue goes first, on the same overdraft, and if it cannot all go,
 * neither can this one (-FI_EAGAIN; what went stays sent, in order). */
ssize_t fdm_conn_post_now(struct fdm_conn *c, struct fdm_tx *tx)
{
	int err;

	tx->conn = c;
	if (c->state == FDM_C_CONNECTED && !fdm_list_empty(&c->pending) &&
	    !fdm_conn_drain(c, -FDM_CREDIT_OVERDRAFT))
		return -FI_EAGAIN;
	/* (connected still, unless the queue's posts failed it) */
	if (fdv_likely(c->state == FDM_C_CONNECTED))
		return fdm_conn_post(c, tx, -FDM_CREDIT_OVERDRAFT);
	if (c->state != FDM_C_IDLE)
		return -FI_EAGAIN;
	if (c->last_err) {
		err = c->last_err;
		c->last_err = 0;
		return -err;
	}
	err = fdm_conn_start(c);
	if (err) {
		FD_WARN(FD_LOG_EP_DATA, "connecting to a peer: %s", fi_strerror(-err));
		return err == -FI_ENODATA || err == -FI_EADDRNOTAVAIL ? -FI_EHOSTUNREACH : err;
	}
	return -FI_EAGAIN;
}

ssize_t fdm_conn_send_unreported(struct fdm_ep *ep, struct fdm_conn *c, struct fdm_tx *tx)
{
	ssize_t ret = fdm_conn_post_now(c, tx);

	if (ret == -FI_EAGAIN) {
		fdm_ep_progress(ep);	/* may bring credits or free the queue */
		ret = fdm_conn_post_now(c, tx);
	}
	if (ret)
		fdm_tx_put(ep, tx);
	return ret;
}

/* The inline send's post failed (fdm_msg.h): as fdm_conn_submit
 * does, -FI_EAGAIN queues the request in order for progress to post,
 * anything else completes it with the error. A request that reports no
 * completion is not queued (fdm_conn_post_now): the call says so. */
ssize_t fdm_tx_post_failed(struct fdm_ep *ep, struct fdm_tx *tx, ssize_t ret)
{
	struct fdm_conn *c = tx->conn;

	c->tx_credits++;	/* the inline send took one for a message not sent */
	if (!tx->report && tx->kind == FDM_TX_EAGER) {
		fdm_tx_put(ep, tx);
		return ret;
	}
	if (ret == -FI_EAGAIN) {
		fdm_list_add_tail(&c->pending, &tx->node);
		fdm_conn_sync(c);
		fdm_conn_want_flush(c);
		return 0;
	}
	fdm_handle_tx_done(ep, tx, (int)-ret);
	return 0;
}

void fdm_conn_flush(struct fdm_ep *ep)
{
	struct fdm_node *n = ep->flush.next;

	while (n != &ep->flush) {
		struct fdm_conn *c = fdm_entry(n, struct fdm_conn, flush_node);
		struct fdm_node *next = n->next;

		/* queued requests wait for credits above zero; only an
		 * inject behind them takes them out on its overdraft */
		if (fdm_conn_drain(c, 0) || c->state != FDM_C_CONNECTED) {
			fdm_list_del(&c->flush_node);
			c->on_flush = false;
		}
		n = next;
	}
}

void fdm_conn_fail(struct fdm_conn *c, int err)
{
	struct fdm_ep *ep = c->ep;

	FD_INFO(FD_LOG_EP_DATA, "connection %u failed: %s", c->id, fi_strerror(err));
	/* Tell the peer: it may be waiting for something that cannot come
	 * over this connection now (a rendezvous done after a failed read,
	 * an atomic answer), and without a disconnect it would never learn.
	 * Our own FI_SHUTDOWN for it names the zombie and is ignored. */
	if (c->vep && c->state == FDM_C_CONNECTED)
		(void)fi_shutdown(c->vep, 0);
	fdm_zombie(ep, c->vep);
	c->vep = NULL;
	fdm_conn_set_state(c, FDM_C_IDLE);
	c->last_err = err;
	c->retry_end_ms = 0;	/* the next attempt may wait for a listener anew */
	fdm_credit_release(c);
	if (c->on_flush) {
		fdm_list_del(&c->flush_node);
		c->on_flush = false;
	}
	while (!fdm_list_empty(&c->pending)) {
		struct fdm_tx *tx = fdm_entry(c->pending.next, struct fdm_tx, node);

		fdm_list_del(&tx->node);
		fdm_handle_tx_done(ep, tx, err);
	}
	/* rendezvous sends whose data the peer will never read now, atomics
	 * whose answer will not come */
	for (uint32_t i = 0; i < ep->ntx; i++) {
		struct fdm_tx *tx = &ep->txs[i];

		if (tx->in_use && tx->conn == c && tx->rts_done &&
		    (tx->kind == FDM_TX_RNDV || tx->kind == FDM_TX_ATOMIC))
			fdm_handle_tx_done(ep, tx, err);
	}
	fdm_rndv_fail_conn(ep, c, err);
}

/* ---- CM events ---- */

static void fdm_conn_connreq(struct fdm_ep *ep, struct fi_eq_cm_entry *e, size_t datalen)
{
	struct fi_info *info = e->info;
	struct fdm_cm cm, out = { .kind = FDM_CM_ACCEPT };
	uint8_t data[FDM_CM_LEN], peer_key[FDM_NAME_KEY_LEN];
	struct fdm_conn *c;
	struct fid_ep *vep = NULL;
	int ret;

	struct fdm_name base;

	if (fdm_cm_decode(&cm, e->data, datalen) || cm.kind != FDM_CM_REQ ||
	    (base = cm.name, fdm_name_shift(&base, -(int)cm.ctx))) {
		FD_WARN(FD_LOG_EP_CTRL, "connection request with malformed RDM data: rejected");
		fi_reject(ep->vpep, info->handle, NULL, 0);
		fi_freeinfo(info);
		return;
	}
	c = fdm_conn_find(ep, &cm.name);
	if (!c && !(c = fdm_conn_new(ep, &cm.name))) {
		fi_reject(ep->vpep, info->handle, NULL, 0);
		fi_freeinfo(info);
		return;
	}
	c->peer_ctx = cm.ctx;
	fdm_name_key(&cm.name, peer_key);
	if (c->state == FDM_C_CONNECTING && memcmp(ep->name_key, peer_key, sizeof(peer_key)) < 0) {
		/* both connect at once, and our name is the lower: our
		 * request wins, the peer accepts it and drops its own */
		struct fdm_cm busy = { .kind = FDM_CM_BUSY, .conn_id = c->id };

		busy.name = ep->name;
		fdm_cm_encode(data, &busy);
		fi_reject(ep->vpep, info->handle, data, sizeof(data));
		fi_freeinfo(info);
		return;
	}
	fdm_conn_size(info);
	ret = fi_endpoint(ep->domain->vdomain, info, &vep, c);
	fi_freeinfo(info);
	if (ret) {
		FD_WARN(FD_LOG_EP_CTRL, "accepting a connection: %s", fi_strerror(-ret));
		return;
	}
	ret = fdm_conn_bind(ep, vep);
	if (!ret) {
		out.conn_id = c->id;
		out.name = ep->name;
		/* our attempt, if any, gives way: its grant is replaced */
		fdm_credit_offer(c, &out);
		fdm_credit_accept(c, &cm);
		fdm_cm_encode(data, &out);
		ret = fi_accept(vep, data, sizeof(data));
	}
	if (ret) {
		FD_WARN(FD_LOG_EP_CTRL, "accepting a connection: %s", fi_strerror(-ret));
		fi_close(&vep->fid);
		/* the offer replaced the credit state of whatever c was:
		 * that attempt or connection cannot go on (rare: the device
		 * refused the accept) */
		if (c->vep)
			fdm_conn_fail(c, FI_EIO);
		else
			fdm_credit_release(c);
		return;
	}
	/* an attempt of ours, or an old connection the peer gave up on,
	 * makes way: queued requests stay and go on the new one */
	fdm_zombie(ep, c->vep);
	c->vep = vep;
	c->remote_id = cm.conn_id;
	fdm_conn_set_state(c, FDM_C_ACCEPTING);
}

static void fdm_conn_connected(struct fdm_ep *ep, struct fi_eq_cm_entry *e, size_t datalen)
{
	struct fdm_conn *c = e->fid->context;
	struct fdm_cm cm;

	if (!c || c->ep != ep || e->fid != &c->vep->fid)
		return;		/* an abandoned attempt */
	if (c->state == FDM_C_CONNECTING) {
		if (fdm_cm_decode(&cm, e->data, datalen) || cm.kind != FDM_CM_ACCEPT) {
			FD_WARN(FD_LOG_EP_CTRL, "accept with malformed RDM data: connection dropped");
			fdm_conn_fail(c, FI_EIO);
			return;
		}
		c->remote_id = cm.conn_id;
		fdm_credit_accept(c, &cm);
	} else if (c->state != FDM_C_ACCEPTING) {
		return;
	}
	fdm_conn_set_state(c, FDM_C_CONNECTED);
	c->last_err = 0;
	c->retry_end_ms = 0;
	if (!fdm_list_empty(&c->pending))
		fdm_conn_want_flush(c);
}

/* Our request was refused by the peer's CM, not by the peer's layer:
 * nothing listens at its address. An RDM peer is an address in the AV,
 * not a process known to be up: processes start at different times and
 * one may send before the other has enabled its endpoint (fabtests'
 * server allocates its buffers before it listens; upstream rxm makes the
 * sender say -FI_EAGAIN until a connection is made). So the attempt is
 * dropped and made again after a pause, until connect_retry_ms after the
 * first refusal; queued requests stay queued. Returns false (fail it now)
 * for any other refusal or once that time is up. */
static bool fdm_conn_refused(struct fdm_conn *c, const struct fi_eq_err_entry *err)
{
	long now;

	if (err->err_data_size || (err->prov_errno != FDM_IB_REJ_INVALID_SERVICE_ID &&
				   err->prov_errno != -ECONNREFUSED))
		return false;
	now = fd_now_ms();
	if (!c->retry_end_ms) {
		c->retry_end_ms = now + (long)c->ep->connect_retry_ms;
		c->retry_gap_ms = FDM_RETRY_GAP_MIN_MS;
	}
	if (now + (long)c->retry_gap_ms > c->retry_end_ms) {
		c->retry_end_ms = 0;
		return false;
	}
	FD_DBG(FD_LOG_EP_CTRL, "connection %u: nothing listens at the peer yet, "
	       "again in %u ms", c->id, c->retry_gap_ms);
	/* Nothing was posted on the attempt (requests wait for CONNECTED),
	 * and closing it makes the verbs EQ forget its events: closed now,
	 * not kept till the endpoint closes as a zombie. */
	fi_close(&c->vep->fid);
	c->vep = NULL;
	fdm_credit_release(c);
	c->deadline_ms = now + (long)c->retry_gap_ms;
	c->retry_gap_ms = c->retry_gap_ms * 2 > FDM_RETRY_GAP_MAX_MS ?
		FDM_RETRY_GAP_MAX_MS : c->retry_gap_ms * 2;
	fdm_conn_set_state(c, FDM_C_RETRY);
	return true;
}

static void fdm_conn_error(struct fdm_ep *ep, struct fi_eq_err_entry *err)
{
	struct fdm_conn *c = err->fid ? err->fid->context : NULL;
	struct fdm_cm cm;

	if (!c || err->fid == &ep->vpep->fid || c->ep != ep || !c->vep ||
	    err->fid != &c->vep->fid)
		return;
	if (err->err == FI_ECONNREFUSED && c->state == FDM_C_CONNECTING &&
	    !fdm_cm_decode(&cm, err->err_data, err->err_data_size) &&
	    cm.kind == FDM_CM_BUSY) {
		/* the peer's own request is on its way and wins: wait for it */
		fdm_zombie(ep, c->vep);
		c->vep = NULL;
		c->deadline_ms = fd_now_ms() + FDM_WAIT_PEER_MS;
		fdm_conn_set_state(c, FDM_C_WAIT_PEER);
		return;
	}
	if (err->err == FI_ECONNREFUSED && c->state == FDM_C_CONNECTING &&
	    fdm_conn_refused(c, err))
		return;
	fdm_conn_fail(c, err->err ? err->err : FI_EIO);
}

static void fdm_conn_check_waits(struct fdm_ep *ep)
{
	long now = 0;

	for (uint32_t i = 0; i < ep->nconns; i++) {
		struct fdm_conn *c = ep->conns[i];
		int err;

		if (!fdm_state_waits(c->state))
			continue;
		if (!now)
			now = fd_now_ms();
		if (now <= c->deadline_ms)
			continue;
		if (c->state == FDM_C_WAIT_PEER) {
			fdm_conn_fail(c, FI_ETIMEDOUT);
			continue;
		}
		/* FDM_C_RETRY: the next attempt (CONNECTING, or failed) */
		fdm_conn_set_state(c, FDM_C_IDLE);
		err = fdm_conn_start(c);
		if (err) {
			FD_WARN(FD_LOG_EP_DATA, "connecting to a peer: %s", fi_strerror(-err));
			fdm_conn_fail(c, err == -FI_ENODATA || err == -FI_EADDRNOTAVAIL ?
				      FI_EHOSTUNREACH : -err);
		}
	}
}

void fdm_conn_handle_events(struct fdm_ep *ep)
{
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + 64];
	} buf;
	uint8_t err_data[64];
	uint32_t event;
	ssize_t n;

	for (;;) {
		n = fi_eq_read(ep->veq, &event, &buf, sizeof(buf), 0);
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			err.err_data = err_data;
			err.err_data_size = sizeof(err_data);
			if (fi_eq_readerr(ep->veq, &err, 0) < 0)
				break;
			fdm_conn_error(ep, &err);
			continue;
		}
		if (n < 0)
			break;
		if ((size_t)n < sizeof(struct fi_eq_cm_entry))
			continue;
		switch (event) {
		case FI_CONNREQ:
			fdm_conn_connreq(ep, &buf.cm, (size_t)n - sizeof(buf.cm));
			break;
		case FI_CONNECTED:
			fdm_conn_connected(ep, &buf.cm, (size_t)n - sizeof(buf.cm));
			break;
		case FI_SHUTDOWN: {
			struct fdm_conn *c = buf.cm.fid->context;

			if (c && c->ep == ep && c->vep && buf.cm.fid == &c->vep->fid)
				fdm_conn_fail(c, FI_ECONNRESET);
			break;
		}
		default:
			break;
		}
	}
	if (fdv_unlikely(ep->nwait))
		fdm_conn_check_waits(ep);
}

void fdm_conn_close_all(struct fdm_ep *ep)
{
	for (uint32_t i = 0; i < ep->nconns; i++) {
		struct fdm_conn *c = ep->conns[i];

		if (c->vep)
			fi_close(&c->vep->fid);
		/* queued requests go with the endpoint, unreported */
		while (!fdm_list_empty(&c->pending))
			fdm_list_del(c->pending.next);
		free(c);
	}
	ep->nconns = 0;
	for (size_t i = 0; i < ep->nzombies; i++)
		fi_close(&ep->zombies[i]->fid);
	ep->nzombies = 0;
}
