/* Flow control of RDM connections (docs/rdm-protocol.md, "Flow control").
 *
 * All connections of an endpoint share one eager pool (the SRQ), so a
 * message that finds it empty is refused by the device (RNR) and the
 * sender's device retries it on a timer, for ever: a fast sender, or many,
 * would keep the wire busy with retries while the receiver is slow. Here a
 * sender sends a connection's messages only against credits: each side
 * grants the other a number of pool buffers in the connection handshake,
 * every message that takes a buffer at the peer takes a credit, and the
 * peer gives them back by writing how many of that connection's buffers it
 * has freed into the sender's credit word for the connection (an RDMA
 * write: no receive buffer, no completion at the sender, nothing to ask in
 * return). A sender out of credits keeps its messages queued on the
 * connection, in order, and reads its word again at every progress.
 *
 * Injects (sends that report no completion) cannot wait in that queue,
 * so they may overdraw: take the credits down to -FDM_CREDIT_OVERDRAFT.
 * What the peer's pool cannot take then waits in the devices' RNR
 * retries and is still delivered in order; the reports count freed
 * buffers, not credits, so they need no change: a sender below zero
 * just has more out (grant - credits) for the count to give back. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fd_core.h"
#include "fdm.h"

int fdm_credit_setup(struct fdm_ep *ep)
{
	size_t len = FDM_CREDIT_SLOTS * sizeof(*ep->credit_words);
	int ret;

	if (posix_memalign((void **)&ep->credit_words, 4096, len))
		return -FI_ENOMEM;
	memset(ep->credit_words, 0, len);
	/* the peers write here and nothing else: the pool and bounce
	 * buffers stay out of their reach */
	ret = fi_mr_reg(ep->domain->vdomain, ep->credit_words, len, FI_REMOTE_WRITE,
			0, 0, 0, &ep->credit_mr, NULL);
	if (ret)
		ep->credit_mr = NULL;
	return ret;
}

void fdm_credit_teardown(struct fdm_ep *ep)
{
	if (ep->credit_mr)
		fi_close(&ep->credit_mr->fid);
	ep->credit_mr = NULL;
	free(ep->credit_words);
	ep->credit_words = NULL;
}

/* The peer's share of the pool: a quarter of what no connection has been
 * granted yet, at most FDM_CREDIT_MAX and at least one. The first few
 * peers get enough to stream; past the pool's size the shares are single
 * buffers, and only then can peers that all burst at once still find the
 * pool empty (the device's retries cover that, as without credits). */
static uint32_t fdm_credit_share(const struct fdm_ep *ep)
{
	uint32_t left = ep->nrxbufs > ep->credit_granted ?
		ep->nrxbufs - ep->credit_granted : 0;
	uint32_t share = left / 4;

	if (share > FDM_CREDIT_MAX)
		share = FDM_CREDIT_MAX;
	return share ? share : 1;
}

/* A report waits for send-queue room (owe) or went out (settle): the
 * endpoint counts the connections waiting so progress looks only then. */
static void fdm_credit_owe(struct fdm_conn *c)
{
	if (!c->credit_owed) {
		c->credit_owed = true;
		c->ep->credit_owed++;
		c->ep->work = 1;
	}
}

static void fdm_credit_settle(struct fdm_conn *c)
{
	if (c->credit_owed) {
		c->credit_owed = false;
		c->ep->credit_owed--;
	}
}

void fdm_credit_release(struct fdm_conn *c)
{
	struct fdm_ep *ep = c->ep;

	ep->credit_granted -= c->rx_grant;
	c->rx_grant = 0;
	c->tx_credits = 0;
	c->peer_word = 0;
	c->peer_word_key = 0;
	fdm_credit_settle(c);
}

void fdm_credit_offer(struct fdm_conn *c, struct fdm_cm *cm)
{
	struct fdm_ep *ep = c->ep;

	fdm_credit_release(c);
	c->rx_grant = fdm_credit_share(ep);
	ep->credit_granted += c->rx_grant;
	c->rx_freed = c->rx_reported = 0;
	/* report after a quarter of the grant: one RDMA write per that
	 * many messages, and a sender with its whole grant out always has
	 * at least three quarters of it reported back */
	c->rx_report_every = c->rx_grant / 4 ? c->rx_grant / 4 : 1;
	cm->credits = (uint16_t)c->rx_grant;
	c->tx_seen = 0;
	if (c->id < FDM_CREDIT_SLOTS && ep->credit_mr) {
		/* a new connection counts from zero; nothing is posted on it
		 * before it is up, so nothing can be counted too early */
		__atomic_store_n(&ep->credit_words[c->id], 0, __ATOMIC_RELAXED);
		cm->word_addr = (uint64_t)(uintptr_t)&ep->credit_words[c->id];
		cm->word_key = (uint32_t)fi_mr_key(ep->credit_mr);
		c->tx_unlimited = false;
	} else {
		cm->word_addr = 0;
		cm->word_key = 0;
		c->tx_unlimited = true;
	}
}

void fdm_credit_accept(struct fdm_conn *c, const struct fdm_cm *peer)
{
	c->peer_word = peer->word_addr;
	c->peer_word_key = peer->word_key;
	c->tx_grant = peer->credits;
	c->tx_credits = c->tx_unlimited ? INT32_MAX : (int32_t)peer->credits;
}

int32_t fdm_credit_refresh(struct fdm_conn *c)
{
	uint32_t word, more, out;

	if (c->tx_unlimited) {
		c->tx_credits = INT32_MAX;
		return c->tx_credits;
	}
	word = ntohl(__atomic_load_n(&c->ep->credit_words[c->id], __ATOMIC_ACQUIRE));
	more = word - c->tx_seen;
	/* The peer can give back at most what is out: the grant less what
	 * is left, which is more than the grant while injects overdraw
	 * (credits below zero, at most FDM_CREDIT_OVERDRAFT). A larger step
	 * is no report of its (a torn or stray write) and is ignored; the
	 * next report carries the full count again. */
	out = (uint32_t)((int64_t)c->tx_grant - c->tx_credits);
	if (more && more <= out) {
		c->tx_credits += (int32_t)more;
		c->tx_seen = word;
	}
	return c->tx_credits;
}

static void fdm_credit_report(struct fdm_conn *c)
{
	uint32_t word = htonl(c->rx_freed);
	ssize_t ret;

	ret = fi_inject_write(c->vep, &word, sizeof(word), 0, c->peer_word,
			      c->peer_word_key);
	if (fdv_likely(!ret)) {
		c->rx_reported = c->rx_freed;
		fdm_credit_settle(c);
		return;
	}
	if (ret == -FI_EAGAIN) {
		/* the send queue is full: progress reports it later */
		fdm_credit_owe(c);
		return;
	}
	/* the connection is failing: its end resets the counts */
	FD_INFO(FD_LOG_EP_DATA, "credit report on connection %u: %s", c->id,
		fi_strerror((int)-ret));
}

void fdm_credit_freed(struct fdm_conn *c)
{
	if (!c->peer_word)
		return;
	c->rx_freed++;
	if (c->rx_freed - c->rx_reported < c->rx_report_every)
		return;
	/* An accepted connection's first messages can arrive before its
	 * FI_CONNECTED event: counted now, reported once it is up. */
	if (fdv_likely(c->state == FDM_C_CONNECTED))
		fdm_credit_report(c);
	else
		fdm_credit_owe(c);
}

void fdm_credit_report_owed(struct fdm_ep *ep)
{
	for (uint32_t i = 0; i < ep->nconns && ep->credit_owed; i++) {
		struct fdm_conn *c = ep->conns[i];

		if (c->credit_owed && c->state == FDM_C_CONNECTED)
			fdm_credit_report(c);
	}
}
